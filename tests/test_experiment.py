"""Table and figure builders of lesson 25's experiment, on small synthetic pools.

The pools here are DataFrames with the contract's columns, built in the test (no MuJoCo).
Counts are planted, so Table A and the seeds exercise can be checked exactly; resampled
columns are checked against their exact neighbours within 3 standard errors.
"""

from __future__ import annotations

import itertools

import naive_fisher
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from evalsim.products.resample import compare as experiment_compare
from evalsim.products.resample import experiment as ex
from evalsim.products.resample import figures as experiment_figures
from evalsim.products.settings import Draws

TASK = "cube30"
SEED = 20251129


def make_pools(spec, seeds=3, trials=300, task=TASK):
    """Pools with planted counts. spec: {policy: (sigma_mm, [k per seed], [loose k per seed])}."""
    rng = np.random.default_rng(0)
    poses = rng.uniform(size=(trials, 3))
    frames = []
    for name, (sigma, ks, loose_ks) in spec.items():
        for seed in range(seeds):
            order = np.random.default_rng(seed + 17).permutation(trials)
            success = np.zeros(trials, bool)
            success[order[: ks[seed]]] = True
            loose = np.zeros(trials, bool)
            loose[order[: loose_ks[seed]]] = True
            failure = np.array(["none"] * trials, dtype=object)
            fails = order[ks[seed] :]
            failure[fails] = np.resize(["missed", "pushed", "dropped"], len(fails))
            frames.append(
                pd.DataFrame(
                    {
                        "task": task,
                        "policy": name,
                        "sigma_mm": float(sigma),
                        "seed": np.int64(seed),
                        "trial": np.arange(trials, dtype=np.int64),
                        "cube_x_m": poses[:, 0],
                        "cube_y_m": poses[:, 1],
                        "cube_yaw_rad": poses[:, 2],
                        "success": success,
                        "success_loose": loose,
                        "failure": failure,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


SPEC = {"A": (9.0, [221, 200, 230], [259, 240, 262]), "B": (6.0, [263, 255, 270], [288, 280, 290])}
POLICIES = [{"name": "A", "sigma_mm": 9.0}, {"name": "B", "sigma_mm": 6.0}]


@pytest.fixture(scope="module")
def pools():
    return make_pools(SPEC)


@pytest.fixture(scope="module")
def pools3():
    return make_pools({**SPEC, "C": (12.0, [180, 170, 190], [240, 230, 250])})


def test_table_a_counts_and_wilson(pools):
    df = ex.table_a(pools, POLICIES, TASK)
    assert df["policy"].tolist() == ["A", "B"]
    a = df.iloc[0]
    got = (a["successes"], a["trials"], a["k/n"], a["loose_successes"])
    assert got == (221, 300, "221/300", 259)
    lo, hi = proportion_confint(221, 300, alpha=0.05, method="wilson")
    assert (a["wilson_lower"], a["wilson_upper"]) == pytest.approx((lo, hi), abs=1e-12)
    assert a["missed"] + a["pushed"] + a["dropped"] == 300 - 221
    assert (a["doc_k/n"], a["doc_loose_k/n"]) == ("221/300", "259/300")
    assert df.iloc[1]["doc_k/n"] == "263/300" and df.iloc[1]["aim_noise_mm"] == 6.0
    assert "Fisher p = 1" in df.attrs["note"]  # planted counts equal the document's


def test_third_policy_appears_without_code_change(pools3):
    policies = [*POLICIES, {"name": "C", "sigma_mm": 12.0}]
    a = ex.table_a(pools3, policies, TASK)
    assert a["policy"].tolist() == ["A", "B", "C"]
    assert a.iloc[2]["k/n"] == "180/300" and a.iloc[2]["doc_k/n"] == ""
    c = ex.table_c(pools3, Draws(TASK, 500, SEED), policies)
    assert c["policy"].tolist() == ["A", "B", "C"]
    assert np.isnan(c.iloc[2]["doc_binomial"])
    e = experiment_compare.table_e(
        pools3, Draws(TASK, 300, SEED), [["A", "B"], ["C", "A"]], [10, 20]
    )
    assert list(zip(e["policy_a"], e["policy_b"], e["n"], strict=True)) == [
        ("A", "B", 10),
        ("A", "B", 20),
        ("C", "A", 10),
        ("C", "A", 20),
    ]
    assert e.iloc[2]["p_a"] == pytest.approx(180 / 300)
    # Adding C changes nothing for A and B.
    c2 = ex.table_c(pools3, Draws(TASK, 500, SEED), POLICIES)
    pd.testing.assert_frame_equal(c.iloc[:2], c2)


def test_unknown_policy_names_what_the_pools_hold(pools):
    with pytest.raises(ValueError, match=r"policy='Z'.*\('cube30', 'A', 0\)"):
        ex.table_a(pools, [{"name": "Z", "sigma_mm": 1.0}], TASK)


def test_table_b_resampled_vs_exact(pools):
    df = ex.table_b(pools, Draws(TASK, 2000, SEED), POLICIES, [5, 10, 20, 50, 100])
    assert len(df) == 10 and df["n"].tolist()[:5] == [5, 10, 20, 50, 100]
    # Per comparison the rule is 3 SE (tests/test_resample.py); over this table's 20
    # comparisons one beyond 3 SE happens ~5% of the time, so the family-wise bound is 4 SE
    # (false alarm ~0.1%).
    assert (df["coverage_max_z"] <= 4.0).all(), df["coverage_max_z"].max()
    assert "comparisons beyond 3 SE" in df.attrs["note"]
    for r in df.itertuples():  # z recomputed here, with SE = sqrt(q (1 - q) / evaluations)
        z = max(
            abs(r.wilson_coverage - r.wilson_coverage_exact)
            / np.sqrt(r.wilson_coverage_exact * (1 - r.wilson_coverage_exact) / 2000),
            abs(r.wald_coverage - r.wald_coverage_exact)
            / np.sqrt(r.wald_coverage_exact * (1 - r.wald_coverage_exact) / 2000),
        )
        assert r.coverage_max_z == pytest.approx(z, rel=1e-9)
    assert np.allclose(df["mean_wilson_width"], df["mean_wilson_width_exact"], rtol=0.02)
    # Widths shrink with n; the doc columns are present for A only.
    a = df[df["policy"] == "A"]
    assert (np.diff(a["mean_wilson_width"]) < 0).all()
    assert a["doc_wald_coverage"].tolist() == [0.764, 0.928, 0.919, 0.916, 0.942]
    assert df[df["policy"] == "B"]["doc_wald_coverage"].isna().all()
    assert (df["kn_q05"] <= df["kn_q95"]).all()
    # Same config, same numbers.
    again = ex.table_b(pools, Draws(TASK, 2000, SEED), POLICIES[::-1], [5, 10, 20, 50, 100])
    pd.testing.assert_frame_equal(
        df.sort_values(["policy", "n"]).reset_index(drop=True),
        again.sort_values(["policy", "n"]).reset_index(drop=True),
        check_like=True,
    )


def test_table_c_binomial_and_drawn(pools):
    df = ex.table_c(pools, Draws(TASK, 2000, SEED), POLICIES, k=9, n=10)
    assert df["binomial"].tolist() == pytest.approx(
        [binom.sf(8, 10, 221 / 300), binom.sf(8, 10, 263 / 300)], abs=1e-12
    )
    # z recomputed here from the drawn rate and the binomial, not read from the product.
    for r, p in zip(df.itertuples(), (221 / 300, 263 / 300), strict=True):
        exact = binom.sf(8, 10, p)
        se = np.sqrt(exact * (1 - exact) / 2000)
        assert r.drawn_se == pytest.approx(se, rel=1e-12)
        assert r.z == pytest.approx((r.drawn - exact) / se, rel=1e-9)
        assert abs(r.drawn - exact) <= 3 * se
        assert r.drawn * 2000 == pytest.approx(round(r.drawn * 2000))  # a count of 2000
    assert df["doc_binomial"].tolist() == [0.215, 0.645]
    with pytest.raises(ValueError, match="k=11"):
        ex.table_c(pools, Draws(TASK, 2000, SEED), POLICIES, k=11, n=10)


def test_table_e_columns_agree_with_exact(pools):
    df = experiment_compare.table_e(pools, Draws(TASK, 1000, SEED), [["A", "B"]], [10, 20, 50, 100])
    assert df["n"].tolist() == [10, 20, 50, 100]
    assert (df["max_z"] <= 4.0).all(), df["max_z"].max()  # family-wise over 12, as in Table B
    assert (np.diff(df["fisher_power_exact"]) > 0).all()
    for r in df.itertuples():
        assert (r.p_a, r.p_b) == (221 / 300, 263 / 300)
        z = max(
            abs(got - exact) / np.sqrt(exact * (1 - exact) / 1000)
            for got, exact in [
                (r.fisher_p_lt_alpha, r.fisher_power_exact),
                (r.wilson_disjoint, r.wilson_disjoint_exact),
                (r.b_not_better, r.b_not_better_exact),
            ]
        )
        assert r.max_z == pytest.approx(z, rel=1e-9)
        want = naive_fisher.prob_b_not_better(r.p_a, r.n, r.p_b, r.n)
        assert r.b_not_better_exact == pytest.approx(want, abs=1e-12)
    # Exact power against the document's double loop over Fisher p-values (plain Python).
    for r in df[df["n"] <= 20].itertuples():
        want = naive_fisher.power(r.p_a, r.n, r.p_b, r.n, pvalue=naive_fisher.fisher_p_exact)
        assert r.fisher_power_exact == pytest.approx(want, abs=1e-12)
    assert df["doc_fisher_p_lt_alpha"].tolist() == [0.037, 0.113, 0.335, 0.673]


def test_break_it(pools):
    df = experiment_compare.table_break_it(
        pools, Draws(TASK, 2000, SEED), "A", coverage_n=5, perfect_n=10
    )
    wald, wilson = df.iloc[0], df.iloc[1]
    assert (wald["lower"], wald["upper"]) == (1.0, 1.0)
    assert wilson["lower"] == pytest.approx(0.7224672, abs=1e-6)  # statsmodels wilson 10/10
    cov = df.iloc[2:]
    assert cov["method"].tolist() == ["wald", "wilson"]
    for r in cov.itertuples():
        assert abs(r.coverage_resampled - r.coverage_exact) <= 3 * np.sqrt(
            r.coverage_exact * (1 - r.coverage_exact) / 2000
        )
    # Wald at n = 5 is zero-width exactly when k = 5 (k = 0 is rare): P = p^5 + (1-p)^5.
    p = 221 / 300
    z = cov.iloc[0]["zero_width_rate"]
    assert abs(z - (p**5 + (1 - p) ** 5)) <= 3 * np.sqrt(0.22 * 0.78 / 2000)
    assert cov.iloc[0]["document"] == "0.764"


def test_seeds_exercise(pools):
    df = experiment_compare.table_seeds(pools, POLICIES, TASK, seeds=3, trials=20)
    a = df[df["policy"] == "A"]
    assert a["unit"].tolist() == ["seed 0", "seed 1", "seed 2", "pooled (3 seeds)"]
    first20 = pools[(pools["policy"] == "A") & (pools["trial"] < 20)]
    ks = first20.groupby("seed")["success"].sum().tolist()
    assert a["successes"].tolist() == [*ks, sum(ks)]
    pooled = a.iloc[3]
    assert pooled["trials"] == 60
    assert (pooled["seed_rate_min"], pooled["seed_rate_max"]) == (min(ks) / 20, max(ks) / 20)
    assert "hides seed variance" in df.attrs["note"]
    assert "DIFFER" not in df.attrs["note"]


def test_seeds_exercise_flags_different_poses(pools):
    moved = pools.copy()
    moved.loc[(moved["seed"] == 1) & (moved["trial"] == 3), "cube_x_m"] += 0.01
    note = experiment_compare.table_seeds(moved, POLICIES, TASK).attrs["note"]
    assert "DIFFER" in note and "NOT identical" in note


@pytest.mark.parametrize(("n", "seeds", "spread"), [(5, 3, 2), (6, 2, 1), (4, 3, 0), (4, 4, 3)])
def test_prob_range_at_least_equals_enumeration(n, seeds, spread):
    p = 0.7
    pmf = binom.pmf(np.arange(n + 1), n, p)
    brute = sum(
        np.prod(pmf[list(ks)])
        for ks in itertools.product(range(n + 1), repeat=seeds)
        if max(ks) - min(ks) >= spread
    )
    assert experiment_compare.prob_range_at_least(n, p, seeds, spread) == pytest.approx(
        brute, abs=1e-12
    )


def test_figure_b_has_two_labelled_panels(pools):
    import matplotlib.pyplot as plt

    table_b = ex.table_b(pools, Draws(TASK, 300, SEED), POLICIES, [5, 10, 20])
    fig = experiment_figures.figure_b(table_b, "A")
    axes = fig.get_axes()
    assert len(axes) == 2
    for ax in axes:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    assert fig.get_suptitle()
    plt.close(fig)
    with pytest.raises(ValueError, match="'Z'"):
        experiment_figures.figure_b(table_b, "Z")


def test_plot_functions_take_an_axes(pools):
    import matplotlib.pyplot as plt

    table_b = ex.table_b(pools, Draws(TASK, 200, SEED), POLICIES, [5, 10])
    fig, ax = plt.subplots()
    assert experiment_figures.plot_width(table_b, "B", ax=ax) is ax
    assert ax.get_xlabel() == "trials per evaluation, n"
    ax2 = experiment_figures.plot_coverage(table_b, "B", ax=fig.add_subplot(2, 1, 2))
    assert ax2.get_ylim()[1] == pytest.approx(1.01)
    plt.close(fig)


def test_a_perfect_pool_gives_finite_agreement_numbers():
    pools = make_pools({"A": (0.0, [300, 300, 300], [300, 300, 300])})
    policies = [{"name": "A", "sigma_mm": 0.0}]
    df = ex.table_b(pools, Draws(TASK, 200, SEED), policies, [5, 10])
    assert (df["wilson_coverage"] == df["wilson_coverage_exact"]).all()
    assert "nan" not in df.attrs["note"]
    c = ex.table_c(pools, Draws(TASK, 200, SEED), policies)
    assert c.iloc[0]["binomial"] == 1.0 and c.iloc[0]["drawn"] == 1.0
