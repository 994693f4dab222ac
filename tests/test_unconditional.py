"""Boschloo, Barnard, Berger-Boos: SciPy, a brute-force grid supremum, and the certificate.

The tests are the entries of the two-sample registry (``TWO_SAMPLE_TESTS``); each is checked
against its SciPy cross-check, named by the registry, and its ``certified`` flag against what
the library does with it.
"""

from __future__ import annotations

import warnings

import pytest
import scipy.stats
from naive_unconditional import float_region, grid_sup, region, tail
from naive_unconditional import power as naive_power
from naive_unconditional import pvalue as naive_pvalue
from scipy.stats import binom

from evalsim.figures import OKABE_ITO
from evalsim.stats import names
from evalsim.stats.names import POWER_TESTS, TWO_SAMPLE_TESTS
from evalsim.stats.two_sample._nuisance_sup_kernels import prefix_over_on_grid
from evalsim.stats.two_sample.power import fisher_power, n_for_fisher_power
from evalsim.stats.two_sample.unconditional import (
    MEMORY_BUDGET_BYTES,
    TESTS,
    berger_boos_interval,
    unconditional_pvalue,
    unconditional_pvalue_table,
)
from evalsim.stats.two_sample.unconditional_power import (
    exact_power,
    n_for_power,
    power_of_region,
    rejection_region,
)

ALTS = ("two-sided", "less", "greater")
#: The registry's tests whose p-value is a certified supremum
#: (evalsim.stats.two_sample.unconditional).
CERTIFIED = [t.id for t in TWO_SAMPLE_TESTS.values() if t.certified]


def scipy_function(test):
    """The registry's SciPy cross-check of ``test``: ``scipy.stats.<name>``."""
    name = TWO_SAMPLE_TESTS[test].scipy
    assert name.startswith("scipy.stats."), name
    return getattr(scipy.stats, name.removeprefix("scipy.stats."))


def scipy_p(test, k1, n1, k2, n2, alternative, n=200):
    """SciPy's p-value of arm 1 (k1/n1) against arm 2 for ``test``; ``n``: the Sobol points of
    the unconditional tests' nuisance search."""
    table = [[k1, k2], [n1 - k1, n2 - k2]]
    options = {"n": n} if TWO_SAMPLE_TESTS[test].certified else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scipy_function(test)(table, alternative=alternative, **options).pvalue


def evalsim_p(test, k1, n1, k2, n2, alternative):
    """evalsim's p-value of ``test``, through the registry's dispatch."""
    return TWO_SAMPLE_TESTS[test].pvalue(k1, n1, k2, n2, alternative)[0]


def scipy_keeps_the_ties(test, k1, n1, k2, n2, alternative) -> bool:
    """False when SciPy's float comparison of Barnard's z drops a table tied with the
    observed one in exact arithmetic (issue 45, item 14); there the exact region is the
    reference (``tests/test_barnard_ties.py``)."""
    if test != "barnard":
        return True
    return float_region(k1, n1, k2, n2, alternative) == set(
        region(test, k1, n1, k2, n2, alternative)
    )


def check_against_scipy_or_exact_region(test, table, alternative, got: float):
    """``got`` equals SciPy's p-value where SciPy keeps the ties, else the exact region's tail
    at evalsim's maximiser (and then differs from SciPy's)."""
    if scipy_keeps_the_ties(test, *table, alternative):
        assert got == pytest.approx(scipy_p(test, *table, alternative), rel=1e-10, abs=1e-300)
        return
    r = unconditional_pvalue(test, *table, alternative=alternative)
    k1, n1, k2, n2 = table
    assert got == pytest.approx(
        tail(region(test, k1, n1, k2, n2, alternative), n1, n2, r.nuisance), rel=1e-10
    )
    assert got != pytest.approx(scipy_p(test, *table, alternative), rel=1e-10)


TABLES = [(14, 20, 18, 20), (7, 19, 8, 11), (3, 10, 9, 12), (0, 5, 5, 5), (37, 50, 44, 50),
          (5, 5, 0, 7), (0, 8, 0, 9), (147, 200, 175, 200)]  # fmt: skip


@pytest.mark.parametrize("test", list(TWO_SAMPLE_TESTS))
@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("table", TABLES)
def test_every_registry_test_matches_its_scipy_cross_check(test, alternative, table):
    check_against_scipy_or_exact_region(
        test, table, alternative, evalsim_p(test, *table, alternative)
    )


def test_registry_entries():
    assert POWER_TESTS == tuple(TWO_SAMPLE_TESTS) == names.POWER_TESTS
    assert POWER_TESTS[0] == "fisher"  # the default: the documents' test
    assert TESTS == tuple(CERTIFIED)
    for key, t in TWO_SAMPLE_TESTS.items():
        assert key == t.id and t.label and t.short and t.reference
        assert callable(scipy_function(t.id)) and t.color in OKABE_ITO
    for field in ("label", "short", "scipy", "color"):
        values = [getattr(t, field) for t in TWO_SAMPLE_TESTS.values()]
        assert len(set(values)) == len(values), field


@pytest.mark.parametrize("test", list(TWO_SAMPLE_TESTS))
def test_certified_is_true_to_the_test(test):
    # certified: the library returns the p-value with a certified upper bound; not
    # certified: the unconditional module refuses the test (a conditional p-value is a sum)
    if TWO_SAMPLE_TESTS[test].certified:
        r = unconditional_pvalue(test, 7, 19, 8, 11)
        assert r.certified and r.pvalue <= r.upper <= r.pvalue * (1 + 1e-6)
    else:
        with pytest.raises(ValueError, match="test must be one of"):
            unconditional_pvalue(test, 7, 19, 8, 11)


@pytest.mark.parametrize("test", CERTIFIED)
@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("table", TABLES)
def test_pvalue_vs_scipy(test, alternative, table):
    r = unconditional_pvalue(test, *table, alternative=alternative)
    check_against_scipy_or_exact_region(test, table, alternative, r.pvalue)
    assert r.pvalue <= r.upper <= r.pvalue * (1 + 1e-6) + 1e-300
    assert r.certified


@pytest.mark.parametrize("test", CERTIFIED)
@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize(
    "table",
    # then edge tables: a zero margin, k = 0 or n in both arms, a symmetric table
    [(2, 6, 5, 7), (4, 9, 1, 6), (0, 4, 3, 3), (6, 8, 6, 8)]
    + [(0, 4, 0, 5), (4, 4, 5, 5), (0, 5, 5, 5), (3, 6, 3, 6)],
)
def test_pvalue_vs_brute_force_grid(test, alternative, table):
    r = unconditional_pvalue(test, *table, alternative=alternative)
    g = naive_pvalue(test, *table, alternative=alternative, grid=4000)
    # the grid value is attained, so it is at most the supremum, and close to it
    assert g <= r.upper * (1 + 1e-12)
    assert r.pvalue == pytest.approx(g, rel=1e-5)


def test_scipy_optimiser_misses_the_supremum():
    # SciPy's shgo (default n = 32) stops below the supremum on this table; evalsim is higher,
    # its certificate brackets the supremum, and a plain grid confirms a value above SciPy's.
    k1, n1, k2, n2 = 1, 60, 45, 60
    s = scipy_p("barnard", k1, n1, k2, n2, "two-sided", n=32)
    r = unconditional_pvalue("barnard", k1, n1, k2, n2)
    assert r.pvalue > s * (1 + 1e-4)
    assert r.certified and r.upper <= r.pvalue * (1 + 1e-6)
    tables = region("barnard", k1, n1, k2, n2, "two-sided")
    g, at = grid_sup(tables, n1, n2, lo=r.nuisance - 0.01, hi=r.nuisance + 0.01, grid=400)
    assert g > s * (1 + 1e-4)
    assert g <= r.upper * (1 + 1e-12)
    assert g == pytest.approx(r.pvalue, rel=1e-6)


@pytest.mark.parametrize("test", CERTIFIED)
@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_table_form_equals_one_table_form(test, alternative):
    n1, n2 = 13, 9
    p, up = unconditional_pvalue_table(test, n1, n2, alternative)
    for k1 in range(n1 + 1):
        for k2 in range(n2 + 1):
            r = unconditional_pvalue(test, k1, n1, k2, n2, alternative)
            assert p[k1, k2] == pytest.approx(r.pvalue, rel=1e-9)
            assert up[k1, k2] >= r.pvalue * (1 - 1e-12)


def test_berger_boos_definition_and_table_form():
    k1, n1, k2, n2, gamma = 3, 12, 9, 11, 0.001
    lo, hi = berger_boos_interval(k1 + k2, n1 + n2, gamma)
    # Clopper-Pearson: the ends put gamma / 2 in each binomial tail
    assert binom.sf(k1 + k2 - 1, n1 + n2, lo) == pytest.approx(gamma / 2, rel=1e-9)
    assert binom.cdf(k1 + k2, n1 + n2, hi) == pytest.approx(gamma / 2, rel=1e-9)
    r = unconditional_pvalue("barnard", k1, n1, k2, n2, gamma=gamma)
    g, _ = grid_sup(region("barnard", k1, n1, k2, n2, "two-sided"), n1, n2, lo, hi, 4000)
    assert r.pvalue == pytest.approx(min(1.0, g + gamma), rel=1e-6)
    assert r.interval == (pytest.approx(lo), pytest.approx(hi))
    plain = unconditional_pvalue("barnard", k1, n1, k2, n2)
    assert r.pvalue <= plain.pvalue + gamma + 1e-15
    p, up = unconditional_pvalue_table("barnard", n1, n2, gamma=gamma)
    assert p[k1, k2] == pytest.approx(r.pvalue, rel=1e-9)


def test_boschloo_never_above_fisher_one_sided():
    # Boschloo's p-value is at most Fisher's (the supremum includes Fisher's conditional size)
    for k1, n1, k2, n2 in [(3, 10, 9, 12), (14, 20, 18, 20), (7, 19, 8, 11)]:
        f = scipy_p("fisher", k1, n1, k2, n2, "less")
        b = unconditional_pvalue("boschloo", k1, n1, k2, n2, "less").pvalue
        assert b <= f * (1 + 1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"test": "boschloo", "k1": 1, "n1": 0, "k2": 1, "n2": 3}, "n must be"),
        ({"test": "fisher", "k1": 1, "n1": 3, "k2": 1, "n2": 3}, "test must be one of"),
        (
            {"test": "barnard", "k1": 1, "n1": 3, "k2": 1, "n2": 3, "alternative": "up"},
            "alternative",
        ),
        ({"test": "barnard", "k1": 1, "n1": 3, "k2": 1, "n2": 3, "gamma": 0.5}, r"\(0, 0.5\)"),
        ({"test": "barnard", "k1": 1, "n1": 3, "k2": 1, "n2": 3, "gamma": 0.0}, r"\(0, 0.5\)"),
        ({"test": "barnard", "k1": 4, "n1": 3, "k2": 1, "n2": 3}, "k must be <= n"),
        ({"test": "barnard", "k1": 1, "n1": 40000, "k2": 1, "n2": 40000}, "GiB"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        unconditional_pvalue(**kwargs)
    assert MEMORY_BUDGET_BYTES == 2 * 1024**3


@pytest.mark.parametrize("test", CERTIFIED)
@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_power_vs_brute_force(test, alternative):
    n1, n2 = 7, 6
    got = exact_power(test, 0.3, n1, 0.8, n2, 0.1, alternative)
    assert got == pytest.approx(naive_power(test, 0.3, n1, 0.8, n2, 0.1, alternative), rel=1e-9)
    # the region equals "table p-value < alpha" from the one-table form
    region_, undecided = rejection_region(test, 20, 17, 0.05, alternative)
    p, _ = unconditional_pvalue_table(test, 20, 17, alternative)
    assert undecided == 0
    assert (region_ == (p < 0.05 * (1 - 1e-9))).all()


def test_size_at_null_at_most_alpha_and_boschloo_beats_fisher():
    for pi in (0.1, 0.5, 0.877):
        for test in CERTIFIED:
            assert exact_power(test, pi, 30, pi, 30, 0.05) <= 0.05 + 1e-12
    for n in (20, 50, 80):
        assert exact_power("boschloo", 0.737, n, 0.877, n) >= fisher_power(0.737, n, 0.877, n)


def test_n_for_power_fisher_matches_and_saw_tooth_rule():
    f = TWO_SAMPLE_TESTS["fisher"].n_for_power(0.737, 0.877)
    ref = n_for_fisher_power(0.737, 0.877)
    assert (f.n, f.n_first) == (ref.n, ref.n_first)
    b = n_for_power("boschloo", 0.737, 0.877, window=5)
    for n in range(b.n, b.n + 6):
        assert exact_power("boschloo", 0.737, n, 0.877, n) >= 0.8
    assert exact_power("boschloo", 0.737, b.n_first - 1, 0.877, b.n_first - 1) < 0.8
    with pytest.raises(ValueError, match="must differ"):
        n_for_power("barnard", 0.5, 0.5)
    with pytest.raises(ValueError, match="test must be one of"):
        n_for_power("fisher", 0.5, 0.6)  # Fisher's is the registry's, not this module's


@pytest.mark.parametrize("test", ["boschloo", "barnard"])
def test_power_of_region_is_the_regions_probability(test):
    # plan builds the region once for power and MDE (issue 25): the same number as
    # exact_power, and the plain double sum over the region's tables at these rates
    n1, n2, p1, p2 = 14, 11, 0.45, 0.8
    region, undecided = rejection_region(test, n1, n2, 0.1)
    assert undecided == 0 and region.any() and not region.all()
    got = power_of_region(region, p1, p2)
    assert got == exact_power(test, p1, n1, p2, n2, alpha=0.1)
    want = sum(
        binom.pmf(k1, n1, p1) * binom.pmf(k2, n2, p2)
        for k1 in range(n1 + 1)
        for k2 in range(n2 + 1)
        if region[k1, k2]
    )
    assert got == pytest.approx(want, rel=1e-12)


def test_prefix_over_on_grid_is_the_first_prefix_reaching_the_threshold():
    # Plain Python: at each rate the running sum of hyp[t] b(margin[t]; N, pi) over the
    # tables, read at each candidate length; the first candidate reaching thr at any rate.
    import numpy as np

    rng = np.random.default_rng(7)
    nn = 23
    margin = rng.integers(0, nn + 1, size=60)
    hyp = rng.uniform(0.0, 0.05, size=60)
    cands = np.unique(rng.integers(1, 61, size=15))
    grid = np.array([0.1, 0.35, 0.5, 0.8])
    for thr in (0.002, 0.01, 0.03, 0.08, 10.0):
        want = len(cands)
        for pi in grid:
            pmf = binom.pmf(np.arange(nn + 1), nn, pi)
            for j, length in enumerate(cands):
                if sum(hyp[t] * pmf[margin[t]] for t in range(length)) >= thr:
                    want = min(want, j)
                    break
        assert prefix_over_on_grid(margin, hyp, cands, nn, grid, thr) == want


@pytest.mark.parametrize("test", CERTIFIED)
@pytest.mark.parametrize(
    ("n1", "n2", "alpha", "alternative"),
    [(12, 19, 0.01, "two-sided"), (25, 9, 0.2, "greater"), (16, 16, 0.05, "less")],
)
def test_region_search_finds_the_p_value_boundary(test, n1, n2, alpha, alternative):
    # The bracketed search (grid bound, then certified steps down) gives exactly the tables
    # whose certified one-table p-value is below alpha, here at small and large alphas.
    region_, undecided = rejection_region(test, n1, n2, alpha, alternative)
    p, _ = unconditional_pvalue_table(test, n1, n2, alternative)
    assert undecided == 0
    assert (region_ == (p < alpha * (1 - 1e-9))).all()
    assert region_.any()
