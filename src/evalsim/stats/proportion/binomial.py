"""The binomial distribution: log-pmf, pmf, cdf, upper tail and P(X >= k), vectorised.

Every function takes ``k`` successes of ``n`` trials (integers, 0 <= k <= n, n >= 1; arrays
broadcast together with ``p``) and a success probability ``p`` in [0, 1]. Scalars in give a
float out, arrays give an array of the broadcast shape.

The pmf is computed in log space by Loader's saddle-point algorithm (the one behind R's
``dbinom``), accurate to a few ulp near the mode for any n and exact at p = 0 and p = 1.
The cdf and the upper tail sum the pmf over whichever tail is below one half, starting at k
and using the ratio recurrence f(j-1)/f(j) = j (1-p) / ((n-j+1) p), so neither loses
relative accuracy to a subtraction from 1, however far out in the tail k is. They agree
with ``scipy.stats.binom`` (Boost's incomplete beta) to about 1e-12 relative down to values
of 1e-200; below that SciPy 1.17 drifts (``binom.cdf(38, 2000, 0.3)`` is 30% above the exact
rational sum) while these sums keep full relative precision (tests/test_binomial.py).

References
----------
.. [1] C. Loader, "Fast and accurate computation of binomial probabilities", 2000.
"""

from __future__ import annotations

import numpy as np

from evalsim.stats._validate import check_counts, check_probability
from evalsim.stats.proportion import _kernels as _K

__all__ = ["binom_cdf", "binom_logpmf", "binom_pmf", "binom_sf", "prob_at_least"]


def _apply(quantity, k, n, p, shift=0):
    """Validate, broadcast and evaluate one :func:`~._kernels.binom_elementwise` quantity.

    Parameters
    ----------
    quantity : int
        ``_K.LOGPMF``, ``_K.CDF`` or ``_K.SF``.
    k, n, p
        As the public functions take them (validated here).
    shift : int
        Added to ``k`` after validation (``-1`` turns P(X > k - 1) into P(X >= k)).

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``k`` and ``p``, else an array of the broadcast shape.
    """
    k, n = check_counts(k, n)
    p = check_probability(p, "p")
    if isinstance(k, int) and isinstance(p, float):
        args = np.array([k + shift]), np.array([n]), np.array([p])
        return float(_K.binom_elementwise(*args, quantity)[0])
    kb, nb, pb = np.broadcast_arrays(
        np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64), np.asarray(p, np.float64)
    )
    out = _K.binom_elementwise(
        np.ascontiguousarray(kb.ravel() + shift),
        np.ascontiguousarray(nb.ravel()),
        np.ascontiguousarray(pb.ravel()),
        quantity,
    )
    return out.reshape(kb.shape)


def binom_logpmf(k, n, p):
    """log P(X = k) for X ~ Binomial(n, p); ``-inf`` where the probability is zero.

    Parameters
    ----------
    k, n : int or array_like of int
        Successes and trials, 0 <= k <= n, n >= 1.
    p : float or array_like of float
        Success probability in [0, 1].

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        k > n, negative or non-integer counts, p outside [0, 1].
    """
    return _apply(_K.LOGPMF, k, n, p)


def binom_pmf(k, n, p):
    """P(X = k) for X ~ Binomial(n, p) (the exponential of :func:`binom_logpmf`)."""
    value = binom_logpmf(k, n, p)
    return float(np.exp(value)) if isinstance(value, float) else np.exp(value)


def binom_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p) (SciPy's ``binom.cdf``)."""
    return _apply(_K.CDF, k, n, p)


def binom_sf(k, n, p):
    """P(X > k) for X ~ Binomial(n, p) (SciPy's ``binom.sf``)."""
    return _apply(_K.SF, k, n, p)


def prob_at_least(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p), e.g. the chance of scoring at least 9/10.

    Computed as ``binom_sf(k - 1, n, p)`` (1 at k = 0), summed directly over the tail.

    Examples
    --------
    >>> round(prob_at_least(9, 10, 221 / 300), 3)
    0.215
    """
    return _apply(_K.SF, k, n, p, shift=-1)
