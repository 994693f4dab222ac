"""Comparing two policies: difference intervals, McNemar's test, pairing and its gain.

Two designs are covered. *Independent* samples (k1/n1 vs k2/n2): confidence intervals for
the difference of proportions ``p1 - p2`` by Wald (unpooled), Newcombe's hybrid score
(method 10) and Agresti-Caffo, with the argument order and sign of ``statsmodels``'
``confint_proportions_2indep(count1, nobs1, count2, nobs2, compare="diff")``. *Paired*
samples (both policies on the same initial conditions): the 2x2 paired contingency table,
the exact McNemar test and its mid-p version on the discordant pairs, confidence intervals
for the paired difference ``pA - pB`` (Tango's score interval [5]_, Newcombe's hybrid score
interval for paired data [6]_ and the Wald interval as a reference; registry
:data:`PAIRED_DIFF_METHODS`), a paired bootstrap, and the variance a pairing removes,
measured from the outcomes.

References
----------
.. [1] Newcombe, R. G. (1998). Interval estimation for the difference between independent
   proportions: comparison of eleven methods. *Statistics in Medicine* 17, 873-890.
.. [2] Agresti, A. and Caffo, B. (2000). Simple and effective confidence intervals for
   proportions and differences of proportions result from adding two successes and two
   failures. *The American Statistician* 54(4), 280-288.
.. [3] McNemar, Q. (1947). Note on the sampling error of the difference between correlated
   proportions or percentages. *Psychometrika* 12, 153-157.
.. [4] Fagerland, M. W., Lydersen, S. and Laake, P. (2013). The McNemar test for binary
   matched-pairs data: mid-p and asymptotic are better than exact conditional. *BMC
   Medical Research Methodology* 13, 91.
.. [5] Tango, T. (1998). Equivalence test and confidence interval for the difference in
   proportions for the paired-sample design. *Statistics in Medicine* 17, 891-908 (and the
   correction, *Statistics in Medicine* 18 (1999), 3511-3513).
.. [6] Newcombe, R. G. (1998). Improved confidence intervals for the difference between
   binomial proportions based on paired data. *Statistics in Medicine* 17, 2635-2650
   (method 10).
.. [7] Fagerland, M. W., Lydersen, S. and Laake, P. (2014). Recommended tests and confidence
   intervals for paired binomial proportions. *Statistics in Medicine* 33, 2850-2875
   (worked example of Table II, intervals of Table V).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri  # norm.ppf without loading scipy.stats

from evalsim.stats._roots import brentq  # scipy.optimize.brentq, without importing it
from evalsim.stats._validate import check_confidence, check_counts, check_n

DIFF_METHODS = ("wald", "newcombe", "agresti_caffo")
#: Intervals for a paired difference, recommended first (see :func:`paired_diff_interval`).
PAIRED_DIFF_METHODS = ("tango", "newcombe", "wald")


@dataclass(frozen=True)
class PairedCounts:
    """The 2x2 paired contingency table of policies A and B on the same conditions.

    Attributes
    ----------
    both_succeed, a_only, b_only, both_fail : int
        Pairs where both succeed, only A succeeds (McNemar's b), only B succeeds (c),
        both fail.
    """

    both_succeed: int
    a_only: int
    b_only: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_succeed + self.a_only + self.b_only + self.both_fail

    @property
    def k_a(self) -> int:
        return self.both_succeed + self.a_only

    @property
    def k_b(self) -> int:
        return self.both_succeed + self.b_only

    @property
    def table(self) -> np.ndarray:
        """``[[both, A only], [B only, neither]]``: rows A success/failure, cols B."""
        return np.array([[self.both_succeed, self.a_only], [self.b_only, self.both_fail]])

    def difference_interval(self, method: str = "tango", confidence: float = 0.95):
        """The interval of ``pA - pB`` on these pairs (:func:`paired_diff_interval`); it
        knows its ``method`` and ``confidence``."""
        return paired_diff_interval(self, method, confidence)

    def power(self, alpha: float = 0.05, n_pairs: int | None = None) -> float:
        """Exact power of the two-sided exact McNemar test at this table's discordant rates
        (A only: ``a_only / n``, B only: ``b_only / n``), at ``n_pairs`` (default: ``n``)
        pairs (:func:`evalsim.stats.two_sample.paired_design.mcnemar_power_exact`)."""
        from evalsim.stats.two_sample.paired_design import mcnemar_power_exact

        n = self.n if n_pairs is None else n_pairs
        return mcnemar_power_exact(n, self.a_only / self.n, self.b_only / self.n, alpha)

    def to_dict(self) -> dict:
        """The four counts and n, as plain ints."""
        return {
            "both_succeed": int(self.both_succeed),
            "a_only": int(self.a_only),
            "b_only": int(self.b_only),
            "both_fail": int(self.both_fail),
            "n": int(self.n),
        }


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on the discordant pairs.

    Attributes
    ----------
    b, c : int
        Discordant counts: A-only successes and B-only successes.
    pvalue : float
        Two-sided exact p-value, ``min(1, 2 P(X <= min(b, c)))`` with ``X ~ Bin(b+c, 1/2)``;
        equal to ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``.
    midp_pvalue : float
        Two-sided mid-p: the exact p-value less the probability of the observed table.
    statistic : float
        McNemar's chi-square ``(b - c)^2 / (b + c)`` (no continuity correction; nan if
        ``b + c = 0``), shown for reference; the p-values above do not use it.
    """

    b: int
    c: int
    pvalue: float
    midp_pvalue: float
    statistic: float


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired bootstrap of mean(A) - mean(B) (resampling conditions, i.e. whole pairs).

    Attributes
    ----------
    diff : float
        Observed difference of success rates, A minus B.
    lower, upper : float
        Percentile interval at ``confidence``.
    se : float
        Standard deviation of the bootstrap replicates.
    n_boot : int
    confidence : float
    """

    diff: float
    lower: float
    upper: float
    se: float
    n_boot: int
    confidence: float


@dataclass(frozen=True)
class PairingGain:
    """What pairing buys, measured on paired outcomes.

    Attributes
    ----------
    n_pairs : int
    rate_a, rate_b : float
    rho : float
        Correlation (phi coefficient) of A's and B's outcomes on the same condition.
    var_unpaired : float
        Per-pair variance of the difference if the samples were independent,
        ``pA qA + pB qB``.
    var_paired : float
        Per-pair variance of the paired difference ``Var(a_i - b_i)`` =
        ``var_unpaired - 2 cov``.
    variance_ratio : float
        ``var_paired / var_unpaired``: the fraction of unpaired trials a paired design
        needs for the same precision.
    """

    n_pairs: int
    rate_a: float
    rate_b: float
    rho: float
    var_unpaired: float
    var_paired: float
    variance_ratio: float


def _interval(lower, upper, method: str | None = None, confidence: float | None = None):
    from evalsim.stats.proportion.intervals import Interval

    return Interval(float(lower), float(upper), method, confidence)


def diff_interval(
    k1: int, n1: int, k2: int, n2: int, method: str = "newcombe", confidence: float = 0.95
):
    """Confidence interval for ``p1 - p2`` from two independent samples.

    Parameters
    ----------
    k1, n1, k2, n2 : int
        Successes and trials of sample 1 and sample 2. The interval is for ``k1/n1 -
        k2/n2`` (``statsmodels.stats.proportion.confint_proportions_2indep(k1, n1, k2, n2,
        compare="diff")``).
    method : {"newcombe", "wald", "agresti_caffo"}
        ``"wald"``: ``d +/- z sqrt(p1 q1/n1 + p2 q2/n2)`` (unpooled). ``"newcombe"``: the
        hybrid score interval (Newcombe's method 10 [1]_) built from the two Wilson
        intervals. ``"agresti_caffo"``: Wald after adding one success and one failure to
        each sample [2]_. Like statsmodels, the Wald-type limits are not clipped to
        [-1, 1].
    confidence : float

    Returns
    -------
    Interval
    """
    k1, n1 = check_counts(k1, n1)
    k2, n2 = check_counts(k2, n2)
    check_confidence(confidence)
    if method not in DIFF_METHODS:
        raise ValueError(f"method must be one of {DIFF_METHODS}, got {method!r}")
    z = float(ndtri(0.5 + confidence / 2.0))
    if method in ("wald", "agresti_caffo"):
        add = 1 if method == "agresti_caffo" else 0
        p1 = (k1 + add) / (n1 + 2 * add)
        p2 = (k2 + add) / (n2 + 2 * add)
        half = z * math.sqrt(p1 * (1 - p1) / (n1 + 2 * add) + p2 * (1 - p2) / (n2 + 2 * add))
        return _interval(p1 - p2 - half, p1 - p2 + half, method, confidence)
    from evalsim.stats.proportion.intervals import wilson_interval

    p1, p2 = k1 / n1, k2 / n2
    w1 = wilson_interval(k1, n1, confidence=confidence)
    w2 = wilson_interval(k2, n2, confidence=confidence)
    d = p1 - p2
    lower = d - math.sqrt((p1 - w1.lower) ** 2 + (w2.upper - p2) ** 2)
    upper = d + math.sqrt((w1.upper - p1) ** 2 + (p2 - w2.lower) ** 2)
    return _interval(lower, upper, method, confidence)


def _as_success(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {arr.shape}")
    if arr.dtype != bool:
        if not np.all((arr == 0) | (arr == 1)):
            bad = arr[~((arr == 0) | (arr == 1))][0]
            raise ValueError(f"{name} must hold booleans or 0/1, got {bad!r}")
    return arr.astype(np.int8)


def _aligned(success_a, success_b) -> tuple[np.ndarray, np.ndarray]:
    a = _as_success(success_a, "success_a")
    b = _as_success(success_b, "success_b")
    if a.shape != b.shape:
        raise ValueError(
            f"success_a and success_b must be aligned (same length), got {a.size} and {b.size}"
        )
    return a, b


def paired_contingency(success_a, success_b) -> PairedCounts:
    """The paired 2x2 table from two aligned success arrays (element i = condition i)."""
    a, b = _aligned(success_a, success_b)
    return PairedCounts(
        both_succeed=int(np.sum((a == 1) & (b == 1))),
        a_only=int(np.sum((a == 1) & (b == 0))),
        b_only=int(np.sum((a == 0) & (b == 1))),
        both_fail=int(np.sum((a == 0) & (b == 0))),
    )


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """Exact McNemar test (and mid-p) on ``b`` A-only and ``c`` B-only discordant pairs.

    Under the null of equal rates each discordant pair is A-only with probability 1/2, so
    the test is the two-sided binomial test of ``b`` out of ``b + c`` at 1/2 [3]_. The
    mid-p version subtracts the probability of the observed split once [4]_. With no
    discordant pairs both p-values are 1.
    """
    from evalsim.stats.proportion.binomial import binom_cdf, binom_pmf

    check_n(b, "b", minimum=0)
    check_n(c, "c", minimum=0)
    b, c = int(b), int(c)
    d = b + c
    if d == 0:
        return McNemarResult(b, c, 1.0, 1.0, float("nan"))
    m = min(b, c)
    tail = float(binom_cdf(m, d, 0.5))
    point = float(binom_pmf(m, d, 0.5))
    p = min(1.0, 2.0 * tail)
    midp = min(1.0, 2.0 * (tail - 0.5 * point))
    return McNemarResult(b, c, p, midp, (b - c) ** 2 / d)


def mcnemar_pvalue(b: int, c: int, alternative: str = "two-sided") -> float:
    """Exact McNemar p-value with a stated alternative (``b`` A-only, ``c`` B-only pairs).

    ``"two-sided"``: :func:`mcnemar_exact`'s p-value. ``"greater"`` (A's rate is the
    higher): ``P(X >= b)``; ``"less"``: ``P(X <= b)``, with ``X ~ Bin(b + c, 1/2)`` -- SciPy's
    ``binomtest(b, b + c, 0.5, alternative=...)``. 1 when there are no discordant pairs.
    """
    from evalsim.stats.proportion.binomial import binom_cdf, binom_sf

    if alternative == "two-sided":
        return mcnemar_exact(b, c).pvalue
    if alternative not in ("greater", "less"):
        raise ValueError(
            f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}"
        )
    check_n(b, "b", minimum=0)
    check_n(c, "c", minimum=0)
    b, c = int(b), int(c)
    d = b + c
    if d == 0:
        return 1.0
    if alternative == "greater":
        return float(min(1.0, binom_sf(b - 1, d, 0.5))) if b > 0 else 1.0
    return float(min(1.0, binom_cdf(b, d, 0.5)))


def paired_wald_interval(counts: PairedCounts, confidence: float = 0.95):
    """Wald interval for the paired difference ``pA - pB = (b - c)/n``.

    ``Var = ((b + c)/n - ((b - c)/n)^2) / n`` (the variance of the mean of ``a_i - b_i``
    with divisor n).
    """
    check_confidence(confidence)
    n = counts.n
    if n < 1:
        raise ValueError(f"the table must hold at least one pair, got n={n!r}")
    z = float(ndtri(0.5 + confidence / 2.0))
    d = (counts.a_only - counts.b_only) / n
    var = ((counts.a_only + counts.b_only) / n - d * d) / n
    half = z * math.sqrt(max(var, 0.0))
    return _interval(d - half, d + half, "wald", confidence)


def _paired_counts_checked(counts) -> PairedCounts:
    if not isinstance(counts, PairedCounts):
        raise ValueError(f"counts must be a PairedCounts, got {counts!r}")
    for name in ("both_succeed", "a_only", "b_only", "both_fail"):
        check_n(getattr(counts, name), name, minimum=0)
    if counts.n < 1:
        raise ValueError(f"the table must hold at least one pair, got n={counts.n!r}")
    return counts


def _tango_statistic(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic at ``pA - pB = delta`` (restricted MLE of P(B only))."""
    bq = -b - c + (2.0 * n - b + c) * delta
    cq = -c * delta * (1.0 - delta)
    p21 = (math.sqrt(max(bq * bq - 8.0 * n * cq, 0.0)) - bq) / (4.0 * n)
    var = n * (2.0 * p21 + delta * (1.0 - delta))
    num = b - c - n * delta
    if var <= 0.0:
        return math.copysign(math.inf, num) if num != 0 else 0.0
    return num / math.sqrt(var)


def _tango_interval(b: int, c: int, n: int, z: float) -> tuple[float, float]:
    """Roots of T(delta) = +z (lower) and -z (upper); T falls as delta rises [5]_."""
    est = (b - c) / n
    eps = 1e-15
    lo_end, hi_end = -1.0 + eps, 1.0 - eps
    if est <= -1.0 or _tango_statistic(lo_end, b, c, n) <= z:
        lower = -1.0
    else:
        lower = brentq(lambda d: _tango_statistic(d, b, c, n) - z, lo_end, est, xtol=1e-14)
    if est >= 1.0 or _tango_statistic(hi_end, b, c, n) >= -z:
        upper = 1.0
    else:
        upper = brentq(lambda d: _tango_statistic(d, b, c, n) + z, est, hi_end, xtol=1e-14)
    return lower, upper


def _newcombe_paired(counts: PairedCounts, confidence: float) -> tuple[float, float]:
    """Newcombe's method 10: the two Wilson intervals combined with a corrected phi [6]_."""
    from evalsim.stats.proportion.intervals import wilson_interval

    n = counts.n
    r, s, t, u = counts.both_succeed, counts.a_only, counts.b_only, counts.both_fail
    k1, k2 = r + s, r + t
    p1, p2 = k1 / n, k2 / n
    w1 = wilson_interval(k1, n, confidence=confidence)
    w2 = wilson_interval(k2, n, confidence=confidence)
    l1, u1, l2, u2 = w1.lower, w1.upper, w2.lower, w2.upper
    margins = (r + s) * (t + u) * (r + t) * (s + u)
    phi = 0.0
    if margins > 0:
        a = r * u - s * t
        if a > n / 2.0:
            phi = (a - n / 2.0) / math.sqrt(margins)
        elif a < 0:
            phi = a / math.sqrt(margins)
    d = p1 - p2
    lower = d - math.sqrt(
        max((p1 - l1) ** 2 - 2.0 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0)
    )
    upper = d + math.sqrt(
        max((p2 - l2) ** 2 - 2.0 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0)
    )
    return lower, upper


def paired_diff_interval(counts: PairedCounts, method: str = "tango", confidence: float = 0.95):
    """Confidence interval for the paired difference ``pA - pB = (b - c) / n``.

    Parameters
    ----------
    counts : PairedCounts
        The paired 2x2 table (``b`` = A only, ``c`` = B only, n pairs).
    method : {"tango", "newcombe", "wald"}
        ``"tango"``: Tango's asymptotic score interval [5]_, the values of ``delta`` whose
        score statistic ``(b - c - n delta) / sqrt(n (2 p21 + delta (1 - delta)))`` (``p21``
        the maximum-likelihood P(B only) restricted to ``delta``) lies within +/-z; found by
        root-finding to 1e-14. ``"newcombe"``: Newcombe's hybrid score interval for paired
        data, method 10 of [6]_: the Wilson intervals of the two marginal rates combined
        with the phi coefficient of the table, corrected as Newcombe does (``ad - bc``
        reduced by n/2 when above it, set to 0 in [0, n/2]). ``"wald"``:
        :func:`paired_wald_interval`, a reference (it can collapse to a point at b = c = 0).
    confidence : float

    Returns
    -------
    Interval
        Within [-1, 1] for the score methods. Both score intervals agree with Fagerland et
        al.'s worked examples [7]_ (``tests/test_paired.py``).
    """
    counts = _paired_counts_checked(counts)
    confidence = check_confidence(confidence)
    if method not in PAIRED_DIFF_METHODS:
        raise ValueError(f"method must be one of {PAIRED_DIFF_METHODS}, got {method!r}")
    if method == "wald":
        return paired_wald_interval(counts, confidence)
    if method == "newcombe":
        return _interval(*_newcombe_paired(counts, confidence), method, confidence)
    z = float(ndtri(0.5 + confidence / 2.0))
    return _interval(
        *_tango_interval(counts.a_only, counts.b_only, counts.n, z), method, confidence
    )


def paired_bootstrap(
    success_a, success_b, n_boot: int = 10_000, confidence: float = 0.95, rng=None
) -> PairedBootstrap:
    """Percentile bootstrap of mean(A) - mean(B), resampling conditions (whole pairs).

    Parameters
    ----------
    success_a, success_b : array_like of bool or 0/1
        Aligned outcomes: element i of both is the same initial condition.
    n_boot : int
        Bootstrap replicates.
    confidence : float
    rng : numpy.random.Generator or int
        The random stream; pass ``evalsim.seeding.rng_for(study_seed, ...)``. An int is
        used as the seed of ``numpy.random.default_rng``. Required (no global RNG).
    """
    from evalsim.stats.two_sample._paired_kernels import paired_bootstrap_diffs

    a, b = _aligned(success_a, success_b)
    check_n(n_boot, "n_boot", minimum=2)
    check_confidence(confidence)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        rng = np.random.default_rng(int(rng))
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator or a seed >= 0, got {rng!r}")
    reps = paired_bootstrap_diffs(a, b, int(n_boot), rng)
    q = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(reps, [q, 1.0 - q])
    return PairedBootstrap(
        diff=float(a.mean() - b.mean()),
        lower=float(lower),
        upper=float(upper),
        se=float(reps.std(ddof=1)),
        n_boot=int(n_boot),
        confidence=float(confidence),
    )


def pairing_gain(success_a, success_b) -> PairingGain:
    """Correlation of paired outcomes and the variance a paired design removes.

    ``rho`` is the phi coefficient of the two aligned outcome arrays (nan when either arm
    is constant); the variances are per pair, with divisor n.
    """
    a, b = _aligned(success_a, success_b)
    af, bf = a.astype(float), b.astype(float)
    pa, pb = af.mean(), bf.mean()
    cov = float(np.mean((af - pa) * (bf - pb)))
    va, vb = pa * (1 - pa), pb * (1 - pb)
    rho = cov / math.sqrt(va * vb) if va > 0 and vb > 0 else float("nan")
    var_unpaired = va + vb
    var_paired = var_unpaired - 2.0 * cov
    ratio = var_paired / var_unpaired if var_unpaired > 0 else float("nan")
    return PairingGain(a.size, float(pa), float(pb), float(rho), var_unpaired, var_paired, ratio)
