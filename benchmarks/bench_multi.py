"""Time the many-task kernels against a NumPy/SciPy baseline measured in the same run.

Keys of ``--json`` (issue 14):

- ``exact_stratified_seconds_10_tasks_500``: ``evalsim.stats.multi.exact_stratified_test``
  (two-sided p, conditional MLE and exact 95% interval of the common odds ratio) for 10 tasks
  x 500 episodes per arm, best of ``--repeat`` after JIT warm-up. Target <= 0.05 s.
  Baseline ``..._baseline``: the same quantities with ``scipy.stats.hypergeom`` pmfs,
  ``numpy.convolve`` and ``scipy.optimize.brentq`` on NumPy tilts; ``..._speedup`` is
  baseline / evalsim, ``..._max_rel_diff`` compares the p-values and bounds.
- ``stratified_bootstrap_seconds_10k``: 10,000 task-then-episode resamples of 10 tasks x 50
  episodes x 5 policies (``_multi_kernels.stratified_bootstrap``, micro and macro of every
  policy). Target <= 1 s. Baseline: the same resampling vectorised in NumPy
  (``Generator.integers`` in chunks of 1000 replicates).
- ``task_pairs_seconds_40_tasks``: ``evalsim.stats.multi.aggregate.task_pairs`` (A and B
  paired on seed and condition, task by task) on a log of 40 tasks x 3 seeds x 200
  conditions x 2 policies. Baseline: a pandas ``merge`` per task (the form ``T34`` used before
  the vectorised one replaced it); ``task_pairs_identical`` checks the two agree.

Usage: python benchmarks/bench_multi.py [--json] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from _common import best_of
from scipy.optimize import brentq
from scipy.stats import hypergeom

from evalsim.stats.multi import _kernels as mk
from evalsim.stats.multi.aggregate import task_pairs
from evalsim.stats.multi.tasks import exact_stratified_test


def scipy_exact_stratified(k_a, n_a, k_b, n_b, confidence=0.95):
    """Baseline: the exact stratified p, MLE and interval with SciPy/NumPy building blocks."""
    dens = np.array([1.0])
    lo = 0
    for ka, na, kb, nb in zip(k_a, n_a, k_b, n_b, strict=True):
        t = ka + kb
        xs = np.arange(max(0, t - na), min(nb, t) + 1)
        dens = np.convolve(dens, hypergeom.pmf(xs, na + nb, nb, t))
        lo += xs[0]
    dens /= dens.sum()
    s = int(np.sum(k_b))
    j = s - lo
    with np.errstate(divide="ignore"):
        logd = np.log(dens)
    p = float(dens[dens <= dens[j] * (1 + 1e-7)].sum())
    idx = np.arange(dens.size)

    def law(th):
        w = logd + idx * th
        w = np.exp(w - w.max())
        return w / w.sum()

    half = (1 - confidence) / 2
    lower = np.exp(brentq(lambda th: law(th)[j:].sum() - half, -36, 36, xtol=1e-12))
    upper = np.exp(brentq(lambda th: law(th)[: j + 1].sum() - half, -36, 36, xtol=1e-12))
    mle = np.exp(brentq(lambda th: (law(th) * idx).sum() - j, -36, 36, xtol=1e-12))
    return p, lower, upper, mle


def numpy_stratified_bootstrap(values, n_tasks, n_policies, n_eps, n_reps, rng, chunk=1000):
    """Baseline: equal cells (n_eps each), values shaped (tasks, policies, episodes)."""
    micro = np.empty((n_reps, n_policies))
    macro = np.empty((n_reps, n_policies))
    for start in range(0, n_reps, chunk):
        r = min(chunk, n_reps - start)
        tasks = rng.integers(0, n_tasks, size=(r, n_tasks))
        eps = rng.integers(0, n_eps, size=(r, n_tasks, n_policies, n_eps))
        pol = np.arange(n_policies)[None, None, :, None]
        drawn = values[tasks[:, :, None, None], pol, eps]
        means = drawn.mean(axis=3)
        macro[start : start + r] = means.mean(axis=1)
        micro[start : start + r] = means.mean(axis=1)  # equal cell sizes: micro = macro
    return micro, macro


def pandas_task_pairs(frame, a, b, keys, outcome="success") -> dict:
    """Baseline: per task, A's and B's trials merged on ``keys`` with pandas."""
    out = {}
    for task, grp in frame.groupby("task", sort=False):
        ga, gb = grp[grp["policy"] == a], grp[grp["policy"] == b]
        if not keys or ga.duplicated(keys).any() or gb.duplicated(keys).any():
            out[str(task)] = None
            continue
        merged = ga[[*keys, outcome]].merge(gb[[*keys, outcome]], on=keys, suffixes=("_a", "_b"))
        sa = merged[f"{outcome}_a"].to_numpy(bool)
        sb = merged[f"{outcome}_b"].to_numpy(bool)
        pairs = (int((sa & ~sb).sum()), int((~sa & sb).sum()), len(merged))
        out[str(task)] = pairs if len(merged) else None
    return out


def bench_task_pairs(repeat: int, rng) -> dict:
    import pandas as pd

    rows = [
        (p, f"t{t}", s, f"c{c}", int(rng.random() < 0.6))
        for t in range(40)
        for p in ("A", "B")
        for s in range(3)
        for c in range(200)
    ]
    log = pd.DataFrame(rows, columns=["policy", "task", "seed", "condition", "success"])
    keys = ["seed", "condition"]
    ours = best_of(lambda: task_pairs(log, "A", "B", keys), repeat)
    base = best_of(lambda: pandas_task_pairs(log, "A", "B", keys), max(1, repeat // 2))
    same = task_pairs(log, "A", "B", keys) == pandas_task_pairs(log, "A", "B", keys)
    return {
        "task_pairs_seconds_40_tasks": ours,
        "task_pairs_seconds_40_tasks_baseline": base,
        "task_pairs_speedup": base / ours,
        "task_pairs_identical": same,
    }


def run(repeat: int) -> dict:
    rng = np.random.default_rng(20251129)
    n = 500
    rates_a = np.linspace(0.55, 0.85, 10)
    k_a = rng.binomial(n, rates_a)
    k_b = rng.binomial(n, np.minimum(rates_a + 0.04, 0.99))
    n_a = np.full(10, n)
    n_b = np.full(10, n)
    exact_stratified_test(k_a[:2], n_a[:2], k_b[:2], n_b[:2])  # warm-up (JIT / cache)
    ours = best_of(lambda: exact_stratified_test(k_a, n_a, k_b, n_b), repeat)
    base = best_of(lambda: scipy_exact_stratified(k_a, n_a, k_b, n_b), max(1, repeat // 2))
    res = exact_stratified_test(k_a, n_a, k_b, n_b)
    ref = scipy_exact_stratified(k_a, n_a, k_b, n_b)
    got = (res.pvalue, res.odds_ratio_lower, res.odds_ratio_upper, res.odds_ratio)
    max_rel = max(abs(g - r) / abs(r) for g, r in zip(got, ref, strict=True))

    n_t, n_p, n_e, reps = 10, 5, 50, 10_000
    vals = (rng.random((n_t, n_p, n_e)) < rng.uniform(0.4, 0.95, (n_t, n_p, 1))).astype(float)
    flat = np.ascontiguousarray(vals.reshape(-1))
    starts = np.arange(0, flat.size + 1, n_e, dtype=np.int64)
    mk.stratified_bootstrap(flat, starts, n_t, n_p, 10, True, np.random.default_rng(0))
    boot = best_of(
        lambda: mk.stratified_bootstrap(
            flat, starts, n_t, n_p, reps, True, np.random.default_rng(1)
        ),
        repeat,
    )
    boot_base = best_of(
        lambda: numpy_stratified_bootstrap(vals, n_t, n_p, n_e, reps, np.random.default_rng(1)),
        max(1, repeat // 2),
    )
    return {
        "exact_stratified_seconds_10_tasks_500": ours,
        "exact_stratified_seconds_10_tasks_500_baseline": base,
        "exact_stratified_speedup": base / ours,
        "exact_stratified_max_rel_diff": max_rel,
        "exact_stratified_pvalue": res.pvalue,
        "exact_stratified_target_seconds": 0.05,
        "stratified_bootstrap_seconds_10k": boot,
        "stratified_bootstrap_seconds_10k_baseline": boot_base,
        "stratified_bootstrap_speedup": boot_base / boot,
        "stratified_bootstrap_target_seconds": 1.0,
        **bench_task_pairs(repeat, rng),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs")
    args = parser.parse_args()
    r = run(args.repeat)
    if args.json:
        print(json.dumps(r, indent=2))
        return
    print(
        "exact stratified, 10 tasks x 500 per arm: "
        f"{r['exact_stratified_seconds_10_tasks_500']:.4f} s (target <= 0.05 s); SciPy/NumPy "
        f"baseline {r['exact_stratified_seconds_10_tasks_500_baseline']:.4f} s, speedup "
        f"{r['exact_stratified_speedup']:.1f}x, max rel diff "
        f"{r['exact_stratified_max_rel_diff']:.1e}"
    )
    print(
        f"stratified bootstrap, 10k x (10 tasks x 50 eps x 5 policies): "
        f"{r['stratified_bootstrap_seconds_10k']:.3f} s (target <= 1 s); NumPy baseline "
        f"{r['stratified_bootstrap_seconds_10k_baseline']:.3f} s, speedup "
        f"{r['stratified_bootstrap_speedup']:.1f}x"
    )
    print(
        f"task_pairs, 40 tasks x 3 seeds x 200 conditions: "
        f"{r['task_pairs_seconds_40_tasks']:.4f} s;"
        f" pandas merge per task {r['task_pairs_seconds_40_tasks_baseline']:.4f} s, speedup "
        f"{r['task_pairs_speedup']:.1f}x, identical: {r['task_pairs_identical']}"
    )


if __name__ == "__main__":
    main()
