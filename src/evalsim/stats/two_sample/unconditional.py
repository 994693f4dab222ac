"""Exact unconditional tests of two binomial proportions: Boschloo, Barnard, Berger-Boos.

Arm 1 has ``k1`` successes of ``n1`` trials, arm 2 ``k2`` of ``n2``; in SciPy's layout the
table is ``[[k1, k2], [n1 - k1, n2 - k2]]`` (columns are the arms). Under the null both arms
share a rate ``pi`` (the nuisance parameter). A test orders the tables by a statistic; the
p-value of an observed table is the largest probability, over ``pi``, of the tables at least as
extreme [1]_:

    p = sup_{pi in [0, 1]} sum_{(x1, x2) at least as extreme} b(x1; n1, pi) b(x2; n2, pi).

Definitions (those of ``scipy.stats.boschloo_exact`` and ``barnard_exact``, SciPy 1.17.1):

* **Boschloo** [2]_. The statistic is Fisher's one-sided p-value: for
  ``alternative="less"`` (arm 1's rate below arm 2's) ``P(X <= k1)``, for ``"greater"``
  ``P(X >= k1)``, ``X`` hypergeometric given the margin ``k1 + k2``. A table is at least as
  extreme when its statistic is ``<= observed * (1 + 1e-13)`` (SciPy's tolerance).
  ``"two-sided"`` is twice the smaller of the two one-sided p-values, capped at 1.
* **Barnard** [3]_, pooled score statistic ``z = (k1/n1 - k2/n2) / sqrt(p (1 - p) (1/n1 +
  1/n2))``, ``p = (k1 + k2) / (n1 + n2)``, ``z = 0`` where ``k1/n1 == k2/n2``. At least as
  extreme: ``z <= z_obs`` ("less"), ``z >= z_obs`` ("greater"), ``|z| >= |z_obs|``
  ("two-sided"), each up to a relative tolerance :data:`BARNARD_TIE_RTOL` = 1e-10 (as R's
  ``fisher.test`` compares with 1e-7): a table whose ``z`` equals the observed one in exact
  arithmetic is in the region, also when floating point puts it a last digit inside. SciPy
  compares the rounded values, and so can drop such a table (``barnard_exact`` gives 0.0270466
  for 46/91 vs 5/21, the exact region 0.0272260, and unequal p-values to the mirror tables
  14/20 vs 18/20 and 6/20 vs 2/20); this is the one place evalsim departs from SciPy.
  Distinct exact values of ``z`` differ by at least 6e-8 (relative) for n1, n2 <= 60, and
  ``z`` is computed to a few ulp (``z = (k1 n2 - k2 n1) / sqrt(k (N - k) n1 n2 / N)``, an
  exact integer numerator), so the tolerance merges exactly the exact ties there
  (``tests/test_barnard_ties.py``).
* **Berger-Boos** [4]_ (``gamma`` given, in (0, 0.5)): the supremum runs over the
  Clopper-Pearson ``1 - gamma`` interval for ``pi`` of the pooled ``k1 + k2`` of ``n1 + n2``
  (as R's ``Exact`` package), and ``gamma`` is added: ``p = min(1, sup_C + gamma)``; for
  two-sided Boschloo ``min(1, 2 min(sup_C less, sup_C greater) + gamma)``. SciPy has no
  Berger-Boos option.

The supremum is certified, not searched. The tail probability is a polynomial of degree
``n1 + n2`` in ``pi`` (Bernstein form, coefficients in [0, 1]); branch and bound over ``pi``
with a certified bound on each interval (the polynomial's second derivative bounded below
term by term, in its Bernstein coefficients and in their second differences, and the chord
bound that is exact for a quadratic;
:func:`evalsim.stats.two_sample._nuisance_sup_kernels.certified_sup`)
returns each p-value with an upper bound: the true p-value lies in ``[pvalue, upper]``, and a
certified one-table result has ``upper <= pvalue (1 + 1e-6)`` up to an allowance of ``8 (N +
2)`` ulp for rounding. SciPy maximises with ``shgo`` from 32 Sobol points and can miss the
supremum; evalsim's p-value is then the larger one, and ``upper`` shows it is the supremum
(``tests/test_unconditional.py``).

One table costs ``O(n1 n2)`` to build its tail polynomial (per margin, the hypergeometric
weights and the region's cut: Boschloo's statistic and Barnard's ``z`` are monotone in ``x1``
within a margin) and ``O(n1 + n2)`` per nuisance point. Two-sided Boschloo certifies the side
with the smaller observed statistic first; the other side is searched only until a value at
least the first side's upper bound is attained (then it cannot be the smaller one).

Zero margins. An arm with no trials (a zero column of SciPy's table) is refused with a
ValueError; SciPy returns ``p = 1`` (Barnard) or NaN (Boschloo) there. A zero success or
failure margin (``k1 + k2 = 0`` or ``= n1 + n2``) is a valid table and gets SciPy's value.

References
----------
.. [1] G. A. Barnard, "Significance tests for 2 x 2 tables", Biometrika 34 (1947) 123-138.
.. [2] R. D. Boschloo, "Raised conditional level of significance for the 2 x 2-table when
   testing the equality of two probabilities", Statistica Neerlandica 24 (1970) 1-9.
.. [3] SciPy ``scipy.stats.barnard_exact`` (pooled=True) and ``boschloo_exact``, 1.17.1.
.. [4] R. L. Berger, D. D. Boos, "P values maximised over a confidence set for the nuisance
   parameter", JASA 89 (1994) 1012-1016.
.. [5] S. Lydersen, M. W. Fagerland, P. Laake, "Recommended tests for association in 2 x 2
   tables", Statistics in Medicine 28 (2009) 1159-1175.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv

from evalsim._records import record
from evalsim.stats._validate import check_counts, check_n, check_open_interval
from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.stats.two_sample._nuisance_sup_kernels import (
    all_tables_sup,
    all_tables_sup_bb,
    certified_sup_stop,
)
from evalsim.stats.two_sample._unconditional_kernels import (
    barnard_all,
    barnard_beta,
    boschloo_betas,
    hyper_all,
)

__all__ = [
    "ALTERNATIVES",
    "BARNARD_TIE_RTOL",
    "BOSCHLOO_TIE_RTOL",
    "BYTES_PER_TABLE",
    "DEFAULT_GAMMA",
    "MEMORY_BUDGET_BYTES",
    "TESTS",
    "UnconditionalResult",
    "berger_boos_interval",
    "unconditional_pvalue",
    "unconditional_pvalue_table",
]

#: Unconditional tests this module implements: the certified entries of
#: :data:`evalsim.stats.names.TWO_SAMPLE_TESTS`.
TESTS = tuple(t.id for t in TWO_SAMPLE_TESTS.values() if t.certified)
#: Alternatives, with SciPy's meaning (arm 1 against arm 2).
ALTERNATIVES = ("two-sided", "less", "greater")
#: Berger-Boos gamma used when a caller asks for the restriction without a value.
DEFAULT_GAMMA = 0.001
#: SciPy's relative tolerance for ties of Boschloo's statistic (boschloo_exact, 1.17.1).
BOSCHLOO_TIE_RTOL = 1e-13
#: Relative tolerance for ties of Barnard's z (as R's ``fisher.test`` has 1e-7 for its
#: probabilities): a table whose ``z`` is within it of the observed one is at least as extreme.
#: Distinct exact values of ``z`` differ by at least 6e-8 relative for n1, n2 <= 60
#: (``tests/test_barnard_ties.py``, hence not R's 1e-7); the float ``z`` of exactly equal
#: ones by a few ulp (issue 45, item 14).
BARNARD_TIE_RTOL = 1e-10
#: Working memory per table of the (n1 + 1)(n2 + 1) sample space (arrays of 8 bytes).
BYTES_PER_TABLE = 80
#: Largest working memory a call may take; larger sample spaces raise ValueError.
MEMORY_BUDGET_BYTES = 2 * 1024**3
#: Initial grid of the branch and bound, and its relative tolerances.
_N_INIT = 32
_RTOL_ONE = 1e-6
_RTOL_ALL = 1e-6
_N_SCAN = 32
_STRIDE = 512
_MAX_INTERVALS = 200_000
#: Barnard's regions, as :func:`evalsim.stats.two_sample._unconditional_kernels.barnard_beta` codes
#: them.
_BARNARD_SIDE = {"less": 0, "greater": 1, "two-sided": 2}


@dataclass(frozen=True)
class UnconditionalResult:
    """One table's exact unconditional p-value with its certificate.

    Attributes
    ----------
    test, alternative : str
    statistic : float
        Fisher's one-sided p (Boschloo) or the pooled z (Barnard), of the side used.
    pvalue : float
        The p-value: a tail probability attained at ``nuisance`` (plus ``gamma``).
    upper : float
        Certified upper bound of the p-value; the exact value lies in ``[pvalue, upper]``.
    nuisance : float
        The rate ``pi`` at which ``pvalue`` is attained.
    interval : tuple of float
        The range of ``pi`` searched: (0, 1), or the Berger-Boos interval.
    gamma : float or None
        Berger-Boos gamma (None: the plain test).
    certified : bool
        True when ``upper <= pvalue (1 + 1e-6)`` up to rounding (the search converged).
    intervals : int
        Intervals the branch and bound visited.
    """

    test: str
    alternative: str
    statistic: float
    pvalue: float
    upper: float
    nuisance: float
    interval: tuple
    gamma: float | None
    certified: bool
    intervals: int

    def as_dict(self) -> dict:
        """JSON-ready fields."""
        return record(self, RESULT_KEYS)


#: :meth:`UnconditionalResult.as_dict`'s keys in order (``intervals`` is left out).
RESULT_KEYS = (
    "test",
    "alternative",
    "statistic",
    "pvalue",
    ("pvalue_upper_bound", "upper"),
    ("nuisance_at_sup", "nuisance"),
    ("nuisance_interval", "interval"),
    ("berger_boos_gamma", "gamma"),
    "certified",
)


def _check_test(test, alternative, gamma):
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if gamma is None:
        return None
    return check_open_interval(gamma, "gamma", 0.5, "the Berger-Boos gamma, or None")


def _check_memory(n1: int, n2: int) -> None:
    need = (n1 + 1) * (n2 + 1) * BYTES_PER_TABLE
    if need > MEMORY_BUDGET_BYTES:
        raise ValueError(
            f"n1={n1!r}, n2={n2!r} need about {need / 1024**3:.1f} GiB for the "
            f"{(n1 + 1) * (n2 + 1)} tables, above the {MEMORY_BUDGET_BYTES / 1024**3:.0f} GiB "
            "budget (MEMORY_BUDGET_BYTES); use fewer trials per arm"
        )


def _check_ns(n1, n2):
    n1 = check_n(n1, "n1")
    n2 = check_n(n2, "n2")
    if not isinstance(n1, int) or not isinstance(n2, int):
        raise ValueError(f"n1 and n2 must be single integers, got n1={n1!r}, n2={n2!r}")
    _check_memory(n1, n2)
    return n1, n2


def berger_boos_interval(k, n, gamma):
    """Clopper-Pearson ``1 - gamma`` interval for the pooled rate: ``k`` successes of ``n``.

    Lower ``Beta(gamma/2; k, n - k + 1)`` quantile (0 when k = 0), upper
    ``Beta(1 - gamma/2; k + 1, n - k)`` quantile (1 when k = n). ``k`` may be an array.
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(all="ignore"):
        lo = np.where(k > 0, betaincinv(k, n - k + 1.0, gamma / 2.0), 0.0)
        hi = np.where(k < n, betaincinv(k + 1.0, n - k, 1.0 - gamma / 2.0), 1.0)
    return lo, hi


class _Space:
    """Sample space of (n1, n2): hypergeometric weights and each test's scores."""

    def __init__(self, n1: int, n2: int):
        m = (n1 + 1) * (n2 + 1)
        self.n1, self.n2, self.m = n1, n2, m
        self.hyp = np.empty(m, dtype=np.float64)
        self.f_less = np.empty(m, dtype=np.float64)
        self.f_greater = np.empty(m, dtype=np.float64)
        hyper_all(n1, n2, self.hyp, self.f_less, self.f_greater)
        self._z = None

    @property
    def z(self) -> np.ndarray:
        if self._z is None:
            self._z = np.empty(self.m, dtype=np.float64)
            barnard_all(self.n1, self.n2, self._z)
        return self._z

    def margins(self) -> np.ndarray:
        x1, x2 = np.divmod(np.arange(self.m, dtype=np.int64), self.n2 + 1)
        return x1 + x2

    def sides(self, test: str, alternative: str):
        """[(side, score, tie rtol)]: regions ``score <= score_obs (1 + rtol)``, per side (two
        sides: the two-sided p-value is twice the smaller one-sided one)."""
        return _STATISTICS[test][0](self, alternative)


def _boschloo_sides(space: _Space, alternative: str):
    less = ("less", space.f_less, BOSCHLOO_TIE_RTOL)
    greater = ("greater", space.f_greater, BOSCHLOO_TIE_RTOL)
    return {"less": [less], "greater": [greater], "two-sided": [less, greater]}[alternative]


def _barnard_sides(space: _Space, alternative: str):
    z = space.z
    score = {"less": z, "greater": -z, "two-sided": -np.abs(z)}[alternative]
    return [(alternative, score, BARNARD_TIE_RTOL)]


def _combine(test, alternative, parts, gamma):
    """(p, upper) of the test from its parts [(p, upper), ...] and gamma: two parts are the
    one-sided p-values of a test whose two-sided p-value is twice the smaller."""
    if len(parts) == 2:
        p = min(1.0, 2.0 * min(parts[0][0], parts[1][0]))
        up = min(1.0, 2.0 * min(parts[0][1], parts[1][1]))
    else:
        p, up = parts[0]
    if gamma is not None:
        p, up = min(1.0, p + gamma), min(1.0, up + gamma)
    return min(p, 1.0), min(up, 1.0)


def _one_table_sides(test, alternative, k1, n1, k2, n2):
    """[(side, beta, statistic)] of one table: the tail polynomial of each side's region."""
    return _STATISTICS[test][1](alternative, k1, n1, k2, n2)


def _boschloo_one_table(alternative, k1, n1, k2, n2):
    nn = n1 + n2
    b_less = np.empty(nn + 1)
    b_greater = np.empty(nn + 1)
    s_less, s_greater = boschloo_betas(n1, n2, k1, k2, BOSCHLOO_TIE_RTOL, b_less, b_greater)
    less = ("less", b_less, float(s_less))
    greater = ("greater", b_greater, float(s_greater))
    return {"less": [less], "greater": [greater], "two-sided": [less, greater]}[alternative]


def _barnard_one_table(alternative, k1, n1, k2, n2):
    beta = np.empty(n1 + n2 + 1)
    z0 = barnard_beta(n1, n2, k1, k2, _BARNARD_SIDE[alternative], BARNARD_TIE_RTOL, beta)
    return [(alternative, beta, float(z0))]


#: Each test's statistic: (its sides over the sample space, its sides of one table). The
#: certified entries of the registry, each with its statistic here.
_STATISTICS = {
    "boschloo": (_boschloo_sides, _boschloo_one_table),
    "barnard": (_barnard_sides, _barnard_one_table),
}


def unconditional_pvalue(
    test, k1, n1, k2, n2, alternative="two-sided", gamma=None
) -> UnconditionalResult:
    """Exact unconditional p-value of one table, with its certified upper bound.

    Parameters
    ----------
    test : str
        One of :data:`TESTS`: Boschloo's test (Fisher's one-sided p as the statistic) or
        Barnard's (pooled z).
    k1, n1, k2, n2 : int
        Successes and trials of arm 1 and arm 2 (``n >= 1``, ``0 <= k <= n``).
    alternative : {"two-sided", "less", "greater"}
        "less": arm 1's rate is below arm 2's; definitions in the module docstring.
    gamma : float or None
        None for the plain test; a value in (0, 0.5) for the Berger-Boos restriction
        (:data:`DEFAULT_GAMMA` = 0.001 is the usual choice).

    Returns
    -------
    UnconditionalResult
        ``pvalue`` equals ``scipy.stats.boschloo_exact`` / ``barnard_exact`` (plain test)
        to about 1e-12 relative wherever SciPy's optimiser finds the supremum and (Barnard)
        its float comparison keeps the tables tied with the observed one (module docstring).

    Raises
    ------
    ValueError
        For bad counts (n = 0 included: an arm with no trials), an unknown test or
        alternative, gamma outside (0, 0.5), or a sample space above the memory budget.

    Examples
    --------
    >>> r = unconditional_pvalue("boschloo", 14, 20, 18, 20)
    >>> round(r.pvalue, 4), r.certified
    (0.1539, True)
    """
    gamma = _check_test(test, alternative, gamma)
    k1, n1 = check_counts(k1, n1)
    k2, n2 = check_counts(k2, n2)
    if not all(isinstance(v, int) for v in (k1, n1, k2, n2)):
        raise ValueError("unconditional_pvalue takes single counts; use the table form")
    _check_memory(n1, n2)
    lo, hi = 0.0, 1.0
    if gamma is not None:
        lo_a, hi_a = berger_boos_interval(k1 + k2, n1 + n2, gamma)
        lo, hi = float(lo_a), float(hi_a)
    sides = _one_table_sides(test, alternative, k1, n1, k2, n2)
    # two-sided Boschloo takes the smaller side: certify the likelier one (smaller observed
    # statistic) first; the other only has to be shown no smaller than its upper bound
    todo = sorted(range(len(sides)), key=lambda i: sides[i][2])
    results = [None] * len(sides)
    stop = np.inf
    for i in todo:
        res = certified_sup_stop(sides[i][1], lo, hi, _N_INIT, _RTOL_ONE, _MAX_INTERVALS, stop)
        results[i] = res
        stop = min(stop, res[1])
    parts, stats, nus, n_int, conv = [], [], [], 0, True
    for (_side, _beta, stat), res in zip(sides, results, strict=True):
        parts.append((min(res[0], 1.0), min(res[1], 1.0)))
        stats.append(stat)
        nus.append(res[2])
        n_int += res[3]
    use = int(np.argmin([p for p, _ in parts])) if len(parts) == 2 else 0
    if len(parts) == 2 and parts[0][0] == parts[1][0]:
        use = 1  # SciPy keeps the "greater" result on a tie (``less < greater`` is false)
    # a side stopped early (its attained value reached the other's upper bound) is not used
    conv = bool(results[use][4])
    p, up = _combine(test, alternative, parts, gamma)
    return UnconditionalResult(
        test=test,
        alternative=alternative,
        statistic=stats[use],
        pvalue=p,
        upper=max(up, p),
        nuisance=float(nus[use]),
        interval=(lo, hi),
        gamma=gamma,
        certified=conv,
        intervals=int(n_int),
    )


def unconditional_pvalue_table(
    test, n1, n2, alternative="two-sided", gamma=None, rtol=_RTOL_ALL
) -> tuple[np.ndarray, np.ndarray]:
    """p-values of every table with ``n1``, ``n2`` trials, and their certified upper bounds.

    The tables are sorted once by the statistic; each table's region is a prefix of that
    order, so its tail polynomial is the previous table's plus one term. Each region's
    p-value is the best of an arcsine-even scan and the previous maximiser, Newton-polished
    (attained). The upper bound: a region is certified (to ``rtol``) whenever its p-value
    has doubled since the last certified region, every 512 regions and at the end; nested
    regions make every region's supremum at most the next certified upper bound. The table's
    ``upper`` is therefore valid but loose (up to a few times ``p``); the one-table form
    :func:`unconditional_pvalue` certifies to 1e-6 relative. With ``gamma`` every table is
    certified on its own Berger-Boos interval (slower: seconds at n = 30 per arm).

    Parameters
    ----------
    test, alternative, gamma
        As :func:`unconditional_pvalue`.
    n1, n2 : int
        Trials per arm.
    rtol : float
        Relative tolerance of each certificate, in [1e-13, 0.1].

    Notes
    -----
    One-table certificates (:func:`unconditional_pvalue`) use a relative tolerance of 1e-6;
    the reported ``pvalue`` is Newton-polished to machine precision (it matches SciPy to
    1e-10 wherever SciPy finds the supremum).

    Returns
    -------
    (pvalue, upper) : two numpy.ndarray of shape (n1 + 1, n2 + 1)
        Entry ``[k1, k2]`` is the table's p-value and its certified upper bound.
    """
    gamma = _check_test(test, alternative, gamma)
    n1, n2 = _check_ns(n1, n2)
    if isinstance(rtol, bool | np.bool_) or not isinstance(rtol, numbers.Real):
        raise ValueError(f"rtol must be a number in [1e-13, 0.1], got {rtol!r}")
    if not 1e-13 <= float(rtol) <= 0.1:
        raise ValueError(f"rtol must be in [1e-13, 0.1], got {rtol!r}")
    space = _Space(n1, n2)
    nn = n1 + n2
    parts = []
    # two-sided Boschloo: 2 min(less, greater); the second side's walk stops once its p is at
    # least the first side's p of every table left (those tables take the first side's)
    other = np.full(space.m, np.inf)
    for _side, score, tie in space.sides(test, alternative):
        order = np.argsort(score, kind="stable").astype(np.int64)
        p = np.empty(space.m)
        up = np.empty(space.m)
        if gamma is None:
            all_tables_sup(
                n1, n2, order, score, tie, space.hyp, _N_SCAN, _STRIDE, float(rtol),
                _MAX_INTERVALS, other, p, up,
            )  # fmt: skip
            other = p
        else:
            lo_k, hi_k = berger_boos_interval(np.arange(nn + 1), nn, gamma)
            all_tables_sup_bb(
                n1, n2, order, score, tie, space.hyp, np.ascontiguousarray(lo_k),
                np.ascontiguousarray(hi_k), float(rtol), _MAX_INTERVALS, p, up,
            )  # fmt: skip
        parts.append((p, up))
    if len(parts) == 2:  # two sides: twice the smaller one-sided p-value
        p = np.minimum(1.0, 2.0 * np.minimum(parts[0][0], parts[1][0]))
        up = np.minimum(1.0, 2.0 * np.minimum(parts[0][1], parts[1][1]))
    else:
        p, up = parts[0]
    if gamma is not None:
        p, up = np.minimum(1.0, p + gamma), np.minimum(1.0, up + gamma)
    up = np.maximum(up, p)
    return p.reshape(n1 + 1, n2 + 1), up.reshape(n1 + 1, n2 + 1)
