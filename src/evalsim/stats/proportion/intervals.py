"""Confidence intervals for a binomial proportion: k successes in n trials.

The methods are the entries of :data:`REGISTRY` (id, label, bounds, statsmodels name, figure
color, properties), each vectorised over arrays of ``k`` and ``n`` (broadcast together) and valid
for any confidence level. Where statsmodels has the method, the conventions are those of
``statsmodels.stats.proportion.proportion_confint`` (0.15), which the tests check to 1e-10 for
every k <= n <= 200:

``wald``
    p_hat -+ z sqrt(p_hat (1 - p_hat) / n), clipped to [0, 1] (statsmodels ``"normal"``; also
    the document's ``wald``). At k = 0 or k = n it collapses to a point: 10/10 gives [1, 1].
``wilson``
    Wilson (1927) score interval, clipped to [0, 1]; here additionally exactly 0 at k = 0 and
    exactly 1 at k = n (the mathematical values; the closed form can be off by 1e-17).
``clopper_pearson``
    Clopper and Pearson (1934), the "exact" interval (statsmodels ``"beta"``, SciPy's
    ``binomtest(...).proportion_ci(method="exact")``): Beta(k, n - k + 1) quantile alpha/2
    and Beta(k + 1, n - k) quantile 1 - alpha/2, with 0 at k = 0 and 1 at k = n.
``clopper_pearson_midp``
    Mid-p Clopper-Pearson (Lancaster 1961; Berry and Armitage 1995): the Clopper-Pearson tails
    with half the probability of the observed k, P(X > k; lower) + P(X = k; lower)/2 = alpha/2 =
    P(X < k; upper) + P(X = k; upper)/2, with 0 at k = 0 and 1 at k = n. Inside Clopper-Pearson;
    its coverage is close to nominal on average over p but dips below it (Brown, Cai and
    DasGupta 2001, sec. 4.1.2). statsmodels has no mid-p interval; the tests check it against
    a plain-Python tail inversion and SciPy's ``brentq`` on ``scipy.stats.binom``.
``jeffreys``
    Equal-tailed Bayesian interval under the Jeffreys prior: Beta(k + 1/2, n - k + 1/2)
    quantiles alpha/2 and 1 - alpha/2. As in statsmodels there is NO boundary modification:
    at k = 0 the lower bound is positive and at k = n the upper bound is below 1, so the
    interval does not contain k/n there. (Brown, Cai and DasGupta 2001 set them to 0 and 1.)
``agresti_coull``
    Agresti and Coull (1998): n~ = n + z^2, p~ = (k + z^2/2) / n~, p~ -+ z sqrt(p~(1-p~)/n~),
    clipped to [0, 1]. (statsmodels adds z^2, not the "add two successes and two failures"
    rounding; so does this module.)

``z`` (a normal quantile) overrides ``confidence`` for every method; for the two Beta-quantile
methods it is converted to the tail probability alpha/2 = Phi(-z). Without ``z`` the
multiplier is Phi^-1(1 - (1 - confidence)/2) = 1.959964... at 0.95, as in statsmodels and
SciPy; the lesson's code uses z = 1.96.

Wald, Wilson and Agresti-Coull are numba kernels (:mod:`evalsim.stats.proportion._kernels`).
Clopper-Pearson and Jeffreys need Beta quantiles; they call SciPy's vectorised
``scipy.special.betaincinv`` / ``betainccinv`` (Boost's inverse incomplete beta, which is what
statsmodels reaches through ``scipy.stats.beta.ppf`` / ``isf``) rather than a hand-written
root finder.

Which methods always contain p_hat = k/n is the registry's ``contains_p_hat`` (Agresti-Coull's
interval contains Wilson's; for Clopper-Pearson, k is a median of Binomial(n, k/n)); Jeffreys
does not (k = 0, k = n, and low confidence levels).

References
----------
.. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
   J. Amer. Statist. Assoc. 22 (158), 209-212, 1927.
.. [2] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in
   the case of the binomial", Biometrika 26 (4), 404-413, 1934.
.. [3] A. Agresti, B. A. Coull, "Approximate is better than 'exact' for interval estimation
   of binomial proportions", The American Statistician 52 (2), 119-126, 1998.
.. [4] L. D. Brown, T. T. Cai, A. DasGupta, "Interval Estimation for a Binomial Proportion",
   Statistical Science 16 (2), 101-133, 2001.
.. [5] H. O. Lancaster, "Significance tests in discrete distributions", J. Amer. Statist.
   Assoc. 56 (294), 223-234, 1961.
.. [6] G. Berry, P. Armitage, "Mid-P confidence intervals: a brief review", J. Royal Statist.
   Soc. D 44 (4), 417-423, 1995.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from evalsim._registry import by_id
from evalsim.stats._validate import check_confidence, check_counts

__all__ = [
    "METHODS",
    "REGISTRY",
    "Interval",
    "IntervalMethod",
    "agresti_coull_interval",
    "bounds",
    "check_method",
    "clopper_pearson_interval",
    "clopper_pearson_midp_interval",
    "interval",
    "jeffreys_interval",
    "resolve_level",
    "wald_interval",
    "wilson_interval",
    "z_for_confidence",
]


@dataclass(frozen=True, eq=False)
class Interval:
    """A confidence interval: floats for scalar input, arrays for array input.

    It knows how it was made: ``method``, the id of its method (of :data:`REGISTRY` for a
    proportion; of the difference methods of :mod:`evalsim.stats.two_sample.paired` for a
    difference), and ``confidence``, the two-sided level (``1 - 2 Phi(-z)`` when the interval
    was asked for by its multiplier ``z``). Both are None for an interval built by hand.
    """

    lower: float | np.ndarray
    upper: float | np.ndarray
    method: str | None = None
    confidence: float | None = None

    def bounds(self) -> list[float]:
        """``[lower, upper]`` as plain floats (the JSON pair of the command)."""
        return [float(self.lower), float(self.upper)]

    def to_dict(self) -> dict:
        """``{"method", "confidence", "lower", "upper"}`` with plain floats (scalar input)."""
        lo, hi = self.bounds()
        return {"method": self.method, "confidence": self.confidence, "lower": lo, "upper": hi}

    @property
    def width(self):
        """upper - lower."""
        return self.upper - self.lower

    @property
    def half_width(self):
        """(upper - lower) / 2, the lesson's "±" margin."""
        return (self.upper - self.lower) / 2.0

    def __iter__(self):
        """Unpack as ``lo, hi = interval``."""
        return iter((self.lower, self.upper))

    def __repr__(self) -> str:
        if isinstance(self.lower, float):
            return f"Interval(lower={self.lower!r}, upper={self.upper!r})"
        return f"Interval(lower={np.array2string(np.asarray(self.lower), precision=6)}, " + (
            f"upper={np.array2string(np.asarray(self.upper), precision=6)})"
        )


#: bounds(k, n, z, tail) -> (lower, upper): flat validated int64 arrays k, n; the normal
#: multiplier z and the tail probability alpha/2 = Phi(-z) (each method uses the one it needs).
BoundsFunction = Callable[[np.ndarray, np.ndarray, float, float], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class IntervalMethod:
    """One interval method: everything the code, the figures, the command and the tests read.

    Attributes
    ----------
    id : str
        The name used in the API, the config and the command's JSON.
    label : str
        Its name in tables, figures and the command's text output.
    bounds : BoundsFunction
        Computes the bounds for flat int64 arrays ``k``, ``n`` (see :data:`BoundsFunction`).
    statsmodels : str or None
        The same interval's ``method`` in ``statsmodels.stats.proportion.proportion_confint``
        (the tests' and benchmark's cross-check), or None where statsmodels has none.
    color : str
        Its color in figures (an Okabe-Ito color, distinct across methods).
    contains_p_hat : bool
        The interval contains k/n for every k, n and confidence level.
    guaranteed_coverage : bool
        Coverage >= the nominal level at every p and n (only the "exact" interval).
    reference : str
        Where the method is defined.
    """

    id: str
    label: str
    bounds: BoundsFunction
    statsmodels: str | None
    color: str
    contains_p_hat: bool
    guaranteed_coverage: bool
    reference: str


def _empty_pair(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.empty(k.shape[0], dtype=np.float64), np.empty(k.shape[0], dtype=np.float64)


def _run_kernel(kernel, k, n, z):
    """(lower, upper) of a closed-form numba kernel ``kernel(k, n, z, lower, upper)``."""
    lower, upper = _empty_pair(k)
    kernel(k, n, z, lower, upper)
    return lower, upper


# The numba kernels are imported inside the three closed-form methods: numba's start-up is
# paid only when one of them runs (a single Wilson interval is _wilson_one, in Python).
def _wald_bounds(k, n, z, tail):
    from evalsim.stats.proportion._kernels import wald_bounds

    return _run_kernel(wald_bounds, k, n, z)


def _wilson_bounds(k, n, z, tail):
    from evalsim.stats.proportion._kernels import wilson_bounds

    return _run_kernel(wilson_bounds, k, n, z)


def _agresti_coull_bounds(k, n, z, tail):
    from evalsim.stats.proportion._kernels import agresti_coull_bounds

    return _run_kernel(agresti_coull_bounds, k, n, z)


def _clopper_pearson_bounds(k, n, z, tail):
    lower, upper = _empty_pair(k)
    kf = k.astype(np.float64)
    nf = n.astype(np.float64)
    with np.errstate(invalid="ignore"):
        lower[:] = special.betaincinv(kf, nf - kf + 1.0, tail)
        upper[:] = special.betainccinv(kf + 1.0, nf - kf, tail)
    lower[k == 0] = 0.0
    upper[k == n] = 1.0
    return lower, upper


def _jeffreys_bounds(k, n, z, tail):
    lower, upper = _empty_pair(k)
    kf = k.astype(np.float64) + 0.5
    mf = n.astype(np.float64) - k + 0.5
    lower[:] = special.betaincinv(kf, mf, tail)
    upper[:] = special.betainccinv(kf, mf, tail)
    return lower, upper


def _clopper_pearson_midp_bounds(k, n, z, tail):
    # The mid-p tails as regularised incomplete betas, P(X >= j; p) = I_p(j, n - j + 1), each
    # bound bracketed by the Clopper-Pearson bounds at k and k +- 1 and found by SciPy's
    # vectorised Chandrupatla root finder (imported here: scipy.optimize costs ~0.2 s to load).
    from scipy.optimize.elementwise import find_root

    kf = k.astype(np.float64)
    nf = n.astype(np.float64)
    lower = np.zeros(k.shape[0], dtype=np.float64)
    upper = np.ones(k.shape[0], dtype=np.float64)
    edge = np.log(2.0 * tail) / nf  # at k = n (k = 0): P(X = n; p)/2 = p^n / 2 = tail
    top, bottom = k == n, k == 0
    lower[top] = np.exp(edge[top])
    upper[bottom] = -np.expm1(edge[bottom])
    mid = ~(top | bottom)
    if mid.any():
        km, nm = kf[mid], nf[mid]

        def over(p, km, nm):  # P(X > k) + P(X = k)/2 - tail, increasing in p
            return (
                0.5
                * (special.betainc(km, nm - km + 1.0, p) + special.betainc(km + 1.0, nm - km, p))
                - tail
            )

        def under(p, km, nm):  # P(X < k) + P(X = k)/2 - tail, decreasing in p
            return (
                0.5
                * (special.betaincc(km + 1.0, nm - km, p) + special.betaincc(km, nm - km + 1.0, p))
                - tail
            )

        brackets = (
            (
                special.betaincinv(km, nm - km + 1.0, tail),
                special.betaincinv(km + 1.0, nm - km, tail),
            ),
            (
                special.betainccinv(km, nm - km + 1.0, tail),
                special.betainccinv(km + 1.0, nm - km, tail),
            ),
        )
        for out, f, init in ((lower, over, brackets[0]), (upper, under, brackets[1])):
            res = find_root(f, init, args=(km, nm))
            if not np.all(res.success):
                raise ArithmeticError("mid-p bound: the root finder did not converge")
            out[mid] = res.x
    return lower, upper


_OKABE_ITO_BLUE, _ORANGE, _GREEN, _VERMILLION, _PURPLE, _SKY_BLUE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
)

#: The interval methods, in the order of the command's table and the coverage figure's rows.
#: Adding a method: one entry here, its bounds function, a plain-Python reference in
#: tests/naive_binom.py and a test; the command, figures, coverage, budget and benchmark read
#: the registry.
REGISTRY: dict[str, IntervalMethod] = by_id(
    IntervalMethod(
        "wald",
        "Wald",
        _wald_bounds,
        statsmodels="normal",
        color=_VERMILLION,
        contains_p_hat=True,
        guaranteed_coverage=False,
        reference="Laplace (1812); the lesson's step 1",
    ),
    IntervalMethod(
        "wilson",
        "Wilson",
        _wilson_bounds,
        statsmodels="wilson",
        color=_OKABE_ITO_BLUE,
        contains_p_hat=True,
        guaranteed_coverage=False,
        reference="Wilson (1927)",
    ),
    IntervalMethod(
        "clopper_pearson",
        "Clopper-Pearson",
        _clopper_pearson_bounds,
        statsmodels="beta",
        color=_GREEN,
        contains_p_hat=True,
        guaranteed_coverage=True,
        reference="Clopper and Pearson (1934)",
    ),
    IntervalMethod(
        "clopper_pearson_midp",
        "mid-p Clopper-Pearson",
        _clopper_pearson_midp_bounds,
        statsmodels=None,
        color=_SKY_BLUE,
        contains_p_hat=False,  # at low confidence levels (e.g. 0.2) it can miss k/n
        guaranteed_coverage=False,
        reference="Lancaster (1961); Berry and Armitage (1995)",
    ),
    IntervalMethod(
        "jeffreys",
        "Jeffreys",
        _jeffreys_bounds,
        statsmodels="jeffreys",
        color=_ORANGE,
        contains_p_hat=False,
        guaranteed_coverage=False,
        reference="Brown, Cai and DasGupta (2001)",
    ),
    IntervalMethod(
        "agresti_coull",
        "Agresti-Coull",
        _agresti_coull_bounds,
        statsmodels="agresti_coull",
        color=_PURPLE,
        contains_p_hat=True,
        guaranteed_coverage=False,
        reference="Agresti and Coull (1998)",
    ),
)

#: The methods' ids, in registry order.
METHODS = tuple(REGISTRY)


def z_for_confidence(confidence: float) -> float:
    """Two-sided normal multiplier Phi^-1(1 - (1 - confidence)/2); 1.959964 at 0.95."""
    c = check_confidence(confidence)
    return float(-special.ndtri((1.0 - c) / 2.0))


def resolve_level(confidence, z) -> tuple[float, float]:
    """(z, alpha/2) from ``confidence`` or, when given, ``z``."""
    if z is None:
        c = check_confidence(confidence)
        tail = (1.0 - c) / 2.0
        return float(-special.ndtri(tail)), tail
    if isinstance(z, bool | np.bool_) or not isinstance(z, numbers.Real):
        raise ValueError(f"z must be a positive finite number, got {z!r}")
    zf = float(z)
    if not (math.isfinite(zf) and zf > 0.0):
        raise ValueError(f"z must be a positive finite number, got {z!r}")
    return zf, float(special.ndtr(-zf))


def check_method(method) -> IntervalMethod:
    """The registry entry of ``method``; ValueError naming the allowed ids otherwise."""
    if not isinstance(method, str) or method not in REGISTRY:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return REGISTRY[method]


def _prepare(k, n):
    """Validated flat int64 arrays plus the output shape (None for scalars)."""
    k, n = check_counts(k, n)
    if isinstance(k, int):
        return np.array([k], dtype=np.int64), np.array([n], dtype=np.int64), None
    return k.ravel(), n.ravel(), k.shape


def bounds(method: str, k: np.ndarray, n: np.ndarray, z: float, tail: float):
    """Interval bounds for flat int64 arrays k, n (validated); returns (lower, upper).

    ``z`` and ``tail`` come from :func:`resolve_level`.
    """
    return check_method(method).bounds(k, n, z, tail)


def _wilson_one(k: int, n: int, z: float) -> tuple[float, float]:
    """:func:`evalsim.stats.proportion._kernels.wilson_bounds` for one (k, n), in Python: the
    kernel's operations in its order (the same bits; the tests check), so that one interval
    (the ``evalsim`` command's) does not wait for numba to start."""
    z2 = z * z
    nf = float(n)
    ph = k / nf
    den = 1.0 + z2 / nf
    c = (ph + z2 / (2.0 * nf)) / den
    d = z * math.sqrt(ph * (1.0 - ph) / nf + z2 / (4.0 * nf * nf)) / den
    lo = min(max(c - d, 0.0), 1.0)
    hi = min(max(c + d, 0.0), 1.0)
    # Mathematically the bounds are 0 at k = 0 and 1 at k = n; rounding can leave 1e-17.
    return (0.0 if k == 0 else lo), (1.0 if k == n else hi)


def _finish(lower, upper, shape, method: str, confidence: float) -> Interval:
    if shape is None:
        return Interval(float(lower[0]), float(upper[0]), method, confidence)
    return Interval(lower.reshape(shape), upper.reshape(shape), method, confidence)


def interval(k, n, method: str = "wilson", confidence: float = 0.95, z=None) -> Interval:
    """Confidence interval for a binomial proportion from ``k`` successes in ``n`` trials.

    Parameters
    ----------
    k, n : int or array_like of int
        Successes and trials, 0 <= k <= n, n >= 1; arrays broadcast together.
    method : str
        One of :data:`METHODS`; see the module docstring for each method's definition and
        conventions.
    confidence : float
        Confidence level in (0, 1). Ignored when ``z`` is given.
    z : float, optional
        Normal multiplier (e.g. the lesson's 1.96); overrides ``confidence``.

    Returns
    -------
    Interval
        ``lower`` and ``upper``: floats for scalar input, arrays of the broadcast shape else.

    Raises
    ------
    ValueError
        Unknown method, k > n, negative or non-integer counts, confidence outside (0, 1),
        z not a positive finite number.

    Examples
    --------
    >>> interval(9, 10, z=1.96)  # doctest: +ELLIPSIS
    Interval(lower=0.5958..., upper=0.9821...)
    >>> interval(10, 10, "wald")
    Interval(lower=1.0, upper=1.0)
    """
    entry = check_method(method)
    zf, tail = resolve_level(confidence, z)
    kk, nn, shape = _prepare(k, n)
    level = float(confidence) if z is None else 1.0 - 2.0 * tail
    if method == "wilson" and shape is None:
        return Interval(*_wilson_one(int(kk[0]), int(nn[0]), zf), method, level)
    lower, upper = entry.bounds(kk, nn, zf, tail)
    return _finish(lower, upper, shape, method, level)


def wald_interval(k, n, confidence: float = 0.95, z=None) -> Interval:
    """Wald (normal-approximation) interval, clipped to [0, 1]; see :func:`interval`."""
    return interval(k, n, "wald", confidence, z)


def wilson_interval(k, n, confidence: float = 0.95, z=None) -> Interval:
    """Wilson (1927) score interval; see :func:`interval`."""
    return interval(k, n, "wilson", confidence, z)


def clopper_pearson_interval(k, n, confidence: float = 0.95, z=None) -> Interval:
    """Clopper-Pearson (1934) "exact" interval from Beta quantiles; see :func:`interval`."""
    return interval(k, n, "clopper_pearson", confidence, z)


def clopper_pearson_midp_interval(k, n, confidence: float = 0.95, z=None) -> Interval:
    """Mid-p Clopper-Pearson interval (Lancaster 1961); see :func:`interval`."""
    return interval(k, n, "clopper_pearson_midp", confidence, z)


def jeffreys_interval(k, n, confidence: float = 0.95, z=None) -> Interval:
    """Jeffreys equal-tailed interval (statsmodels convention, no boundary fix); see
    :func:`interval`."""
    return interval(k, n, "jeffreys", confidence, z)


def agresti_coull_interval(k, n, confidence: float = 0.95, z=None) -> Interval:
    """Agresti-Coull (1998) interval, clipped to [0, 1]; see :func:`interval`."""
    return interval(k, n, "agresti_coull", confidence, z)
