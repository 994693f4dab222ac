"""The real trials alone: exact bounds for p_R from k of n, the parts the sim + real methods
fall back on or intersect with.

:func:`cp_bounds`, :func:`cp_lower_bound`, :func:`cp_each_count`
    Clopper and Pearson's interval [1]_ (two-sided and one-sided), vectorised over counts;
    ``clopper_pearson`` and the fallback of the joint methods where their bounds cross.
:func:`blaker_table`, :func:`blaker_bounds`
    Blaker's exact interval [2]_ (inside Clopper-Pearson's at the same level, a few percent
    shorter), the real-only part of ``discordant_exact``; Clopper-Pearson's above
    :data:`BLAKER_MAX_N`.

References
----------
.. [1] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in
   the case of the binomial", Biometrika 26 (4), 404-413, 1934.
.. [2] H. Blaker, "Confidence curves and improved exact confidence intervals for discrete
   distributions", Canadian Journal of Statistics 28 (4), 783-798, 2000.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special, stats

#: Largest n Blaker's tables are built for; above it :func:`blaker_table` is Clopper-Pearson's.
BLAKER_MAX_N = 400


def rate_grid(low: float, high_gap: float, k: int) -> np.ndarray:
    """Rates in [0, 1]: 4001 uniform points, plus ``k`` geometric ones from ``low`` to 0.01
    and ``k`` from 1 - 0.01 to 1 - ``high_gap`` (the binomial moves fastest near the ends)."""
    return np.unique(
        np.concatenate(
            [
                np.linspace(0.0, 1.0, 4001),
                np.geomspace(low, 0.01, k),
                1.0 - np.geomspace(high_gap, 0.01, k),
            ]
        )
    )


def cp_bounds(k, n, alpha: float):
    """Clopper-Pearson bounds at level 1 - alpha, arrays; n = 0 gives [0, 1]."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    tail = alpha / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = special.betaincinv(k, n - k + 1.0, tail)
        hi = special.betainccinv(k + 1.0, n - k, tail)
    lo = np.where(k == 0, 0.0, lo)
    hi = np.where(k == n, 1.0, hi)
    return lo, hi


def blaker_gamma(p: np.ndarray, n: int) -> np.ndarray:
    """Blaker's acceptability gamma[g, k] of rate p[g] at count k of Binomial(n):
    P_p(min(F(X), S(X)) <= min(F(k), S(k))), F and S the lower and upper tail
    probabilities; ties (relative 1e-10) count as <=, which only enlarges the set."""
    x = np.arange(n + 1)
    pmf = stats.binom.pmf(x[None, :], n, np.asarray(p, dtype=np.float64)[:, None])
    m = np.minimum(np.cumsum(pmf, axis=1), np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1])
    order = np.argsort(m, axis=1, kind="stable")
    ms = np.take_along_axis(m, order, axis=1)
    cum = np.cumsum(np.take_along_axis(pmf, order, axis=1), axis=1)
    rows = p.size
    off = 4.0 * np.arange(rows)[:, None]  # m is in [0, 1]: rows do not overlap
    idx = np.searchsorted((ms + off).ravel(), (m * (1.0 + 1e-10) + off).ravel(), side="right")
    return cum.ravel()[idx - 1].reshape(rows, n + 1)


#: Rate grid of the Blaker table: uniform plus geometric towards 0 and 1.
BLAKER_GRID = rate_grid(1e-10, 1e-10, 400)


@functools.lru_cache(maxsize=64)
def blaker_table(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Blaker's exact interval [2]_ at level 1 - alpha for every count 0..n: the convex hull
    of {p : gamma(p, k) > alpha}, its ends found on :data:`BLAKER_GRID` and refined by
    bisection (50 steps; the returned end is the outer one). Contained in Clopper-Pearson's
    interval at the same level. Clopper-Pearson for n > :data:`BLAKER_MAX_N`."""
    if n > BLAKER_MAX_N:
        return cp_bounds(np.arange(n + 1), n, alpha)
    g = BLAKER_GRID
    gam = blaker_gamma(g, n)
    lo, hi = np.zeros(n + 1), np.ones(n + 1)
    for k in range(n + 1):
        acc = np.nonzero(gam[:, k] > alpha)[0]
        i, j = int(acc[0]), int(acc[-1])
        if i > 0:
            lo[k] = _blaker_edge(g[i - 1], g[i], k, n, alpha, accepted_above=True)[0]
        if j < g.size - 1:
            hi[k] = _blaker_edge(g[j], g[j + 1], k, n, alpha, accepted_above=False)[1]
    lo.setflags(write=False)
    hi.setflags(write=False)
    return lo, hi


def _blaker_edge(a: float, b: float, k: int, n: int, alpha: float, accepted_above: bool):
    """Bisect [a, b] (50 steps) for where Blaker's gamma(., k) of Binomial(n) crosses alpha;
    the accepted rates lie above the crossing (a lower end) or below it (an upper end).
    Returns the final bracket (a, b)."""
    for _ in range(50):
        mid = 0.5 * (a + b)
        if (blaker_gamma(np.array([mid]), n)[0, k] > alpha) == accepted_above:
            b = mid
        else:
            a = mid
    return a, b


def blaker_bounds(k, n: int, alpha: float):
    """Blaker's bounds (:func:`blaker_table`) at count(s) k of n, level 1 - alpha."""
    lo, hi = blaker_table(int(n), float(alpha))
    return lo[k], hi[k]


def cp_lower_bound(k, n: int, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound of k of n at ``level`` (0 at k = 0)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(all="ignore"):
        lo = special.betaincinv(k, n - k + 1.0, level)
    return np.where(k > 0, lo, 0.0)


def cp_each_count(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson's (lower, upper) for every count 0..n at alpha/2 a side: the interval
    of the joint methods where their two one-sided bounds cross."""
    k = np.arange(n + 1)
    return cp_lower_bound(k, n, alpha / 2.0), 1.0 - cp_lower_bound(n - k, n, alpha / 2.0)
