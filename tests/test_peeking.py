"""Peeking: exact DP vs brute-force enumeration, Monte Carlo vs exact, schedules, pins."""

from __future__ import annotations

import math

import numpy as np
import pytest
from naive_peeking import (
    brute_force_rejection,
    fixed_rate_by_sum,
    python_dp_rejection,
    scipy_fisher_region,
)

from evalsim.stats.sequential.peeking import (
    PeekingResult,
    false_win_rate_exact,
    fisher_rejection_region,
    look_sizes,
    sequential_rejection_probability,
)
from evalsim.stats.sequential.peeking_simulation import false_win_rate_mc, false_win_rate_vs_looks

# Document 002's study: p = 0.7, 40 trials per arm, Fisher two-sided p < 0.05.
# Pinned from an independent program (dict-based DP + scipy.stats.fisher_exact regions):
#   cd tests && python -c "from naive_peeking import *; print(repr(python_dp_rejection(40,
#     0.7, 0.7, list(range(1, 41)), lambda j, m: scipy_fisher_region(m, 0.05))[0]));
#     print(repr(fixed_rate_by_sum(40, 0.7, 0.05)))"
EVERY_40 = 0.11249201627685267
ONCE_40 = 0.028193676374494454
# Same program with sizes [20, 40]:
TWO_LOOKS_40 = 0.0455025296568811


def test_look_sizes_every_int_and_sequence():
    assert look_sizes(5, "every").tolist() == [1, 2, 3, 4, 5]
    assert look_sizes(40, 1).tolist() == [40]
    assert look_sizes(40, 40).tolist() == list(range(1, 41))
    # ceil(j * n / K): K = 3 of 40 -> 13.33, 26.67, 40 -> 14, 27, 40
    assert look_sizes(40, 3).tolist() == [14, 27, 40]
    assert look_sizes(10, 4).tolist() == [3, 5, 8, 10]
    assert look_sizes(40, [10, 25]).tolist() == [10, 25]
    for k in range(1, 41):
        s = look_sizes(40, k)
        assert len(s) == k and s[-1] == 40 and np.all(np.diff(s) > 0)


@pytest.mark.parametrize(
    "bad", ["all", 0, 41, [], [0, 5], [5, 3], [3, 3], [10, 41], [1.5, 2.0], True]
)
def test_look_sizes_refuses_bad_schedules(bad):
    with pytest.raises(ValueError):
        look_sizes(40, bad)


def test_fisher_region_equals_scipy():
    for m in (1, 4, 10, 17):
        got = fisher_rejection_region(m, 0.05)
        assert got.tolist() == scipy_fisher_region(m, 0.05)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("looks", ["every", 1, 2, 3])
@pytest.mark.parametrize(
    ("p_a", "p_b", "alpha"), [(0.7, 0.7, 0.05), (0.5, 0.5, 0.3), (0.2, 0.8, 0.2)]
)
def test_dp_equals_brute_force_enumeration(n, looks, p_a, p_b, alpha):
    if isinstance(looks, int) and looks > n:
        pytest.skip("more looks than trials")
    sizes = look_sizes(n, looks).tolist()
    want, want_by_look = brute_force_rejection(
        n, p_a, p_b, sizes, lambda j, m: scipy_fisher_region(m, alpha)
    )
    got = sequential_rejection_probability(n, p_a, p_b, alpha=alpha, looks=looks)
    assert got.false_win_rate == pytest.approx(want, abs=1e-13)
    assert np.allclose(got.rejection_by_look, want_by_look, atol=1e-13)


def test_dp_equals_brute_force_with_custom_regions():
    # Arbitrary regions that differ per look: the DP must not assume Fisher or nesting.
    rng = np.random.default_rng(7)
    sizes = [2, 3, 5, 6]
    regions = [rng.random((m + 1, m + 1)) < 0.3 for m in sizes]
    want, want_by_look = brute_force_rejection(6, 0.35, 0.6, sizes, lambda j, m: regions[j])
    got = sequential_rejection_probability(6, 0.35, 0.6, looks=sizes, reject=regions)
    assert got.alpha is None
    assert got.false_win_rate == pytest.approx(want, abs=1e-13)
    assert np.allclose(got.rejection_by_look, want_by_look, atol=1e-13)
    via_callable = sequential_rejection_probability(
        6, 0.35, 0.6, looks=sizes, reject=lambda j, m: regions[j]
    )
    assert via_callable.false_win_rate == got.false_win_rate


def test_document_002_values_pinned():
    every = false_win_rate_exact(40, 0.7, 0.05, looks="every")
    assert isinstance(every, PeekingResult)
    assert every.false_win_rate == pytest.approx(EVERY_40, rel=1e-10)
    assert every.fixed_rate == pytest.approx(ONCE_40, rel=1e-10)
    once = false_win_rate_exact(40, 0.7, 0.05, looks=1)
    assert once.false_win_rate == pytest.approx(ONCE_40, rel=1e-10)
    assert false_win_rate_exact(40, 0.7, 0.05, looks=2).false_win_rate == pytest.approx(
        TWO_LOOKS_40, rel=1e-10
    )
    assert "false_win_rate=0.112492" in repr(every)


def test_fixed_rate_equals_double_binomial_sum():
    for n, p in [(10, 0.5), (25, 0.9)]:
        r = false_win_rate_exact(n, p, 0.05, looks=1)
        assert r.false_win_rate == pytest.approx(fixed_rate_by_sum(n, p, 0.05), abs=1e-13)


def test_python_dp_agrees_at_moderate_n():
    sizes = look_sizes(12, 4).tolist()
    want, _ = python_dp_rejection(12, 0.6, 0.6, sizes, lambda j, m: scipy_fisher_region(m, 0.05))
    got = false_win_rate_exact(12, 0.6, 0.05, looks=4).false_win_rate
    assert got == pytest.approx(want, abs=1e-13)


def test_more_looks_never_lower_for_nested_schedules():
    every = false_win_rate_exact(40, 0.7, 0.05, looks="every").false_win_rate
    for k in (1, 2, 3, 4, 5, 8, 10, 20):
        assert every >= false_win_rate_exact(40, 0.7, 0.05, looks=k).false_win_rate
    # (20, 40) is a subset of (10, 20, 30, 40), which is a subset of every trial.
    two = false_win_rate_exact(40, 0.7, 0.05, looks=2).false_win_rate
    four = false_win_rate_exact(40, 0.7, 0.05, looks=4).false_win_rate
    assert two <= four <= every
    assert every > 3 * false_win_rate_exact(40, 0.7, 0.05, looks=1).false_win_rate


def test_power_when_rates_differ_exceeds_false_win():
    null = sequential_rejection_probability(40, 0.7, 0.7, looks=4).false_win_rate
    alt = sequential_rejection_probability(40, 0.6, 0.9, looks=4).false_win_rate
    assert alt > 5 * null


def test_symmetry_in_the_arms():
    a = sequential_rejection_probability(20, 0.3, 0.8, looks="every")
    b = sequential_rejection_probability(20, 0.8, 0.3, looks="every")
    assert a.false_win_rate == pytest.approx(b.false_win_rate, abs=1e-13)


def test_mc_within_three_standard_errors_of_exact():
    exact = false_win_rate_exact(40, 0.7, 0.05, looks="every")
    mc = false_win_rate_mc(40, 0.7, 0.05, looks="every", n_experiments=40_000, seed=11)
    assert abs(mc.false_win_rate - exact.false_win_rate) < 3 * mc.false_win_se
    assert abs(mc.fixed_rate - exact.fixed_rate) < 3 * mc.fixed_se
    assert mc.false_win_se == pytest.approx(
        math.sqrt(mc.false_win_rate * (1 - mc.false_win_rate) / 40_000)
    )


def test_mc_with_custom_rule_and_unequal_rates_within_three_se():
    rng = np.random.default_rng(3)
    sizes = [5, 10, 15]
    regions = [rng.random((m + 1, m + 1)) < 0.1 for m in sizes]
    exact = sequential_rejection_probability(15, 0.4, 0.65, looks=sizes, reject=regions)
    mc = false_win_rate_mc(
        15, 0.4, looks=sizes, n_experiments=30_000, seed=5, reject=regions, p_b=0.65
    )
    assert abs(mc.false_win_rate - exact.false_win_rate) < 3 * mc.false_win_se
    assert abs(mc.fixed_rate - exact.fixed_rate) < 3 * mc.fixed_se


def test_mc_is_deterministic_for_a_seed_and_varies_across_seeds():
    a = false_win_rate_mc(40, 0.7, 0.05, looks=5, n_experiments=5000, seed=42)
    b = false_win_rate_mc(40, 0.7, 0.05, looks=5, n_experiments=5000, seed=42)
    c = false_win_rate_mc(40, 0.7, 0.05, looks=5, n_experiments=5000, seed=43)
    assert a == b
    assert a.false_wins != c.false_wins or a.fixed_wins != c.fixed_wins


def test_vs_looks_curve_exact_and_mc_agree():
    curve = false_win_rate_vs_looks(40, 0.7, 0.05, (1, 2, 5, 40), n_experiments=20_000, seed=9)
    assert curve.n_looks.tolist() == [1, 2, 5, 40]
    assert curve.exact[0] == pytest.approx(ONCE_40, rel=1e-10)
    assert curve.exact[-1] == pytest.approx(EVERY_40, rel=1e-10)
    assert np.all(np.abs(curve.mc - curve.exact) < 3.5 * curve.mc_se)
    # Common random numbers: a path rejected by the first look of K = 2 (at 20 trials)
    # is also rejected by K = 40 (which looks at 20 too), so counts are ordered.
    assert curve.mc[1] <= curve.mc[3]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0}, "n must be"),
        ({"p": 1.5}, "p must be"),
        ({"alpha": 0.0}, "alpha must be"),
        ({"looks": 50}, "looks must be an int in 1..n=40, got 50"),
    ],
)
def test_errors_quote_the_bad_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        false_win_rate_exact(**{"n": 40, "p": 0.7, **kwargs})


def test_bad_regions_are_refused():
    with pytest.raises(ValueError, match="one region per look"):
        sequential_rejection_probability(4, 0.5, 0.5, looks=[2, 4], reject=[np.zeros((3, 3), bool)])
    with pytest.raises(ValueError, match="shape"):
        sequential_rejection_probability(4, 0.5, 0.5, looks=[4], reject=[np.zeros((4, 4), bool)])
    with pytest.raises(ValueError, match="seed"):
        false_win_rate_mc(4, 0.5, n_experiments=10, seed=-1)


def test_document_verdict():
    from evalsim.products.peeking import document_verdict

    assert document_verdict(0.028, ONCE_40, 100_000, 1).startswith("matches:")
    # 11.0% vs 11.249%: 0.249 pp; allowance = 0.05 pp rounding + 2 SE (2 x 0.100 pp) = 0.25 pp.
    assert document_verdict(0.110, EVERY_40, 100_000, 1).startswith("matches approximately")
    assert document_verdict(0.110, EVERY_40, 1_000_000, 1).startswith("differs")
    assert document_verdict(0.100, EVERY_40, 100_000, 1).startswith("differs")


def test_peeking_table_and_figure():
    from evalsim.products.peeking import peeking_figure, peeking_table

    doc = {"experiments": 100_000, "test_once": 0.028, "every_trial": 0.110, "decimals": 1}
    df = peeking_table(0.7, 40, 0.05, [2, 5], 4000, 20251129, doc)
    assert df.n_looks.tolist() == [1, 2, 5, 40]
    assert df.exact_false_win_rate.iloc[0] == pytest.approx(ONCE_40)
    assert df.exact_false_win_rate.iloc[-1] == pytest.approx(EVERY_40)
    assert df.document_value.notna().tolist() == [True, False, False, True]
    assert "Document 002" in df.attrs["note"]
    again = peeking_table(0.7, 40, 0.05, [2, 5], 4000, 20251129, doc)
    assert df.equals(again)
    fig = peeking_figure(df, alpha=0.05, p=0.7)
    assert len(fig.axes) == 2
