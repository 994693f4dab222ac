"""Result objects that answer the next question (issue 47, item 4), as SciPy's
``BinomTestResult.proportion_ci()`` does: an interval knows its method and level; a
two-sample result gives the interval of B - A, the power at its rates, and its record.

References: ``scipy.stats.binomtest(...).proportion_ci``, statsmodels'
``confint_proportions_2indep``, and the plain-Python references of ``tests/naive_*.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import naive_design
import naive_fisher
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep

from evalsim.stats.proportion.intervals import METHODS, Interval, interval
from evalsim.stats.rates import TwoArmRates
from evalsim.stats.two_sample.paired import PairedCounts


@dataclass(frozen=True)
class _Arms(TwoArmRates):
    """The smallest result with two arms' counts (the mixin's contract)."""

    k_a: int
    n_a: int
    k_b: int
    n_b: int


@pytest.mark.parametrize("method", METHODS)
def test_an_interval_knows_its_method_and_level(method):
    iv = interval(7, 12, method=method, confidence=0.9)
    assert (iv.method, iv.confidence) == (method, 0.9)
    assert iv.to_dict() == {
        "method": method,
        "confidence": 0.9,
        "lower": iv.lower,
        "upper": iv.upper,
    }
    assert iv.bounds() == [iv.lower, iv.upper] and all(type(x) is float for x in iv.bounds())


def test_an_interval_asked_for_by_z_reports_the_level_of_that_z():
    iv = interval(9, 10, method="wilson", z=1.96)
    # the two-sided level of z = 1.96 is 2 Phi(1.96) - 1, from SciPy's normal
    assert iv.confidence == pytest.approx(2 * stats.norm.cdf(1.96) - 1, rel=1e-14)
    # and the interval is the one of that level
    again = interval(9, 10, method="wilson", confidence=iv.confidence)
    assert again.bounds() == pytest.approx(iv.bounds(), rel=1e-12)


def test_the_clopper_pearson_interval_matches_scipys_proportion_ci():
    iv = interval(3, 17, method="clopper_pearson", confidence=0.95)
    ci = stats.binomtest(3, 17).proportion_ci(confidence_level=0.95, method="exact")
    assert iv.bounds() == pytest.approx([ci.low, ci.high], rel=1e-10)
    assert (iv.method, iv.confidence) == ("clopper_pearson", 0.95)


def test_an_interval_built_by_hand_knows_nothing_and_still_unpacks():
    iv = Interval(0.1, 0.4)
    assert (iv.method, iv.confidence) == (None, None)
    lo, hi = iv
    assert (lo, hi) == (0.1, 0.4) and repr(iv) == "Interval(lower=0.1, upper=0.4)"


_SM_METHOD = {"newcombe": "newcomb", "wald": "wald", "agresti_caffo": "agresti-caffo"}


@pytest.mark.parametrize("method", sorted(_SM_METHOD))
@pytest.mark.parametrize(
    ("k_a", "n_a", "k_b", "n_b"), [(5, 20, 14, 20), (0, 8, 7, 9), (9, 9, 3, 11)]
)
def test_difference_interval_is_b_minus_a_as_statsmodels(method, k_a, n_a, k_b, n_b):
    res = _Arms(k_a, n_a, k_b, n_b)
    iv = res.difference_interval(method=method, confidence=0.9)
    lo, hi = confint_proportions_2indep(
        k_b, n_b, k_a, n_a, method=_SM_METHOD[method], compare="diff", alpha=0.1
    )
    assert iv.bounds() == pytest.approx([lo, hi], rel=1e-9, abs=1e-12)
    assert (iv.method, iv.confidence) == (method, 0.9)


def test_difference_interval_newcombe_matches_the_plain_python_reference():
    res = _Arms(6, 15, 12, 16)
    want = naive_design.newcombe(12, 16, 6, 15, 0.95)
    assert res.difference_interval().bounds() == pytest.approx(list(want), rel=1e-9)


@pytest.mark.parametrize(("k_a", "n_a", "k_b", "n_b"), [(3, 8, 7, 8), (2, 6, 5, 7)])
def test_power_is_fishers_exact_power_at_the_observed_rates(k_a, n_a, k_b, n_b):
    res = _Arms(k_a, n_a, k_b, n_b)
    want = naive_fisher.power(k_a / n_a, n_a, k_b / n_b, n_b, alpha=0.1)
    assert res.power(alpha=0.1) == pytest.approx(want, rel=1e-9)
    # at another n per arm: the same rates, n in each arm
    want6 = naive_fisher.power(k_a / n_a, 6, k_b / n_b, 6, alpha=0.1)
    assert res.power(alpha=0.1, n_per_arm=6) == pytest.approx(want6, rel=1e-9)


def test_two_arm_to_dict_holds_the_fields_and_the_rates():
    assert _Arms(3, 4, 1, 5).to_dict() == {
        "k_a": 3,
        "n_a": 4,
        "k_b": 1,
        "n_b": 5,
        "rate_a": 0.75,
        "rate_b": 0.2,
    }


def test_per_task_rows_are_two_arm_results_that_answer_too():
    from evalsim.stats.multi.tasks import per_task_tests

    (row,) = per_task_tests(["t"], [4], [10], [9], [10], alpha=0.05)
    lo, hi = confint_proportions_2indep(9, 10, 4, 10, method="newcomb", compare="diff")
    assert row.difference_interval().bounds() == pytest.approx([lo, hi], rel=1e-9)
    assert row.to_dict()["task"] == "t" and row.to_dict()["rate_b"] == 0.9


def test_paired_counts_answer_interval_power_and_record():
    counts = PairedCounts(both_succeed=5, a_only=1, b_only=6, both_fail=3)
    wald = counts.difference_interval("wald", 0.95)
    # the paired Wald interval of pA - pB = (b - c) / n, by hand
    n, d = 15, (1 - 6) / 15
    half = stats.norm.ppf(0.975) * math.sqrt(((1 + 6) / n - d * d) / n)
    assert wald.bounds() == pytest.approx([d - half, d + half], rel=1e-12)
    assert (wald.method, wald.confidence) == ("wald", 0.95)
    tango = counts.difference_interval()
    assert tango.method == "tango" and tango.lower < d < tango.upper
    want = naive_design.mcnemar_power_by_enumeration(15, 1 / 15, 6 / 15, alpha=0.05)
    assert counts.power() == pytest.approx(want, rel=1e-9)
    want20 = naive_design.mcnemar_power(20, 1 / 15, 6 / 15, 0.05)
    assert counts.power(n_pairs=20) == pytest.approx(want20, rel=1e-9)
    assert counts.to_dict() == {
        "both_succeed": 5,
        "a_only": 1,
        "b_only": 6,
        "both_fail": 3,
        "n": 15,
    }
