"""Many policies over many tasks: pairwise tests with Holm, a compact letter display,
simultaneous intervals, probability of improvement and the interquartile mean.

:func:`rank_policies` is the one-call summary behind ``evalsim rank`` and tables T35/F09:

* every pair of policies is compared by the exact conditional stratified test over the
  tasks (:func:`evalsim.stats.multi.exact_stratified_test`), and the pairwise p-values are
  Holm-adjusted together (``multipletests``);
* :func:`compact_letter_display` turns the pairs that differ at ``alpha`` (adjusted) into
  letters: two policies that share a letter are not detectably different (insert-and-absorb,
  Piepho 2004) [1]_;
* :func:`simultaneous_intervals` gives intervals that hold jointly, from the stratified
  bootstrap's replicates by the max-|t| method (Westfall and Young 1993, ch. 2) [2]_: for
  every policy's macro success and for every pairwise difference;
* :func:`improvement_probability` is rliable's P(X > Y): per task, the Mann-Whitney
  ``U / (n_x n_y)`` over runs (ties count one half), averaged over tasks, with a stratified
  bootstrap interval [3]_;
* :func:`iqm` is the interquartile mean (25% trimmed mean) of per-run scores (one score per
  run and task, e.g. a training seed's success rate on a task) with rliable's stratified
  bootstrap interval (runs redrawn within each task) [3]_.

References
----------
.. [1] Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
   comparisons. J. Comput. Graph. Statist. 13, 456-466.
.. [2] Westfall, P. H. and Young, S. S. (1993). Resampling-Based Multiple Testing. Wiley.
.. [3] Agarwal, R., Schwarzer, M., Castro, P. S., Courville, A. and Bellemare, M. G. (2021).
   Deep reinforcement learning at the edge of the statistical precipice. NeurIPS;
   the ``rliable`` library (``metrics.aggregate_iqm``, ``probability_of_improvement``,
   ``library.StratifiedBootstrap``).
"""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass

import numpy as np

from evalsim.stats._validate import check_alpha, check_confidence, check_n
from evalsim.stats.multi import _kernels as _k
from evalsim.stats.multi.aggregate import (
    OutcomeGrid,
    aggregate_success,
    as_rng,
)
from evalsim.stats.multi.paired import stratified_mcnemar_test
from evalsim.stats.multi.tasks import adjust_pvalues, exact_stratified_test

__all__ = [
    "PAIRED_TEST",
    "UNPAIRED_TEST",
    "PairComparison",
    "Ranking",
    "compact_letter_display",
    "improvement_probability",
    "iqm",
    "rank_policies",
    "ranking_frame",
    "simultaneous_intervals",
]


#: The pairwise test of :func:`rank_policies` on a paired log (``compare --by task``'s
#: deciding test on the same log) and on an unpaired one.
PAIRED_TEST = "exact stratified McNemar test (paired)"
UNPAIRED_TEST = "exact stratified test"


def compact_letter_display(names, differ, order=None) -> dict[str, str]:
    """Letters such that two names share a letter exactly when they do not differ.

    Parameters
    ----------
    names : sequence of str
    differ : array_like of bool, shape (m, m)
        Symmetric; ``differ[i, j]`` is True when names i and j differ significantly.
    order : sequence of int, optional
        Ranking of the names (best first); letters are assigned in this order, so the best
        gets "a". Default: the given order.

    Returns
    -------
    dict
        name -> letters (e.g. "a", "ab", "b").

    Notes
    -----
    Insert-and-absorb [1]_: start with one column holding every name; for each differing
    pair, split every column holding both into a copy without the one and a copy without
    the other; drop columns contained in another. Beyond 26 letters, letters are reused
    with a numeric suffix.
    """
    names = [str(n) for n in names]
    m = len(names)
    diff = np.asarray(differ, dtype=bool)
    if diff.shape != (m, m):
        raise ValueError(f"differ must have shape ({m}, {m}), got {diff.shape}")
    if not np.array_equal(diff, diff.T):
        raise ValueError("differ must be symmetric")
    order = list(range(m)) if order is None else [int(i) for i in order]
    if sorted(order) != list(range(m)):
        raise ValueError(f"order must be a permutation of 0..{m - 1}, got {order!r}")
    columns: list[frozenset] = [frozenset(range(m))]
    for i, j in itertools.combinations(range(m), 2):
        if not diff[i, j]:
            continue
        new: list[frozenset] = []
        for col in columns:
            if i in col and j in col:
                new.extend([col - {i}, col - {j}])
            else:
                new.append(col)
        # absorb: keep the maximal sets only (and each once)
        uniq = list(dict.fromkeys(new))
        columns = [c for c in uniq if not any(c < other for other in uniq)]
    rank = {idx: r for r, idx in enumerate(order)}
    columns.sort(key=lambda c: sorted(rank[i] for i in c))
    letters = {i: "" for i in range(m)}
    for n_col, col in enumerate(columns):
        letter = string.ascii_lowercase[n_col % 26] + ("" if n_col < 26 else str(n_col // 26))
        for i in col:
            letters[i] += letter
    return {names[i]: letters[i] for i in range(m)}


def simultaneous_intervals(estimates, replicates, confidence: float = 0.95):
    """Max-|t| bootstrap intervals that cover all parameters at once with ``confidence``.

    Parameters
    ----------
    estimates : array_like of float, shape (m,)
        Point estimates.
    replicates : array_like of float, shape (n_reps, m)
        Bootstrap replicates of the same quantities.
    confidence : float
        Joint level.

    Returns
    -------
    (lower, upper, critical) : (numpy.ndarray, numpy.ndarray, float)
        ``estimate -/+ c * se`` with ``se`` the replicates' standard deviations and ``c``
        the ``confidence`` quantile of ``max_j |rep_j - estimate_j| / se_j`` [2]_.
        Parameters with ``se = 0`` get a zero-width interval and do not enter the maximum.
    """
    confidence = check_confidence(confidence)
    est = np.asarray(estimates, dtype=np.float64).ravel()
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.ndim != 2 or reps.shape[1] != est.size:
        raise ValueError(f"replicates must have shape (n_reps, {est.size}), got {reps.shape}")
    se = reps.std(axis=0, ddof=1)
    live = se > 0
    if not live.any():
        return est.copy(), est.copy(), 0.0
    t = np.abs(reps[:, live] - est[live]) / se[live]
    crit = float(np.quantile(t.max(axis=1), confidence))
    return est - crit * se, est + crit * se, crit


def _scores(scores) -> np.ndarray:
    s = np.ascontiguousarray(np.asarray(scores, dtype=np.float64))
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] < 1:
        raise ValueError(f"scores must be a (runs x tasks) matrix, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    return s


def _interval(reps: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = 100.0 * (1.0 - confidence) / 2.0
    lo, hi = np.percentile(reps, [tail, 100.0 - tail])
    return float(lo), float(hi)


def iqm(scores, n_reps: int = 2000, confidence: float = 0.95, seed=0):
    """Interquartile mean of a runs x tasks score matrix with a stratified-bootstrap interval.

    Parameters
    ----------
    scores : array_like, shape (runs, tasks)
        One score per run and task (e.g. a training seed's success rate on a task).
    n_reps : int
        Bootstrap replicates.
    confidence : float
        Level of the percentile interval.
    seed : int or numpy.random.Generator

    Returns
    -------
    (estimate, lower, upper) : tuple of float
        The 25% trimmed mean of all scores (``scipy.stats.trim_mean(scores, 0.25,
        axis=None)``, as rliable's ``aggregate_iqm``) and its percentile interval.
    """
    s = _scores(scores)
    rng, _ = as_rng(seed)
    flat = s.ravel().copy()
    est = float(_k._trimmed_mean_sorted(flat, flat.size))
    reps = _k.iqm_bootstrap(s, check_n(n_reps, "n_reps"), rng)
    return (est, *_interval(reps, check_confidence(confidence)))


def improvement_probability(scores_x, scores_y, n_reps: int = 2000, confidence=0.95, seed=0):
    """rliable's probability of improvement P(X > Y) with a stratified-bootstrap interval.

    Parameters
    ----------
    scores_x, scores_y : array_like, shape (runs, tasks)
        Per-run scores of policies X and Y on the same tasks (numbers of runs may differ).
    n_reps, confidence, seed
        As in :func:`iqm`; runs of X and Y are redrawn independently within each task.

    Returns
    -------
    (estimate, lower, upper) : tuple of float
        The mean over tasks of ``U / (n_x n_y)`` (Mann-Whitney; a tie counts one half).
    """
    x, y = _scores(scores_x), _scores(scores_y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(
            f"scores_x and scores_y must cover the same tasks, got {x.shape}, {y.shape}"
        )
    rng, _ = as_rng(seed)
    est = float(_k.improvement_probability(x, y))
    reps = _k.improvement_bootstrap(x, y, check_n(n_reps, "n_reps"), rng)
    return (est, *_interval(reps, check_confidence(confidence)))


@dataclass(frozen=True)
class PairComparison:
    """Policies ``first`` vs ``second`` over the tasks.

    ``pvalue``: exact stratified two-sided p (odds ratio of ``second`` vs ``first``);
    ``pvalue_holm``: Holm-adjusted over all pairs; ``odds_ratio`` with its exact interval;
    ``diff_macro`` = macro(second) - macro(first) with a simultaneous interval;
    ``prob_improvement`` = P(second > first) (rliable) with its bootstrap interval.
    """

    first: str
    second: str
    pvalue: float
    pvalue_holm: float
    differ: bool
    odds_ratio: float
    odds_ratio_lower: float
    odds_ratio_upper: float
    diff_macro: float
    diff_lower: float
    diff_upper: float
    prob_improvement: float
    prob_improvement_lower: float
    prob_improvement_upper: float


@dataclass(frozen=True)
class Ranking:
    """Result of :func:`rank_policies`.

    Attributes
    ----------
    order : tuple of str
        Policies, best macro success first.
    letters : dict
        Compact letter display.
    aggregates : dict
        policy -> PolicyAggregate.
    simultaneous : dict
        policy -> (lower, upper) joint interval of macro success (max-|t|, clipped to
        [0, 1]; pairwise differences are clipped to [-1, 1]).
    iqm : dict
        policy -> (estimate, lower, upper), or empty when there are no per-run scores.
    pairs : list of PairComparison
    alpha, confidence : float
    critical_value : float
        The max-|t| critical value of the pairwise simultaneous intervals.
    tasks : str
        "sample" or "fixed": what the simultaneous intervals treat the tasks as.
    test : str
        The pairwise test: :data:`PAIRED_TEST` on a paired log, else :data:`UNPAIRED_TEST`.
    """

    order: tuple
    letters: dict
    aggregates: dict
    simultaneous: dict
    iqm: dict
    pairs: list
    alpha: float
    confidence: float
    critical_value: float
    tasks: str = "sample"
    test: str = "exact stratified test"


def _run_scores(grid: OutcomeGrid, runs, policy: int) -> np.ndarray | None:
    """runs x tasks matrix of per-run success rates of one policy, or None."""
    if runs is None:
        return None
    n_t = len(grid.tasks)
    cols = []
    for t in range(n_t):
        labels = runs[t][policy]
        vals = grid.cell(t, policy)
        uniq = list(dict.fromkeys(labels))
        cols.append([float(vals[np.asarray(labels) == u].mean()) for u in uniq])
    if len({len(c) for c in cols}) != 1:
        return None
    return np.asarray(cols, dtype=np.float64).T


def rank_policies(
    grid: OutcomeGrid,
    runs=None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_reps: int = 2000,
    seed=0,
    tasks: str = "sample",
    paired=None,
) -> Ranking:
    """Rank two or more policies over the tasks, with letters and joint intervals.

    Parameters
    ----------
    grid : OutcomeGrid
        Episodes of every policy on every task.
    runs : nested sequence, optional
        ``runs[task_index][policy_index]``: the run (training seed) label of each episode of
        that cell, in the cell's order. With runs, per-run scores are the runs' success rates
        and IQM / P(X > Y) use them (rliable's setting); without, IQM is skipped and
        P(X > Y) uses the episodes as runs (for 0/1 outcomes it is then
        ``0.5 + (p_x - p_y) / 2`` per task).
    alpha : float
        Level of the pairwise tests (Holm-adjusted p < alpha: the pair differs).
    confidence : float
        Level of the intervals.
    n_reps : int
        Bootstrap replicates.
    seed : int or numpy.random.Generator
    tasks : {"sample", "fixed"}
        What the simultaneous intervals (of macro success and of the pairwise differences)
        treat the tasks as. ``"sample"``: the stratified bootstrap redraws the tasks, then
        the episodes (the intervals answer "other tasks from the same population");
        ``"fixed"``: only the episodes are redrawn, these tasks kept -- the meaning of the
        exact stratified tests behind the letters, which condition on the tasks. With
        ``"sample"`` the letters and the intervals can disagree (a pair that differs by its
        test while its interval holds 0), because they answer different questions.
    paired : dict, optional
        For a paired log (every policy ran the same conditions of each task):
        ``{(i, j): (x, y)}`` for every pair i < j, ``x``/``y`` the per-task counts of
        conditions where only policy i / only policy j succeeded. The pairs are then
        compared by the exact stratified McNemar test
        (:func:`evalsim.stats.multi.paired.stratified_mcnemar_test`, as ``compare --by
        task`` decides on a paired log) instead of the unpaired exact stratified test; the
        odds ratio is then the matched-pairs one (second vs first).

    Returns
    -------
    Ranking
    """
    if tasks not in ("sample", "fixed"):
        raise ValueError(f"tasks must be 'sample' or 'fixed', got {tasks!r}")
    alpha = check_alpha(alpha)
    confidence = check_confidence(confidence)
    m = len(grid.policies)
    if m < 2:
        raise ValueError(f"ranking needs at least 2 policies, got {list(grid.policies)}")
    rng, _ = as_rng(seed)
    streams = rng.spawn(2 + m * (m - 1) // 2 + m)
    aggs, reps = aggregate_success(grid, n_reps, confidence, streams[0])
    macro = np.array([a.macro for a in aggs])
    order = sorted(range(m), key=lambda p: (-macro[p], -aggs[p].micro, grid.policies[p]))
    macro_reps = reps.macro if tasks == "sample" else reps.macro_fixed
    lo, hi, _ = simultaneous_intervals(macro, macro_reps, confidence)
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)  # rates: the max-|t| band is symmetric
    pairs_idx = list(itertools.combinations(range(m), 2))
    raw, exact = [], []
    for i, j in pairs_idx:
        if paired is not None:
            res = stratified_mcnemar_test(*paired[(i, j)], confidence=confidence)
        else:
            res = exact_stratified_test(
                grid.k[:, i], grid.n[:, i], grid.k[:, j], grid.n[:, j], confidence
            )
        raw.append(res.pvalue)
        exact.append(res)
    holm = adjust_pvalues(raw, "holm", alpha)
    d_est = np.array([macro[j] - macro[i] for i, j in pairs_idx])
    d_reps = np.stack([macro_reps[:, j] - macro_reps[:, i] for i, j in pairs_idx], axis=1)
    d_lo, d_hi, crit = simultaneous_intervals(d_est, d_reps, confidence)
    d_lo, d_hi = np.clip(d_lo, -1.0, 1.0), np.clip(d_hi, -1.0, 1.0)
    scores = [_run_scores(grid, runs, p) for p in range(m)]
    have_runs = all(s is not None for s in scores)
    if not have_runs:
        scores = [
            np.stack([grid.cell(t, p) for t in range(len(grid.tasks))], axis=1)
            if len({int(v) for v in grid.n[:, p]}) == 1
            else None
            for p in range(m)
        ]
    pairs, differ = [], np.zeros((m, m), dtype=bool)
    for q, (i, j) in enumerate(pairs_idx):
        sig = bool(holm[q] < alpha)
        differ[i, j] = differ[j, i] = sig
        if scores[i] is not None and scores[j] is not None:
            pi = improvement_probability(scores[j], scores[i], n_reps, confidence, streams[2 + q])
        else:
            pi = (np.nan, np.nan, np.nan)
        pairs.append(
            PairComparison(
                first=grid.policies[i],
                second=grid.policies[j],
                pvalue=float(raw[q]),
                pvalue_holm=float(holm[q]),
                differ=sig,
                odds_ratio=exact[q].odds_ratio,
                odds_ratio_lower=exact[q].odds_ratio_lower,
                odds_ratio_upper=exact[q].odds_ratio_upper,
                diff_macro=float(d_est[q]),
                diff_lower=float(d_lo[q]),
                diff_upper=float(d_hi[q]),
                prob_improvement=pi[0],
                prob_improvement_lower=pi[1],
                prob_improvement_upper=pi[2],
            )
        )
    letters = compact_letter_display(grid.policies, differ, order)
    iqms = {}
    if have_runs:
        base = 2 + len(pairs_idx)
        for p in range(m):
            iqms[grid.policies[p]] = iqm(scores[p], n_reps, confidence, streams[base + p])
    return Ranking(
        order=tuple(grid.policies[p] for p in order),
        letters=letters,
        aggregates={a.policy: a for a in aggs},
        simultaneous={grid.policies[p]: (float(lo[p]), float(hi[p])) for p in range(m)},
        iqm=iqms,
        pairs=pairs,
        alpha=alpha,
        confidence=confidence,
        critical_value=crit,
        tasks=tasks,
        test=UNPAIRED_TEST if paired is None else PAIRED_TEST,
    )


def ranking_frame(r: Ranking, sigma: dict | None = None):
    """One row per policy of a :class:`Ranking`, best first (a ``pandas.DataFrame``): T35's
    rows and ``evalsim rank``'s table.

    ``sigma``: optional policy -> aim noise (mm), shown in a ``sigma_mm`` column.
    """
    import pandas as pd  # heavy: only the table needs it, not the ranking

    sigma = sigma or {}
    rows = []
    for rank, p in enumerate(r.order, start=1):
        a = r.aggregates[p]
        lo, hi = r.simultaneous[p]
        iq = r.iqm.get(p, (math.nan, math.nan, math.nan))
        differs = [
            q.second if q.first == p else q.first
            for q in r.pairs
            if q.differ and p in (q.first, q.second)
        ]
        rows.append(
            {
                "rank": rank,
                "policy": p,
                "sigma_mm": sigma.get(p, math.nan),
                "letters": r.letters[p],
                "k": a.k,
                "n": a.n,
                "macro": a.macro,
                "macro_lower": a.macro_lower,
                "macro_upper": a.macro_upper,
                "simultaneous_lower": lo,
                "simultaneous_upper": hi,
                "micro": a.micro,
                "iqm": iq[0],
                "iqm_lower": iq[1],
                "iqm_upper": iq[2],
                "differs_from": ", ".join(differs),
            }
        )
    df = pd.DataFrame(rows)
    nxt = {q: r.order[i + 1] for i, q in enumerate(r.order[:-1])}
    cols = ([], [], [])
    for p in df["policy"]:
        q = nxt.get(p)
        pair = next((x for x in r.pairs if {x.first, x.second} == {p, q}), None) if q else None
        if pair is None:
            vals = (math.nan, math.nan, math.nan)
        elif pair.second == p:
            vals = (pair.prob_improvement, pair.prob_improvement_lower, pair.prob_improvement_upper)
        else:
            vals = (
                1 - pair.prob_improvement,
                1 - pair.prob_improvement_upper,
                1 - pair.prob_improvement_lower,
            )
        for col, v in zip(cols, vals, strict=True):
            col.append(v)
    df["p_improve_over_next"], df["p_improve_lower"], df["p_improve_upper"] = cols
    return df
