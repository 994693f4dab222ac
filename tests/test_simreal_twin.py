"""The real twin of the SO-101 scene and the simreal products T37, F11 (issue 27, item 3)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
import pytest

from evalsim.config import ConfigError, check_config, load_config
from evalsim.products.simreal import pair_law, twin_coverage_figure, twin_coverage_table
from evalsim.sim.jobs import chunk_config, twin_chunk_config, twins_config
from evalsim.sim.rollout import run_policy_trials
from evalsim.sim.scenes import make_scene
from evalsim.sim.so101 import SO101Scene
from evalsim.sim.so101_model import SO101Params
from evalsim.sim.twin import run_twin_trials, twin_config
from evalsim.stats.simreal import methods as sr


@pytest.fixture(scope="module")
def cfg(repo):
    return load_config(repo / "config" / "smoke.yaml")


def _with_gaps(cfg, gaps, noise="shared"):
    out = copy.deepcopy(cfg)
    out["simreal"]["gaps"] = gaps
    out["simreal"]["twin_noise"] = noise
    return out


# ---- the scene's control latency ----------------------------------------------------------
def test_latency_delays_every_set_point_and_keeps_the_trial_length():
    base = SO101Scene(SO101Params())
    hz = base.params.control_hz
    late = SO101Scene(SO101Params(latency_s=3.0 / hz))
    aim = (0.22, 0.03, 0.2)
    p0, p3 = base.plan(*aim), late.plan(*aim)
    assert p3.shape == p0.shape
    np.testing.assert_array_equal(p3[3:], p0[:-3])
    np.testing.assert_array_equal(p3[:3], np.repeat(p0[:1], 3, axis=0))
    # below half a tick rounds to no latency at all
    np.testing.assert_array_equal(SO101Scene(SO101Params(latency_s=0.4 / hz)).plan(*aim), p0)


# ---- the gap's physics --------------------------------------------------------------------
def test_twin_config_sets_only_the_gap_knobs(cfg):
    gaps = [{"name": "g", "pad_friction": 0.21, "arm_kp": 19.0, "cube_mass_kg": 0.07}]
    c = _with_gaps(cfg, gaps)
    task = c["tasks"][0]["name"]
    tw = twin_config(c, "g", task)
    p_sim = make_scene(c, c["tasks"][0]).params
    p_real = make_scene(tw, tw["tasks"][0]).params
    assert (p_real.pad_friction, p_real.arm_kp, p_real.cube_mass_kg) == (0.21, 19.0, 0.07)
    changed = {f for f in p_sim.__dataclass_fields__ if getattr(p_sim, f) != getattr(p_real, f)}
    assert changed == {"pad_friction", "arm_kp", "cube_mass_kg"}
    assert c == _with_gaps(cfg, gaps)  # the study config is not modified
    gt = copy.deepcopy(c)
    gt["scene"]["name"] = "gripper_table"
    with pytest.raises(ValueError, match="needs the so101 scene, got 'gripper_table'"):
        twin_config(gt, "g", task)
    with pytest.raises(ValueError, match="unknown simreal gap 'h'; configured gaps: g"):
        twin_config(c, "h", task)


def test_a_gap_without_knobs_replays_the_pool_trials_exactly(cfg):
    c = _with_gaps(cfg, [{"name": "none"}])
    task = c["tasks"][0]["name"]
    sim = run_policy_trials(c, task, "A", 1, 0, 4)
    twin = run_twin_trials(c, "none", task, "A", 1, 0, 4)
    pd.testing.assert_frame_equal(twin, sim)


def test_shared_noise_replays_the_aim_draw_plus_the_camera_bias_and_own_noise_does_not(cfg):
    gaps = [{"name": "cam", "perception_bias_mm": [2.5, -1.0]}]
    task = cfg["tasks"][0]["name"]
    sim = run_policy_trials(cfg, task, "B", 0, 0, 3)
    shared = run_twin_trials(_with_gaps(cfg, gaps), "cam", task, "B", 0, 0, 3)
    np.testing.assert_allclose(shared["aim_error_x_mm"], sim["aim_error_x_mm"] + 2.5, atol=1e-12)
    np.testing.assert_allclose(shared["aim_error_y_mm"], sim["aim_error_y_mm"] - 1.0, atol=1e-12)
    own = run_twin_trials(_with_gaps(cfg, gaps, "own"), "cam", task, "B", 0, 0, 3)
    for col in ("trial", "cube_x_m", "cube_y_m", "cube_yaw_rad"):  # same initial states
        np.testing.assert_array_equal(own[col], sim[col])
    assert not np.allclose(own["aim_error_x_mm"], sim["aim_error_x_mm"] + 2.5)
    # own noise: the same sigma, a different draw (sigma_mm is B's)
    assert (own["sigma_mm"] == sim["sigma_mm"]).all()


# ---- jobs: a gap's twins rerun only when that gap changes ---------------------------------
def test_twin_job_configs_change_only_with_their_gap(cfg):
    task = cfg["tasks"][0]["name"]
    small = twin_chunk_config(cfg, "small", task, "A")
    large = twin_chunk_config(cfg, "large", task, "A")
    assert [g["name"] for g in small["simreal"]["gaps"]] == ["small"]
    edited = copy.deepcopy(cfg)
    edited["simreal"]["gaps"][1]["pad_friction"] = 0.2
    edited["simreal"]["resamples"] = 5000
    edited["simreal"]["n_real"] = [10, 40]
    edited["simreal"]["gaps"].append({"name": "third", "latency_s": 0.1})
    assert twin_chunk_config(edited, "small", task, "A") == small
    assert twin_chunk_config(edited, "large", task, "A") != large
    assert twins_config(edited, "small") == twins_config(cfg, "small")
    # the pool chunks do not see the simreal section at all
    assert chunk_config(edited, task, "A") == chunk_config(cfg, task, "A")
    noise = copy.deepcopy(cfg)
    noise["simreal"]["twin_noise"] = "own"
    assert twin_chunk_config(noise, "small", task, "A") != small


# ---- config errors name the key and the allowed values ------------------------------------
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["simreal"].update(task="cube99"), "'simreal.task': unknown task 'cube99'"),
        (
            lambda c: c["simreal"].update(policies=["A", "Z"]),
            r"'simreal.policies\[1\]': unknown policy 'Z'; configured policies: A, B",
        ),
        (
            lambda c: c["simreal"].update(seeds=[0, 3]),
            r"'simreal.seeds\[1\]': seed 3 is not simulated; allowed values: 0 .. 2",
        ),
        (
            lambda c: c["simreal"].update(gaps=[{"name": "x"}, {"name": "x"}]),
            "'simreal.gaps': duplicate name",
        ),
        (
            lambda c: c["simreal"].update(figure_gap="huge"),
            "'simreal.figure_gap': unknown gap 'huge'; allowed values: small, large",
        ),
        (
            lambda c: c["simreal"].update(n_real=[10, 600]),
            "simreal.n_real",
        ),
        (
            lambda c: c["simreal"].update(n_real=[10, 200], n_sim=[100, 2000]),
            "'simreal.n_sim': 100 is below the largest simreal.n_real, 200",
        ),
        (
            lambda c: c["simreal"]["gaps"][0].update(servo="x"),
            "servo",
        ),
        (
            lambda c: c["scene"].update(name="gripper_table"),
            "'simreal.gaps': the real twin needs scene.name so101",
        ),
    ],
)
def test_bad_simreal_config_fails_before_any_job(repo, edit, message):
    import yaml

    raw = yaml.safe_load((repo / "config" / "smoke.yaml").read_text())
    full = check_config(raw)
    edit(full)
    with pytest.raises(ConfigError, match=message):
        check_config(full)


# ---- T37 and F11 --------------------------------------------------------------------------
def _synthetic(n_pairs: int, cells: tuple[int, int, int, int]):
    """Pools and a twin pool whose pairs have the given (real, twin) cell counts."""
    y = np.repeat([1, 1, 0, 0], cells)
    t = np.repeat([1, 0, 1, 0], cells)
    assert y.size == n_pairs
    base = pd.DataFrame({"task": "cube30", "policy": "A", "seed": 0, "trial": np.arange(n_pairs)})
    pools = base.assign(success=t.astype(bool))
    # an unrelated policy and seed in the pools must not be paired
    other = base.assign(policy="B", success=True)
    other_seed = base.assign(seed=1, success=False)
    twins = base.assign(success=y.astype(bool)).iloc[::-1]  # order must not matter
    return pd.concat([pools, other, other_seed], ignore_index=True), twins


def test_pair_law_counts_the_pairs_by_trial():
    pools, twins = _synthetic(100, (60, 10, 5, 25))
    law = pair_law(pools, twins, "cube30", "A")
    assert law["n_pairs"] == 100
    np.testing.assert_allclose(law["cells"], [0.60, 0.10, 0.05, 0.25])
    assert law["p_real"] == pytest.approx(0.70) and law["p_sim"] == pytest.approx(0.65)
    phi = (0.60 * 0.25 - 0.10 * 0.05) / math.sqrt(0.70 * 0.30 * 0.65 * 0.35)
    assert law["correlation"] == pytest.approx(phi, rel=1e-12)
    with pytest.raises(ValueError, match="has no pool trial"):
        pair_law(pools[pools["trial"] != 7], twins, "cube30", "A")


def test_t37_resampled_coverage_agrees_with_the_exact_values(cfg):
    pools, twins = _synthetic(200, (150, 14, 10, 26))
    kwargs = dict(
        task="cube30",
        policies=["A"],
        n_real=[10, 30],
        n_sim=[500],
        resamples=600,
        confidence=0.9,
        study_seed=7,
    )
    t = twin_coverage_table(pools, {"g": twins}, **kwargs)
    assert len(t) == 2 * len(sr.METHODS)
    assert set(t["method"]) == set(sr.METHODS)
    pr, ps = 164 / 200, 160 / 200
    phi = (0.75 * 0.13 - 0.07 * 0.05) / math.sqrt(pr * (1 - pr) * ps * (1 - ps))
    for n in (10, 30):
        oc = sr.operating_characteristics(pr, ps, phi, n, 500, 0.9)
        rows = t[t["n_real"] == n].set_index("method")
        for m in sr.METHODS:
            assert rows.loc[m, "coverage_exact"] == pytest.approx(oc.coverage[m], rel=1e-9)
            assert rows.loc[m, "width_exact"] == pytest.approx(oc.width[m], rel=1e-9)
            se = math.sqrt(oc.coverage[m] * (1 - oc.coverage[m]) / 600)
            assert abs(rows.loc[m, "coverage_resampled"] - oc.coverage[m]) <= 4 * se + 1e-9
            z = (rows.loc[m, "coverage_resampled"] - oc.coverage[m]) / se
            assert rows.loc[m, "coverage_z"] == pytest.approx(z, rel=1e-9, abs=1e-12)
            sd_w = 0.5 / math.sqrt(600)  # a width lies in [0, 1]: its sd is at most 0.5
            assert abs(rows.loc[m, "width_resampled"] - oc.width[m]) <= 4 * sd_w
        assert rows.loc["clopper_pearson", "width_vs_cp"] == pytest.approx(1.0)
        assert (rows.loc[:, "validity"] == pd.Series(sr.VALIDITY)).all()
    again = twin_coverage_table(pools, {"g": twins}, **kwargs)
    pd.testing.assert_frame_equal(t, again)
    other = twin_coverage_table(pools, {"g": twins}, **{**kwargs, "study_seed": 8})
    assert not other["coverage_resampled"].equals(t["coverage_resampled"])


def test_t37_and_f11_without_gaps(cfg):
    pools, _ = _synthetic(20, (10, 2, 3, 5))
    t = twin_coverage_table(pools, {}, "cube30", ["A"], [10], [500], 100, 0.95, 1)
    assert len(t) == 0 and "No simreal gaps" in t.attrs.get("note", "")
    fig = twin_coverage_figure(pools, {}, "cube30", "A", None, [10], 500, 0.95)
    assert "no simreal gaps" in fig.texts[0].get_text()


def test_f11_draws_every_method_at_the_pairs_law():
    pools, twins = _synthetic(100, (70, 8, 6, 16))
    fig = twin_coverage_figure(pools, {"g": twins}, "cube30", "A", "g", [10, 20, 50], 500, 0.95)
    ax_c, ax_w = fig.axes[:2]
    assert [ln.get_label() for ln in ax_c.lines if not ln.get_label().startswith("_")] == [
        sr.LABELS[m] for m in sr.METHODS
    ]
    law = pair_law(pools, twins, "cube30", "A")
    cp = sr.operating_characteristics(law["p_real"], law["p_sim"], law["correlation"], 20, 500)
    w_cp = ax_w.lines[list(sr.METHODS).index("clopper_pearson")].get_ydata()
    assert w_cp[1] == pytest.approx(cp.width["clopper_pearson"], rel=1e-12)
    assert "correlation 0." in fig._suptitle.get_text()
