"""Issue 43, item 2: successive elimination with a certified error -- the exact dynamic
programme against full enumeration, the Monte Carlo against both, and P(best eliminated) <=
alpha at every configuration checked."""

from __future__ import annotations

import itertools

import pytest
from naive_selection import elimination_by_enumeration

from evalsim.stats.selection.elimination import elimination_design, elimination_oc

# alpha large and n_max small keep the designs quick to build and the enumeration small
ALPHA = 0.3


@pytest.fixture(scope="module")
def unpaired3():
    return elimination_design(3, ALPHA, 5, "unpaired")


@pytest.fixture(scope="module")
def paired3():
    return elimination_design(3, ALPHA, 5, "paired")


def _tuple(oc):
    return (
        oc.p_single_correct,
        oc.p_single,
        oc.p_best_eliminated,
        oc.expected_rounds,
        oc.expected_trials,
    )


@pytest.mark.parametrize(
    "rates", [(0.5, 0.6, 0.9), (0.9, 0.2, 0.9), (0.3, 0.7, 0.5), (1.0, 0.0, 0.5)]
)
def test_exact_dp_matches_enumeration_k3(unpaired3, rates):
    oc = elimination_oc(unpaired3, rates)
    assert oc.method == "exact dynamic programming"
    want = elimination_by_enumeration(list(rates), 5, unpaired3.pair_design.rows["upper"].tolist())
    assert _tuple(oc) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_exact_dp_matches_enumeration_k2():
    d = elimination_design(2, ALPHA, 8, "unpaired")
    for rates in ((0.2, 0.9), (0.6, 0.6)):
        want = elimination_by_enumeration(list(rates), 8, d.pair_design.rows["upper"].tolist())
        assert _tuple(elimination_oc(d, rates)) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_paired_two_arms_exact_dp_matches_enumeration():
    d = elimination_design(2, ALPHA, 8, "paired")
    rows = d.pair_design.rows
    for rates in ((0.3, 0.8), (0.7, 0.7), (1.0, 0.4)):
        oc = elimination_oc(d, rates)
        assert oc.method == "exact dynamic programming"
        want = elimination_by_enumeration(
            list(rates), 8, rows["upper"].tolist(), rows["final_upper"].tolist()
        )
        assert _tuple(oc) == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert oc.p_best_eliminated <= ALPHA


def test_monte_carlo_agrees_with_exact_and_with_enumeration_of_paired_rows(unpaired3, paired3):
    rates = (0.4, 0.55, 0.85)
    exact = elimination_oc(unpaired3, rates)
    mc = elimination_oc(unpaired3, rates, reps=40000, seed=1, exact=False)
    assert mc.method.startswith("Monte Carlo")
    assert abs(mc.p_single_correct - exact.p_single_correct) < 4 * mc.p_single_correct_se
    assert abs(mc.expected_trials - exact.expected_trials) < 4 * mc.expected_trials_se
    rows = paired3.pair_design.rows
    want = elimination_by_enumeration(
        list(rates), 5, rows["upper"].tolist(), rows["final_upper"].tolist()
    )
    mp = elimination_oc(paired3, rates, reps=40000, seed=2)
    assert mp.method.startswith("Monte Carlo")  # paired rows: Monte Carlo, labelled
    assert abs(mp.p_single_correct - want[0]) < 4 * mp.p_single_correct_se
    assert abs(mp.expected_rounds - want[3]) < 4 * mp.expected_rounds_se + 1e-9
    with pytest.raises(ValueError, match="exact"):
        elimination_oc(paired3, rates, exact=True)


def test_best_eliminated_at_most_alpha_at_every_configuration(unpaired3, paired3):
    for d in (unpaired3, paired3):
        assert d.certified_error <= ALPHA + 1e-12
    grid = (0.0, 0.2, 0.5, 0.7, 0.9, 1.0)
    worst = max(
        elimination_oc(unpaired3, rates).p_best_eliminated
        for rates in itertools.product(grid, repeat=3)
    )
    assert 0.0 < worst <= ALPHA
    rows = paired3.pair_design.rows
    for rates in ((0.6, 0.6, 0.6), (0.5, 0.5, 0.1)):  # the paired rule, by enumeration
        lost = elimination_by_enumeration(
            list(rates), 5, rows["upper"].tolist(), rows["final_upper"].tolist()
        )[2]
        assert 0.0 < lost <= ALPHA


def test_bad_elimination_input():
    with pytest.raises(ValueError, match="K >= 2"):
        elimination_design(1)
    with pytest.raises(ValueError, match="kind"):
        elimination_design(3, kind="bandit")
