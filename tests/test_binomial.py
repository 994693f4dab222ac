"""evalsim.stats.proportion.binomial against SciPy, exact rational sums (tests/naive_binom.py) and
the
lesson's P(>= 9/10); the shared kernel binom_pmf_vector; bad arguments."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import naive_binom as naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalsim.stats.proportion import _kernels as K
from evalsim.stats.proportion.binomial import (
    binom_cdf,
    binom_logpmf,
    binom_pmf,
    binom_sf,
    prob_at_least,
)

PS = [1e-12, 1e-6, 0.001, 0.05, 0.3, 0.5, 221 / 300, 0.9, 0.999, 1 - 1e-9]


@pytest.mark.parametrize("n", [1, 2, 7, 15, 16, 36, 81, 200, 501, 2000])
def test_pmf_cdf_sf_match_scipy(n):
    k = np.arange(n + 1)
    for p in PS:
        for ours, ref in (
            (binom_pmf(k, n, p), stats.binom.pmf(k, n, p)),
            (binom_cdf(k, n, p), stats.binom.cdf(k, n, p)),
            (binom_sf(k, n, p), stats.binom.sf(k, n, p)),
        ):
            # Relative 2e-12 down to 1e-200; below that SciPy itself drifts (next test).
            big = ref > 1e-200
            np.testing.assert_allclose(ours[big], ref[big], rtol=2e-12, atol=0)


def test_deep_tail_against_exact_sums():
    # scipy 1.17.1 gives binom.cdf(38, 2000, 0.3) = 8.18e-244, 30% above the exact value;
    # the direct tail sum here stays at full relative precision.
    exact = naive.binom_cdf(38, 2000, 0.3)
    assert binom_cdf(38, 2000, 0.3) == pytest.approx(exact, rel=1e-12)
    assert binom_sf(52, 81, 1e-6) == pytest.approx(naive.binom_sf(52, 81, 1e-6), rel=1e-12)
    assert binom_pmf(1500, 2000, 0.3) == pytest.approx(naive.binom_pmf(1500, 2000, 0.3), rel=1e-12)


def test_logpmf_matches_scipy_deep_in_the_tail():
    k = np.array([0, 1, 5, 100, 900, 1000])
    np.testing.assert_allclose(
        binom_logpmf(k, 1000, 0.3), stats.binom.logpmf(k, 1000, 0.3), rtol=1e-13
    )


def test_large_n_near_the_mode_matches_scipy():
    for n in (10**5, 10**6, 10**7):
        for p in (0.001, 0.5, 0.737):
            k = np.round(n * p + np.linspace(-5, 5, 11) * np.sqrt(n * p * (1 - p))).astype(int)
            np.testing.assert_allclose(binom_pmf(k, n, p), stats.binom.pmf(k, n, p), rtol=5e-12)
            np.testing.assert_allclose(binom_cdf(k, n, p), stats.binom.cdf(k, n, p), rtol=5e-12)
            np.testing.assert_allclose(binom_sf(k, n, p), stats.binom.sf(k, n, p), rtol=5e-12)


@pytest.mark.parametrize("n", [1, 3, 10, 25, 40])
def test_matches_exact_rational_sums(n):
    for p in (0.01, 0.2, 221 / 300, 0.95):
        for k in range(n + 1):
            assert binom_pmf(k, n, p) == pytest.approx(naive.binom_pmf(k, n, p), rel=1e-13)
            assert binom_cdf(k, n, p) == pytest.approx(naive.binom_cdf(k, n, p), rel=1e-13)
            sf_ref = naive.binom_sf(k, n, p)
            assert binom_sf(k, n, p) == pytest.approx(sf_ref, rel=1e-13, abs=1e-300)
            assert prob_at_least(k, n, p) == pytest.approx(naive.prob_at_least(k, n, p), rel=1e-13)


def test_kernel_pmf_vector_is_exact_at_the_ends_and_sums_to_one():
    assert K.binom_pmf_vector(5, 0.0).tolist() == [1.0, 0, 0, 0, 0, 0]
    assert K.binom_pmf_vector(5, 1.0).tolist() == [0, 0, 0, 0, 0, 1.0]
    for n in (1, 10, 1000, 100000):
        v = K.binom_pmf_vector(n, 0.37)
        assert v.shape == (n + 1,)
        assert v.sum() == pytest.approx(1.0, abs=1e-12)
    ks = np.arange(51)
    np.testing.assert_allclose(
        K.binom_pmf_vector(50, 221 / 300), stats.binom.pmf(ks, 50, 221 / 300), rtol=1e-13
    )


def test_lesson_prob_at_least_9_of_10():
    # The lesson prints 0.215 (A) and 0.645 (B); those are at the pool rates 221/300, 263/300.
    assert round(prob_at_least(9, 10, 221 / 300), 3) == 0.215
    assert round(prob_at_least(9, 10, 263 / 300), 3) == 0.645
    # At the rounded rates it states (0.737, 0.877) the values are 0.216 and 0.647.
    assert round(prob_at_least(9, 10, 0.737), 3) == 0.216
    assert round(prob_at_least(9, 10, 0.877), 3) == 0.647
    # Two terms of the binomial, as the lesson says.
    p = 221 / 300
    assert prob_at_least(9, 10, p) == pytest.approx(10 * p**9 * (1 - p) + p**10, rel=1e-14)


def test_pinned_values():
    # python -c "from scipy import stats; print(repr(stats.binom.pmf(30, 100, 0.25)),
    #   repr(stats.binom.cdf(3, 50, 0.2)), repr(stats.binom.sf(90, 100, 0.8)))"  # scipy 1.17.1
    assert binom_pmf(30, 100, 0.25) == pytest.approx(0.04575380761048678, rel=1e-13)
    assert binom_cdf(3, 50, 0.2) == pytest.approx(0.005656361012155322, rel=1e-13)
    assert binom_sf(90, 100, 0.8) == pytest.approx(0.0023335609862108267, rel=1e-13)


def test_degenerate_p():
    assert binom_pmf(0, 7, 0.0) == 1.0 and binom_pmf(1, 7, 0.0) == 0.0
    assert binom_pmf(7, 7, 1.0) == 1.0 and binom_pmf(6, 7, 1.0) == 0.0
    assert binom_logpmf(3, 7, 0.0) == -np.inf
    assert binom_cdf(0, 7, 0.0) == 1.0 and binom_sf(6, 7, 1.0) == 1.0
    assert prob_at_least(0, 7, 0.3) == 1.0


def test_vectorised_shapes():
    out = binom_pmf(np.array([[0, 1], [2, 3]]), 3, np.array([0.2, 0.7]))
    assert out.shape == (2, 2)
    assert isinstance(binom_cdf(2, 5, 0.5), float)
    assert binom_sf(np.arange(4), 3, 0.5).tolist() == pytest.approx([0.875, 0.5, 0.125, 0.0])


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), frac=st.floats(0, 1), p=st.floats(0, 1))
def test_property_cdf_plus_sf_is_one_and_pmf_in_range(n, frac, p):
    k = min(n, int(frac * n))
    c, s, f = binom_cdf(k, n, p), binom_sf(k, n, p), binom_pmf(k, n, p)
    assert 0.0 <= f <= 1.0 and 0.0 <= c <= 1.0 and 0.0 <= s <= 1.0
    assert c + s == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "func, args, match",
    [
        (binom_pmf, (11, 10, 0.5), "k=11"),
        (binom_cdf, (-2, 10, 0.5), "-2"),
        (binom_sf, (3.5, 10, 0.5), "3.5"),
        (prob_at_least, (3, 10, 1.5), "1.5"),
        (binom_logpmf, (3, 10, -0.1), "-0.1"),
        (binom_pmf, (3, 10, np.array([0.1, np.nan])), "nan"),
    ],
)
def test_bad_arguments_raise_quoting_the_value(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


# pi to 80 digits, for Stirling's series in 60-digit decimals
_PI = Decimal(
    "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986"
)
# B_2, B_4, ..., B_16 (Abramowitz & Stegun, Table 23.2)
_BERNOULLI = [
    Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
    Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510),
]  # fmt: skip


def _ln_factorial_stirling(z: int) -> Decimal:
    """ln z! by Stirling's series (A&S 6.1.40) to B_16, for z >= 10**4: the first term left
    out is below 1e-69, so at 60 digits this is ln z! to round-off."""
    assert z >= 10**4
    zd = Decimal(z)
    out = (zd + Decimal("0.5")) * zd.ln() - zd + (2 * _PI).ln() / 2
    for j, b in enumerate(_BERNOULLI, start=1):
        out += Decimal(b.numerator) / (b.denominator * 2 * j * (2 * j - 1) * zd ** (2 * j - 1))
    return out


def _ln_comb_decimal(n: int, k: int) -> Decimal:
    """ln C(n, k) at the context's precision: the exact integer when it is small, else three
    Stirling series (math.comb(10**6, 5 * 10**5) alone takes seconds)."""
    if min(k, n - k) <= 10**4:
        return Decimal(math.comb(n, k)).ln()
    return _ln_factorial_stirling(n) - _ln_factorial_stirling(k) - _ln_factorial_stirling(n - k)


def _logpmf_decimal(k: int, n: int, p: float) -> float:
    """log P(X = k) with 60-digit decimals: the float p and 1 - p taken exactly."""
    getcontext().prec = 60
    pd = Decimal(p)  # exact binary value of the float
    qd = 1 - pd
    return float(_ln_comb_decimal(n, k) + k * pd.ln() + (n - k) * qd.ln())


def test_the_stirling_reference_is_ln_comb_to_round_off():
    # the reference's large-n route against the exact integer, where both are cheap
    getcontext().prec = 60
    for n, k in [(30_000, 12_000), (40_001, 20_000)]:
        exact = Decimal(math.comb(n, k)).ln()
        stirling = (
            _ln_factorial_stirling(n) - _ln_factorial_stirling(k) - _ln_factorial_stirling(n - k)
        )
        assert abs(stirling - exact) < Decimal("1e-50") * exact


@pytest.mark.parametrize(
    "k, n, p",
    [
        (999_999, 10**6, 0.999999),
        (10**7 - 3, 10**7, 1 - 3e-7),
        (99_990, 100_000, 0.9999),
        (1, 10**6, 1e-6),
        (500_000, 10**6, 0.5),
        (700, 1000, 0.3),
    ],
)
def test_logpmf_near_k_equal_n_keeps_relative_accuracy(k, n, p):
    # The issue: binom_logpmf(999999, 10**6, 0.999999) was 1.4e-11 off (log1p(-k/n)).
    want = _logpmf_decimal(k, n, p)
    got = binom_logpmf(k, n, p)
    assert got == pytest.approx(want, rel=1e-13, abs=1e-14)
    assert math.exp(got) == pytest.approx(math.exp(want), rel=1e-12)


@pytest.mark.parametrize(
    "args, match",
    [
        ((3, 2**63, 0.5), "9223372036854775808"),  # would overflow int64
        ((3, 10**20, 0.5), "100000000000000000000"),
        ((3, 1e20, 0.5), "1e\\+20"),
        ((3, 10.5, 0.5), "10.5"),
        ((np.array([1, 2]), np.array([10, 2**40]), 0.5), "1099511627776"),
        ((np.array([1.0, 2.0]), np.array([10.0, 1e20]), 0.5), "1e\\+20"),
    ],
)
def test_counts_out_of_range_or_non_integer_raise_quoting_the_value(args, match):
    with pytest.raises(ValueError, match=match):
        binom_pmf(*args)


def test_numpy_scalars_are_accepted():
    want = binom_pmf(3, 10, 0.25)
    for k, n, p in [
        (np.int64(3), np.int32(10), np.float64(0.25)),
        (np.int8(3), np.uint16(10), np.float32(0.25)),
        (3.0, np.float64(10.0), 0.25),
    ]:
        assert binom_pmf(k, n, p) == pytest.approx(want, rel=1e-12)
