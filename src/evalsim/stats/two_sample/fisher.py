"""Fisher's exact test for two binomial proportions (two-sided), equal to SciPy's.

For ``k1`` successes of ``n1`` trials against ``k2`` of ``n2``, the two-sided p-value is the
total hypergeometric probability, with the margins fixed, of every table no more likely than
the observed one [1]_. "No more likely" uses SciPy's relative tolerance: a table ``y``
counts when ``pmf(y) < pmf(k1) * (1 + 1e-14)``. That tolerance is what
``scipy.stats.fisher_exact`` uses in the pinned SciPy 1.17.1 (``epsilon = 1e-14`` in
``scipy/stats/_stats_py.py``); lesson 25's hand-written ``fisher_p`` uses ``1 + 1e-7``. The two
count the same tables unless two tables of one margin have probabilities that differ by a
relative amount in (0, 1e-7]; an exact integer check
(:func:`evalsim.products.fisher.count_near_ties`) finds no such pair for n1, n2 <= 130.

:func:`fisher_pvalue_table` computes all ``(n1 + 1)(n2 + 1)`` p-values at once: one
hypergeometric pmf per margin total ``K``, built from the mode by a ratio recurrence, sorted
once by merging its two monotone sides (O(m) for m tables), and a cumulative sum that gives
every table's p-value of that margin. Weights carry a separate power-of-two exponent, so
p-values keep their relative accuracy down to the smallest subnormal double.

The rejection convention is ``p < alpha`` (as the documents) with the tie rule of
:mod:`evalsim.stats.decision` (a p within 1e-9 relative of alpha counts as equal and does
not reject), see :func:`fisher_rejects`.

A p-value below the smallest subnormal double (about 5e-324) is returned as 0.0; that only
happens for tables far from their margin's mode at n in the thousands, and it still rejects.

References
----------
.. [1] R. A. Fisher, "The Design of Experiments", 1935; SciPy ``scipy.stats.fisher_exact``.
.. [2] A. Agresti, "Categorical Data Analysis", 3rd ed., 2013, section 3.5.
"""

from __future__ import annotations

import numpy as np

from evalsim.stats._validate import check_alpha, check_counts, check_n
from evalsim.stats.decision import rejects
from evalsim.stats.two_sample import _fisher_kernels as _k

__all__ = [
    "ALTERNATIVES",
    "REL_TOL",
    "fisher_pvalue",
    "fisher_pvalue_one_sided",
    "fisher_pvalue_table",
    "fisher_rejects",
]

#: Alternatives of the one-sided tests (arm 1 against arm 2).
ALTERNATIVES = ("greater", "less")

REL_TOL = _k.REL_TOL


def fisher_pvalue(k1, n1, k2, n2):
    """Two-sided Fisher exact p-value for ``k1/n1`` against ``k2/n2``.

    Equal to ``scipy.stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue`` to about
    1e-14 relative (tested to 1e-12 on every table with n1, n2 <= 60 and on random tables
    up to n = 2000). The kernel takes under a microsecond at n = 20; this public call adds
    its argument checks (about 10 us).

    Parameters
    ----------
    k1, n1, k2, n2 : int or array_like of int
        Successes and trials of each arm; ``0 <= k <= n``, ``n >= 1``. Arrays broadcast.

    Returns
    -------
    float or numpy.ndarray
        The p-value in (0, 1] (a float for scalar input).

    Raises
    ------
    ValueError
        For a negative or non-integer count, ``n < 1`` or ``k > n``, quoting the value.

    Examples
    --------
    >>> round(fisher_pvalue(14, 20, 18, 20), 3)
    0.235
    """
    k1, n1 = check_counts(k1, n1)
    k2, n2 = check_counts(k2, n2)
    if all(isinstance(v, int) for v in (k1, n1, k2, n2)):
        w = np.empty(n1 + 1, dtype=np.float64)
        lev = np.empty(n1 + 1, dtype=np.int64)
        return float(_k.pvalue_scalar(k1, n1, k2, n2, w, lev))
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.int64) for v in (k1, n1, k2, n2)))
    flat = [np.ascontiguousarray(a).ravel() for a in arrays]
    out = np.empty(flat[0].shape[0], dtype=np.float64)
    _k.pvalue_array(flat[0], flat[1], flat[2], flat[3], out)
    return out.reshape(arrays[0].shape)


def fisher_pvalue_table(n1, n2) -> np.ndarray:
    """Two-sided Fisher p-values of every table with ``n1`` and ``n2`` trials.

    Parameters
    ----------
    n1, n2 : int
        Trials per arm (>= 1).

    Returns
    -------
    numpy.ndarray
        Shape ``(n1 + 1, n2 + 1)``; entry ``[k1, k2]`` is ``fisher_pvalue(k1, n1, k2, n2)``.

    Notes
    -----
    One hypergeometric pmf per margin ``K = k1 + k2`` (not one per table): O(m) to build and
    to sort (two monotone sides merged), and one pass for all ``m`` p-values of the margin.
    At n1 = n2 = 100 that is about 10^4 times faster than looping ``scipy.stats.fisher_exact``
    over the 10^4 tables (``benchmarks/bench_stats.py``).
    """
    n1 = check_n(n1, "n1")
    n2 = check_n(n2, "n2")
    if not isinstance(n1, int) or not isinstance(n2, int):
        raise ValueError(f"n1 and n2 must be single integers, got n1={n1!r}, n2={n2!r}")
    out = np.empty((n1 + 1, n2 + 1), dtype=np.float64)
    _k.pvalue_table(n1, n2, out)
    return out


def fisher_rejects(n1, n2, alpha=0.05) -> np.ndarray:
    """Rejection region of the two-sided Fisher test at level ``alpha``: ``p < alpha``.

    The convention is strict (``p < alpha``), as in the documents, with the tie rule of
    :func:`evalsim.stats.decision.rejects`: a p-value within 1e-9 (relative) of ``alpha`` is
    an exact tie and is not rejected. The same rule decides
    :func:`evalsim.stats.two_sample.power.fisher_power` and the peeking regions.

    Parameters
    ----------
    n1, n2 : int
        Trials per arm (>= 1).
    alpha : float
        Significance level in (0, 1).

    Returns
    -------
    numpy.ndarray of bool
        Shape ``(n1 + 1, n2 + 1)``; ``True`` where the table ``[k1, k2]`` is rejected.
    """
    alpha = check_alpha(alpha)
    return rejects(fisher_pvalue_table(n1, n2), alpha)


def fisher_pvalue_one_sided(k1, n1, k2, n2, alternative: str) -> float:
    """One-sided Fisher exact p-value for arm 1 (``k1/n1``) against arm 2 (``k2/n2``).

    ``alternative="greater"``: arm 1's rate is the higher, ``p = P(X >= k1)``; ``"less"``:
    ``p = P(X <= k1)``, with ``X`` hypergeometric (``n1 + n2`` trials, ``k1 + k2``
    successes, ``n1`` drawn) -- ``scipy.stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]],
    alternative=...)``. The tail comes from SciPy's hypergeometric ``cdf``/``sf`` (Boost).

    Parameters
    ----------
    k1, n1, k2, n2 : int
        Successes and trials of each arm.
    alternative : {"greater", "less"}

    Returns
    -------
    float
    """
    from scipy.stats import hypergeom

    k1, n1 = check_counts(k1, n1)
    k2, n2 = check_counts(k2, n2)
    if not all(isinstance(v, int) for v in (k1, n1, k2, n2)):
        raise ValueError("fisher_pvalue_one_sided takes single counts, not arrays")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    total, succ = n1 + n2, k1 + k2
    if alternative == "greater":
        p = float(hypergeom.sf(k1 - 1, total, succ, n1))
    else:
        p = float(hypergeom.cdf(k1, total, succ, n1))
    return min(max(p, 0.0), 1.0)
