"""Numba kernels for many tasks and many policies (:mod:`evalsim.stats.multi.tasks`).

Kernels only: int64 counts, float64 values, preallocated outputs, no validation and no I/O.
The public functions in :mod:`evalsim.stats.multi.tasks`, :mod:`evalsim.stats.multi.aggregate` and
:mod:`evalsim.stats.multi.rank` validate first.

Exact stratified test. In stratum (task) i, arm B has ``n_b[i]`` trials, arm A ``n_a[i]``,
and ``t[i]`` successes in all. Given these margins, B's successes ``x_i`` follow Fisher's
noncentral hypergeometric law with odds ratio psi, and the statistic ``S = sum_i x_i`` has
``P(S = s) ~ c(s) psi**s`` on ``lo..hi`` with ``c`` the convolution of the central
hypergeometric pmfs [1]_ [2]_. :func:`strata_log_density` returns ``log c`` (normalised);
the tails and the mean at any psi are one pass over it (:func:`tail_probability`,
:func:`mean_statistic`).

Stratified bootstrap. Episodes are stored cell by cell, cell ``c = task * n_policies +
policy`` owning ``values[starts[c]:starts[c + 1]]``. One replicate draws the tasks with
replacement (the same draw for every policy, so policies stay comparable task by task),
then, in each drawn task, as many episodes as the cell holds from that cell.

References
----------
.. [1] Mehta, C. R., Patel, N. R. and Gray, R. (1985). Computing an exact confidence
   interval for the common odds ratio in several 2x2 contingency tables. JASA 80, 969-973.
.. [2] R Core Team, ``stats::mantelhaen.test`` (``exact = TRUE``), src/library/stats/R.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _stratum_log_pmf(nb, na, t, lo, hi, log_psi, out):
    """Hypergeometric log-pmf of B's successes on ``lo..hi`` tilted by ``psi**(x - lo)``
    (Fisher's noncentral law at odds ratio psi; central at ``log_psi = 0``), minus its
    maximum."""
    best = -np.inf
    base = (
        math.lgamma(nb + 1.0)
        + math.lgamma(na + 1.0)
        - math.lgamma(nb + na + 1.0)
        + math.lgamma(t + 1.0)
        + math.lgamma(nb + na - t + 1.0)
    )
    for j in range(hi - lo + 1):
        x = lo + j
        v = (
            base
            - (
                math.lgamma(x + 1.0)
                + math.lgamma(nb - x + 1.0)
                + math.lgamma(t - x + 1.0)
                + math.lgamma(na - t + x + 1.0)
            )
            + j * log_psi
        )
        out[j] = v
        if v > best:
            best = v
    for j in range(hi - lo + 1):
        out[j] -= best


@njit(cache=True)
def strata_log_density(n_b, n_a, t, log_psi):
    """Log of the density of ``S = sum x_i`` on its support at odds ratio ``exp(log_psi)``.

    Parameters
    ----------
    n_b, n_a, t : int64[K]
        Trials of B, trials of A and total successes of each stratum.
    log_psi : float
        The tilt: 0 gives the central (null) law. A tilt near the estimate keeps the values
        around the observed S representable when they are far below the null law's mode.

    Returns
    -------
    lo : int
        Smallest value of S; entry j of the density is ``P(S = lo + j)`` at psi = 1.
    log_density : float64[hi - lo + 1]
        ``log P(S = s)`` at that odds ratio, normalised to sum to one. Values below about
        1e-308 of the largest underflow to ``-inf``.

    Notes
    -----
    Each stratum's pmf is scaled to a maximum of one, the running convolution is rescaled
    to a maximum of one after each stratum, and the logs of the scales are summed apart:
    the result is exact up to rounding wherever it does not underflow.
    """
    k = n_b.shape[0]
    lo_tot = 0
    hi_tot = 0
    for i in range(k):
        lo_tot += max(0, t[i] - n_a[i])
        hi_tot += min(n_b[i], t[i])
    size = hi_tot - lo_tot + 1
    cur = np.zeros(size, dtype=np.float64)
    nxt = np.zeros(size, dtype=np.float64)
    cur[0] = 1.0
    length = 1
    logp = np.empty(size, dtype=np.float64)
    w = np.empty(size, dtype=np.float64)
    for i in range(k):
        lo = max(0, t[i] - n_a[i])
        hi = min(n_b[i], t[i])
        m = hi - lo + 1
        _stratum_log_pmf(n_b[i], n_a[i], t[i], lo, hi, log_psi, logp)
        for j in range(m):
            w[j] = math.exp(logp[j])
        new_len = length + m - 1
        for s in range(new_len):
            nxt[s] = 0.0
        for a in range(length):
            ca = cur[a]
            if ca == 0.0:
                continue
            for j in range(m):
                nxt[a + j] += ca * w[j]
        top = 0.0
        for s in range(new_len):
            if nxt[s] > top:
                top = nxt[s]
        for s in range(new_len):
            cur[s] = nxt[s] / top
        length = new_len
    total = 0.0
    for s in range(size):
        total += cur[s]
    out = np.empty(size, dtype=np.float64)
    log_total = math.log(total)
    for s in range(size):
        out[s] = math.log(cur[s]) - log_total if cur[s] > 0.0 else -np.inf
    return lo_tot, out


@njit(cache=True)
def _tilted_max(log_density, log_psi):
    best = -np.inf
    for j in range(log_density.shape[0]):
        v = log_density[j] + j * log_psi
        if v > best:
            best = v
    return best


@njit(cache=True)
def _tilted_weights(log_density, log_psi):
    """The law of ``S - lo`` at odds ratio ``exp(log_psi)``, unnormalised, and its total.

    Returns
    -------
    weights : float64[len(log_density)]
        ``exp(log_density[j] + j log_psi - max)``: the tilted density scaled to a largest
        weight of one.
    total : float
        Their sum, in index order.
    """
    best = _tilted_max(log_density, log_psi)
    weights = np.empty(log_density.shape[0], dtype=np.float64)
    total = 0.0
    for j in range(log_density.shape[0]):
        weights[j] = math.exp(log_density[j] + j * log_psi - best)
        total += weights[j]
    return weights, total


@njit(cache=True)
def tail_probability(log_density, j_obs, log_psi, upper):
    """``P(S >= s_obs)`` (``upper``) or ``P(S <= s_obs)`` at odds ratio ``exp(log_psi)``.

    ``j_obs = s_obs - lo``. The tilt ``psi**s`` is applied as ``psi**(s - lo)``, the same law.
    """
    weights, total = _tilted_weights(log_density, log_psi)
    tail = 0.0
    for j in range(weights.shape[0]):
        if (upper and j >= j_obs) or ((not upper) and j <= j_obs):
            tail += weights[j]
    return tail / total


@njit(cache=True)
def mean_statistic(log_density, log_psi):
    """``E[S - lo]`` at odds ratio ``exp(log_psi)``."""
    weights, total = _tilted_weights(log_density, log_psi)
    first = 0.0
    for j in range(weights.shape[0]):
        first += j * weights[j]
    return first / total


@njit(cache=True)
def two_sided_pvalue(log_density, j_obs, log_rel_tol):
    """R's rule: total probability (psi = 1) of the values no more likely than the observed,
    ``d(s) <= d(s_obs) * (1 + rel_tol)``, compared on the log scale."""
    cut = log_density[j_obs] + log_rel_tol
    p = 0.0
    for j in range(log_density.shape[0]):
        if log_density[j] <= cut:
            p += math.exp(log_density[j])
    return min(p, 1.0)


@njit(cache=True)
def _replicate_buffers(n_tasks, n_policies, n_reps):
    """The results and scratch of the task-then-episode bootstraps.

    Returns
    -------
    micro, macro : float64[n_reps, n_policies]
        The replicates' means (to fill).
    drawn : int64[n_tasks]
        A replicate's tasks.
    sums, counts, means : float64[n_policies]
        A replicate's per-policy outcome sums, episode counts and sums of cell means.
    """
    micro = np.empty((n_reps, n_policies), dtype=np.float64)
    macro = np.empty((n_reps, n_policies), dtype=np.float64)
    drawn = np.empty(n_tasks, dtype=np.int64)
    sums = np.empty(n_policies, dtype=np.float64)
    counts = np.empty(n_policies, dtype=np.float64)
    means = np.empty(n_policies, dtype=np.float64)
    return micro, macro, drawn, sums, counts, means


@njit(cache=True)
def _add_cell(sums, counts, means, p, s, size):
    """Add one drawn cell of policy ``p`` (``s`` successes of ``size``) to the sums."""
    sums[p] += s
    counts[p] += size
    means[p] += s / size


@njit(cache=True)
def _start_replicate(drawn, sums, counts, means, resample_tasks, rng):
    """A replicate's tasks (drawn with replacement, or all in order) and zeroed sums.

    Parameters
    ----------
    drawn : int64[n_tasks]
        Filled with the replicate's task indices.
    sums, counts, means : float64[n_policies]
        Set to zero: each policy's outcome sum, episode count and sum of cell means.
    resample_tasks : bool
        Draw the tasks (one ``rng.random()`` each) rather than take each once.
    rng : numpy.random.Generator
        The replicates' stream.
    """
    n_tasks = drawn.shape[0]
    for i in range(n_tasks):
        drawn[i] = int(rng.random() * n_tasks) if resample_tasks else i
    for p in range(sums.shape[0]):
        sums[p] = 0.0
        counts[p] = 0.0
        means[p] = 0.0


@njit(cache=True)
def _end_replicate(micro, macro, sums, counts, means, n_tasks):
    """A replicate's micro and macro means, per policy, from its sums.

    Parameters
    ----------
    micro, macro : float64[n_policies]
        The replicate's row of the results, filled.
    sums, counts, means : float64[n_policies]
        Each policy's outcome sum, episode count and sum of cell means over the drawn tasks.
    n_tasks : int
        Tasks per replicate.
    """
    for p in range(sums.shape[0]):
        micro[p] = sums[p] / counts[p]
        macro[p] = means[p] / n_tasks


@njit(cache=True)
def _resample_sum(values, lo, size, rng):
    """Sum of ``size`` draws with replacement from ``values[lo:lo + size]`` (one
    ``rng.random()`` each, index ``int(u * size)``)."""
    s = 0.0
    for _ in range(size):
        s += values[lo + int(rng.random() * size)]
    return s


@njit(cache=True)
def _stratified(cells, starts, from_counts, n_tasks, n_policies, n_reps, resample_tasks, rng):
    """The task-then-episode bootstrap of :func:`stratified_bootstrap` and
    :func:`stratified_bootstrap_counts`.

    Cell ``c`` holds ``starts[c + 1] - starts[c]`` episodes. Each replicate draws the tasks
    (:func:`_start_replicate`), then each drawn cell's successes: with ``from_counts``,
    ``Binomial(size, cells[c] / size)`` from the cell's success count ``cells[c]``; else
    the sum of ``size`` episodes redrawn from ``cells[starts[c]:starts[c + 1]]``.
    """
    micro, macro, drawn, sums, counts, means = _replicate_buffers(n_tasks, n_policies, n_reps)
    for r in range(n_reps):
        _start_replicate(drawn, sums, counts, means, resample_tasks, rng)
        for i in range(n_tasks):
            task = drawn[i]
            for p in range(n_policies):
                c = task * n_policies + p
                lo = starts[c]
                size = starts[c + 1] - lo
                if from_counts:
                    s = float(rng.binomial(size, cells[c] / size))
                else:
                    s = _resample_sum(cells, lo, size, rng)
                _add_cell(sums, counts, means, p, s, size)
        _end_replicate(micro[r], macro[r], sums, counts, means, n_tasks)
    return micro, macro


@njit(cache=True)
def stratified_bootstrap(values, starts, n_tasks, n_policies, n_reps, resample_tasks, rng):
    """Task-then-episode bootstrap replicates of micro and macro means, per policy.

    Parameters
    ----------
    values : float64[N]
        Per-episode outcome (1.0 / 0.0), stored cell by cell (see the module notes).
    starts : int64[n_tasks * n_policies + 1]
        Cell boundaries; every cell non-empty.
    n_tasks, n_policies, n_reps : int
        Shape of the data and number of replicates.
    resample_tasks : bool
        Draw the tasks with replacement (True) or keep every task once (False: only the
        episodes are resampled, the tasks are fixed).
    rng : numpy.random.Generator
        Advanced in place. Indices are ``int(u * size)`` with u uniform in [0, 1).

    Returns
    -------
    micro, macro : float64[n_reps, n_policies]
        Episode-weighted and task-weighted means of each replicate.
    """
    return _stratified(values, starts, False, n_tasks, n_policies, n_reps, resample_tasks, rng)


@njit(cache=True)
def episode_bootstrap(values, starts, n_reps, rng):
    """Naive bootstrap: each group's episodes resampled as one flat sample, ignoring tasks.

    ``values[starts[g]:starts[g + 1]]`` are group g's episodes; returns float64[n_reps, G]
    of replicate means.
    """
    n_groups = starts.shape[0] - 1
    out = np.empty((n_reps, n_groups), dtype=np.float64)
    for r in range(n_reps):
        for g in range(n_groups):
            lo = starts[g]
            size = starts[g + 1] - lo
            out[r, g] = _resample_sum(values, lo, size, rng) / size
    return out


@njit(cache=True)
def _trimmed_mean_sorted(x, n):
    """Mean of ``x[:n]`` after sorting, cutting ``int(0.25 n)`` values at each end
    (``scipy.stats.trim_mean(x, 0.25)``)."""
    s = np.sort(x[:n])
    cut = int(0.25 * n)
    total = 0.0
    for i in range(cut, n - cut):
        total += s[i]
    return total / (n - 2 * cut)


@njit(cache=True)
def _resample_column(scores, t, out, rng):
    """Task ``t``'s runs redrawn with replacement: ``out[i]`` (as many as the runs) is
    ``scores[int(u * n_runs), t]``, one ``rng.random()`` each."""
    n_runs = scores.shape[0]
    for i in range(n_runs):
        out[i] = scores[int(rng.random() * n_runs), t]


@njit(cache=True)
def iqm_bootstrap(scores, n_reps, rng):
    """Stratified bootstrap of the interquartile mean of a runs x tasks score matrix.

    Each replicate draws, independently for every task (column), as many runs as there are
    with replacement (rliable's ``StratifiedBootstrap`` with ``task_bootstrap=False``), and
    takes the 25% trimmed mean of all drawn scores. Returns float64[n_reps].
    """
    n_runs, n_tasks = scores.shape
    n = n_runs * n_tasks
    buf = np.empty(n, dtype=np.float64)
    out = np.empty(n_reps, dtype=np.float64)
    for r in range(n_reps):
        for t in range(n_tasks):
            _resample_column(scores, t, buf[t * n_runs : (t + 1) * n_runs], rng)
        out[r] = _trimmed_mean_sorted(buf, n)
    return out


@njit(cache=True)
def _u_fraction(x, y):
    """Mann-Whitney ``U / (len(x) len(y))`` of x over y: P(X > Y) + P(X = Y) / 2."""
    ys = np.sort(y)
    ny = ys.shape[0]
    total = 0.0
    for i in range(x.shape[0]):
        below = np.searchsorted(ys, x[i], side="left")
        not_above = np.searchsorted(ys, x[i], side="right")
        total += below + 0.5 * (not_above - below)
    return total / (x.shape[0] * ny)


@njit(cache=True)
def improvement_probability(scores_x, scores_y):
    """rliable's probability of improvement: the mean over tasks of each task's
    ``U / (n_x n_y)``; runs x tasks matrices with the same number of tasks."""
    n_tasks = scores_x.shape[1]
    total = 0.0
    for t in range(n_tasks):
        total += _u_fraction(
            np.ascontiguousarray(scores_x[:, t]), np.ascontiguousarray(scores_y[:, t])
        )
    return total / n_tasks


@njit(cache=True)
def improvement_bootstrap(scores_x, scores_y, n_reps, rng):
    """Bootstrap of :func:`improvement_probability`: runs of X and of Y redrawn
    independently within every task (rliable's ``StratifiedIndependentBootstrap``)."""
    nx, n_tasks = scores_x.shape
    ny = scores_y.shape[0]
    bx = np.empty(nx, dtype=np.float64)
    by = np.empty(ny, dtype=np.float64)
    out = np.empty(n_reps, dtype=np.float64)
    for r in range(n_reps):
        total = 0.0
        for t in range(n_tasks):
            _resample_column(scores_x, t, bx, rng)
            _resample_column(scores_y, t, by, rng)
            total += _u_fraction(bx, by)
        out[r] = total / n_tasks
    return out


@njit(cache=True)
def stratified_bootstrap_counts(k, n, n_tasks, n_policies, n_reps, resample_tasks, rng):
    """:func:`stratified_bootstrap` for 0/1 outcomes, from the cells' counts alone.

    Resampling ``size`` episodes with replacement from a cell with ``k`` successes out of
    ``size`` gives a success count ``Binomial(size, k / size)``: the same law as the
    episode-by-episode draw, at O(1) per cell instead of O(size). ``k``, ``n``:
    int64[n_tasks * n_policies], cell by cell as ``starts`` orders them. Returns micro and
    macro, float64[n_reps, n_policies].
    """
    starts = np.zeros(n.shape[0] + 1, dtype=np.int64)
    for c in range(n.shape[0]):
        starts[c + 1] = starts[c] + n[c]
    return _stratified(k, starts, True, n_tasks, n_policies, n_reps, resample_tasks, rng)


@njit(cache=True)
def count_bootstrap(k, n, n_reps, rng):
    """:func:`episode_bootstrap` for 0/1 outcomes: group g's replicate mean is
    ``Binomial(n[g], k[g] / n[g]) / n[g]``; float64[n_reps, G]."""
    n_groups = k.shape[0]
    out = np.empty((n_reps, n_groups), dtype=np.float64)
    for r in range(n_reps):
        for g in range(n_groups):
            out[r, g] = rng.binomial(n[g], k[g] / n[g]) / n[g]
    return out
