"""Micro and macro success over many tasks, with stratified-bootstrap and analytic intervals.

*Micro* success pools the episodes (``sum k / sum n``: big tasks weigh more); *macro*
success averages the task rates (every task weighs the same). Document 004 asks for both
and for a bootstrap that resamples tasks and then episodes within them [1]_.

:func:`aggregate_success` gives, per policy:

* micro and macro with percentile intervals from the stratified bootstrap (numba kernel
  :func:`evalsim.stats.multi._kernels.stratified_bootstrap`): tasks drawn with replacement
  (the same draw for every policy), then episodes within each drawn task. This interval
  answers "what if we had drawn other tasks from the same population of tasks";
* the macro interval with the tasks fixed, two ways: the same bootstrap without the task
  draw, and analytically by MOVER (Zou and Donner 2008) over the tasks' Wilson intervals:
  for ``M = sum w_i p_i`` with ``w_i = 1 / T``,
  ``L = M - sqrt(sum w_i^2 (p_i - l_i)^2)``, ``U = M + sqrt(sum w_i^2 (u_i - p_i)^2)`` [2]_;
* the naive interval that treats all episodes as one sample (bootstrap over episodes, and
  Wilson on ``sum k / sum n``), and the ratio of the stratified micro interval's width to
  the naive one's (as in T28: > 1 means the naive interval is too narrow by that factor).

:func:`outcome_grid` turns a tidy trial table into the cell-by-cell arrays the kernels use
and refuses a task in which a policy has no trials, naming both.

References
----------
.. [1] Document 004, "Hierarchical structure: episodes nested inside tasks"; Davison, A. C.
   and Hinkley, D. V. (1997), Bootstrap Methods and their Application, section 3.8.
.. [2] Zou, G. Y. and Donner, A. (2008). Construction of confidence limits about effect
   measures: a general approach. Statistics in Medicine 27, 1693-1702.
.. [3] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
   inference. JASA 22, 209-212.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalsim.stats._validate import check_confidence, check_n
from evalsim.stats.multi import _kernels as _k

__all__ = [
    "OutcomeGrid",
    "PolicyAggregate",
    "aggregate_success",
    "as_rng",
    "mover_macro_interval",
    "outcome_grid",
    "task_pairs",
]


def as_rng(seed) -> tuple[np.random.Generator, int | None]:
    """A Generator from a non-negative int seed (fresh PCG64) or the Generator passed in."""
    if isinstance(seed, np.random.Generator):
        return seed, None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed)), int(seed)


@dataclass(frozen=True)
class OutcomeGrid:
    """Per-episode outcomes of several policies on several tasks, stored cell by cell.

    Attributes
    ----------
    tasks, policies : tuple of str
        In the order used by every array.
    values : numpy.ndarray
        float64 outcomes (1.0 success), cell ``c = task_index * len(policies) +
        policy_index`` owning ``values[starts[c]:starts[c + 1]]``.
    starts : numpy.ndarray
        int64 cell boundaries.
    k, n : numpy.ndarray
        int64 ``[task, policy]`` successes and trials.
    """

    tasks: tuple[str, ...]
    policies: tuple[str, ...]
    values: np.ndarray
    starts: np.ndarray
    k: np.ndarray
    n: np.ndarray

    def cell(self, task_index: int, policy_index: int) -> np.ndarray:
        c = task_index * len(self.policies) + policy_index
        return self.values[self.starts[c] : self.starts[c + 1]]


def outcome_grid(frame, tasks=None, policies=None, outcome: str = "success") -> OutcomeGrid:
    """Build an :class:`OutcomeGrid` from a tidy table (one row per trial).

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``task``, ``policy`` and ``outcome`` (bool or 0/1).
    tasks, policies : sequence of str, optional
        Which tasks and policies, in this order (default: in order of first appearance).
    outcome : str
        The outcome column.

    Raises
    ------
    ValueError
        A missing column, an unknown task or policy, or a task in which a policy has no
        trials (the message names both).
    """
    missing = [c for c in ("task", "policy", outcome) if c not in frame.columns]
    if missing:
        raise ValueError(f"the trial table lacks column(s) {missing}")
    # one factorisation per column: the labels in order of first appearance, and codes
    t_codes, t_uniq = pd.factorize(frame["task"], sort=False)
    p_codes, p_uniq = pd.factorize(frame["policy"], sort=False)
    task_col, policy_col = [str(t) for t in t_uniq], [str(p) for p in p_uniq]
    tasks = tuple(dict.fromkeys(task_col)) if tasks is None else tuple(map(str, tasks))
    policies = tuple(dict.fromkeys(policy_col)) if policies is None else tuple(map(str, policies))
    if not tasks or len(policies) < 1:
        raise ValueError("the trial table has no tasks or no policies")
    for name, wanted, have in (("task", tasks, task_col), ("policy", policies, policy_col)):
        unknown = sorted(set(wanted) - set(have))
        if unknown:
            raise ValueError(
                f"{name} {unknown[0]!r} is not in the trials ({name}s: "
                f"{', '.join(sorted(set(have)))})"
            )
    vals = frame[outcome].to_numpy().astype(np.float64)
    t_index = {t: i for i, t in enumerate(tasks)}
    p_index = {p: i for i, p in enumerate(policies)}
    ti = np.array([t_index.get(t, -1) for t in task_col], dtype=np.int64)[t_codes]
    pi = np.array([p_index.get(p, -1) for p in policy_col], dtype=np.int64)[p_codes]
    keep = (ti >= 0) & (pi >= 0)
    cell = ti[keep] * len(policies) + pi[keep]
    order = np.argsort(cell, kind="stable")
    counts = np.bincount(cell, minlength=len(tasks) * len(policies))
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        c = int(empty[0])
        raise ValueError(
            f"policy {policies[c % len(policies)]!r} has no trials in task "
            f"{tasks[c // len(policies)]!r}"
        )
    values = np.ascontiguousarray(vals[keep][order])
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    sums = np.bincount(cell, weights=vals[keep], minlength=counts.size)
    return OutcomeGrid(
        tasks=tasks,
        policies=policies,
        values=values,
        starts=starts,
        k=np.rint(sums).astype(np.int64).reshape(len(tasks), len(policies)),
        n=counts.astype(np.int64).reshape(len(tasks), len(policies)),
    )


def mover_macro_interval(k, n, confidence: float = 0.95) -> tuple[float, float, float]:
    """Macro success (mean of task rates) with the MOVER-Wilson interval, tasks fixed.

    Parameters
    ----------
    k, n : array_like of int
        Per task: successes and trials of one policy.
    confidence : float
        Level of each task's Wilson interval and of the result.

    Returns
    -------
    (macro, lower, upper) : tuple of float

    Notes
    -----
    MOVER [2]_ recovers the variance of each rate near each limit from its Wilson interval
    ``(l_i, u_i)`` [3]_, so the result inherits Wilson's good behaviour near 0 and 1, which
    the Wald interval of a mean of rates does not.
    """
    from evalsim.stats.proportion.intervals import wilson_interval

    k = np.atleast_1d(np.asarray(k, dtype=np.int64))
    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    iv = wilson_interval(k, n, confidence=check_confidence(confidence))
    p = k / n
    w = 1.0 / p.size
    macro = float(p.mean())
    lower = macro - math.sqrt(float(np.sum((w * (p - np.asarray(iv.lower))) ** 2)))
    upper = macro + math.sqrt(float(np.sum((w * (np.asarray(iv.upper) - p)) ** 2)))
    return macro, max(lower, 0.0), min(upper, 1.0)


@dataclass(frozen=True)
class PolicyAggregate:
    """Micro and macro success of one policy over the tasks, with their intervals.

    Attributes
    ----------
    policy : str
    k, n : int
        Successes and trials over all tasks.
    micro, macro : float
    micro_lower, micro_upper, macro_lower, macro_upper : float
        Stratified bootstrap (tasks, then episodes), percentile.
    macro_fixed_lower, macro_fixed_upper : float
        Bootstrap of episodes only (tasks fixed).
    mover_lower, mover_upper : float
        MOVER-Wilson macro interval (tasks fixed).
    naive_lower, naive_upper : float
        Bootstrap over all episodes as one sample.
    wilson_lower, wilson_upper : float
        Wilson on ``k / n`` (the naive analytic interval).
    """

    policy: str
    k: int
    n: int
    micro: float
    macro: float
    micro_lower: float
    micro_upper: float
    macro_lower: float
    macro_upper: float
    macro_fixed_lower: float
    macro_fixed_upper: float
    mover_lower: float
    mover_upper: float
    naive_lower: float
    naive_upper: float
    wilson_lower: float
    wilson_upper: float

    @property
    def width_ratio(self) -> float:
        """Stratified micro interval width over the naive bootstrap width."""
        naive = self.naive_upper - self.naive_lower
        return (self.micro_upper - self.micro_lower) / naive if naive > 0 else math.nan


@dataclass(frozen=True)
class AggregateReplicates:
    """The bootstrap replicates behind :func:`aggregate_success` (for ranking and plots).

    ``micro``, ``macro``: float64[n_reps, n_policies] with tasks resampled;
    ``macro_fixed``: tasks fixed; ``naive``: float64[n_reps, n_policies].
    """

    micro: np.ndarray
    macro: np.ndarray
    macro_fixed: np.ndarray
    naive: np.ndarray


def _percentile(x: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    tail = 100.0 * (1.0 - confidence) / 2.0
    return np.percentile(x, tail, axis=0), np.percentile(x, 100.0 - tail, axis=0)


#: From this many episodes on, a grid of 0/1 outcomes is bootstrapped from its cells'
#: counts (a cell's resampled successes are Binomial(size, k / size), the same law as
#: redrawing its episodes one by one, at O(1) per cell instead of O(size)); below it the
#: episodes are redrawn (the replicates of every existing product are unchanged).
COUNT_BOOTSTRAP_MIN_EPISODES = 100_000


def bootstrap_replicates(grid: OutcomeGrid, n_reps: int = 2000, seed=0) -> AggregateReplicates:
    """Replicates of micro/macro success per policy (see :func:`aggregate_success`).

    The three bootstraps draw from independent streams spawned from one generator. A grid
    of at least :data:`COUNT_BOOTSTRAP_MIN_EPISODES` 0/1 outcomes is resampled from its
    counts (same law, other random numbers).
    """
    n_reps = check_n(n_reps, "n_reps")
    rng, _ = as_rng(seed)
    streams = rng.spawn(3)
    n_t, n_p = len(grid.tasks), len(grid.policies)
    if grid.values.size >= COUNT_BOOTSTRAP_MIN_EPISODES and bool(
        np.all((grid.values == 0.0) | (grid.values == 1.0))
    ):
        k, n = grid.k.ravel(), grid.n.ravel()  # [task, policy] = cell order
        micro, macro = _k.stratified_bootstrap_counts(k, n, n_t, n_p, n_reps, True, streams[0])
        _, macro_fixed = _k.stratified_bootstrap_counts(k, n, n_t, n_p, n_reps, False, streams[1])
        naive = _k.count_bootstrap(grid.k.sum(axis=0), grid.n.sum(axis=0), n_reps, streams[2])
        return AggregateReplicates(micro, macro, macro_fixed, naive)
    micro, macro = _k.stratified_bootstrap(
        grid.values, grid.starts, n_t, n_p, n_reps, True, streams[0]
    )
    _, macro_fixed = _k.stratified_bootstrap(
        grid.values, grid.starts, n_t, n_p, n_reps, False, streams[1]
    )
    # The naive bootstrap needs each policy's episodes contiguous: reorder cells by policy.
    cells = [grid.cell(t, p) for p in range(n_p) for t in range(n_t)]
    by_policy = np.ascontiguousarray(np.concatenate(cells))
    p_starts = np.concatenate([[0], np.cumsum(grid.n.sum(axis=0))]).astype(np.int64)
    naive = _k.episode_bootstrap(by_policy, p_starts, n_reps, streams[2])
    return AggregateReplicates(micro, macro, macro_fixed, naive)


def aggregate_success(
    grid: OutcomeGrid, n_reps: int = 2000, confidence: float = 0.95, seed=0
) -> tuple[list[PolicyAggregate], AggregateReplicates]:
    """Micro and macro success of each policy with stratified, fixed-task and naive intervals.

    Parameters
    ----------
    grid : OutcomeGrid
        From :func:`outcome_grid`.
    n_reps : int
        Bootstrap replicates.
    confidence : float
        Level of every interval.
    seed : int or numpy.random.Generator
        A non-negative int (a fresh PCG64) or a Generator, e.g.
        ``evalsim.seeding.rng_for(study_seed, "multi", ...)``.

    Returns
    -------
    (list of PolicyAggregate, AggregateReplicates)
        One aggregate per policy in ``grid.policies`` order, and the replicates.
    """
    from evalsim.stats.proportion.intervals import wilson_interval

    confidence = check_confidence(confidence)
    reps = bootstrap_replicates(grid, n_reps, seed)
    mi_lo, mi_hi = _percentile(reps.micro, confidence)
    ma_lo, ma_hi = _percentile(reps.macro, confidence)
    mf_lo, mf_hi = _percentile(reps.macro_fixed, confidence)
    na_lo, na_hi = _percentile(reps.naive, confidence)
    out = []
    for p, name in enumerate(grid.policies):
        k, n = grid.k[:, p], grid.n[:, p]
        macro, mv_lo, mv_hi = mover_macro_interval(k, n, confidence)
        wil = wilson_interval(int(k.sum()), int(n.sum()), confidence=confidence)
        out.append(
            PolicyAggregate(
                policy=name,
                k=int(k.sum()),
                n=int(n.sum()),
                micro=float(k.sum() / n.sum()),
                macro=macro,
                micro_lower=float(mi_lo[p]),
                micro_upper=float(mi_hi[p]),
                macro_lower=float(ma_lo[p]),
                macro_upper=float(ma_hi[p]),
                macro_fixed_lower=float(mf_lo[p]),
                macro_fixed_upper=float(mf_hi[p]),
                mover_lower=mv_lo,
                mover_upper=mv_hi,
                naive_lower=float(na_lo[p]),
                naive_upper=float(na_hi[p]),
                wilson_lower=float(wil.lower),
                wilson_upper=float(wil.upper),
            )
        )
    return out, reps


#: Above this many possible (task, *keys) codes, :func:`task_pairs` numbers the key tuples
#: instead of combining per-column codes (their product would overflow int64).
CODE_LIMIT = 2**62


def task_pairs(frame, a: str, b: str, keys, outcome: str = "success") -> dict:
    """Per task, A and B's trials paired on ``keys`` (columns besides ``task`` that name a
    starting state, e.g. seed and trial or condition).

    Vectorised: one code per (task, *keys) over the whole table, so no per-task merge. Keys
    match as pandas' ``merge`` matches them (a missing value is one value of its own).

    Returns
    -------
    dict
        task -> ``(a_only, b_only, n_pairs)`` (A-only and B-only successes among the pairs),
        or None for a task whose trials cannot be paired (a key repeated within a policy, or
        no key shared by the two). Tasks in order of first appearance.
    """
    keys = list(keys)
    task_codes, task_names = pd.factorize(frame["task"], sort=False, use_na_sentinel=False)
    if not keys:
        return {str(t): None for t in task_names}
    code = task_codes.astype(np.int64)
    size = max(len(task_names), 1)
    for col in keys:
        c, uniq = pd.factorize(frame[col], sort=False, use_na_sentinel=False)
        m = max(len(uniq), 1)
        if size * m >= CODE_LIMIT:  # the combined code would overflow: number the tuples
            groups = frame.groupby(["task", *keys], sort=False, dropna=False)
            code = groups.ngroup().to_numpy(dtype=np.int64)
            break
        code = code * m + c
        size *= m
    pol = frame["policy"].to_numpy()
    success = frame[outcome].to_numpy(dtype=bool)
    unpairable = np.zeros(len(task_names), dtype=bool)
    sides = []
    for sel in (pol == a, pol == b):
        codes = code[sel]
        order = np.argsort(codes, kind="stable")
        repeated = np.flatnonzero(codes[order][1:] == codes[order][:-1])
        unpairable[task_codes[sel][order][repeated]] = True  # a key repeated within a policy
        sides.append((codes, success[sel], task_codes[sel]))
    (ca, sa, ta), (cb, sb, _) = sides
    _, ia, ib = np.intersect1d(ca, cb, return_indices=True)
    t, n_tasks = ta[ia], len(task_names)
    a_only = np.bincount(t, weights=sa[ia] & ~sb[ib], minlength=n_tasks)
    b_only = np.bincount(t, weights=~sa[ia] & sb[ib], minlength=n_tasks)
    n_pairs = np.bincount(t, minlength=n_tasks)
    return {
        str(name): None
        if unpairable[i] or n_pairs[i] == 0
        else (int(a_only[i]), int(b_only[i]), int(n_pairs[i]))
        for i, name in enumerate(task_names)
    }
