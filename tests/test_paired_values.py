"""Paired statistics: the values and edges the mutation run found untested (issue 17).

References are written here: the Wald formula for a paired difference (Agresti, Categorical
Data Analysis, 10.1), the phi coefficient from NumPy, the bootstrap as a plain loop on the
same random stream (tests/naive_design.py).
"""

from __future__ import annotations

import math

import naive_design as naive
import numpy as np
import pytest
from scipy.stats import norm

from evalsim.stats.two_sample import paired as pz


def test_paired_wald_interval_with_both_discordant_kinds():
    t = pz.PairedCounts(both_succeed=40, a_only=12, b_only=5, both_fail=43)
    d = (12 - 5) / 100
    half = norm.ppf(0.95) * math.sqrt((17 / 100 - d * d) / 100)
    w = pz.paired_wald_interval(t, confidence=0.9)
    assert (w.lower, w.upper) == pytest.approx((d - half, d + half), rel=1e-12)
    one = pz.paired_wald_interval(pz.PairedCounts(1, 0, 0, 0))  # a single pair
    assert (one.lower, one.upper) == (0.0, 0.0)
    with pytest.raises(ValueError, match=r"^the table must hold at least one pair, got n=0$"):
        pz.paired_wald_interval(pz.PairedCounts(0, 0, 0, 0))


def test_mcnemar_fields_and_argument_names():
    r = pz.mcnemar_exact(7, 2)
    assert (r.b, r.c, r.statistic) == (7, 2, 25 / 9)
    none = pz.mcnemar_exact(0, 0)
    assert (none.b, none.c, none.pvalue, none.midp_pvalue) == (0, 0, 1.0, 1.0)
    assert math.isnan(none.statistic)
    with pytest.raises(ValueError, match=r"^b must be an integer >= 0"):
        pz.mcnemar_exact(-1, 2)
    with pytest.raises(ValueError, match=r"^c must be an integer >= 0"):
        pz.mcnemar_exact(1, -2)


def test_bad_outcomes_are_named_and_quoted():
    with pytest.raises(ValueError, match=r"^success_a must hold booleans or 0/1, got .*2"):
        pz.paired_contingency([0, 1, 2], [1, 0, 0])
    with pytest.raises(ValueError, match=r"^success_b must hold booleans or 0/1, got .*3"):
        pz.paired_contingency([0, 1, 1], [1, 0, 3])
    with pytest.raises(ValueError, match=r"^success_b must be a non-empty 1-d array"):
        pz.paired_contingency([0, 1], [[1, 0]])


def test_diff_interval_default_is_newcombe():
    def ends(*args):
        ci = pz.diff_interval(31, 45, 26, 45, *args)
        return (float(ci.lower), float(ci.upper))

    assert ends() == ends("newcombe") != ends("wald")


def test_pairing_gain_fields_and_constant_arms():
    a = np.array([1, 1, 0, 1, 0, 1, 1, 0], bool)
    b = np.array([1, 0, 0, 1, 0, 0, 1, 1], bool)
    g = pz.pairing_gain(a, b)
    assert (g.n_pairs, g.rate_a, g.rate_b) == (8, 5 / 8, 4 / 8)
    d = a.astype(float) - b.astype(float)
    assert g.variance_ratio == pytest.approx(d.var() / (a.var() + b.var()), rel=1e-12)
    const = pz.pairing_gain(np.ones(6, bool), b[:6])  # A always succeeds: phi undefined
    assert math.isnan(const.rho) and const.var_unpaired == pytest.approx(b[:6].var())
    assert const.variance_ratio == pytest.approx(1.0)
    const_b = pz.pairing_gain(a[:6], np.zeros(6, bool))
    assert math.isnan(const_b.rho)
    both = pz.pairing_gain(np.ones(4, bool), np.zeros(4, bool))
    assert math.isnan(both.rho) and math.isnan(both.variance_ratio)
    assert both.var_unpaired == 0.0 and both.var_paired == 0.0


def test_paired_bootstrap_is_the_quantiles_of_the_plain_loop():
    rng = np.random.default_rng(4)
    a = (rng.random(23) < 0.6).astype(int)
    b = (rng.random(23) < 0.4).astype(int)
    res = pz.paired_bootstrap(a, b, n_boot=300, confidence=0.8, rng=0)  # seed 0 is a seed
    reps = np.array(
        naive.paired_bootstrap_diffs(a.tolist(), b.tolist(), 300, np.random.default_rng(0))
    )
    assert (res.lower, res.upper) == pytest.approx(tuple(np.quantile(reps, [0.1, 0.9])), rel=1e-12)
    assert res.se == pytest.approx(reps.std(ddof=1), rel=1e-12)
    assert (res.n_boot, res.confidence) == (300, 0.8)
    assert res.diff == pytest.approx(a.mean() - b.mean())
    assert pz.paired_bootstrap(a, b, n_boot=2, rng=1).n_boot == 2  # the smallest n_boot
    assert pz.paired_bootstrap(a[:5], b[:5], rng=np.random.default_rng(3)).n_boot == 10_000
    with pytest.raises(ValueError, match=r"^n_boot must be an integer >= 2"):
        pz.paired_bootstrap(a, b, n_boot=1, rng=0)
