"""Drift (issue 18): the simulation's drift offset, T36's numbers against exact and Monte
Carlo references computed here, F10's contents, and the drift config checks."""

from __future__ import annotations

import copy
import functools
import itertools
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalsim.config import ConfigError, load_config
from evalsim.products import drift as D
from evalsim.sim.rollout import drift_offset_mm, run_trials

matplotlib.use("Agg")

ALPHA = 0.05


@pytest.fixture(scope="module")
def config(repo):
    return load_config(repo / "config" / "config.yaml")


def synthetic_curve(rates_by_policy: dict[str, list[float]], grid: list[float], trials=1000):
    """A curve frame with exactly the given success rates at each offset (no MuJoCo)."""
    rows = []
    for policy, rates in rates_by_policy.items():
        for d, r in zip(grid, rates, strict=True):
            k = round(r * trials)
            rows += [{"policy": policy, "bias_y_mm": d, "success": i < k} for i in range(trials)]
    return pd.DataFrame(rows)


GRID = [0.0, 5.0, 10.0, 20.0]
CURVE_RATES = {"A": [0.75, 0.70, 0.55, 0.20], "B": [0.85, 0.80, 0.60, 0.15]}


@functools.cache
def _fisher_p(a: int, n1: int, b: int, n2: int) -> float:
    return float(stats.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue)


def p_of(policy: str, offsets: np.ndarray) -> np.ndarray:
    return np.interp(offsets, GRID, CURVE_RATES[policy])


def session_p(policy_a, policy_b, rate, n, design):
    offsets = rate * np.arange(2 * n) / 100
    pos_a = np.arange(n) if design == "blocked" else np.arange(0, 2 * n, 2)
    pos_b = np.arange(n, 2 * n) if design == "blocked" else np.arange(1, 2 * n, 2)
    return p_of(policy_a, offsets[pos_a]), p_of(policy_b, offsets[pos_b])


# ------------------------------------------------------------------ the simulation's drift


def test_drift_offset_is_off_by_default_and_linear_in_the_trial(config):
    assert config["simulation"]["drift_mm_per_100_trials"] == 0.0
    assert drift_offset_mm(config, 250) == (0.0, 0.0)
    cfg = copy.deepcopy(config)
    cfg["simulation"]["drift_mm_per_100_trials"] = 4.0
    assert drift_offset_mm(cfg, 0) == (0.0, 0.0)
    assert drift_offset_mm(cfg, 50) == (0.0, pytest.approx(2.0))


def test_run_trials_adds_the_drift_to_the_perception_error_only(config):
    cfg = copy.deepcopy(config)
    task = cfg["tasks"][0]["name"]
    base = run_trials(cfg, task, "A", 9.0, 0, 10, 13, progress_every=0)
    cfg["simulation"]["drift_mm_per_100_trials"] = 5.0
    drifted = run_trials(cfg, task, "A", 9.0, 0, 10, 13, progress_every=0)
    np.testing.assert_allclose(drifted.aim_error_x_mm, base.aim_error_x_mm, rtol=0, atol=0)
    np.testing.assert_allclose(
        drifted.aim_error_y_mm - base.aim_error_y_mm, 5.0 * np.arange(10, 13) / 100, atol=1e-12
    )
    np.testing.assert_array_equal(drifted.cube_x_m, base.cube_x_m)


def test_offset_curve_uses_the_same_draws_at_every_offset(config):
    cfg = copy.deepcopy(config)
    cfg["simulation"]["drift_mm_per_100_trials"] = 7.0  # ignored: the offset is the drift
    curve = D.simulate_offset_curve(cfg, ["B"], [0.0, 6.0], trials=3, processes=1)
    assert len(curve) == 6 and sorted(set(curve.bias_y_mm)) == [0.0, 6.0]
    at0, at6 = (curve[curve.bias_y_mm == d].sort_values("trial") for d in (0.0, 6.0))
    np.testing.assert_allclose(at6.aim_error_y_mm.to_numpy() - at0.aim_error_y_mm.to_numpy(), 6.0)
    np.testing.assert_array_equal(at6.aim_error_x_mm.to_numpy(), at0.aim_error_x_mm.to_numpy())


# ------------------------------------------------------------------ exact session maths


def test_compare_exact_matches_enumeration_of_every_outcome():
    p_a = np.array([0.9, 0.7, 0.5, 0.4])
    p_b = np.array([0.3, 0.6, 0.8, 0.95])
    ref = {"p_reject": 0.0, "p_b_wins": 0.0, "p_a_wins": 0.0}
    for xa in itertools.product((0, 1), repeat=4):
        for xb in itertools.product((0, 1), repeat=4):
            w = np.prod(np.where(xa, p_a, 1 - p_a)) * np.prod(np.where(xb, p_b, 1 - p_b))
            ka, kb = sum(xa), sum(xb)
            if _fisher_p(ka, 4, kb, 4) < ALPHA:
                ref["p_reject"] += w
                ref["p_b_wins" if kb > ka else "p_a_wins"] += w
    got = D.compare_exact(p_a, p_b, ALPHA)
    for key, v in ref.items():
        assert got[key] == pytest.approx(v, abs=1e-14)
    assert got["mean_diff"] == pytest.approx(p_b.mean() - p_a.mean())


@pytest.fixture(scope="module")
def table():
    curve = synthetic_curve(CURVE_RATES, GRID)
    return D.drift_table(curve, ["A", "B"], [0.0, 10.0], [20, 50], ALPHA, 4000, 7), curve


def _row(df, **where):
    sel = df
    for k, v in where.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, where
    return sel.iloc[0]


def test_t36_without_drift_is_the_fixed_n_fisher_law(table):
    df, _ = table
    for n in (20, 50):
        for design in D.DESIGNS.values():
            eq = _row(
                df,
                part="compare",
                drift_mm_per_100=0.0,
                n_per_policy=n,
                design=design,
                comparison="equal (A vs A)",
            )
            # Independent reference: binomial pmf (SciPy) x fisher_exact (SciPy) double sum.
            pa = stats.binom.pmf(np.arange(n + 1), n, 0.75)
            size = sum(
                pa[a] * pa[b]
                for a in range(n + 1)
                for b in range(n + 1)
                if _fisher_p(a, n, b, n) < ALPHA
            )
            assert eq.false_win == pytest.approx(size, rel=1e-9)
            assert eq.bias_pts == pytest.approx(0.0, abs=1e-12)
            ab = _row(
                df,
                part="compare",
                drift_mm_per_100=0.0,
                n_per_policy=n,
                design=design,
                comparison="A vs B",
            )
            assert ab.session_diff_pts == pytest.approx(10.0)
            assert ab.mean_diff_pts == pytest.approx(10.0)


def test_t36_under_drift_matches_a_monte_carlo_reference(table):
    df, _ = table
    rng = np.random.default_rng(99)
    sims, n = 20_000, 20
    for comparison, (pa_name, pb_name) in (("equal (A vs A)", ("A", "A")), ("A vs B", ("A", "B"))):
        for design_key, design in D.DESIGNS.items():
            row = _row(
                df,
                part="compare",
                drift_mm_per_100=10.0,
                n_per_policy=n,
                design=design,
                comparison=comparison,
            )
            p_a, p_b = session_p(pa_name, pb_name, 10.0, n, design_key)
            ka = (rng.random((sims, n)) < p_a).sum(axis=1)
            kb = (rng.random((sims, n)) < p_b).sum(axis=1)
            rej = np.array(
                [_fisher_p(int(a), n, int(b), n) < ALPHA for a, b in zip(ka, kb, strict=True)]
            )
            for value, ref in (
                (row.p_reject, rej.mean()),
                (
                    row.false_win if comparison.startswith("equal") else row.power,
                    rej.mean() if comparison.startswith("equal") else (rej & (kb > ka)).mean(),
                ),
            ):
                se = math.sqrt(max(ref * (1 - ref), 1e-3) / sims)
                assert abs(value - ref) < 4 * se
            diff = (kb - ka).mean() / n
            assert 100 * diff == pytest.approx(
                row.mean_diff_pts, abs=4 * 100 * (kb - ka).std() / n / math.sqrt(sims)
            )
            session = np.mean(
                p_of(pb_name, 10.0 * np.arange(2 * n) / 100)
                - p_of(pa_name, 10.0 * np.arange(2 * n) / 100)
            )
            assert row.session_diff_pts == pytest.approx(100 * session, abs=1e-9)


def test_t36_blocking_biases_and_interleaving_does_not(table):
    df, _ = table
    for n in (20, 50):
        sel = df[(df.part == "compare") & (df.drift_mm_per_100 == 10.0) & (df.n_per_policy == n)]
        blk = sel[sel.design == D.DESIGNS["blocked"]]
        itl = sel[sel.design == D.DESIGNS["interleaved"]]
        assert (blk.bias_pts < -1.0).all()  # B runs later, hotter: it looks worse
        assert (itl.bias_pts.abs() < 0.5).all()  # off by at most half a trial's drift
        eq_blk = blk[blk.comparison.str.startswith("equal")].false_win.item()
        eq_itl = itl[itl.comparison.str.startswith("equal")].false_win.item()
        assert eq_blk > eq_itl


def test_t36_checks_match_a_monte_carlo_with_scipy_tests(table):
    df, _ = table
    rng = np.random.default_rng(5)
    sims, n = 1500, 20
    pos = np.arange(1, n + 1)
    cases = {  # policy, design -> session positions of its trials
        ("A", "blocked"): np.arange(n),
        ("B", "blocked"): np.arange(n, 2 * n),
        ("B", "interleaved"): np.arange(1, 2 * n, 2),
    }
    # SciPy's p-values, each computed once: the exact Mann-Whitney p of distinct positions
    # is a function of (successes, their rank sum), Fisher's of the two halves' counts
    trend_p: dict[tuple[int, int], float] = {}
    halves_p = functools.cache(_fisher_p)
    for (policy, design), where in cases.items():
        x = rng.random((sims, n)) < p_of(policy, 10.0 * where / 100)
        trend = halves = 0
        for s in x:
            if 0 < s.sum() < n:
                key = (int(s.sum()), int(pos[s].sum()))
                if key not in trend_p:
                    trend_p[key] = stats.mannwhitneyu(pos[s], pos[~s], method="exact").pvalue
                trend += trend_p[key] < ALPHA
            halves += halves_p(int(s[:10].sum()), 10, int(s[10:].sum()), 10) < ALPHA
        for label, count in (
            ("trend test (exact Cochran-Armitage)", trend),
            ("first vs second half (Fisher)", halves),
        ):
            row = _row(
                df,
                part="checks",
                drift_mm_per_100=10.0,
                n_per_policy=n,
                policy=policy,
                design=D.DESIGNS[design],
                test=label,
            )
            ref = count / sims
            assert abs(row.p_reject - ref) < 4 * math.sqrt(max(ref * (1 - ref), 1e-3) / sims)
    warn = _row(
        df,
        part="checks",
        drift_mm_per_100=0.0,
        n_per_policy=50,
        policy="B",
        design=D.DESIGNS["interleaved"],
        test="warning: any check at alpha/3",
    )
    assert warn.p_reject <= ALPHA + 4 * warn.mc_se
    for _, r in df[(df.part == "checks") & (df.drift_mm_per_100 == 0.0)].iterrows():
        assert r.p_reject <= ALPHA + 4 * (0 if math.isnan(r.mc_se) else r.mc_se) + 1e-12


def test_t36_note_states_the_computed_headline(table):
    df, _ = table
    note = df.attrs["note"]
    eq = _row(
        df,
        part="compare",
        drift_mm_per_100=10.0,
        n_per_policy=50,
        design=D.DESIGNS["blocked"],
        comparison="equal (A vs A)",
    )
    assert f"{100 * eq.false_win:.1f}% of the time when blocked" in note


def test_offsets_beyond_the_grid_are_refused():
    curve = synthetic_curve(CURVE_RATES, GRID)
    with pytest.raises(ValueError, match="drift.offsets_mm"):
        D.session_probabilities(curve, "A", "B", 20.0, 100, "blocked")


def test_f10_plots_the_table(table):
    df, curve = table
    fig = D.drift_figure(df, curve, 50, ALPHA, ["A", "B"])
    ax_c, ax_f, ax_b, ax_p = fig.axes
    label = f"two equal policies (A against A); order {D.DESIGNS['blocked']}"
    line = next(ln for ln in ax_f.lines if ln.get_label() == label)
    sel = df[
        (df.part == "compare")
        & (df.n_per_policy == 50)
        & (df.design == D.DESIGNS["blocked"])
        & (df.comparison == "equal (A vs A)")
    ]
    np.testing.assert_allclose(
        line.get_ydata(), 100 * sel.sort_values("drift_mm_per_100").false_win
    )
    assert len(ax_p.lines) == 5  # two policies x two designs, the alpha line
    # the bottom-right axis ends near its data, not at 100%
    assert ax_p.get_ylim()[1] <= max(
        1.25 * max(np.max(np.asarray(ln.get_ydata(), float)) for ln in ax_p.lines), 10
    )
    matplotlib.pyplot.close(fig)


# ------------------------------------------------------------------ config


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"policies": ["A", "Z"]}, "drift.policies\\[1\\]': unknown policy 'Z'"),
        ({"policies": ["A"]}, "drift.policies"),
        ({"rates_mm_per_100": [0, 30]}, "drift.offsets_mm"),
        ({"figure_n": 33}, "drift.figure_n"),
        ({"offsets_mm": [1, 2, 40]}, "must start at 0"),
        ({"trials_per_offset": 0}, "drift.trials_per_offset"),
    ],
)
def test_bad_drift_config_names_the_key(repo, tmp_path, change, message):
    import yaml

    cfg = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    cfg["drift"].update(change)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_negative_drift_rate_is_refused(repo, tmp_path):
    import yaml

    cfg = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    cfg["simulation"]["drift_mm_per_100_trials"] = -1
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match="simulation.drift_mm_per_100_trials"):
        load_config(path)
