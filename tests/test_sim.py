"""The simulate stage on the gripper_table scene (fast): success tests, determinism, chunking,
Parquet schema, calibration rules, T30 and the sweep-versus-pools check. The SO-101 scene (the
default) has its own tests in tests/test_so101.py."""

from __future__ import annotations

import copy
import math
import subprocess
import sys

import mujoco
import naive_fisher
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats

from evalsim.config import ConfigError, check_config, load_config
from evalsim.sim import pool as simpool
from evalsim.sim.rollout import run_policy_trials, run_sweep_trials, run_trials, task_poses
from evalsim.sim.scene import (
    FAILURES,
    GripperTableParams,
    PickScene,
    cube_bottom_m,
    failure_type,
)
from evalsim.sim.scenes import make_scene
from evalsim.sim.so101 import SO101Scene


@pytest.fixture(scope="module")
def config(repo):
    cfg = load_config(repo / "config" / "config.yaml")
    cfg["scene"]["name"] = "gripper_table"
    return cfg


@pytest.fixture(scope="module")
def scene(config):
    return make_scene(config, config["tasks"][0])


def test_every_task_scene_compiles_and_steps_without_warnings(config):
    for task in config["tasks"]:
        sc = make_scene(config, task)
        out = sc.run_trial(0.22, 0.0, 0.3, 0.222, -0.001)
        assert sc.check_warnings() == {}, task["name"]
        assert out.n_steps > 1000
        # the cube is what the config says it is
        h = sc.model.geom("cube").size
        assert np.allclose(h, task["cube_size_m"] / 2)
        assert sc.model.body("cube").mass[0] == pytest.approx(task["cube_mass_kg"])


def test_asset_compiles_as_plain_mjcf():
    from importlib import resources

    xml = resources.files("evalsim.sim").joinpath("assets", "gripper_table.xml").read_text()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, nstep=200)
    assert all(int(w.number) == 0 for w in data.warning)


def test_sigma_zero_succeeds_in_99_percent_of_200_trials(config, scene):
    # Issue 3, as written: all poses of the workspace, sigma = 0, 200 trials, >= 99% strict.
    df = run_trials(config, config["tasks"][0]["name"], "test0", 0.0, 0, 0, 200, scene=scene)
    assert len(df) == 200
    assert df["success"].mean() >= 0.99


def test_every_task_is_feasible_at_perfect_aim(config):
    # The calibration admits only scenes where every configured task succeeds at sigma = 0
    # (calibrate.py, step 2a); check it on the study's own poses of the other tasks.
    for task in config["tasks"][1:]:
        sc = make_scene(config, task)
        df = run_trials(config, task["name"], "test0", 0.0, 0, 0, 100, scene=sc)
        assert df["success"].mean() >= 0.99, task["name"]


def test_far_poses_are_gripped_shallower_but_hold_at_perfect_aim(config, scene):
    # The calibrated reach (calibrate.py, step 2a) still binds at the far corners of the
    # workspace: the pads stop above the nominal grasp height there, so the grasp is shallower
    # and tolerates less aim error along the pads than near the robot, yet at perfect aim the
    # shallowest grasp of the workspace holds whatever the yaw.
    ctl, p = scene.controller, scene.params
    far = (config["scene"]["x_range_m"][1], config["scene"]["y_range_m"][1])
    near = (config["scene"]["x_range_m"][0] + 0.01, 0.0)
    assert ctl.z_floor(*far) > ctl.z_grasp_m  # shallower than scripted
    assert ctl.z_floor(*far) - p.pad_height_m < scene.half  # pads below the cube's mid-height
    assert ctl.z_floor(*near) < ctl.z_grasp_m  # near the robot the reach does not bind
    for yaw in (-0.7, -0.3, 0.0, 0.4):
        assert scene.run_trial(*far, yaw, *far).success, yaw
    # aim 19 mm off along the pads (x): held near the robot, lost at the far corner
    assert scene.run_trial(*near, 0.0, near[0] + 0.019, near[1]).success
    assert not scene.run_trial(*far, 0.0, far[0] + 0.019, far[1]).success


def test_reach_floor_is_the_sphere_cap():
    from evalsim.sim.controller import PickController
    from evalsim.sim.scene import GripperTableParams

    timing = GripperTableParams().timing
    ctl = PickController(timing, (0.22, 0.0, 0.1), 0.095, 0.05, 0.08, 0.03, 0.4, 0.43)
    # shoulder 0.4 m up, reach 0.43 m: at r = 0.25 m the floor is 0.4 - sqrt(0.43^2 - 0.25^2)
    assert ctl.z_floor(0.15, 0.2) == pytest.approx(0.4 - (0.43**2 - 0.25**2) ** 0.5)
    assert ctl.z_floor(0.5, 0.0) == 0.4  # out of reach: the shoulder height
    tick = ctl.first_tick("close")
    assert ctl.setpoint(tick, 0.16, 0.0)[2] == pytest.approx(0.05)  # near: scripted height
    assert ctl.setpoint(tick, 0.30, 0.0)[2] == pytest.approx(ctl.z_floor(0.30, 0.0))
    free = PickController(timing, (0.22, 0.0, 0.1), 0.095, 0.05, 0.08, 0.03)
    assert free.setpoint(tick, 0.30, 0.0)[2] == pytest.approx(0.05)  # no reach limit


def test_sigma_30mm_mostly_fails(config, scene):
    df = run_trials(config, config["tasks"][0]["name"], "test30", 30.0, 0, 0, 60, scene=scene)
    assert df["success"].mean() < 0.5


def _check_outcomes(df: pd.DataFrame, lifted_min_m: float) -> None:
    assert (df["success_loose"] | ~df["success"]).all(), "strict must imply loose"
    assert set(df["failure"]) <= set(FAILURES)
    assert ((df["failure"] == "none") == df["success"]).all()
    missed = df["failure"] == "missed"
    assert not df.loc[missed, "touched"].any()
    pushed = df["failure"] == "pushed"
    assert df.loc[pushed, "touched"].all()
    assert (df.loc[pushed, "max_lift_m"] < lifted_min_m).all()
    dropped = df["failure"] == "dropped"
    assert (df.loc[dropped, "max_lift_m"] >= lifted_min_m).all()
    assert (df.loc[df["success"], "lift_height_m"] >= 0.04).all()


def test_strict_implies_loose_and_failure_types_consistent(config, scene):
    task = config["tasks"][0]["name"]
    df = pd.concat([run_trials(config, task, "mix", s, 0, 0, 40, scene=scene) for s in (9.0, 20.0)])
    _check_outcomes(df, config["scene"]["lifted_min_m"])
    assert df["failure"].nunique() >= 2


def test_poses_are_paired_and_a_prefix(config):
    task = config["tasks"][0]["name"]
    p10, p50 = task_poses(config, task, 10), task_poses(config, task, 50)
    assert np.array_equal(p10, p50[:10])
    x0, x1 = config["scene"]["x_range_m"]
    assert (p50[:, 0] >= x0).all() and (p50[:, 0] <= x1).all()
    a = run_policy_trials(config, task, "A", 0, 0, 4)
    b = run_policy_trials(config, task, "B", 1, 0, 4)
    for col in ("cube_x_m", "cube_y_m", "cube_yaw_rad"):
        assert np.array_equal(a[col].to_numpy(), b[col].to_numpy())
    assert not np.array_equal(a["aim_error_x_mm"].to_numpy(), b["aim_error_x_mm"].to_numpy())


def test_chunking_does_not_change_rows(config, scene):
    task = config["tasks"][0]["name"]
    whole = run_policy_trials(config, task, "A", 1, 0, 12, scene=scene)
    parts = pd.concat(
        [
            run_policy_trials(config, task, "A", 1, 0, 5, scene=scene),
            run_policy_trials(config, task, "A", 1, 5, 12),
        ],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(whole, parts)


def test_seed_bias_is_fixed_per_seed(config):
    task = config["tasks"][0]["name"]
    df = run_policy_trials(config, task, "B", 2, 0, 3)
    assert df["bias_x_mm"].nunique() == 1 and df["bias_y_mm"].nunique() == 1
    assert abs(df["bias_x_mm"].iloc[0]) < 6 * config["simulation"]["tau_mm"]


_SUBPROCESS = """
import sys
from evalsim.config import load_config
from evalsim.sim.pool import write_pool
from evalsim.sim.rollout import run_policy_trials
cfg = load_config(sys.argv[1])
write_pool(run_policy_trials(cfg, cfg["tasks"][0]["name"], "A", 0, 0, 6), sys.argv[2], cfg)
"""


def test_same_seed_two_processes_same_bytes(repo, tmp_path):
    # the default config: the SO-101 scene
    outs = []
    for i in range(2):
        out = tmp_path / f"p{i}.parquet"
        subprocess.run(
            [sys.executable, "-c", _SUBPROCESS, str(repo / "config" / "config.yaml"), str(out)],
            check=True,
            timeout=120,
        )
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_parquet_schema_and_metadata(config, tmp_path):
    df = run_policy_trials(config, config["tasks"][0]["name"], "B", 0, 0, 3)
    path = tmp_path / "pool.parquet"
    simpool.write_pool(df.iloc[::-1], path, config)
    back = simpool.read_pool(path)
    assert list(back.columns) == list(simpool.POOL_COLUMNS)
    assert back["trial"].tolist() == [0, 1, 2]
    meta = simpool.read_metadata(path)
    assert meta["evalsim.mujoco_version"] == mujoco.__version__
    assert meta["evalsim.config_hash"] == simpool.sim_config_hash(config)
    assert set(meta) == {"evalsim.config_hash", "evalsim.mujoco_version", "evalsim.evalsim_version"}
    bad = simpool.POOL_SCHEMA.set(
        simpool.POOL_SCHEMA.get_field_index("seed"), pa.field("seed", pa.float64())
    )
    with pytest.raises(ValueError, match="seed"):
        simpool.check_schema(bad)
    with pytest.raises(ValueError, match="lacks column"):
        simpool.to_table(df.drop(columns=["failure"]))


def test_merge_sorts_in_config_order_and_rejects_duplicates(config, tmp_path):
    rows = []
    for task in reversed([t["name"] for t in config["tasks"]]):
        for policy in ("B", "A"):
            rows.append(_fake_rows(task, policy, seed=1, n=3))
            rows.append(_fake_rows(task, policy, seed=0, n=3))
    paths = []
    for i, r in enumerate(rows):
        paths.append(tmp_path / f"{i}.parquet")
        simpool.write_pool(r, paths[-1], config)
    merged = simpool.merge_pools(paths, tmp_path / "pools.parquet", config)
    assert merged["task"].iloc[0] == config["tasks"][0]["name"]
    assert merged["policy"].iloc[0] == config["policies"][0]["name"]
    back = simpool.read_pool(tmp_path / "pools.parquet")
    assert back["trial"].iloc[:3].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="duplicate"):
        simpool.merge_pools(paths + paths[:1], tmp_path / "dup.parquet", config)


def _fake_rows(task: str, policy: str, seed: int, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task": task,
            "policy": policy,
            "sigma_mm": 9.0,
            "seed": seed,
            "trial": np.arange(n),
            "cube_x_m": 0.2,
            "cube_y_m": 0.0,
            "cube_yaw_rad": 0.0,
            "bias_x_mm": 0.0,
            "bias_y_mm": 0.0,
            "aim_error_x_mm": 1.0,
            "aim_error_y_mm": 1.0,
            "success": np.arange(n) % 2 == 0,
            "success_loose": True,
            "failure": np.where(np.arange(n) % 2 == 0, "none", "pushed"),
            "lift_height_m": 0.05,
            "max_lift_m": 0.05,
            "touched": True,
        }
    )


def test_chunk_ranges():
    assert simpool.chunk_ranges(7, 3) == [(0, 3), (3, 6), (6, 7)]
    with pytest.raises(ValueError, match="0"):
        simpool.chunk_ranges(0, 3)


def test_config_rejects_unknown_scene_and_negative_sigma(config):
    bad = copy.deepcopy(config)
    bad["scene"]["name"] = "so101_arm"
    with pytest.raises(ConfigError, match="so101.*gripper_table"):
        check_config(bad)
    bad = copy.deepcopy(config)
    bad["policies"][1]["sigma_mm"] = -1.0
    with pytest.raises(ConfigError, match=r"policies\[1\].sigma_mm"):
        check_config(bad)


def test_params_from_config_task_overrides(config):
    p = GripperTableParams.from_config(config, {"name": "x", "cube_size_m": 0.02})
    assert p.cube_size_m == 0.02
    assert p.jaw_opening_m == config["scene"]["jaw_opening_m"]


def test_products_on_small_frames():
    from evalsim.products.simulate import pool_rates_table, success_vs_sigma_figure

    df = pd.concat([_fake_rows("t", "A", 0, 4), _fake_rows("t", "A", 1, 4)])
    tab = pool_rates_table(df)
    assert tab["k_strict"].tolist() == [2, 2, 4]
    assert tab["seed"].tolist() == ["0", "1", "all"]
    assert (tab["wilson_lo"] <= tab["rate_strict"]).all()
    sweep = pd.concat([_fake_rows("t", "sweep", 0, 4).assign(sigma_mm=s) for s in (0.0, 5.0)])
    fig = success_vs_sigma_figure(sweep, policies={"A": 9.0})
    assert fig.axes[0].get_xlabel().startswith("aim noise")


def _prob_inside_by_counting(rate, n, low, high):
    # plain-Python reference: sum the binomial pmf over the counts k with low <= k/n <= high
    from math import comb

    return sum(
        comb(n, k) * rate**k * (1 - rate) ** (n - k)
        for k in range(n + 1)
        if low <= round(k / n, 12) <= high
    )


@pytest.mark.parametrize(
    ("rate", "n", "low", "high"),
    [
        (0.737, 300, 0.684, 0.783),
        (0.68, 300, 0.684, 0.783),
        (0.877, 900, 0.835, 0.909),
        (0.5, 10, 0.3, 0.3),
        (0.5, 10, 0.31, 0.39),
        (0.0, 5, 0.0, 0.2),
        (1.0, 5, 0.9, 1.0),
    ],
)
def test_prob_inside_counts_the_binomial(rate, n, low, high):
    from evalsim.sim.calibrate import prob_inside

    assert prob_inside(rate, n, low, high) == pytest.approx(
        _prob_inside_by_counting(rate, n, low, high), rel=1e-10, abs=1e-15
    )


def test_calibration_score_prefers_margin_on_both_sides():
    from evalsim.sim import calibrate

    # 206/300 = 0.6867 is the first count inside A's [0.684, 0.783]; 205/300 is outside
    assert calibrate.prob_inside(1.0, 300, 0.684, 0.783) == 0.0
    assert calibrate.prob_inside(206 / 300, 1, 0.684, 0.783) == 0.0  # 0/1 and 1/1 both out
    centred = calibrate.score({"A": 0.7335, "B": 0.872}, 300, 3)
    low_a = calibrate.score({"A": 0.690, "B": 0.872}, 300, 3)
    high_b = calibrate.score({"A": 0.7335, "B": 0.905}, 300, 3)
    assert 0.0 < centred < min(low_a, high_b)
    # the score is -log10 of a product of four probabilities (seed 0 and pooled, A and B)
    p = 1.0
    for rate, (lo, hi) in ((0.7335, (0.684, 0.783)), (0.872, (0.835, 0.909))):
        p *= _prob_inside_by_counting(rate, 300, lo, hi) * _prob_inside_by_counting(
            rate, 900, lo, hi
        )
    assert centred == pytest.approx(-np.log10(p), rel=1e-9)
    assert calibrate.score({"A": 0.2, "B": 0.872}, 300, 3) > 20  # A cannot land inside


def test_calibration_rule_on_a_tiny_grid(config):
    from evalsim.sim import calibrate

    cfg = calibrate.calibration_config(config, {"jaw_opening_m": 0.05})
    assert cfg["study_seed"] == config["study_seed"] + 1
    assert cfg["scene"]["jaw_opening_m"] == 0.05
    assert config["scene"]["jaw_opening_m"] != 0.05
    res = calibrate.sweep(
        config, {"jaw_opening_m": [0.03, 0.058]}, trials_per_seed=3, n_seeds=2, check_trials=3
    )
    assert res["chosen"].sum() == 1
    assert (res["trials_per_seed"] == 3).all() and (res["n_seeds"] == 2).all()
    # a 30 mm cube cannot enter a 30 mm opening: that point fails every trial, sigma = 0 too,
    # so it is not admissible whatever its score
    assert res.loc[0, "success_A"] == 0.0
    assert res.loc[0, "success_sigma0"] == 0.0
    assert not res.loc[0, "admissible"]
    assert res.loc[1, "admissible"] and res.loc[1, "chosen"]
    # the sigma = 0 check runs on every task; a point is only as feasible as its worst task
    per_task = res[[f"success_sigma0_{t['name']}" for t in config["tasks"]]]
    assert (res["success_sigma0"] == per_task.min(axis=1)).all()
    # the rates are over both calibration seeds: multiples of 1/6
    assert (res["success_B"] * 6).round(9).apply(float.is_integer).all()
    with pytest.raises(ValueError, match="admissible"):
        calibrate.sweep(
            config, {"jaw_opening_m": [0.03]}, trials_per_seed=1, n_seeds=1, check_trials=2
        )
    grid2 = calibrate.refine_grid({"jaw_opening_m": 0.064, "pad_width_m": 0.04})
    assert grid2["jaw_opening_m"] == [0.063, 0.0635, 0.064, 0.0645, 0.065]
    assert grid2["pad_width_m"] == [0.035, 0.0375, 0.04, 0.0425, 0.045]
    assert calibrate.on_edge({"jaw_opening_m": 0.063, "pad_width_m": 0.04}, grid2)
    assert not calibrate.on_edge({"jaw_opening_m": 0.0635, "pad_width_m": 0.0425}, grid2)


def test_paired_correlation_is_phi():
    from evalsim.sim.calibrate import paired_correlation

    a = pd.Series([True, True, False, False, True, False])
    b = pd.Series([True, False, False, False, True, True])
    # phi from the 2x2 table: n11=2, n10=1, n01=1, n00=2 -> (2*2 - 1*1) / (3*3) = 1/3
    assert paired_correlation(a, b) == pytest.approx(1 / 3)
    assert np.isnan(paired_correlation(a, pd.Series([True] * 6)))
    with pytest.raises(ValueError, match="length"):
        paired_correlation(a, b.iloc[:3])


def test_sweep_and_pools_agree_within_sampling_error(config, scene):
    # Issue 16: the sweep at a policy's sigma and that policy's pools share the poses but not
    # the aim-noise draws, so they agree within sampling error (Fisher p well above 0.001).
    from evalsim.products.simulate import sweep_pool_agreement

    task, n = config["tasks"][0]["name"], 60
    sweep = pd.concat(
        [run_sweep_trials(config, s, 0, n, scene=scene) for s in (6.0, 9.0)], ignore_index=True
    )
    pools = pd.concat(
        [
            run_policy_trials(config, task, p, seed, 0, n, scene=scene)
            for p in ("A", "B")
            for seed in range(config["simulation"]["n_seeds"])
        ],
        ignore_index=True,
    )
    agree = sweep_pool_agreement(sweep, pools, {"A": 9.0, "B": 6.0})
    assert agree["policy"].tolist() == ["A", "B"]
    assert (agree["sweep_n"] == n).all() and (agree["pools_n"] == 3 * n).all()
    for r in agree.itertuples():
        assert r.fisher_p == pytest.approx(naive_fisher.fisher_p(r.sweep_k, n, r.pools_k, 3 * n))
        assert r.fisher_p > 1e-3, r
    # a policy whose sigma the sweep lacks is left out
    assert sweep_pool_agreement(sweep, pools, {"A": 7.0}).empty


def test_acceptance_table_counts_and_fisher(config):
    from evalsim.products.simulate import acceptance_table

    rows = []
    for seed in range(3):
        for policy, (k, kl) in (("A", (7, 9)), ("B", (9, 10))):
            df = _fake_rows("cube30", policy, seed, 10)
            df["success"] = np.arange(10) < k + seed
            df["success_loose"] = np.arange(10) < max(kl, k + seed)
            rows.append(df)
    pools = pd.concat(rows + [_fake_rows("cube25", "A", 0, 10)], ignore_index=True)
    document = {
        "A": {"strict": 221, "loose": 259, "n": 300},
        "B": {"strict": 3, "loose": 288, "n": 300},
    }
    tab = acceptance_table(pools, document, alpha=0.05)
    assert len(tab) == 10
    a = tab[(tab.policy == "A") & (tab.criterion == "strict")]
    assert a["k"].tolist() == [7, 7 + 8 + 9] and a["n"].tolist() == [10, 30]
    # the strict gap B - A at each scope, in SE of the difference of two independent gaps
    gaps = tab[tab.criterion == "strict gap"]
    assert gaps["policy"].tolist() == ["B - A", "B - A"]
    for scope, ka, kb, n in (("seed 0", 7, 9, 10), ("pooled seeds", 24, 29, 30)):
        g = gaps[gaps.scope == scope].iloc[0]
        var = sum(k / m * (1 - k / m) / m for k, m in ((ka, n), (kb, n), (221, 300), (3, 300)))
        z = ((kb - ka) / n - (3 - 221) / 300) / math.sqrt(var)
        assert g.rate == pytest.approx((kb - ka) / n) and g.z_gap == pytest.approx(z, rel=1e-12)
        assert g.same_rate == (abs(z) <= 2) and g.k == "" and math.isnan(g.fisher_p)
    note = tab.attrs["note"]
    # joint test of the four seed-0 counts: per policy strict / loose only / neither (2 x 3)
    tables = [[[7, 2, 1], [221, 38, 41]], [[9, 1, 0], [3, 285, 12]]]
    x2 = sum(stats.chi2_contingency(t, correction=False).statistic for t in tables)
    assert f"X2 = {x2:.3g}, p = {stats.chi2.sf(x2, 4):.3g}" in note
    # Table E's check: exact Fisher detection at n = 20 at seed 0's strict rates, brute force
    pa, pb = 0.7, 0.9
    power = sum(
        stats.binom.pmf(i, 20, pa) * stats.binom.pmf(j, 20, pb)
        for i in range(21)
        for j in range(21)
        if stats.fisher_exact([[i, 20 - i], [j, 20 - j]]).pvalue < 0.05 * (1 - 1e-9)
    )
    assert f"strict rates is {power:.3f} (the lesson: 0.113)" in note
    for r in tab[tab.criterion != "strict gap"].itertuples():
        ref = naive_fisher.fisher_p(r.k, r.n, r.document_k, r.document_n, rel_tol=1e-14)
        assert r.fisher_p == pytest.approx(ref, rel=1e-9)
        assert r.same_rate == (r.fisher_p >= 0.05)
    assert not tab.loc[(tab.policy == "B") & (tab.criterion == "strict"), "same_rate"].any()
    assert "B strict seed 0" in tab.attrs["note"]
    with pytest.raises(ValueError, match="policy 'C'"):
        acceptance_table(pools, {"C": document["A"]})


def test_pass_chance_is_the_bootstrap_of_the_design():
    from evalsim.sim.calibrate_so101 import pass_chance

    # every trial succeeds strictly and loosely: each bootstrap count is n, so T30 passes
    # exactly when k = n passes against the document, for each of the eight rows
    n = 30
    df = pd.concat(
        [
            _fake_rows("t", p, s, n).assign(success=True, success_loose=True)
            for p in "AB"
            for s in range(3)
        ]
    )
    doc_ok = {"A": {"strict": 29, "loose": 30, "n": 30}, "B": {"strict": 30, "loose": 30, "n": 30}}
    doc_bad = {"A": {"strict": 10, "loose": 30, "n": 30}, "B": {"strict": 30, "loose": 30, "n": 30}}
    assert pass_chance(df, doc_ok, 0.05, n_boot=50) == 1.0
    assert pass_chance(df, doc_bad, 0.05, n_boot=50) == 0.0
    # one policy at a true rate near a document's: the chance lies strictly between 0 and 1,
    # and matches a plain-Python bootstrap on the same weights
    rng = np.random.default_rng(1)
    df2 = df.copy()
    df2["success"] = rng.random(len(df2)) < 0.7
    df2["success_loose"] = True
    doc = {"A": {"strict": 21, "loose": 30, "n": 30}, "B": {"strict": 21, "loose": 30, "n": 30}}
    got = pass_chance(df2, doc, 0.05, n_boot=100, rng=np.random.default_rng(5))
    w = np.random.default_rng(5).multinomial(n, np.full(n, 1.0 / n), size=100)
    ok = 0
    for b in range(100):
        fine = True
        for pol in "AB":
            g = df2[df2.policy == pol]
            for crit in ("success", "success_loose"):
                per = [g[g.seed == s].sort_values("trial")[crit].to_numpy(int) for s in range(3)]
                k0 = int(sum(w[b][i] * per[0][i] for i in range(n)))
                kall = int(sum(w[b][i] * (per[0][i] + per[1][i] + per[2][i]) for i in range(n)))
                key = "strict" if crit == "success" else "loose"
                for k, nn in ((k0, n), (kall, 3 * n)):
                    p = naive_fisher.fisher_p(k, nn, doc[pol][key], 30, rel_tol=1e-14)
                    fine &= p >= 0.05
        ok += fine
    assert 0.0 < got < 1.0
    assert got == pytest.approx(ok / 100)


def _reference_gripper_trial(scene, x, y, yaw, aim_x, aim_y):
    """The gripper_table trial as its own loop was written before the scene base: the
    controller's set points written actuator by actuator, touch sensors read by hand."""
    m, d, ctl, p = scene.model, scene.data, scene.controller, scene.params
    scene.reset(x, y, yaw)
    ax, ay, az = scene.act_hand
    fl, fr = scene.act_finger
    il, ir, ip = scene.touch_adr
    touched = loose = False
    max_lift = 0.0
    for tick in range(ctl.n_ticks):
        hx, hy, hz, q = ctl.setpoint(tick, aim_x, aim_y)
        d.ctrl[ax], d.ctrl[ay], d.ctrl[az], d.ctrl[fl], d.ctrl[fr] = hx, hy, hz, q, q
        mujoco.mj_step(m, d, nstep=scene.steps_per_tick)
        left, right = d.sensordata[il] > 0, d.sensordata[ir] > 0
        touched |= bool(left or right or d.sensordata[ip] > 0)
        if tick >= ctl.first_tick("lift"):
            max_lift = max(max_lift, cube_bottom_m(d, scene.cube_body, scene.half))
        if ctl.is_close_settled(tick):
            loose = bool(left and right)
    both = bool(d.sensordata[il] > 0 and d.sensordata[ir] > 0)
    lift = cube_bottom_m(d, scene.cube_body, scene.half)
    success = bool(lift >= p.strict_lift_m and both)
    failure = failure_type(success, touched, max_lift >= p.lifted_min_m)
    return success, bool(loose or success), failure, lift, max_lift, touched


def test_scene_base_runs_the_gripper_trial_as_its_own_loop_did(config, scene):
    """One trial loop for both scenes; gripper_table's outcomes are bit for bit its old ones."""
    for cls in (type(scene), SO101Scene):
        assert issubclass(cls, PickScene)
        for name in ("run_trial", "check_warnings", "place_cube", "_cube_bottom_m"):
            assert name not in vars(cls), (cls.__name__, name)  # written once, in the base
    poses = task_poses(config, "cube30", 16)
    rng = np.random.default_rng(7)
    kinds = set()
    for x, y, yaw in poses:
        ex, ey = rng.normal(0.0, 0.012, 2)  # wide enough to reach every failure type
        out = scene.run_trial(x, y, yaw, x + ex, y + ey)
        ref = _reference_gripper_trial(scene, x, y, yaw, x + ex, y + ey)
        got = (out.success, out.success_loose, out.failure, out.lift_height_m, out.max_lift_m)
        assert got + (out.touched,) == ref  # floats compared exactly
        assert out.n_steps == scene.steps_per_trial
        kinds.add(out.failure)
    assert {"none", "pushed"} <= kinds
