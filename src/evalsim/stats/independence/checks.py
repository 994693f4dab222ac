"""Are a policy's trials independent? Three exact checks on a success sequence in trial order.

The binomial interval and Fisher's test assume trials that are independent with one success
rate. "Independence is the assumption that fails first" (lesson 25): servo heating, a worn
cube, a shifted camera and the operator's resets make success drift over a session or come
in clusters. Given a 0/1 sequence ``x`` in the order the trials ran, each check below is
exact *conditional on the number of successes* K: under independence with a constant rate
every arrangement of the K successes among the n positions is equally likely, whatever the
rate, so the null law of each statistic is a counting law.

``runs_test``
    Wald-Wolfowitz runs test: R = number of maximal blocks of equal outcomes. Exact null law
    of Swed and Eisenhart [1]_; few runs = successes and failures cluster (drift, streaks),
    many runs = they alternate.
``trend_test``
    Exact Cochran-Armitage trend test over trial order [2]_ [3]_: S = sum of the positions
    (1..n) of the successes. Its conditional law given K is that of the Wilcoxon-Mann-Whitney
    statistic of the success positions against the failure positions (Harding's generating
    function [4]_, in exact integers held as residues modulo primes below 2^31 and decoded by
    Garner's algorithm, so the law is right to double rounding down to ~1e-308); S below its
    mean K(n+1)/2 means success fell over the session.
``halves_test``
    First half (the first floor(n/2) trials) against the rest, Fisher's two-sided exact test
    (:func:`evalsim.stats.two_sample.fisher.fisher_pvalue`).

Two-sided p-values of the runs and trend tests double the smaller tail,
``min(1, 2 min(P(T <= t), P(T >= t)))`` (for the symmetric trend law this is
``P(|S - E S| >= |s - E S|)``, SciPy's exact ``mannwhitneyu``). Above
:data:`EXACT_TREND_MAX_N` trials the trend test uses the normal approximation with a
continuity correction (the asymptotic Cochran-Armitage test) and says so.

:func:`independence_checks` runs all three and flags the sequence as dependent when the
smallest p-value is below alpha / 3 (Bonferroni over the three checks), so an i.i.d.
sequence is flagged with probability at most alpha.

For study design, :func:`exact_rejection_probabilities` gives each check's exact rejection
probability when trial i succeeds with its own probability p[i] (drift), by dynamic
programming over (K, R) and (K, S) and two Poisson-binomial laws;
:func:`rejection_rates_mc` simulates the same (and the combined Bonferroni rule) in numba.

References
----------
.. [1] F. S. Swed, C. Eisenhart, "Tables for testing randomness of grouping in a sequence of
   alternatives", Ann. Math. Statist. 14 (1), 66-87, 1943.
.. [2] W. G. Cochran, "Some methods for strengthening the common chi-squared tests",
   Biometrics 10 (4), 417-451, 1954; P. Armitage, "Tests for linear trends in proportions
   and frequencies", Biometrics 11 (3), 375-386, 1955.
.. [3] C. R. Mehta, N. R. Patel, "StatXact: exact trend test", and A. Agresti,
   "Categorical Data Analysis", 3rd ed., 2013, section 5.4.6 (exact conditional trend test).
.. [4] E. F. Harding, "An efficient, minimal-storage procedure for calculating the
   Mann-Whitney U, generalized U and similar distributions", Applied Statistics 33 (1),
   1-6, 1984.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from evalsim.stats._validate import check_alpha, check_n, check_outcomes, check_probability
from evalsim.stats.independence import _kernels as _k
from evalsim.stats.two_sample.fisher import fisher_pvalue, fisher_rejects

__all__ = [
    "CHECKS",
    "EXACT_TREND_MAX_N",
    "HalvesResult",
    "IndependenceChecks",
    "RunsResult",
    "TrendResult",
    "as_success_sequence",
    "exact_rejection_probabilities",
    "halves_test",
    "independence_checks",
    "poisson_binomial_pmf",
    "rejection_rates_mc",
    "rejection_tables",
    "runs_null_pmf",
    "runs_test",
    "trend_null_pmf",
    "trend_test",
]

#: The three checks, in the order every result lists them.
CHECKS = ("runs", "trend", "halves")

#: Above this many trials the trend test uses the normal approximation (with a continuity
#: correction; within 1e-3 relative of the exact p-value in the body at n = 600). The exact law
#: costs O(K^2 (n - K) log2 comb(n, K) / 31): about 0.5 s at n = 600 with K = n / 2 on the
#: build machine, 6 s at n = 1000 and 160 s at n = 2000. (Until issue 24 this was 2000 with a
#: floating-point recursion whose law was wrong from n ~ 600.)
EXACT_TREND_MAX_N = 600


def as_success_sequence(x) -> np.ndarray:
    """``x`` as an int64 array of 0/1 (booleans or 0/1 numbers), at least 2 trials.

    Raises
    ------
    ValueError
        For anything but a 1-D sequence of 0/1 values with n >= 2, quoting the first bad value.
    """
    arr = check_outcomes(x, "x")
    if arr.shape[0] < 2:
        raise ValueError(f"x must hold at least 2 trials, got {arr.shape[0]}")
    return arr


def _two_sided(pmf: np.ndarray, obs: int) -> tuple[float, float, float]:
    tails = np.empty(2)
    p = _k.two_sided_from_pmf(np.ascontiguousarray(pmf, dtype=np.float64), int(obs), tails)
    return float(p), float(tails[0]), float(tails[1])


# ------------------------------------------------------------------------------- runs


def runs_null_pmf(n_success: int, n_failure: int) -> np.ndarray:
    """Exact law of the number of runs R given the counts: ``pmf[r]`` for r = 0..n.

    Examples
    --------
    >>> [round(v, 4) for v in runs_null_pmf(2, 2).tolist()]
    [0.0, 0.0, 0.3333, 0.3333, 0.3333]
    """
    n1 = check_n(n_success, "n_success", minimum=0)
    n2 = check_n(n_failure, "n_failure", minimum=0)
    if n1 + n2 < 1:
        raise ValueError(f"need at least one trial, got n_success={n1}, n_failure={n2}")
    out = np.zeros(n1 + n2 + 1, dtype=np.float64)
    _k.runs_null_pmf(n1, n2, out)
    return out


@dataclass(frozen=True)
class RunsResult:
    """Exact runs test of one success sequence.

    Attributes
    ----------
    n, n_success : int
        Trials and successes.
    runs : int
        Observed number of runs R.
    expected_runs : float
        E[R | K] = 1 + 2 K (n - K) / n.
    pvalue : float
        Two-sided: min(1, 2 min(p_few, p_many)).
    p_few, p_many : float
        P(R <= runs) (clustering) and P(R >= runs) (alternation) under independence.
    """

    n: int
    n_success: int
    runs: int
    expected_runs: float
    pvalue: float
    p_few: float
    p_many: float


def runs_test(x) -> RunsResult:
    """Exact Wald-Wolfowitz runs test on a 0/1 sequence in trial order.

    All successes or all failures give one run and p = 1 (nothing to test).

    Examples
    --------
    >>> runs_test([1] * 10 + [0] * 10).runs
    2
    """
    x = as_success_sequence(x)
    n, k = int(x.size), int(x.sum())
    runs = int(1 + np.count_nonzero(x[1:] != x[:-1]))
    p, few, many = _two_sided(runs_null_pmf(k, n - k), runs)
    return RunsResult(n, k, runs, 1.0 + 2.0 * k * (n - k) / n, p, few, many)


# ------------------------------------------------------------------------------- trend


def trend_null_pmf(n: int, n_success: int) -> np.ndarray:
    """Exact law of S = sum of the success positions (1..n) given K = n_success.

    Returns ``pmf`` with ``pmf[u]`` = P(S = u + K (K + 1) / 2), u = 0 .. K (n - K).
    """
    n = check_n(n, "n")
    k = check_n(n_success, "n_success", minimum=0)
    if k > n:
        raise ValueError(f"n_success must be <= n, got {k} > {n}")
    m = min(k, n - k)  # the law of U is the same for K and n - K
    total = math.comb(n, m)
    primes = _crt_primes(total.bit_length() + 1)
    size = m * (n - m) + 1
    half = size // 2 + 1  # the law is symmetric: decode the lower half, mirror it
    counts = _k.rank_sum_counts_mod(n, m, primes, np.zeros((size, primes.size), np.int64))
    inverses, scale = _garner_constants(primes, total)
    pmf = np.empty(size)
    _k.garner_to_float(counts[:half], primes, inverses, scale, pmf[:half])
    pmf[size - half :] = pmf[:half][::-1]
    return pmf


#: Primes just below 2^31 (the largest first): residues of the trend law's exact counts.
def _primes_below_2_31(count: int) -> list[int]:
    out, c = [], 2**31 - 1
    while len(out) < count:
        if c % 2 and all(c % d for d in range(3, math.isqrt(c) + 1, 2)):
            out.append(c)
        c -= 2
    return out


@functools.lru_cache(maxsize=1)
def _prime_table() -> tuple[int, ...]:
    return tuple(_primes_below_2_31(70))  # 70 x 30.99 bits covers comb(2000, 1000) ~ 2^1995


def _crt_primes(bits: int) -> np.ndarray:
    """Enough primes below 2^31 that their product exceeds 2^bits."""
    table, chosen, have = _prime_table(), [], 0.0
    for p in table:
        chosen.append(p)
        have += math.log2(p)
        if have > bits:
            return np.array(chosen, dtype=np.int64)
    raise ValueError(f"the exact trend law needs {bits} bits; at most {have:.0f} are available")


def _garner_constants(primes: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """``inverses[i] = (p_0 ... p_(i-1))^-1 mod p_i`` and ``scale[i] = p_0 ... p_(i-1) / total``."""
    inverses, scale, prod = [], [], 1
    for p in primes.tolist():
        inverses.append(pow(prod % p, -1, p) if prod > 1 else 1)
        scale.append(prod / total)  # int / int: correctly rounded (0.0 below ~1e-308)
        prod *= p
    return np.array(inverses, dtype=np.int64), np.array(scale)


@dataclass(frozen=True)
class TrendResult:
    """Cochran-Armitage trend test over trial order.

    Attributes
    ----------
    n, n_success : int
    statistic : int
        S = sum of the positions (1..n) of the successes.
    expected : float
        E[S | K] = K (n + 1) / 2.
    pvalue : float
        Two-sided p-value.
    p_falling, p_rising : float
        P(S <= s) (success concentrated early, falling) and P(S >= s) (rising).
    method : str
        ``"exact"`` or ``"normal"`` (n > :data:`EXACT_TREND_MAX_N`).
    slope_per_trial : float
        Least-squares slope of success on position (points of rate per trial), for words.
    """

    n: int
    n_success: int
    statistic: int
    expected: float
    pvalue: float
    p_falling: float
    p_rising: float
    method: str
    slope_per_trial: float


def trend_test(x) -> TrendResult:
    """Exact Cochran-Armitage test for a linear trend of success over trial order.

    Examples
    --------
    >>> r = trend_test([1] * 8 + [0] * 8)
    >>> r.p_falling < 0.001 and r.method
    'exact'
    """
    x = as_success_sequence(x)
    n, k = int(x.size), int(x.sum())
    pos = np.arange(1, n + 1, dtype=np.float64)
    s = int(pos[x == 1].sum())
    mean = k * (n + 1) / 2.0
    centred = pos - pos.mean()
    slope = float((centred * x).sum() / (centred**2).sum())
    if k in (0, n):
        return TrendResult(n, k, s, mean, 1.0, 1.0, 1.0, "exact", slope)
    if n <= EXACT_TREND_MAX_N:
        p, lo, hi = _two_sided(trend_null_pmf(n, k), s - k * (k + 1) // 2)
        return TrendResult(n, k, s, mean, p, lo, hi, "exact", slope)
    sd = math.sqrt(k * (n - k) * (n + 1) / 12.0)
    lo = float(ndtr((s - mean + 0.5) / sd))
    hi = float(ndtr(-(s - mean - 0.5) / sd))
    return TrendResult(n, k, s, mean, min(1.0, 2.0 * min(lo, hi)), lo, hi, "normal", slope)


# ------------------------------------------------------------------------------- halves


@dataclass(frozen=True)
class HalvesResult:
    """First half vs second half of the trials, Fisher's two-sided exact test."""

    n_first: int
    k_first: int
    n_second: int
    k_second: int
    pvalue: float

    @property
    def rate_first(self) -> float:
        return self.k_first / self.n_first

    @property
    def rate_second(self) -> float:
        return self.k_second / self.n_second


def halves_test(x) -> HalvesResult:
    """Fisher's exact test of the first floor(n/2) trials against the remaining ones."""
    x = as_success_sequence(x)
    h = x.size // 2
    k1, k2 = int(x[:h].sum()), int(x[h:].sum())
    p = float(fisher_pvalue(k1, h, k2, x.size - h))
    return HalvesResult(h, k1, int(x.size - h), k2, p)


# ------------------------------------------------------------------------------- all three


@dataclass(frozen=True)
class IndependenceChecks:
    """The three checks of one sequence and the Bonferroni verdict.

    Attributes
    ----------
    runs, trend, halves
        The three results.
    alpha : float
        Family-wise level; each check is flagged at ``alpha / 3``.
    flagged : tuple of str
        Names (of :data:`CHECKS`) whose p-value is below ``alpha / 3``.
    """

    runs: RunsResult
    trend: TrendResult
    halves: HalvesResult
    alpha: float
    flagged: tuple[str, ...]

    @property
    def level_each(self) -> float:
        return self.alpha / len(CHECKS)

    @property
    def dependent(self) -> bool:
        """True when at least one check is below alpha / 3."""
        return bool(self.flagged)

    @property
    def pvalues(self) -> dict[str, float]:
        return {c: getattr(self, c).pvalue for c in CHECKS}


def independence_checks(x, alpha=0.05) -> IndependenceChecks:
    """Runs, trend and halves tests of ``x`` with a Bonferroni verdict at family level alpha.

    Examples
    --------
    >>> c = independence_checks([1] * 16 + [1, 0] * 4 + [0] * 16)
    >>> c.dependent, c.flagged
    (True, ('runs', 'trend', 'halves'))
    """
    alpha = check_alpha(alpha)
    x = as_success_sequence(x)
    res = {"runs": runs_test(x), "trend": trend_test(x), "halves": halves_test(x)}
    each = alpha / len(CHECKS)
    flagged = tuple(c for c in CHECKS if res[c].pvalue < each)
    return IndependenceChecks(res["runs"], res["trend"], res["halves"], alpha, flagged)


# ------------------------------------------------------------------------------- under drift


def _check_p_sequence(p) -> np.ndarray:
    arr = np.asarray(check_probability(np.asarray(p, dtype=np.float64), "p"), dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"p must be a 1-D sequence of at least 2 probabilities, got {p!r}")
    return np.ascontiguousarray(arr)


def poisson_binomial_pmf(p) -> np.ndarray:
    """Law of the number of successes of independent trials with rates ``p[i]``.

    Returns ``pmf[k]``, k = 0..len(p), by the O(n^2) convolution recurrence.

    Examples
    --------
    >>> [round(v, 3) for v in poisson_binomial_pmf([0.5, 0.9]).tolist()]
    [0.05, 0.5, 0.45]
    """
    arr = np.asarray(check_probability(np.asarray(p, dtype=np.float64), "p"), dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"p must be a 1-D sequence of probabilities, got shape {arr.shape}")
    out = np.empty(arr.size + 1, dtype=np.float64)
    _k.poisson_binomial_pmf(np.ascontiguousarray(arr), out)
    return out


def rejection_tables(n: int, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Rejection regions of the three checks at n trials, each at ``level`` (p < level).

    Returns
    -------
    runs_rej : uint8 (n + 1, n + 1)
        ``[k, r]``: the runs test rejects K = k, R = r.
    trend_rej : uint8 (n + 1, n (n + 1) / 2 + 1)
        ``[k, s]``: the exact trend test rejects K = k, S = s.
    halves_rej : uint8 (h + 1, n - h + 1)
        ``[k_first, k_second]``: Fisher rejects, h = n // 2.
    h : int
        Size of the first half.
    """
    n = check_n(n, "n", minimum=2)
    level = check_alpha(level)
    runs_rej, trend_rej, halves_rej, h = _tables(n, level)
    return runs_rej.copy(), trend_rej.copy(), halves_rej.copy(), h


@functools.lru_cache(maxsize=32)
def _tables(n: int, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`rejection_tables` on validated arguments, cached (callers must not write)."""
    runs_rej = np.zeros((n + 1, n + 1), dtype=np.uint8)
    trend_rej = np.zeros((n + 1, n * (n + 1) // 2 + 1), dtype=np.uint8)
    for k in range(1, n):
        pmf = runs_null_pmf(k, n - k)
        lo, hi = np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1]
        runs_rej[k] = np.minimum(1.0, 2.0 * np.minimum(lo, hi)) < level
        pmf = trend_null_pmf(n, k)
        lo, hi = np.cumsum(pmf), np.cumsum(pmf[::-1])[::-1]
        base = k * (k + 1) // 2
        trend_rej[k, base : base + pmf.size] = np.minimum(1.0, 2.0 * np.minimum(lo, hi)) < level
    h = n // 2
    halves_rej = fisher_rejects(h, n - h, level).astype(np.uint8)
    return runs_rej, trend_rej, halves_rej, h


def exact_rejection_probabilities(p, alpha=0.05) -> dict[str, float]:
    """Exact probability that each check rejects at level ``alpha`` when trial i succeeds
    independently with probability ``p[i]``.

    With a constant p this is each test's exact size (<= alpha); with a drifting p it is the
    power to detect the drift. Cost O(n^4) for the trend law (n = 100: about 0.1 s).

    Returns
    -------
    dict
        ``{"runs": ..., "trend": ..., "halves": ...}``.
    """
    p = _check_p_sequence(p)
    alpha = check_alpha(alpha)
    n = p.size
    runs_rej, trend_rej, halves_rej, h = _tables(n, alpha)
    runs = float((_k.runs_joint_law(p) * runs_rej).sum())
    trend = float((_k.trend_joint_law(p) * trend_rej).sum())
    b1, b2 = poisson_binomial_pmf(p[:h]), poisson_binomial_pmf(p[h:])
    halves = float((np.outer(b1, b2) * halves_rej).sum())
    return {"runs": runs, "trend": trend, "halves": halves}


def rejection_rates_mc(p, alpha=0.05, n_sim=10_000, rng=None, bonferroni=False) -> dict:
    """Monte Carlo rejection rates of the three checks and of "any of the three".

    Parameters
    ----------
    p : array_like of float
        Success probability of each trial in order.
    alpha : float
        Level; with ``bonferroni=True`` each check runs at ``alpha / 3`` (the rule of
        :func:`independence_checks`), so ``"any"`` is its false-alarm rate or power.
    n_sim : int
        Simulated sequences.
    rng : numpy.random.Generator
        The stream (e.g. ``evalsim.seeding.rng_for(seed, "drift", ...)``); advanced in place.

    Returns
    -------
    dict
        Rates ``runs``, ``trend``, ``halves``, ``any`` and ``n_sim``.
    """
    p = _check_p_sequence(p)
    alpha = check_alpha(alpha)
    n_sim = check_n(n_sim, "n_sim")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    level = alpha / len(CHECKS) if bonferroni else alpha
    runs_rej, trend_rej, halves_rej, h = _tables(p.size, level)
    counts = _k.check_rejection_mc(p, n_sim, rng, runs_rej, trend_rej, halves_rej, h)
    out = {name: int(c) / n_sim for name, c in zip((*CHECKS, "any"), counts, strict=True)}
    out["n_sim"] = n_sim
    return out
