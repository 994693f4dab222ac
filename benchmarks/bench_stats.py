"""Time evalsim's Fisher test, exact power and n search against SciPy, in one run.

Keys of ``--json`` (issue 2):

- ``fisher_all_tables_speedup_n100``: ``scipy.stats.fisher_exact`` looped over all 101 x 101
  tables at n1 = n2 = 100, divided by ``evalsim.stats.two_sample.fisher.fisher_pvalue_table(100,
  100)``
  (best of several runs after JIT warm-up). Target >= 1000.
- ``fisher_power_seconds_n3000``: exact power for 0.90 vs 0.92 at 3000 per arm, after warm-up
  (best of several). Target <= 0.3 s.
- ``n_for_power80_p090_p092``, ``n_search_seconds``: smallest n per arm with exact Fisher
  power >= 0.80 for 0.90 vs 0.92 (``n_for_fisher_power``, window ``--window``) and the seconds
  that search took. Target <= 5 s on one core.

- ``coverage_curves_seconds_n50``: exact coverage curves of every interval method at n = 50
  on a 2000-point grid of p (``coverage_curve``, after warm-up, best of several); and
  ``coverage_curves_speedup_n50``, the same curves from SciPy's pmf and statsmodels'
  intervals divided by it. Target <= 0.25 s (was a timed test).

Also measured: seconds per single p-value, SciPy vs evalsim (public function with argument
checks, and the bare numba kernel).

Usage: python benchmarks/bench_stats.py [--json] [--window 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import best_of
from scipy.stats import binom, fisher_exact
from statsmodels.stats.proportion import proportion_confint

from evalsim.stats.proportion.coverage import coverage_curve
from evalsim.stats.proportion.intervals import REGISTRY
from evalsim.stats.two_sample import _fisher_kernels as fk
from evalsim.stats.two_sample.fisher import fisher_pvalue, fisher_pvalue_table
from evalsim.stats.two_sample.power import fisher_power, n_for_fisher_power


def per_call(fn, calls: int, repeat: int) -> float:
    """Seconds per call of ``fn`` (best of ``repeat`` batches of ``calls``)."""
    return best_of(lambda: [fn() for _ in range(calls)], repeat) / calls


def scipy_all_tables(n1: int, n2: int) -> np.ndarray:
    out = np.empty((n1 + 1, n2 + 1))
    for a in range(n1 + 1):
        for b in range(n2 + 1):
            out[a, b] = fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue
    return out


#: The registry's methods that statsmodels has (the baseline), by statsmodels' name.
_SM = {m: e.statsmodels for m, e in REGISTRY.items() if e.statsmodels}


def reference_coverage_curves(n: int, grid: np.ndarray) -> None:
    """The same curves from SciPy's pmf and statsmodels' intervals (the baseline)."""
    k = np.arange(n + 1)
    pmf = binom.pmf(k[None, :], n, grid[:, None])
    for m in _SM:
        lo, hi = proportion_confint(k, n, alpha=0.05, method=_SM[m])
        inside = (lo[None, :] <= grid[:, None]) & (grid[:, None] <= hi[None, :])
        (pmf * inside).sum(axis=1)


def run(window: int, repeat: int) -> dict:
    # JIT warm-up (compiles or loads every kernel from the numba cache).
    fisher_pvalue(3, 10, 7, 10)
    fisher_pvalue_table(5, 5)
    fisher_power(0.5, 10, 0.7, 10)

    t0 = time.perf_counter()
    ref = scipy_all_tables(100, 100)
    scipy_seconds = time.perf_counter() - t0
    ours_seconds = best_of(lambda: fisher_pvalue_table(100, 100), max(repeat, 20))
    max_rel = float(np.max(np.abs(fisher_pvalue_table(100, 100) - ref) / ref))

    power_seconds = best_of(lambda: fisher_power(0.90, 3000, 0.92, 3000), repeat)
    power_n3000 = fisher_power(0.90, 3000, 0.92, 3000)

    t0 = time.perf_counter()
    res = n_for_fisher_power(0.90, 0.92, power=0.8, alpha=0.05, window=window)
    search_seconds = time.perf_counter() - t0

    grid = np.linspace(0.001, 0.999, 2000)
    for m in _SM:  # warm-up (JIT cache load); the methods the baseline has
        coverage_curve(m, 50, grid[:2])
    coverage_seconds = best_of(lambda: [coverage_curve(m, 50, grid) for m in _SM], repeat)
    coverage_ref_seconds = best_of(lambda: reference_coverage_curves(50, grid), repeat)

    single = {}
    for n in (20, 1000):
        k1, k2 = int(0.7 * n), int(0.9 * n)
        single[n] = {
            "scipy": per_call(
                lambda k1=k1, k2=k2, n=n: fisher_exact([[k1, n - k1], [k2, n - k2]]), 200, repeat
            ),
            "evalsim": per_call(
                lambda k1=k1, k2=k2, n=n: fisher_pvalue(k1, n, k2, n), 2000, repeat
            ),
        }
        work = (np.empty(n + 1), np.empty(n + 1, dtype=np.int64))
        single[n]["kernel"] = per_call(
            lambda k1=k1, k2=k2, n=n, work=work: fk.pvalue_scalar(k1, n, k2, n, *work), 2000, repeat
        )
    return {
        "fisher_all_tables_speedup_n100": scipy_seconds / ours_seconds,
        "fisher_all_tables_scipy_seconds_n100": scipy_seconds,
        "fisher_all_tables_evalsim_seconds_n100": ours_seconds,
        "fisher_all_tables_max_rel_diff_n100": max_rel,
        "fisher_power_seconds_n3000": power_seconds,
        "fisher_power_p090_p092_n3000": power_n3000,
        "n_for_power80_p090_p092": res.n,
        "n_first_for_power80_p090_p092": res.n_first,
        "n_search_window": window,
        "n_search_evaluations": res.evaluations,
        "n_search_seconds": search_seconds,
        "coverage_curves_seconds_n50": coverage_seconds,
        "coverage_curves_speedup_n50": coverage_ref_seconds / coverage_seconds,
        "single_pvalue_seconds_scipy_n20": single[20]["scipy"],
        "single_pvalue_seconds_evalsim_n20": single[20]["evalsim"],
        "single_pvalue_seconds_kernel_n20": single[20]["kernel"],
        "single_pvalue_seconds_scipy_n1000": single[1000]["scipy"],
        "single_pvalue_seconds_evalsim_n1000": single[1000]["evalsim"],
        "single_pvalue_seconds_kernel_n1000": single[1000]["kernel"],
    }


def print_table(r: dict) -> None:
    rows = [
        (
            "all 101x101 tables, n1 = n2 = 100",
            f"SciPy loop {r['fisher_all_tables_scipy_seconds_n100']:.3f} s, evalsim "
            f"{r['fisher_all_tables_evalsim_seconds_n100'] * 1e3:.3f} ms "
            f"(max rel diff {r['fisher_all_tables_max_rel_diff_n100']:.1e})",
            f"speedup {r['fisher_all_tables_speedup_n100']:.0f}x",
            ">= 1000x",
        ),
        (
            "exact power 0.90 vs 0.92, 3000/arm",
            f"power {r['fisher_power_p090_p092_n3000']:.4f}",
            f"{r['fisher_power_seconds_n3000'] * 1e3:.1f} ms",
            "<= 300 ms",
        ),
        (
            "n for 80% power, 0.90 vs 0.92",
            f"n = {r['n_for_power80_p090_p092']} (first {r['n_first_for_power80_p090_p092']}, "
            f"window {r['n_search_window']}, {r['n_search_evaluations']} evaluations)",
            f"{r['n_search_seconds']:.2f} s",
            "<= 5 s",
        ),
    ]
    rows.append(
        (
            "coverage curves, all methods, n = 50, 2000 p",
            "SciPy+statsmodels "
            f"{r['coverage_curves_seconds_n50'] * r['coverage_curves_speedup_n50'] * 1e3:.1f} ms",
            f"{r['coverage_curves_seconds_n50'] * 1e3:.1f} ms "
            f"({r['coverage_curves_speedup_n50']:.1f}x)",
            "<= 250 ms",
        )
    )
    for n in (20, 1000):
        s, e, k = (r[f"single_pvalue_seconds_{w}_n{n}"] for w in ("scipy", "evalsim", "kernel"))
        rows.append(
            (
                f"one p-value, n = {n} per arm",
                f"SciPy {s * 1e6:.1f} us, evalsim {e * 1e6:.2f} us, kernel {k * 1e6:.2f} us",
                f"{s / e:.0f}x ({s / k:.0f}x kernel)",
                "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    header = ("what", "measured", "result", "target")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--window", type=int, default=20, help="n search window (default 20)")
    parser.add_argument("--repeat", type=int, default=5, help="repeats; the best is kept")
    args = parser.parse_args()
    result = run(args.window, args.repeat)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
