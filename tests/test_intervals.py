"""evalsim.stats.proportion.intervals against statsmodels, plain Python (tests/naive_binom.py) and
the
lesson's printed values; property tests for ordering and containment; bad arguments."""

from __future__ import annotations

import functools
import inspect
import math

import naive_binom as naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from evalsim.stats.proportion.coverage import coverage_curve
from evalsim.stats.proportion.intervals import (
    METHODS,
    REGISTRY,
    Interval,
    agresti_coull_interval,
    clopper_pearson_interval,
    clopper_pearson_midp_interval,
    interval,
    jeffreys_interval,
    wald_interval,
    wilson_interval,
    z_for_confidence,
)

#: The registry's methods that statsmodels has, by statsmodels' name.
SM_METHOD = {m: e.statsmodels for m, e in REGISTRY.items() if e.statsmodels}


@pytest.fixture(scope="module")
def all_counts():
    """Every (k, n) with k <= n <= 200."""
    n = np.concatenate([np.full(m + 1, m) for m in range(1, 201)])
    k = np.concatenate([np.arange(m + 1) for m in range(1, 201)])
    return k, n


@pytest.mark.parametrize("confidence", [0.95, 0.5, 0.8, 0.99, 0.999])
@pytest.mark.parametrize("method", SM_METHOD)
def test_matches_statsmodels_for_every_k_n_up_to_200(all_counts, method, confidence):
    k, n = all_counts
    ours = interval(k, n, method, confidence)
    lo, hi = proportion_confint(k, n, alpha=1 - confidence, method=SM_METHOD[method])
    np.testing.assert_allclose(ours.lower, lo, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.upper, hi, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "method, reference",
    [("wald", naive.wald), ("wilson", naive.wilson), ("agresti_coull", naive.agresti_coull)],
)
def test_closed_forms_match_plain_python(method, reference):
    for n in range(1, 41):
        for k in range(n + 1):
            for z in (1.0, 1.96, 2.5758):
                got = interval(k, n, method, z=z)
                want = reference(k, n, z)
                assert got.lower == pytest.approx(want[0], abs=1e-14), (k, n, z)
                assert got.upper == pytest.approx(want[1], abs=1e-14), (k, n, z)


def test_registry_entries_are_complete_and_distinct():
    from evalsim.figures import OKABE_ITO

    assert METHODS == tuple(REGISTRY) and len(METHODS) >= 5
    assert all(m == e.id for m, e in REGISTRY.items())
    labels = [e.label for e in REGISTRY.values()]
    colors = [e.color for e in REGISTRY.values()]
    assert len(set(labels)) == len(labels) and len(set(colors)) == len(colors)
    assert set(colors) <= set(OKABE_ITO)
    assert all(e.reference for e in REGISTRY.values())


@pytest.mark.parametrize("method", METHODS)
def test_every_method_matches_its_plain_python_reference(method):
    # tests/naive_binom.py holds a reference named by each method's id: (k, n, z) for the
    # closed forms, (k, n, tail) for the tail inversions; a method without one fails here.
    reference = getattr(naive, method)
    takes_tail = "tail" in inspect.signature(reference).parameters
    for confidence in (0.8, 0.95, 0.99):
        z = z_for_confidence(confidence)
        tail = (1 - confidence) / 2
        for n in (1, 2, 7, 20, 33):
            for k in range(n + 1):
                got = interval(k, n, method, confidence)
                want = reference(k, n, tail if takes_tail else z)
                assert got.lower == pytest.approx(want[0], rel=1e-9, abs=1e-13), (k, n)
                assert got.upper == pytest.approx(want[1], rel=1e-9, abs=1e-13), (k, n)


def test_clopper_pearson_matches_binomial_tail_inversion():
    tail = 0.025
    for n in (1, 2, 5, 10, 17, 30):
        for k in range(n + 1):
            got = clopper_pearson_interval(k, n)
            want = naive.clopper_pearson(k, n, tail)
            assert got.lower == pytest.approx(want[0], abs=1e-12), (k, n)
            assert got.upper == pytest.approx(want[1], abs=1e-12), (k, n)


def test_jeffreys_matches_plain_python_beta_quantiles():
    for n in (1, 3, 10, 25):
        for k in range(n + 1):
            got = jeffreys_interval(k, n, 0.9)
            want = naive.jeffreys(k, n, 0.05)
            assert got.lower == pytest.approx(want[0], abs=1e-11), (k, n)
            assert got.upper == pytest.approx(want[1], abs=1e-11), (k, n)


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.999])
def test_clopper_pearson_midp_matches_scipy_root_of_the_mid_p_tails(confidence):
    # An independent path: SciPy's binomial sf/cdf/pmf and brentq, computed here.
    tail = (1 - confidence) / 2

    def root(f):
        return optimize.brentq(f, 0.0, 1.0, xtol=1e-300, rtol=1e-15, maxiter=500)

    for n in (1, 2, 5, 20, 57, 200):
        got = clopper_pearson_midp_interval(np.arange(n + 1), n, confidence)
        for k in range(n + 1):
            sf = functools.partial(stats.binom.sf, k, n)
            below = functools.partial(stats.binom.cdf, k - 1, n)
            half = functools.partial(stats.binom.pmf, k, n)
            lo = 0.0 if k == 0 else root(lambda p, f=sf, h=half: f(p) + h(p) / 2 - tail)
            hi = 1.0 if k == n else root(lambda p, f=below, h=half: f(p) + h(p) / 2 - tail)
            assert got.lower[k] == pytest.approx(lo, rel=1e-12, abs=1e-300), (k, n)
            assert got.upper[k] == pytest.approx(hi, rel=1e-12, abs=1e-300), (k, n)


def test_clopper_pearson_midp_edges_are_the_closed_forms():
    # k = n: P(X = n; p)/2 = p^n / 2 = alpha/2; k = 0 mirrors it.
    for n in (1, 3, 10, 1000):
        assert clopper_pearson_midp_interval(n, n).lower == pytest.approx(
            0.05 ** (1 / n), rel=1e-14
        )
        assert clopper_pearson_midp_interval(0, n).upper == pytest.approx(
            1 - 0.05 ** (1 / n), rel=1e-12
        )
        assert clopper_pearson_midp_interval(0, n).lower == 0.0
        assert clopper_pearson_midp_interval(n, n).upper == 1.0


def test_clopper_pearson_midp_lies_inside_clopper_pearson_and_covers_nearer_nominal():
    for n in range(1, 101):
        k = np.arange(n + 1)
        mid, cp = clopper_pearson_midp_interval(k, n), clopper_pearson_interval(k, n)
        assert (mid.lower[1:] > cp.lower[1:]).all() and (mid.upper[:-1] < cp.upper[:-1]).all(), n
    # Mean coverage over p (Brown, Cai and DasGupta 2001, sec. 4.1.2): above nominal, below CP's.
    grid = np.linspace(0.0005, 0.9995, 4000)
    for n in (10, 20, 50):
        mean_mid = coverage_curve("clopper_pearson_midp", n, grid).mean()
        assert 0.95 < mean_mid < coverage_curve("clopper_pearson", n, grid).mean() - 0.005, n


def test_clopper_pearson_equals_scipy_exact():
    for k, n in [(0, 7), (3, 7), (7, 7), (63, 70), (221, 300)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        got = clopper_pearson_interval(k, n)
        assert got.lower == pytest.approx(ci.low, abs=1e-12)
        assert got.upper == pytest.approx(ci.high, abs=1e-12)


# The lesson's printed intervals (lesson 25, Build it step 1 and part C), z = 1.96, 3 decimals.
@pytest.mark.parametrize(
    "k, n, wald_printed, wilson_printed",
    [
        (9, 10, (0.714, 1.000), (0.596, 0.982)),
        (10, 10, (1.000, 1.000), (0.722, 1.000)),
        (18, 20, (0.769, 1.000), (0.699, 0.972)),
        (221, 300, (0.687, 0.787), (0.684, 0.783)),
    ],
)
def test_lesson_printed_intervals(k, n, wald_printed, wilson_printed):
    wa = wald_interval(k, n, z=1.96)
    wi = wilson_interval(k, n, z=1.96)
    assert (round(wa.lower, 3), round(wa.upper, 3)) == wald_printed
    assert (round(wi.lower, 3), round(wi.upper, 3)) == wilson_printed


def test_wald_collapses_at_ten_of_ten():
    iv = wald_interval(10, 10, z=1.96)
    assert (iv.lower, iv.upper) == (1.0, 1.0)
    assert wald_interval(0, 10).upper == 0.0


def test_pinned_values():
    # python -c "from statsmodels.stats.proportion import proportion_confint as c;
    #   print(repr(c(9, 10, 0.05, 'wilson')), repr(c(3, 17, 0.1, 'beta')),
    #   repr(c(0, 12, 0.05, 'jeffreys')), repr(c(4, 9, 0.01, 'agresti_coull')))"
    # statsmodels 0.15.0, scipy 1.17.1
    pinned = {
        ("wilson", 9, 10, 0.95): (0.5958499732047614, 0.982123786904927),
        ("clopper_pearson", 3, 17, 0.90): (0.04989815455742298, 0.39564143344482106),
        ("jeffreys", 0, 12, 0.95): (4.0075310076598856e-05, 0.1853059383124851),
        ("agresti_coull", 4, 9, 0.99): (0.142970797719974, 0.7930697130989666),
    }
    for (method, k, n, conf), (lo, hi) in pinned.items():
        iv = interval(k, n, method, conf)
        assert iv.lower == pytest.approx(lo, abs=1e-12), method
        assert iv.upper == pytest.approx(hi, abs=1e-12), method


def test_library_z_and_exact_quantile():
    assert z_for_confidence(0.95) == pytest.approx(1.959963984540054, abs=1e-15)
    k = np.arange(21)
    ours = wilson_interval(k, 20, z=z_for_confidence(0.95))
    for i in range(21):
        ci = stats.binomtest(int(k[i]), 20).proportion_ci(method="wilson")
        assert abs(ours.lower[i] - ci.low) < 1e-15
        assert abs(ours.upper[i] - ci.high) < 1e-15


def test_z_overrides_confidence_for_every_method():
    for method in METHODS:
        a = interval(7, 20, method, confidence=0.95)
        b = interval(7, 20, method, confidence=0.5, z=z_for_confidence(0.95))
        assert a.lower == pytest.approx(b.lower, abs=1e-13)
        assert a.upper == pytest.approx(b.upper, abs=1e-13)


def test_shapes_scalars_and_broadcasting():
    iv = wilson_interval(3, 10)
    assert isinstance(iv, Interval)
    assert isinstance(iv.lower, float) and isinstance(iv.upper, float)
    assert "Interval(lower=" in repr(iv)
    lo, hi = iv
    assert lo < 0.3 < hi
    grid = interval(np.array([[0, 1], [2, 3]]), 10, "jeffreys")
    assert grid.lower.shape == (2, 2)
    row = agresti_coull_interval(np.array([1, 2, 3]), np.array([5, 6, 7]))
    assert row.upper.shape == (3,)
    assert np.allclose(row.width, row.upper - row.lower)
    assert np.allclose(row.half_width, row.width / 2)


@pytest.mark.parametrize("method", METHODS)
def test_finite_and_ordered_up_to_ten_million(method):
    for n in (10**5, 10**6, 10**7):
        k = np.array([0, 1, 2, 5, n // 10, n // 2, n - 5, n - 1, n])
        iv = interval(k, n, method, 0.95)
        assert np.isfinite(iv.lower).all() and np.isfinite(iv.upper).all()
        assert (0 <= iv.lower).all() and (iv.lower <= iv.upper).all() and (iv.upper <= 1).all()
        assert (np.diff(iv.lower) >= 0).all() and (np.diff(iv.upper) >= 0).all()


CONTAINS_P_HAT = tuple(m for m, e in REGISTRY.items() if e.contains_p_hat)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 10**7),
    frac=st.floats(0, 1),
    confidence=st.floats(0.01, 0.9999),
    method=st.sampled_from(METHODS),
)
def test_property_ordering_and_containment(n, frac, confidence, method):
    k = min(n, int(round(frac * n)))
    iv = interval(k, n, method, confidence)
    assert math.isfinite(iv.lower) and math.isfinite(iv.upper)
    assert 0.0 <= iv.lower <= iv.upper <= 1.0
    if method in CONTAINS_P_HAT:
        assert iv.lower <= k / n <= iv.upper


def test_jeffreys_does_not_contain_p_hat_at_the_boundary():
    # statsmodels' convention: no boundary fix, so 0/n and n/n fall outside the interval.
    assert jeffreys_interval(0, 10).lower > 0.0
    assert jeffreys_interval(10, 10).upper < 1.0


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 1000), extra=st.integers(1, 50))
def test_property_k_above_n_is_refused(n, extra):
    with pytest.raises(ValueError, match=rf"k={n + extra}"):
        wilson_interval(n + extra, n)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((11, 10), {}, "k=11"),
        ((-1, 10), {}, "-1"),
        ((2.5, 10), {}, "2.5"),
        ((3, 0), {}, "n must be an integer >= 1, got 0"),
        ((3, 10), {"confidence": 1.0}, "1.0"),
        ((3, 10), {"confidence": 0.0}, "0.0"),
        ((3, 10), {"z": -1.0}, "-1.0"),
        ((3, 10), {"z": float("nan")}, "nan"),
        ((3, 10), {"method": "exact"}, "'exact'"),
        ((np.array([1, 12]), 10), {}, "k=12"),
    ],
)
def test_bad_arguments_raise_quoting_the_value(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        interval(*args, **kwargs)
