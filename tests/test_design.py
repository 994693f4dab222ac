"""Planning statistics (evalsim.stats.two_sample.design and .paired_design) and the design
table builders."""

from __future__ import annotations

import math

import naive_design as naive
import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from evalsim.products.design import detection as design_detection
from evalsim.products.design import intervals as design_intervals
from evalsim.products.design import pools as design_pools
from evalsim.products.design import sizing as design_sizing
from evalsim.products.settings import Bootstrap, Sizing
from evalsim.stats.two_sample import design as dz
from evalsim.stats.two_sample import paired_design as pdz

#: The documents' plan (two-sided 5%, 80% power), with and without the exact Fisher sizing.
SIZING = Sizing(alpha=0.05, power=0.8, exact_fisher=True)
FAST = Sizing(alpha=0.05, power=0.8, exact_fisher=False)


# ------------------------------------------------------------------ two-proportion sizing
def test_n_per_arm_fleiss_matches_naive_and_document_001():
    for p1, p2 in [(0.4, 0.7), (0.7, 0.5), (0.9, 0.8), (0.9, 0.92), (0.05, 0.2)]:
        res = dz.n_per_arm_normal(p1, p2)
        assert res.n_real == pytest.approx(naive.n_per_arm_fleiss(p1, p2), rel=1e-9)
        assert res.n == math.ceil(res.n_real)
    # Document 001: n_per_arm(0.40, 0.70) -> 42; hours = 2 * 42 * 3 / 60 = 4.2.
    assert dz.n_per_arm_normal(0.40, 0.70).n == 42
    assert dz.bench_hours(2 * 42, 3.0) == pytest.approx(4.2)


def test_worked_example_arithmetic_of_document_001():
    # 0.20 = 2.80 sqrt(0.48 / n) -> n = 94.08 (document: "n ~ 94"); paired 0.24 -> 47.04.
    unpaired = dz.n_per_arm_normal(0.7, 0.5, variance="pbar", z_alpha=1.96, z_beta=0.84)
    paired = pdz.paired_n(0.7, 0.5, rho=0.5, variance="pbar", z_alpha=1.96, z_beta=0.84)
    assert unpaired.n_real == pytest.approx(2.8**2 * 0.48 / 0.04)
    assert paired.n_real == pytest.approx(2.8**2 * 0.24 / 0.04)
    assert round(unpaired.n_real) == 94 and round(paired.n_real) == 47
    assert (unpaired.n, paired.n) == (95, 48)  # a sample size rounds up


def test_unpooled_and_pbar_variants():
    za, zb = naive.z(0.975), naive.z(0.8)
    res = dz.n_per_arm_normal(0.7, 0.5, variance="unpooled")
    assert res.n_real == pytest.approx((za + zb) ** 2 * (0.21 + 0.25) / 0.04)
    res = dz.n_per_arm_normal(0.7, 0.5, variance="pbar")
    assert res.n_real == pytest.approx((za + zb) ** 2 * 0.48 / 0.04)


def test_normal_power_inverts_n_per_arm():
    res = dz.n_per_arm_normal(0.9, 0.8)
    # power at the real-valued n is the target (up to the negligible opposite tail)
    assert dz.normal_power(0.9, 0.8, res.n, 0.05) >= 0.8
    assert dz.normal_power(0.9, 0.8, res.n - 1, 0.05) < 0.8


def test_mde_normal_matches_document_formula():
    for n in (10, 20, 45, 50, 100, 350):
        assert dz.mde_normal(n) == pytest.approx(naive.mde(n), rel=1e-12)
    # Document 001: "effects below about 29 points are invisible" at n = 45 per arm.
    assert round(100 * dz.mde_normal(45)) == 30  # 29.5 points
    arr = dz.mde_normal(np.array([10, 20]))
    assert arr.shape == (2,)


# ------------------------------------------------------------------ exact MDE
def _brute_power(n: int, p1: float, p2: float, alpha: float = 0.05) -> float:
    total = 0.0
    for k1 in range(n + 1):
        for k2 in range(n + 1):
            if fisher_exact([[k1, n - k1], [k2, n - k2]])[1] < alpha:
                total += naive.binom_pmf(k1, n, p1) * naive.binom_pmf(k2, n, p2)
    return total


def test_mde_exact_against_brute_force_fisher():
    n = 12
    res = dz.mde_exact(n, tol=1e-6)
    assert res.p1 == pytest.approx(0.5 - res.mde / 2) and res.p2 == pytest.approx(0.5 + res.mde / 2)
    assert _brute_power(n, res.p1, res.p2) == pytest.approx(res.power, abs=1e-10)
    assert res.power >= 0.8
    eps = 2e-5
    assert _brute_power(n, 0.5 - (res.mde - eps) / 2, 0.5 + (res.mde - eps) / 2) < 0.8


def test_mde_exact_agrees_with_fisher_power_and_exceeds_normal():
    from evalsim.stats.two_sample.power import fisher_power

    for n in (20, 45, 100):
        res = dz.mde_exact(n)
        assert fisher_power(res.p1, n, res.p2, n) == pytest.approx(res.power, abs=1e-9)
        assert res.mde > dz.mde_normal(n)  # Fisher's test is conservative
    base = dz.mde_exact(50, baseline=0.2, convention="from_baseline")
    assert base.p1 == 0.2 and base.p2 == pytest.approx(0.2 + base.mde)


def test_mde_exact_nan_when_unreachable():
    res = dz.mde_exact(2)
    assert math.isnan(res.mde)


# ------------------------------------------------------------------ paired sizing
def test_paired_n_by_rho_and_discordance():
    za, zb = naive.z(0.975), naive.z(0.8)
    res = pdz.paired_n(0.7, 0.5, rho=0.5)
    var = 0.21 + 0.25 - 2 * 0.5 * math.sqrt(0.21 * 0.25)
    assert res.n_real == pytest.approx((za + zb) ** 2 * var / 0.04)
    assert pdz.paired_n(0.7, 0.5, rho=0.0).n_real == pytest.approx(
        dz.n_per_arm_normal(0.7, 0.5, variance="unpooled").n_real
    )
    psi = pdz.discordance_from_rho(0.7, 0.5, 0.5)
    assert psi == pytest.approx(1.2 - 2 * (0.35 + 0.5 * math.sqrt(0.21 * 0.25)))
    con = pdz.paired_n(0.7, 0.5, discordance=psi)
    p10, p01 = (psi + 0.2) / 2, (psi - 0.2) / 2
    assert con.n_real == pytest.approx(naive.connor_n(p10, p01), rel=1e-12)


def test_mcnemar_power_exact_matches_enumeration():
    for n, p10, p01 in [(8, 0.3, 0.05), (15, 0.2, 0.1), (25, 0.25, 0.05)]:
        assert pdz.mcnemar_power_exact(n, p10, p01) == pytest.approx(
            naive.mcnemar_power_by_enumeration(n, p10, p01), abs=1e-12
        )


def test_mcnemar_n_exact_first_crossing():
    p10, p01 = 0.3, 0.05
    res = pdz.mcnemar_n_exact(p10, p01)
    assert pdz.mcnemar_power_exact(res.n, p10, p01) >= 0.8
    assert all(pdz.mcnemar_power_exact(m, p10, p01) < 0.8 for m in range(1, res.n))


def test_paired_bad_arguments():
    with pytest.raises(ValueError, match="exactly one"):
        pdz.paired_n(0.7, 0.5)
    with pytest.raises(ValueError, match="0.8"):
        pdz.discordance_from_rho(0.7, 0.5, 0.8)  # rho above the Frechet bound 0.65
    with pytest.raises(ValueError, match="0.1"):
        pdz.paired_n(0.7, 0.5, discordance=0.1)  # fewer discordant pairs than the gap
    with pytest.raises(ValueError, match="1.5"):
        pdz.paired_n(0.7, 0.5, rho=1.5)


# ------------------------------------------------------------------ h, estimation, hours
def test_cohens_h_matches_statsmodels_and_naive():
    for p1, p2 in [(0.9, 0.92), (0.5, 0.7), (0.0, 1.0)]:
        assert dz.cohens_h(p1, p2) == pytest.approx(proportion_effectsize(p1, p2), abs=1e-12)
        assert dz.cohens_h(p1, p2) == pytest.approx(naive.cohens_h(p1, p2), abs=1e-12)
    h = dz.cohens_h(0.92, 0.90)
    ref = NormalIndPower().solve_power(effect_size=h, alpha=0.05, power=0.8)
    # statsmodels also counts the far rejection tail in its power, hence 1e-5 not 1e-12
    assert dz.n_per_arm_from_h(h).n_real == pytest.approx(ref, rel=1e-5)


def test_n_for_estimate():
    # 1.959964^2 * 0.09 / 0.02^2 = 864.33 -> 865 (document 004: "roughly 1 000")
    assert dz.n_for_estimate(0.9, 0.02).n == 865
    w = dz.n_for_estimate(0.9, 0.02, method="wilson")
    assert 800 < w.n < 950


def test_bad_arguments_quote_the_value():
    with pytest.raises(ValueError, match="0.7"):
        dz.n_per_arm_normal(0.7, 0.7)
    with pytest.raises(ValueError, match="1.2"):
        dz.n_per_arm_normal(1.2, 0.7)
    with pytest.raises(ValueError, match="'exact'"):
        dz.n_per_arm_normal(0.5, 0.7, variance="exact")
    with pytest.raises(ValueError, match="1.0"):
        dz.n_per_arm_normal(0.5, 0.7, power=1.0)
    with pytest.raises(ValueError, match="0"):
        dz.mde_normal(0)
    with pytest.raises(ValueError, match="-3"):
        dz.bench_hours(-3)
    with pytest.raises(ValueError, match="0.6"):
        dz.n_for_estimate(0.9, 0.6)
    with pytest.raises(ValueError, match="'middle'"):
        dz.mde_exact(20, convention="middle")


# ------------------------------------------------------------------ table builders
def test_t14_exact_probability():
    # python -c "import numpy as np; from scipy.stats import binom; p=binom.pmf(range(21),20,.7);
    #   K=np.subtract.outer(range(21),range(21)); print(np.outer(p,p)[abs(K)>=4].sum())"
    # -> 0.22581188890392173
    df = design_detection.repeat_evaluation_gap()
    assert df.loc[0, "value"] == pytest.approx(0.22581188890392173, rel=1e-10)
    assert df.loc[2, "value"] == pytest.approx(1 / 6, abs=0.002)  # the document's method


def test_t20_ladder_matches_document_002():
    df = design_detection.fisher_ladder(scan_max_n=200)
    ladder = df[df["row"] == "ladder"]
    assert list(ladder["fisher_p"].round(3)) == [1.0, 0.661, 0.262, 0.073]
    first = df[df["row"].str.startswith("first")].iloc[0]
    assert first["fisher_p"] < 0.05 and first["n_per_policy"] % 10 == 0


def test_t23_t24_t25_against_document_004():
    t23 = design_intervals.cp_vs_wilson()
    assert round(t23.loc[0, "lower_pct"], 2) == 80.48 and round(t23.loc[0, "upper_pct"], 2) == 95.88
    assert round(t23.loc[1, "upper_pct"], 2) == 95.07
    assert round(t23.loc[1, "lower_pct"], 2) == 80.77  # the document prints 82.77
    t24 = design_intervals.difference_intervals()
    assert list(t24.loc[t24["matches_doc_to_0.01pp"], "method"]) == ["wald"]
    t25 = design_intervals.width_at_rate()
    wil = t25[t25["method"] == "wilson"].set_index("n")
    assert round(wil.loc[10, "half_width_points"]) == 19
    assert round(wil.loc[100, "half_width_points"]) == 6


def _pools(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for seed in (0, 1):
        hard = rng.random(n) < 0.25
        for policy, p in (("A", 0.8), ("B", 0.95)):
            ok = ~hard & (rng.random(n) < p)
            for i in range(n):
                rows.append(
                    {"task": "cube30", "policy": policy, "seed": seed, "trial": i, "success": ok[i]}
                )
    return pd.DataFrame(rows)


def test_pool_tables_t18_t27():
    pools = _pools()
    t18 = design_pools.mcnemar_vs_unpaired(pools)
    assert list(t18["seed"]) == [0, 1]
    row = t18.iloc[0]
    assert row["both_succeed"] + row["a_only_b"] + row["b_only_c"] + row["both_fail"] == 60
    assert row["rho_same_pose"] > 0
    assert row["n_pairs_paired_at_observed_rho"] < row["n_per_arm_unpaired_at_observed_rates"]
    t27 = design_pools.paired_contingency_table(pools, Bootstrap(0.95, 500, 3))
    again = design_pools.paired_contingency_table(pools, Bootstrap(0.95, 500, 3))
    pd.testing.assert_frame_equal(t27, again)
    r = t27.iloc[0]
    assert r["bootstrap_lower"] <= r["diff_b_minus_a"] <= r["bootstrap_upper"]
    assert r["mcnemar_exact_p"] == pytest.approx(row["mcnemar_exact_p"])


def test_t13_t26_rows():
    t13 = design_sizing.paired_vs_unpaired_sizing(FAST, rho_grid=[0.5])
    doc = t13[t13["method"].str.startswith("doc arithmetic")].set_index("design")
    assert doc.loc["unpaired", "n_real"] == pytest.approx(94.08)
    assert doc.loc["paired", "n_real"] == pytest.approx(47.04)
    t26 = design_sizing.estimation_vs_detection(FAST, paired_rhos=[0.0, 0.5, 0.99])
    paired = t26[t26["goal"].str.endswith("paired")]
    assert len(paired) == 2  # rho = 0.99 is impossible for 0.90 vs 0.92: left out
    assert paired["n_per_arm"].iloc[1] < paired["n_per_arm"].iloc[0]


def test_every_builder_runs_on_small_settings():
    frames = [
        design_sizing.paired_vs_unpaired_sizing(SIZING, rho_grid=[0.0, 0.5, 0.9]),
        design_intervals.wilson_vs_wald([[7, 10], [10, 10]]),
        design_intervals.width_vs_n(n_grid=[10, 20]),
        design_detection.mde_table(SIZING, n_grid=[10, 45]),
        design_detection.null_result_mde(SIZING),
        design_sizing.trials_to_separate(SIZING),
        design_sizing.estimation_vs_detection(FAST),
        design_sizing.cohens_h_table([[0.9, 0.92]]),
    ]
    for df in frames:
        assert len(df) > 0 and df.attrs["title"] and df.attrs["note"]
    t13 = frames[0]
    assert 0.9 not in set(t13["rho"].dropna())  # impossible for 0.7 vs 0.5: left out


# ------------------------------------------------------------------ builders' key numbers
# Each builder's numbers against the library call it wraps (or statsmodels / SciPy), row by
# row: a builder that passes the wrong argument or mislabels a row fails here.
def _z(q):
    from scipy.stats import norm

    return float(norm.ppf(q))


def test_t13_numbers_are_the_sizing_calls():
    t13 = design_sizing.paired_vs_unpaired_sizing(FAST, rho_grid=[0.25, 0.9], rho=0.5)
    by = {(r.design, r.method, r.rho if r.rho == r.rho else None): r for r in t13.itertuples()}
    un = by[("unpaired", "doc 001 n_per_arm (pooled null / unpooled alternative)", None)]
    assert un.n_per_arm == dz.n_per_arm_normal(0.7, 0.5, 0.05, 0.8, "fleiss").n
    uv = by[("unpaired", "unpooled variance", None)]
    want = (_z(0.975) + _z(0.8)) ** 2 * (0.21 + 0.25) / 0.04  # statsmodels-free formula
    assert uv.n_real == pytest.approx(want) and uv.n_per_arm == math.ceil(want)
    pv = by[("unpaired", "pbar variance, exact z", None)]
    assert pv.n_real == pytest.approx((_z(0.975) + _z(0.8)) ** 2 * 0.48 / 0.04)
    for r in t13.itertuples():
        assert r.total_trials == 2 * r.n_per_arm
        assert r.bench_hours == pytest.approx(2 * r.n_per_arm * 3.0 / 60.0)
    paired = t13[(t13["design"] == "paired") & (t13["rho"] == 0.25)]
    assert len(paired) == 4  # rho = 0.9 impossible for 0.7 vs 0.5: left out
    mc = paired[paired["method"].str.startswith("McNemar")].iloc[0]
    psi = pdz.discordance_from_rho(0.7, 0.5, 0.25)
    assert mc.n_per_arm == pdz.paired_n(0.7, 0.5, discordance=psi).n
    ex = paired[paired["method"] == "exact McNemar power"].iloc[0]
    p10, p01 = (psi + 0.2) / 2, (psi - 0.2) / 2
    assert ex.n_per_arm == pdz.mcnemar_n_exact(p10, p01).n
    assert "Hours saved by pairing at the document's rounding: 4.7 h" in t13.attrs["note"]
    assert "rho = 0.9 left out" in t13.attrs["note"]


def test_t15_numbers_are_statsmodels_intervals():
    from statsmodels.stats.proportion import proportion_confint

    t15 = design_intervals.wilson_vs_wald([[7, 10], [10, 10], [14, 20]], confidence=0.9)
    for r in t15.itertuples():
        wl, wu = proportion_confint(r.k, r.n, alpha=0.1, method="wilson")
        p = r.k / r.n
        half = _z(0.95) * math.sqrt(p * (1 - p) / r.n)
        assert (r.wilson_lower, r.wilson_upper) == pytest.approx((wl, wu), abs=1e-12)
        assert (r.wald_lower, r.wald_upper) == pytest.approx((p - half, p + half), abs=1e-12)
        assert r.wilson_width_points == pytest.approx(100 * (wu - wl))
        assert r.wald_width_points == pytest.approx(200 * half)
    assert t15["doc_stated_wilson_lower"].tolist()[1] == 0.722
    assert t15["doc_stated_wilson_lower"].isna().tolist() == [True, False, True]


def test_t16_numbers_are_wilson_intervals_and_hours():
    from statsmodels.stats.proportion import proportion_confint

    t16 = design_intervals.width_vs_n(
        rate=0.7, n_grid=[20, 50], precision_rates=[0.5], confidence=0.95
    )
    grid = t16[t16["row"] == "n grid"]
    for r in grid.itertuples():
        k = round(0.7 * r.n)
        lo, hi = proportion_confint(k, r.n, alpha=0.05, method="wilson")
        assert r.k == k and r.wilson_width_points == pytest.approx(100 * (hi - lo))
        assert r.half_width_points == pytest.approx(50 * (hi - lo))
        lo5, hi5 = proportion_confint(r.n // 2, r.n, alpha=0.05, method="wilson")
        assert r.worst_case_width_points == pytest.approx(100 * (hi5 - lo5))  # n even
        assert r.bench_hours == pytest.approx(r.n * 3.0 / 60.0)
    assert grid["doc_stated"].tolist()[0] == 37.0
    prec = t16[t16["row"] != "n grid"]
    assert prec["row"].tolist() == [
        "n for +/-3 points at 0.5 (normal)",
        "n for +/-3 points at 0.5 (wilson)",
    ]
    assert prec["n"].tolist() == [
        dz.n_for_estimate(0.5, 0.03, 0.95, "normal").n,
        dz.n_for_estimate(0.5, 0.03, 0.95, "wilson").n,
    ]
    assert prec["n"].iloc[0] == math.ceil(_z(0.975) ** 2 * 0.25 / 0.03**2)


def test_t17_numbers_are_mde_calls():
    t17 = design_detection.mde_table(SIZING, n_grid=[20, 45])
    mde = t17[t17["quantity"] == "MDE (worst case)"]
    for r in mde.itertuples():
        assert r.mde_normal_points == pytest.approx(
            100 * (_z(0.975) + _z(0.8)) * math.sqrt(2 * 0.25 / r.n_per_arm)
        )
        assert r.mde_exact_fisher_points == pytest.approx(100 * dz.mde_exact(r.n_per_arm).mde)
        assert r.bench_hours_both_arms == pytest.approx(2 * r.n_per_arm * 3.0 / 60.0)
    assert mde["doc_stated"].tolist()[0] == 40.0 and math.isnan(mde["doc_stated"].tolist()[1])
    plan = t17[t17["quantity"].str.startswith("n per arm")]
    assert plan["n_per_arm"].iloc[0] == 42 and plan["bench_hours_both_arms"].iloc[0] == 4.2
    from evalsim.stats.two_sample.power import n_for_fisher_power

    ex = n_for_fisher_power(0.4, 0.7, power=0.8, alpha=0.05)
    assert plan["n_per_arm"].tolist()[1:] == [ex.n_first, ex.n]


def test_t19_numbers_are_mde_and_power_calls():
    from evalsim.stats.two_sample.power import fisher_power

    t19 = design_detection.null_result_mde(SIZING, n_per_arm=45).set_index("quantity")[
        "value_points"
    ]
    assert t19["MDE, normal, pbar = 0.5"] == pytest.approx(100 * naive.mde(45))
    assert t19["MDE, normal, pbar = 0.55"] == pytest.approx(
        100 * (_z(0.975) + _z(0.8)) * math.sqrt(2 * 0.55 * 0.45 / 45)
    )
    assert t19["MDE, exact Fisher, centred on 0.5"] == pytest.approx(100 * dz.mde_exact(45).mde)
    assert t19["power of exact Fisher, 0.4 vs 0.7"] == pytest.approx(
        100 * fisher_power(0.4, 45, 0.7, 45)
    )
    assert t19["power of the z-test (normal approx.), 0.4 vs 0.7"] == pytest.approx(
        100 * dz.normal_power(0.4, 0.7, 45, 0.05)
    )


def test_t21_numbers_are_sizing_calls_and_fisher_power():
    from evalsim.stats.two_sample.power import fisher_power, n_for_fisher_power

    t21 = design_sizing.trials_to_separate(SIZING).set_index("method")
    fleiss = t21.loc["normal, doc 001 n_per_arm (pooled null / unpooled alternative)"]
    assert fleiss.n_per_policy == dz.n_per_arm_normal(0.9, 0.8, 0.05, 0.8, "fleiss").n
    unp = t21.loc["normal, unpooled variance"]
    assert unp.n_real == pytest.approx((_z(0.975) + _z(0.8)) ** 2 * (0.09 + 0.16) / 0.01)
    h = proportion_effectsize(0.9, 0.8)
    arc = t21.loc["arcsine (Cohen's h)"]
    # 2 (z_a + z_b)^2 / h^2; statsmodels' solver also counts the far tail (0.0002% more).
    assert arc.n_real == pytest.approx(2 * (_z(0.975) + _z(0.8)) ** 2 / h**2, rel=1e-12)
    sm = NormalIndPower().solve_power(effect_size=h, alpha=0.05, power=0.8)
    assert arc.n_real == pytest.approx(sm, rel=1e-5)
    ex = n_for_fisher_power(0.9, 0.8, power=0.8, alpha=0.05)
    assert t21.loc["exact Fisher power, stays above", "n_per_policy"] == ex.n
    for r in t21.itertuples():
        assert r.exact_fisher_power_at_n == pytest.approx(
            fisher_power(0.9, r.n_per_policy, 0.8, r.n_per_policy)
        )
        assert r.bench_hours_both_arms == pytest.approx(2 * r.n_per_policy * 3 / 60)


def test_the_sizing_reaches_every_call_it_plans():
    # A builder that kept a level or a power of its own would still pass at 5% and 80%.
    strict = Sizing(alpha=0.01, power=0.9, exact_fisher=False)
    t21 = design_sizing.trials_to_separate(strict).set_index("method")
    fleiss = t21.loc["normal, doc 001 n_per_arm (pooled null / unpooled alternative)"]
    assert fleiss.n_per_policy == dz.n_per_arm_normal(0.9, 0.8, 0.01, 0.9, "fleiss").n
    assert t21["exact_fisher_power_at_n"].isna().all()  # exact Fisher off
    t19 = design_detection.null_result_mde(strict).set_index("quantity")["value_points"]
    assert t19["MDE, normal, pbar = 0.5"] == pytest.approx(
        100 * (_z(0.995) + _z(0.9)) * math.sqrt(2 * 0.25 / 45)
    )
    assert not t19.index.str.contains("exact Fisher").any()
    t26 = design_sizing.estimation_vs_detection(strict, paired_rhos=[])
    det = t26[t26["method"] == "normal (unpooled)"].iloc[0]
    assert det.n_real == pytest.approx((_z(0.995) + _z(0.9)) ** 2 * (0.09 + 0.0736) / 0.0004)


def test_t26_numbers_are_sizing_calls():
    t26 = design_sizing.estimation_vs_detection(FAST, paired_rhos=[0.0])
    est = t26[t26["goal"].str.startswith("estimate")]
    assert est["n_per_arm"].iloc[0] == math.ceil(_z(0.975) ** 2 * 0.09 / 0.02**2)
    assert est["n_per_arm"].iloc[1] == dz.n_for_estimate(0.9, 0.02, 0.95, "wilson").n
    det = t26[t26["method"] == "normal (unpooled)"].iloc[0]
    assert det.n_real == pytest.approx((_z(0.975) + _z(0.8)) ** 2 * (0.09 + 0.0736) / 0.0004)
    assert det.total_rollouts == 2 * det.n_per_arm
    assert det.power_at_n == pytest.approx(dz.normal_power(0.9, 0.92, det.n_per_arm, 0.05))
    at1600 = t26[t26["method"] == "normal power at 1600 per arm (3200 total)"].iloc[0]
    assert at1600.power_at_n == pytest.approx(dz.normal_power(0.9, 0.92, 1600, 0.05))
    assert f"the power is about {at1600.power_at_n:.0%}" in t26.attrs["note"]
    paired = t26[t26["goal"].str.endswith("paired")].iloc[0]
    psi = pdz.discordance_from_rho(0.9, 0.92, 0.0)
    assert psi == pytest.approx(0.9 * 0.08 + 0.1 * 0.92)  # independent outcomes
    assert paired.n_per_arm == pdz.paired_n(0.9, 0.92, discordance=psi).n


def test_t29_numbers_are_statsmodels_cohens_h():
    t29 = design_sizing.cohens_h_table([[0.9, 0.92], [0.4, 0.7], [0.1, 0.6], [0.7, 0.4]])
    for r in t29.itertuples():
        h = proportion_effectsize(r.p2, r.p1)
        assert r.cohens_h == pytest.approx(h, abs=1e-12) and r.abs_h == pytest.approx(abs(h))
        n = 2 * (_z(0.975) + _z(0.8)) ** 2 / h**2
        assert r.n_per_arm_arcsine == math.ceil(n)
    assert t29["cohen_label"].tolist() == ["negligible", "medium", "large", "medium"]
