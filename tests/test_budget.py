"""evalsim.stats.proportion.budget against the lesson's trials_needed (tests/naive_binom.py) and
table D;
the non-monotone half-width; the T01-T04 table builders end to end; bad arguments."""

from __future__ import annotations

import naive_binom as naive
import numpy as np
import pytest

from evalsim.products import exact as products
from evalsim.stats.proportion.budget import half_width_budget, half_widths

RATES = [0.50, 0.70, 0.90, 0.95]
HALF_WIDTHS = [0.10, 0.05, 0.02]
# Lesson 25, part D (table D), Wilson 95% with z = 1.96.
TABLE_D = [[93, 381, 2398], [78, 320, 2014], [34, 141, 864], [24, 82, 465]]


def trials_for_half_width(rate, half_width, **kwargs):
    """The lesson's ``trials_needed``: the budget's first n."""
    return half_width_budget(rate, half_width, **kwargs).first_n


@pytest.mark.parametrize("i", range(4))
def test_table_d(i):
    got = [trials_for_half_width(RATES[i], h, z=1.96) for h in HALF_WIDTHS]
    assert got == TABLE_D[i]


@pytest.mark.parametrize("rounding", ["half_even", "half_up"])
def test_table_d_is_robust_to_rounding_and_exact_z(rounding):
    got = [[trials_for_half_width(r, h, rounding=rounding) for h in HALF_WIDTHS] for r in RATES]
    assert got == TABLE_D


def test_matches_the_lessons_trials_needed():
    for rate in (0.5, 0.63, 0.7, 0.85, 0.9, 0.95, 0.99):
        for h in (0.15, 0.1, 0.05):
            assert trials_for_half_width(rate, h, z=1.96) == naive.trials_needed(rate, h, 1.96)


def test_half_widths_match_plain_wilson():
    ns = np.arange(1, 300)
    got = half_widths(0.7, ns, z=1.96)
    want = [(lambda iv: (iv[1] - iv[0]) / 2)(naive.wilson(round(0.7 * n), n, 1.96)) for n in ns]
    np.testing.assert_allclose(got, want, atol=1e-15)


def test_not_monotone_and_stays_below_from():
    b = half_width_budget(0.90, 0.10, z=1.96)
    assert b.first_n == 34 and b.stays_below_from == 38 and b.n_max == 4 * 34
    hw = half_widths(0.90, np.arange(34, 39), z=1.96)
    assert hw[0] <= 0.10 and (hw[1:4] > 0.10).sum() == b.misses_after_first == 2
    assert (half_widths(0.90, np.arange(38, 137), z=1.96) <= 0.10).all()
    assert half_width_budget(0.70, 0.05, z=1.96).stays_below_from == 320


def test_other_methods_and_large_targets():
    assert trials_for_half_width(0.5, 0.5) == 1
    cp = trials_for_half_width(0.7, 0.05, method="clopper_pearson")
    assert cp > trials_for_half_width(0.7, 0.05)
    assert trials_for_half_width(0.5, 0.005, z=1.96) > 38000


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((1.5, 0.1), {}, "1.5"),
        ((0.5, 0.0), {}, "0.0"),
        ((0.5, 0.7), {}, "0.7"),
        ((0.5, 0.1), {"confidence": 1.5}, "1.5"),
        ((0.5, 0.1), {"method": "bogus"}, "'bogus'"),
        ((0.5, 0.1), {"rounding": "banker"}, "'banker'"),
    ],
)
def test_bad_arguments_raise_quoting_the_value(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        half_width_budget(*args, **kwargs)


def test_budget_n_max_must_cover_first_n():
    with pytest.raises(ValueError, match="n_max"):
        half_width_budget(0.5, 0.05, n_max=10)


# --- the table builders (T01-T04), as the pipeline calls them --------------------------


def test_t01_builder():
    cases = [{"k": 9, "n": 10, "document_wald": [0.714, 1.0], "document_wilson": [0.596, 0.982]}]
    df = products.wilson_vs_library(cases, 1.96, 1.959964, 0.95, 20, 3, 2.2e-16)
    assert df.loc[0, "wilson_lower"] == pytest.approx(0.5958436145, abs=1e-9)
    assert df.loc[0, "max_abs_diff_vs_scipy"] < 1e-5
    assert df["max_abs_diff_vs_scipy"].iloc[-1] < 1e-15  # exact quantile
    assert 1e-10 < df["max_abs_diff_vs_scipy"].iloc[-2] < 1e-8  # z = 1.959964 as printed
    assert "agrees with the document" in df.attrs["note"]
    bad = [{"k": 9, "n": 10, "document_wilson": [0.600, 0.982]}]
    assert (
        "Differs from the document"
        in products.wilson_vs_library(bad, 1.96, 1.959964, 0.95, 20).attrs["note"]
    )


def test_t02_t03_t04_builders():
    doc = {"wilson": [0.981, 0.975], "wald": [0.764, 0.927]}
    t2 = products.exact_coverage_table(221, 300, [5, 10], 1.96, 3, doc)
    assert t2["wald_exact_coverage"].round(3).tolist() == [0.764, 0.927]
    assert (t2["max_abs_pmf_diff_vs_scipy"] < 1e-14).all()
    pol = [{"name": "A", "p": 0.737, "pool_k": 221, "pool_n": 300, "document": 0.215}]
    t3 = products.prob_at_least_table(9, 10, pol)
    assert "pool rate 221/300" in t3.attrs["note"]
    t4 = products.trials_for_half_width_table([0.9], [0.1], 1.96, "half_even", [[34]])
    assert t4.iloc[0].tolist()[1:] == [34, 38]
    assert "Not monotone" in t4.attrs["note"]
