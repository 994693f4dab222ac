"""Two policies over many tasks: per-task exact tests with multiplicity control, the
Cochran-Mantel-Haenszel test, and the exact conditional stratified test.

Robot-learning results come as a grid: policies x tasks x episodes. For policies A and B this
module answers, per task and across tasks:

* :func:`per_task_tests` -- each task's exact test: Fisher's (unpaired) or the exact McNemar
  test (when the trials are paired by initial condition), with p-values adjusted by each
  multiplicity correction of :data:`CORRECTIONS` (Holm, Hochberg, Benjamini-Hochberg) by the
  rules of ``statsmodels.stats.multitest.multipletests`` (written out so that ``evalsim
  rank`` does not load statsmodels; tests check them bit for bit against statsmodels).
* :func:`cmh_test` -- the Cochran-Mantel-Haenszel test of a common odds ratio of one, the
  Mantel-Haenszel common odds ratio with its (Robins-Breslow-Greenland) interval, and the
  Breslow-Day test that the odds ratio is the same in every task, all from statsmodels'
  ``StratifiedTable``.
* :func:`exact_stratified_test` -- the exact conditional test (Birch 1964; Mehta, Patel and
  Gray 1985): given every task's margins, B's total successes ``S`` has a distribution that
  depends only on the common odds ratio psi; a numba kernel convolves the tasks'
  hypergeometric pmfs. Two-sided p-value, conditional MLE and exact (Cornfield-type)
  interval of psi, defined as R's ``mantelhaen.test(exact = TRUE)`` defines them (see the
  function's notes). With one task it is Fisher's exact test.

Orientation everywhere: the odds ratio is odds(B) / odds(A), so psi > 1 means B succeeds
more often. Each task's table is ``[[k_b, n_b - k_b], [k_a, n_a - k_a]]``.

References
----------
.. [1] Birch, M. W. (1964). The detection of partial association, I: the 2x2 case. JRSS B
   26, 313-324.
.. [2] Mehta, C. R., Patel, N. R. and Gray, R. (1985). Computing an exact confidence interval
   for the common odds ratio in several 2x2 contingency tables. JASA 80, 969-973.
.. [3] Mantel, N. and Haenszel, W. (1959). Statistical aspects of the analysis of data from
   retrospective studies of disease. JNCI 22, 719-748.
.. [4] Breslow, N. E. and Day, N. E. (1980). Statistical Methods in Cancer Research I, IARC.
.. [5] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J.
   Statist. 6, 65-70; Hochberg, Y. (1988), Biometrika 75, 800-802; Benjamini, Y. and
   Hochberg, Y. (1995), JRSS B 57, 289-300; Sarkar, S. K. (1998), Ann. Statist. 26, 494-504
   (Hochberg under positive dependence); Benjamini, Y. and Yekutieli, D. (2001), Ann.
   Statist. 29, 1165-1188 (BH under PRDS).
.. [6] R Core Team, ``stats::mantelhaen.test``, ``stats::fisher.test``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evalsim._registry import by_id
from evalsim.stats._roots import brentq  # scipy.optimize.brentq, without importing it
from evalsim.stats._validate import check_alpha, check_confidence, check_counts
from evalsim.stats.multi import _kernels as _k
from evalsim.stats.rates import TwoArmRates

__all__ = [
    "ADJUST_METHODS",
    "CORRECTIONS",
    "R_REL_TOL",
    "CMHResult",
    "Correction",
    "ExactStratifiedResult",
    "TaskComparison",
    "adjust_pvalues",
    "cmh_test",
    "exact_stratified_test",
    "per_task_tests",
]

#: adjust(sorted_p) -> adjusted: the p-values sorted increasingly (float64, one dimension) to
#: their adjusted values in that order, before the cap at 1.
AdjustFunction = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Correction:
    """One multiplicity correction: everything the code, the command, the tables and the
    tests read.

    Attributes
    ----------
    id : str
        The name used in the API (``method=``), the JSON keys (``p_<id>``) and the tables'
        columns.
    label : str
        Its name in prose (e.g. "Benjamini-Hochberg").
    short : str
        Its name in the command's table headers (e.g. "BH").
    statsmodels : str
        The same correction's ``method`` in ``statsmodels.stats.multitest.multipletests`` (the
        tests' cross-check, bit for bit).
    controls : {"FWER", "FDR"}
        The error rate it keeps at or below alpha: the family-wise error rate (the chance of
        any false rejection) or the false discovery rate (the expected share of false ones
        among the rejections).
    assumptions : str
        What the p-values must satisfy for that control.
    adjust : AdjustFunction
        The rule, on the sorted p-values (see :data:`AdjustFunction`).
    reference : str
        Where the correction is defined.
    """

    id: str
    label: str
    short: str
    statsmodels: str
    controls: str
    assumptions: str
    adjust: AdjustFunction
    reference: str


# The step-down and step-up rules of multipletests, operation for operation (same products,
# same running max/min, so the same bits), on the p-values sorted increasingly.
def _holm(ps: np.ndarray) -> np.ndarray:
    return np.maximum.accumulate(ps * np.arange(len(ps), 0, -1))


def _hochberg(ps: np.ndarray) -> np.ndarray:
    return np.minimum.accumulate((np.arange(len(ps), 0, -1) * ps)[::-1])[::-1]


def _benjamini_hochberg(ps: np.ndarray) -> np.ndarray:
    # p_(k) * m / k, made monotone from the largest down
    m = len(ps)
    return np.minimum.accumulate((ps / (np.arange(1, m + 1) / float(m)))[::-1])[::-1]


#: The multiplicity corrections, in the order of the per-task tables' columns (T34, ``compare
#: --by task``). Adding one: an entry here with its rule; the command's table and JSON, T34
#: and the tests (statsmodels, plain Python, the error rate it controls) read the registry.
CORRECTIONS: dict[str, Correction] = by_id(
    Correction(
        "holm",
        "Holm",
        "Holm",
        statsmodels="holm",
        controls="FWER",
        assumptions="none: any dependence between the p-values",
        adjust=_holm,
        reference="Holm (1979)",
    ),
    Correction(
        "hochberg",
        "Hochberg",
        "Hochberg",
        statsmodels="simes-hochberg",
        controls="FWER",
        assumptions="independent or positively dependent (PRDS) p-values (Sarkar 1998)",
        adjust=_hochberg,
        reference="Hochberg (1988)",
    ),
    Correction(
        "bh",
        "Benjamini-Hochberg",
        "BH",
        statsmodels="fdr_bh",
        controls="FDR",
        assumptions="independent or positively dependent (PRDS) p-values (Benjamini "
        "and Yekutieli 2001)",
        adjust=_benjamini_hochberg,
        reference="Benjamini and Hochberg (1995)",
    ),
)

#: Multiplicity corrections: our name -> the ``method`` of statsmodels' ``multipletests``
#: (from :data:`CORRECTIONS`).
ADJUST_METHODS = {c.id: c.statsmodels for c in CORRECTIONS.values()}

#: R's "fuzz" for the two-sided exact p-value (``relErr <- 1 + 10^(-7)`` in
#: ``mantelhaen.test`` and ``fisher.test``).
R_REL_TOL = 1e-7

#: Search range of log(psi) for the interval and the MLE (R: psi or 1/psi in
#: (.Machine$double.eps, 1), i.e. |log psi| < 36.04).
_LOG_PSI_MAX = 36.04


def _check_strata(k_a, n_a, k_b, n_b):
    k_a, n_a = check_counts(np.atleast_1d(k_a), np.atleast_1d(n_a))
    k_b, n_b = check_counts(np.atleast_1d(k_b), np.atleast_1d(n_b))
    shapes = {a.shape for a in (k_a, n_a, k_b, n_b)}
    if len(shapes) != 1 or k_a.ndim != 1:
        raise ValueError(
            "k_a, n_a, k_b and n_b must be 1-d and of one length (one entry per task), got "
            f"shapes {[a.shape for a in (k_a, n_a, k_b, n_b)]}"
        )
    return k_a, n_a, k_b, n_b


def adjust_pvalues(pvalues, method: str = "holm", alpha: float = 0.05) -> np.ndarray:
    """Multiplicity-adjusted p-values, as ``statsmodels.stats.multitest.multipletests``.

    The step-down and step-up rules of ``multipletests`` written out operation for operation
    (same sort, same products, same running max/min, so the same bits; the tests check it
    against statsmodels), without loading statsmodels and SciPy's statistics (seconds).

    Parameters
    ----------
    pvalues : array_like of float
        Raw p-values in [0, 1].
    method : str
        One of :data:`CORRECTIONS`: Holm's step-down (family-wise error), Hochberg's step-up
        (family-wise error, valid under positive dependence) or Benjamini-Hochberg (false
        discovery rate) [5]_; each entry says what it controls and under what assumptions.
    alpha : float
        Checked, as ``multipletests`` takes it; the adjusted p-values do not depend on it.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input order.
    """
    if not isinstance(method, str) or method not in CORRECTIONS:
        raise ValueError(f"method must be one of {sorted(CORRECTIONS)}, got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    if p.size == 0 or not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"pvalues must be a non-empty array of values in [0, 1], got {pvalues!r}")
    check_alpha(alpha)
    order = np.argsort(p)  # multipletests' sort (its tie order decides which tie gets which)
    adjusted = CORRECTIONS[method].adjust(np.take(p, order))
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class TaskComparison(TwoArmRates):
    """One task's A vs B comparison (a row of :func:`per_task_tests`).

    Attributes
    ----------
    task : str
    k_a, n_a, k_b, n_b : int
        Successes and trials of A and B in the task (``rate_a``, ``rate_b``: their ratios,
        from :class:`~evalsim.stats.rates.TwoArmRates`).
    test : str
        "fisher" or "mcnemar" (exact McNemar on the pairs).
    pvalue : float
        The raw p-value of that test (two-sided unless a one-sided alternative was asked).
    a_only, b_only : int or None
        With McNemar: the discordant pair counts (A-only and B-only successes).
    adjusted : dict
        Adjusted p-value per correction of :data:`CORRECTIONS`, in its order.
    """

    task: str
    k_a: int
    n_a: int
    k_b: int
    n_b: int
    test: str
    pvalue: float
    a_only: int | None
    b_only: int | None
    adjusted: dict


def per_task_tests(
    tasks, k_a, n_a, k_b, n_b, pairs=None, alpha: float = 0.05, alternative: str = "two-sided"
):
    """Each task's exact test of "A and B have the same success rate", with adjusted p.

    Parameters
    ----------
    tasks : sequence of str
        Task names, one per entry of the count arrays.
    k_a, n_a, k_b, n_b : array_like of int
        Per task: successes and trials of A and of B.
    pairs : sequence of (int, int) or None, optional
        Per task, ``(a_only, b_only)`` discordant pair counts when the task's trials are
        paired (then the exact McNemar test is used), or ``None`` for that task (Fisher's
        exact test). ``None`` for all tasks: every task unpaired.
    alpha : float
        Checked as ``multipletests`` would; the adjusted p-values do not depend on it.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: B's rate is the higher; ``"less"``: the lower (one-sided Fisher,
        ``evalsim.stats.two_sample.fisher.fisher_pvalue_one_sided``, or one-sided exact McNemar,
        ``evalsim.stats.two_sample.paired.mcnemar_pvalue``, with B as the first arm).

    Returns
    -------
    list of TaskComparison
        In the order given; ``adjusted`` holds each correction's p-values over the tasks.
    """
    from evalsim.stats.two_sample.fisher import fisher_pvalue, fisher_pvalue_one_sided
    from evalsim.stats.two_sample.paired import mcnemar_exact, mcnemar_pvalue

    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(
            f"alternative must be one of ['two-sided', 'greater', 'less'], got {alternative!r}"
        )

    k_a, n_a, k_b, n_b = _check_strata(k_a, n_a, k_b, n_b)
    tasks = [str(t) for t in tasks]
    if len(tasks) != k_a.size:
        raise ValueError(f"got {len(tasks)} task names for {k_a.size} tasks")
    if pairs is None:
        pairs = [None] * len(tasks)
    if len(pairs) != len(tasks):
        raise ValueError(f"pairs must have one entry per task, got {len(pairs)}")
    raw, info = [], []
    for i in range(len(tasks)):
        ka, na, kb, nb = int(k_a[i]), int(n_a[i]), int(k_b[i]), int(n_b[i])
        if pairs[i] is None:
            if alternative == "two-sided":
                raw.append(float(fisher_pvalue(ka, na, kb, nb)))
            else:
                raw.append(float(fisher_pvalue_one_sided(kb, nb, ka, na, alternative)))
            info.append(("fisher", None, None))
        else:
            a_only, b_only = (int(v) for v in pairs[i])
            if alternative == "two-sided":
                raw.append(float(mcnemar_exact(a_only, b_only).pvalue))
            else:
                raw.append(float(mcnemar_pvalue(b_only, a_only, alternative)))
            info.append(("mcnemar", a_only, b_only))
    adjusted = {m: adjust_pvalues(raw, m, alpha) for m in CORRECTIONS}
    return [
        TaskComparison(
            task=tasks[i],
            k_a=int(k_a[i]),
            n_a=int(n_a[i]),
            k_b=int(k_b[i]),
            n_b=int(n_b[i]),
            test=info[i][0],
            pvalue=raw[i],
            a_only=info[i][1],
            b_only=info[i][2],
            adjusted={m: float(adjusted[m][i]) for m in CORRECTIONS},
        )
        for i in range(len(tasks))
    ]


@dataclass(frozen=True)
class CMHResult:
    """Cochran-Mantel-Haenszel analysis of the tasks' 2x2 tables (statsmodels).

    Attributes
    ----------
    statistic, pvalue : float
        CMH chi-square (1 df, without continuity correction) and its p-value.
    statistic_corrected, pvalue_corrected : float
        The same with Yates' 1/2 correction (R's ``mantelhaen.test`` default).
    odds_ratio, odds_ratio_lower, odds_ratio_upper : float
        Mantel-Haenszel common odds ratio (B vs A) and its Robins-Breslow-Greenland interval.
    breslow_day_statistic, breslow_day_pvalue : float
        Breslow-Day test of equal odds ratios across tasks (``adjust=False``; NaN with one
        task or when undefined).
    n_informative : int
        Tasks whose table has both outcomes and both arms (the others carry no information).
    """

    statistic: float
    pvalue: float
    statistic_corrected: float
    pvalue_corrected: float
    odds_ratio: float
    odds_ratio_lower: float
    odds_ratio_upper: float
    breslow_day_statistic: float
    breslow_day_pvalue: float
    n_informative: int


def _tables(k_a, n_a, k_b, n_b) -> np.ndarray:
    """The tasks' tables as a 2 x 2 x K array (statsmodels' and R's layout)."""
    return np.stack([np.stack([k_b, n_b - k_b]), np.stack([k_a, n_a - k_a])]).astype(np.float64)


def cmh_test(k_a, n_a, k_b, n_b, confidence: float = 0.95) -> CMHResult:
    """Cochran-Mantel-Haenszel test, Mantel-Haenszel odds ratio and Breslow-Day, per
    ``statsmodels.stats.contingency_tables.StratifiedTable`` [3]_ [4]_.

    Parameters
    ----------
    k_a, n_a, k_b, n_b : array_like of int
        Per task: successes and trials of A and of B.
    confidence : float
        Level of the odds-ratio interval.

    Returns
    -------
    CMHResult

    Notes
    -----
    The statistics are statsmodels'; the p-values are ``scipy.stats.chi2.sf`` of them
    (statsmodels returns ``1 - chi2.cdf``, which is 0 below about 1e-16). statsmodels'
    corrected statistic subtracts 1/2 from ``|sum(a - E a)|`` always; R does only when that
    is at least 1/2.

    Tasks where every trial succeeded (or every trial failed) carry no information on the
    odds ratio and are dropped before calling statsmodels (their CMH variance is zero). When
    no task is informative, the statistics are NaN and the p-values 1.
    """

    from scipy.stats import chi2
    from statsmodels.stats.contingency_tables import StratifiedTable

    k_a, n_a, k_b, n_b = _check_strata(k_a, n_a, k_b, n_b)
    confidence = check_confidence(confidence)
    t = k_a + k_b
    keep = (t > 0) & (t < n_a + n_b)
    nan = math.nan
    if not keep.any():
        return CMHResult(nan, 1.0, nan, 1.0, nan, nan, nan, nan, nan, 0)
    st = StratifiedTable(_tables(k_a[keep], n_a[keep], k_b[keep], n_b[keep]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        plain = st.test_null_odds(correction=False)
        corrected = st.test_null_odds(correction=True)
        lo, hi = st.oddsratio_pooled_confint(alpha=1.0 - confidence)
        if int(keep.sum()) >= 2:
            bd = st.test_equal_odds(adjust=False)
            bd_stat, bd_p = float(bd.statistic), float(bd.pvalue)
        else:
            bd_stat, bd_p = nan, nan
        odds = float(st.oddsratio_pooled)
    return CMHResult(
        statistic=float(plain.statistic),
        pvalue=float(chi2.sf(plain.statistic, 1)),
        statistic_corrected=float(corrected.statistic),
        pvalue_corrected=float(chi2.sf(corrected.statistic, 1)),
        odds_ratio=odds,
        odds_ratio_lower=float(lo),
        odds_ratio_upper=float(hi),
        breslow_day_statistic=bd_stat,
        breslow_day_pvalue=bd_p,
        n_informative=int(keep.sum()),
    )


@dataclass(frozen=True)
class ExactStratifiedResult:
    """Exact conditional test of a common odds ratio of one across tasks.

    Attributes
    ----------
    statistic : int
        ``S``, B's total successes.
    support : tuple of int
        ``(lo, hi)``, the values S can take given the tasks' margins.
    pvalue : float
        Two-sided p-value (R's rule, see :func:`exact_stratified_test`).
    pvalue_less, pvalue_greater : float
        One-sided ``P(S <= s)`` (B worse) and ``P(S >= s)`` (B better) at psi = 1.
    odds_ratio : float
        Conditional maximum-likelihood estimate of the common odds ratio (0 or inf at the
        ends of the support).
    odds_ratio_lower, odds_ratio_upper : float
        Exact conditional interval at ``confidence``.
    confidence : float
    """

    statistic: int
    support: tuple[int, int]
    pvalue: float
    pvalue_less: float
    pvalue_greater: float
    odds_ratio: float
    odds_ratio_lower: float
    odds_ratio_upper: float
    confidence: float

    def __repr__(self) -> str:
        return (
            f"ExactStratifiedResult(S={self.statistic}, support={self.support}, "
            f"p={self.pvalue:.4g}, odds_ratio={self.odds_ratio:.4g} "
            f"[{self.odds_ratio_lower:.4g}, {self.odds_ratio_upper:.4g}])"
        )


#: Below this log-probability at psi = 1 the observed S is re-based on a tilted convolution
#: (exp(-600) ~ 1e-261, well above the 1e-308 where doubles run out).
_UNDERFLOW_LOG = -600.0


def _mh_log_odds(k_a, n_a, k_b, n_b) -> float:
    """log of the Mantel-Haenszel common odds ratio (B vs A), +-0.5 added to every cell
    when a sum is zero, clipped to the search range."""
    a, b = k_b.astype(float), (n_b - k_b).astype(float)
    c, d = k_a.astype(float), (n_a - k_a).astype(float)
    n = n_a + n_b
    num, den = float(np.sum(a * d / n)), float(np.sum(b * c / n))
    if num == 0.0 or den == 0.0:
        num = float(np.sum((a + 0.5) * (d + 0.5) / (n + 2)))
        den = float(np.sum((b + 0.5) * (c + 0.5) / (n + 2)))
    return float(np.clip(math.log(num / den), -_LOG_PSI_MAX, _LOG_PSI_MAX))


def _solve_log_psi(fn, target: float) -> float:
    """Root of ``fn(theta) = target`` for an increasing ``fn`` on |theta| <= 36.04;
    -inf / +inf when the root lies beyond (then psi is reported as 0 / inf)."""
    lo, hi = -_LOG_PSI_MAX, _LOG_PSI_MAX
    f_lo, f_hi = fn(lo) - target, fn(hi) - target
    if f_lo >= 0:
        return -math.inf
    if f_hi <= 0:
        return math.inf
    return brentq(lambda th: fn(th) - target, lo, hi, xtol=1e-12, rtol=4 * np.finfo(float).eps)


def exact_stratified_test(k_a, n_a, k_b, n_b, confidence: float = 0.95) -> ExactStratifiedResult:
    """Exact conditional test that the common odds ratio of B vs A is one, over tasks.

    Parameters
    ----------
    k_a, n_a, k_b, n_b : array_like of int
        Per task (stratum): successes and trials of A and of B (``n >= 1``).
    confidence : float
        Level of the two-sided interval for the common odds ratio.

    Returns
    -------
    ExactStratifiedResult

    Notes
    -----
    Conditioning on each task's margins (``n_a``, ``n_b``, ``t = k_a + k_b``) removes the
    tasks' baseline rates; ``S = sum k_b`` then has ``P(S = s) = c(s) psi**s / sum c psi**``
    with ``c`` the convolution of the tasks' central hypergeometric pmfs [1]_ [2]_.

    *Two-sided p-value* -- R's ``mantelhaen.test(exact = TRUE)`` rule, the same as
    ``fisher.test``: at psi = 1, the total probability of every ``s`` with
    ``P(S = s) <= P(S = s_obs) * (1 + 1e-7)`` ("no more likely than observed"), not twice
    the smaller tail. With one task this is Fisher's two-sided p-value (SciPy counts ties
    with a tolerance of 1e-14 instead of 1e-7; the two agree unless two tables' probabilities
    differ by a relative amount in (1e-14, 1e-7]).

    *Interval* -- R's, the conditional (Cornfield) exact interval: the lower bound solves
    ``P(S >= s_obs; psi) = (1 - confidence) / 2`` and the upper ``P(S <= s_obs; psi) =
    (1 - confidence) / 2``; the lower bound is 0 when ``s_obs`` is the smallest possible
    value and the upper infinite when it is the largest. The estimate solves
    ``E_psi[S] = s_obs`` (conditional MLE). R finds these roots with ``uniroot`` at its
    default tolerance (about 1e-4 on psi or 1/psi); here they are solved on log psi to
    1e-12, so R's printed bounds can differ in the fourth digit.

    Values of ``P(S = s)`` below about 1e-308 of the largest underflow: a p-value under
    ~1e-300 is returned as 0. The interval and the estimate stay accurate there: when the
    observed value's null probability is below exp(-600), the convolution is redone tilted at
    the Mantel-Haenszel estimate, which puts the observed value near the mode.
    """
    k_a, n_a, k_b, n_b = _check_strata(k_a, n_a, k_b, n_b)
    confidence = check_confidence(confidence)
    t = k_a + k_b
    lo, logd = _k.strata_log_density(n_b, n_a, t, 0.0)
    s = int(k_b.sum())
    j = s - lo
    hi = lo + logd.shape[0] - 1
    p2 = float(_k.two_sided_pvalue(logd, j, math.log1p(R_REL_TOL)))
    p_less = float(_k.tail_probability(logd, j, 0.0, False))
    p_greater = float(_k.tail_probability(logd, j, 0.0, True))
    half = (1.0 - confidence) / 2.0
    # Far from the null, P(S = s_obs) at psi = 1 underflows: redo the convolution tilted at
    # the Mantel-Haenszel estimate, so the law near s_obs is represented, and shift the tilt.
    theta0 = 0.0
    if logd[j] < _UNDERFLOW_LOG:
        theta0 = _mh_log_odds(k_a, n_a, k_b, n_b)
        _, logd = _k.strata_log_density(n_b, n_a, t, theta0)
    if s == lo:
        lower = 0.0
    else:
        # P(S >= s; psi) increases with psi.
        lower = math.exp(
            _solve_log_psi(lambda th: _k.tail_probability(logd, j, th - theta0, True), half)
        )
    if s == hi:
        upper = math.inf
    else:
        # P(S <= s; psi) decreases with psi: solve -P = -half.
        upper = math.exp(
            _solve_log_psi(lambda th: -_k.tail_probability(logd, j, th - theta0, False), -half)
        )
    if lo == hi:  # no informative task: S is fixed by the margins
        estimate = math.nan
    elif s == lo:
        estimate = 0.0
    elif s == hi:
        estimate = math.inf
    else:
        estimate = math.exp(
            _solve_log_psi(lambda th: _k.mean_statistic(logd, th - theta0), float(j))
        )
    return ExactStratifiedResult(
        statistic=s,
        support=(int(lo), int(hi)),
        pvalue=p2,
        pvalue_less=p_less,
        pvalue_greater=p_greater,
        odds_ratio=estimate,
        odds_ratio_lower=lower,
        odds_ratio_upper=upper,
        confidence=confidence,
    )
