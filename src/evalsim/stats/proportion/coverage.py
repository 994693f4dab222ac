"""Exact coverage of a binomial-proportion interval, by a binomial sum (no simulation).

The coverage of an interval method at (n, p) is the probability, over k ~ Binomial(n, p),
that the interval computed from k of n contains p:

    C(n, p) = sum_{k=0}^{n} P(X = k; n, p) [lower(k, n) <= p <= upper(k, n)].

The n + 1 intervals are computed once; one numba kernel then sums the pmf for each p of a
grid. As a function of p the coverage jumps wherever p crosses an interval end and
oscillates, which is the picture of Brown, Cai and DasGupta (2001, fig. 1-5).

References
----------
.. [1] L. D. Brown, T. T. Cai, A. DasGupta, "Interval Estimation for a Binomial Proportion",
   Statistical Science 16 (2), 101-133, 2001.
"""

from __future__ import annotations

import numpy as np

from evalsim.stats._validate import check_n, check_probability
from evalsim.stats.proportion import _kernels as _K
from evalsim.stats.proportion.intervals import bounds, check_method, resolve_level

__all__ = ["coverage_curve", "coverage_of_bounds", "exact_coverage"]


def _all_bounds(method: str, n: int, confidence, z):
    check_method(method)
    n = check_n(n, "n")
    if not isinstance(n, int):
        raise ValueError(f"n must be a single integer, got {n!r}")
    zf, tail = resolve_level(confidence, z)
    k = np.arange(n + 1, dtype=np.int64)
    lower, upper = bounds(method, k, np.full(n + 1, n, dtype=np.int64), zf, tail)
    return n, lower, upper


def coverage_curve(method: str, n: int, p_grid, confidence: float = 0.95, z=None) -> np.ndarray:
    """Exact coverage of ``method`` at sample size ``n`` for every p in ``p_grid``.

    Parameters
    ----------
    method : str
        One of :data:`evalsim.stats.proportion.intervals.METHODS`.
    n : int
        Number of trials, >= 1.
    p_grid : array_like of float
        True success probabilities in [0, 1].
    confidence : float
        Nominal confidence level in (0, 1); ignored when ``z`` is given.
    z : float, optional
        Normal multiplier overriding ``confidence`` (e.g. 1.96).

    Returns
    -------
    numpy.ndarray
        Coverage probabilities, same shape as ``p_grid``.
    """
    _, lower, upper = _all_bounds(method, n, confidence, z)
    return coverage_of_bounds(lower, upper, p_grid)


def coverage_of_bounds(lower, upper, p_grid) -> np.ndarray:
    """Exact coverage of an interval given by its bounds at every k = 0..n, for each p.

    Parameters
    ----------
    lower, upper : array_like of float
        The interval computed from k successes of n, for k = 0..n (length n + 1 each): any
        interval rule, e.g. one of a reader's own.
    p_grid : array_like of float
        True success probabilities in [0, 1].

    Returns
    -------
    numpy.ndarray
        Coverage probabilities, same shape as ``p_grid``.
    """
    lower = np.ascontiguousarray(lower, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    if lower.ndim != 1 or lower.shape != upper.shape or lower.size < 2:
        raise ValueError(
            f"lower and upper must be two 1-d arrays of the same length n + 1 >= 2, got shapes "
            f"{lower.shape} and {upper.shape}"
        )
    grid = np.asarray(check_probability(p_grid, "p_grid"), dtype=np.float64)
    out = _K.coverage_from_bounds(lower, upper, lower.size - 1, np.ascontiguousarray(grid.ravel()))
    return out.reshape(grid.shape)


def exact_coverage(method: str, n: int, p: float, confidence: float = 0.95, z=None) -> float:
    """Exact probability that the ``method`` interval from k ~ Binomial(n, p) contains p.

    Examples
    --------
    >>> round(exact_coverage("wald", 5, 221 / 300, z=1.96), 3)
    0.764
    """
    p = check_probability(p, "p")
    if not isinstance(p, float):
        raise ValueError(f"p must be a single probability (use coverage_curve), got {p!r}")
    return float(coverage_curve(method, n, np.array([p]), confidence, z)[0])
