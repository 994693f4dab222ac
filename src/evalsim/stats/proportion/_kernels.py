"""Numba kernels for the binomial distribution and binomial-proportion intervals.

Kernels only: fixed dtypes (int64 counts, float64 probabilities), preallocated outputs, no
validation and no I/O. The public functions in :mod:`evalsim.stats.proportion.binomial`,
:mod:`evalsim.stats.proportion.intervals` and :mod:`evalsim.stats.proportion.coverage` validate
first.

The binomial log-pmf is Loader's saddle-point form (the algorithm behind R's ``dbinom``):

    log f(k; n, p) = stirlerr(n) - stirlerr(k) - stirlerr(n-k) - bd0(k, np) - bd0(n-k, nq)
                     - 0.5 * log(2 pi k (n-k) / n)

where ``stirlerr`` is the error of Stirling's formula and ``bd0(x, m) = x log(x/m) + m - x``
is evaluated by a series when x is close to m. It avoids the cancellation of
``lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1)`` and is accurate to a few ulp in relative
terms for every n, which is what makes 1e-12 agreement with SciPy possible at n = 10^7.
It is exact at p = 0 and p = 1 (pmf 1 at k = 0 resp. k = n, 0 elsewhere).

References
----------
.. [1] C. Loader, "Fast and accurate computation of binomial probabilities", 2000.
.. [2] R Core Team, src/nmath/dbinom.c, stirlerr.c, bd0.c.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
from numba import njit

_LN_2PI = 1.8378770664093454836  # log(2 pi)


def _stirlerr_table(n_max: int = 15) -> np.ndarray:
    """stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n) for n = 0..n_max, to 50 digits."""
    getcontext().prec = 50
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")
    out = np.zeros(n_max + 1)
    for n in range(1, n_max + 1):
        d = Decimal(n)
        val = (
            Decimal(math.factorial(n)).ln() - (d + Decimal("0.5")) * d.ln() + d - (2 * pi).ln() / 2
        )
        out[n] = float(val)
    return out


_SFERR = _stirlerr_table()


@njit(cache=True)
def _stirlerr(n):
    """Error of Stirling's approximation to log(n!), for integer-valued n >= 1."""
    if n <= 15.0:
        return _SFERR[int(n)]
    s0 = 0.083333333333333333333  # 1/12
    s1 = 0.00277777777777777777778  # 1/360
    s2 = 0.00079365079365079365079365  # 1/1260
    s3 = 0.000595238095238095238095238  # 1/1680
    s4 = 0.0008417508417508417508417508  # 1/1188
    nn = n * n
    if n > 500.0:
        return (s0 - s1 / nn) / n
    if n > 80.0:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35.0:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


@njit(cache=True)
def _bd0(x, m):
    """Deviance term x log(x/m) + m - x, accurate when x is close to m (x, m > 0)."""
    if abs(x - m) < 0.1 * (x + m):
        v = (x - m) / (x + m)
        s = (x - m) * v
        ej = 2.0 * x * v
        v = v * v
        for j in range(1, 1000):
            ej *= v
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return x * math.log(x / m) + m - x


@njit(cache=True)
def binom_logpmf(k, n, p):
    """log P(X = k) for X ~ Binomial(n, p); -inf outside 0..n. Scalar kernel."""
    if k < 0 or k > n:
        return -np.inf
    q = 1.0 - p
    if p == 0.0:
        return 0.0 if k == 0 else -np.inf
    if q == 0.0:
        return 0.0 if k == n else -np.inf
    nf = float(n)
    if k == 0:
        if p < 0.1:
            return -_bd0(nf, nf * q) - nf * p
        return nf * math.log1p(-p)
    if k == n:
        if q < 0.1:
            return -_bd0(nf, nf * p) - nf * q
        return nf * math.log(p)
    kf = float(k)
    mf = nf - kf
    lc = _stirlerr(nf) - _stirlerr(kf) - _stirlerr(mf) - _bd0(kf, nf * p) - _bd0(mf, nf * q)
    # log(k (n - k) / n): log1p(-k/n) loses relative accuracy as k/n -> 1 (cancellation in
    # 1 - k/n); there the mirrored form log((n - k)/n), with n - k exact, keeps it.
    if 2 * k <= n:
        lf = _LN_2PI + math.log(kf) + math.log1p(-kf / nf)
    else:
        lf = _LN_2PI + math.log(kf) + math.log(mf / nf)
    return lc - 0.5 * lf


@njit(cache=True)
def binom_pmf_vector(n, p):
    """P(X = k) for k = 0..n, X ~ Binomial(n, p): float64 array of length n + 1."""
    out = np.empty(n + 1, dtype=np.float64)
    for k in range(n + 1):
        out[k] = math.exp(binom_logpmf(k, n, p))
    return out


@njit(cache=True)
def _lower_sum(k, n, p):
    """P(X <= k) by summing pmf from k downwards (use when k is at or below the mean)."""
    term = math.exp(binom_logpmf(k, n, p))
    s = term
    r = (1.0 - p) / p
    j = k
    while j > 0 and term > 0.0:
        term *= (j / (n - j + 1.0)) * r
        s += term
        j -= 1
        if term < s * 1e-20:
            break
    return s


@njit(cache=True)
def _upper_sum(k, n, p):
    """P(X > k) by summing pmf from k + 1 upwards (use when k is at or above the mean)."""
    j = k + 1
    term = math.exp(binom_logpmf(j, n, p))
    s = term
    r = p / (1.0 - p)
    while j < n and term > 0.0:
        term *= ((n - j) / (j + 1.0)) * r
        s += term
        j += 1
        if term < s * 1e-20:
            break
    return s


@njit(cache=True)
def _settled_cdf(k, n, p):
    """P(X <= k) where it is 0 or 1 with no sum (k < 0, k >= n, p = 0 or p = 1); else -1."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    return -1.0


@njit(cache=True)
def binom_cdf_scalar(k, n, p):
    """P(X <= k), summing whichever tail is the smaller so that both tails stay accurate."""
    settled = _settled_cdf(k, n, p)
    if settled >= 0.0:
        return settled
    # The median is floor(np) or ceil(np): below floor(np) the lower tail is < 1/2, from
    # ceil(np) on the upper tail is; in between the nearer tail is summed directly.
    if k >= math.ceil(n * p):
        return 1.0 - _upper_sum(k, n, p)
    return _lower_sum(k, n, p)


@njit(cache=True)
def binom_sf_scalar(k, n, p):
    """P(X > k), summing whichever tail is the smaller so that both tails stay accurate."""
    settled = _settled_cdf(k, n, p)
    if settled >= 0.0:
        return 1.0 - settled
    if k < math.floor(n * p):
        return 1.0 - _lower_sum(k, n, p)
    return _upper_sum(k, n, p)


# What :func:`binom_elementwise` evaluates at each element.
LOGPMF = 0  # log P(X = k)
CDF = 1  # P(X <= k)
SF = 2  # P(X > k)


@njit(cache=True)
def binom_elementwise(k, n, p, quantity):
    """One binomial quantity element-wise over equal-length 1-D arrays.

    Parameters
    ----------
    k, n : numpy.ndarray of int64
        Successes and trials.
    p : numpy.ndarray of float64
        Success probabilities.
    quantity : int
        :data:`LOGPMF` (log-pmf), :data:`CDF` (P(X <= k)) or :data:`SF` (P(X > k)).

    Returns
    -------
    numpy.ndarray of float64
        The quantity at each ``(k[i], n[i], p[i])``.
    """
    out = np.empty(k.shape[0], dtype=np.float64)
    for i in range(k.shape[0]):
        if quantity == LOGPMF:
            out[i] = binom_logpmf(k[i], n[i], p[i])
        elif quantity == CDF:
            out[i] = binom_cdf_scalar(k[i], n[i], p[i])
        else:
            out[i] = binom_sf_scalar(k[i], n[i], p[i])
    return out


# --- interval kernels (closed-form methods; statsmodels' conventions, see intervals.py) ---


@njit(cache=True)
def wald_bounds(k, n, z, lower, upper):
    """Wald p_hat -+ z sqrt(p_hat (1 - p_hat) / n), clipped to [0, 1]; fills lower, upper."""
    for i in range(k.shape[0]):
        nf = float(n[i])
        ph = k[i] / nf
        d = z * math.sqrt(ph * (1.0 - ph) / nf)
        lower[i] = min(max(ph - d, 0.0), 1.0)
        upper[i] = min(max(ph + d, 0.0), 1.0)


@njit(cache=True)
def wilson_bounds(k, n, z, lower, upper):
    """Wilson score interval (1927); exactly 0 at k = 0 and 1 at k = n; fills lower, upper."""
    z2 = z * z
    for i in range(k.shape[0]):
        nf = float(n[i])
        ph = k[i] / nf
        den = 1.0 + z2 / nf
        c = (ph + z2 / (2.0 * nf)) / den
        d = z * math.sqrt(ph * (1.0 - ph) / nf + z2 / (4.0 * nf * nf)) / den
        lo = min(max(c - d, 0.0), 1.0)
        hi = min(max(c + d, 0.0), 1.0)
        # Mathematically the bounds are 0 at k = 0 and 1 at k = n; rounding can leave 1e-17.
        if k[i] == 0:
            lo = 0.0
        if k[i] == n[i]:
            hi = 1.0
        lower[i] = lo
        upper[i] = hi


@njit(cache=True)
def agresti_coull_bounds(k, n, z, lower, upper):
    """Agresti-Coull (1998): Wald on (k + z^2/2) / (n + z^2), clipped to [0, 1]."""
    z2 = z * z
    for i in range(k.shape[0]):
        nc = n[i] + z2
        qc = (k[i] + z2 / 2.0) / nc
        d = z * math.sqrt(qc * (1.0 - qc) / nc)
        lower[i] = min(max(qc - d, 0.0), 1.0)
        upper[i] = min(max(qc + d, 0.0), 1.0)


@njit(cache=True)
def coverage_from_bounds(lower, upper, n, p_grid):
    """Exact coverage sum_k P(X = k; n, p) [lower_k <= p <= upper_k] for each p in p_grid.

    ``lower`` and ``upper`` hold the interval of every k = 0..n (length n + 1).
    """
    out = np.empty(p_grid.shape[0], dtype=np.float64)
    for g in range(p_grid.shape[0]):
        p = p_grid[g]
        s = 0.0
        for k in range(n + 1):
            if lower[k] <= p and p <= upper[k]:
                s += math.exp(binom_logpmf(k, n, p))
        out[g] = s
    return out
