"""Pose and seed structure of the SO-101 study (issue 22, item 4): off by default, and when on,
a pose's difficulty is shared by every policy and a training seed has its own precision."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import yaml

from evalsim.config import check_config, load_config
from evalsim.seeding import rng_for
from evalsim.sim.jobs import chunk_config
from evalsim.sim.rollout import (
    aim_noise_unit,
    range_scale,
    run_policy_trials,
    run_trials,
    seed_bias_mm,
    seed_sigma_factor,
    task_poses,
)

ON = {
    "range_gain_per_m": 8.0,
    "camera_xy_m": [0.01, -0.02],
    "ref_range_m": 0.22,
    "shared_error_mm": 5.0,
    "seed_sigma_sd": 0.3,
}


@pytest.fixture(scope="module")
def smoke(repo):
    return load_config(repo / "config" / "smoke.yaml")


def _on(cfg, **over):
    out = copy.deepcopy(cfg)
    out["simulation"]["structure"] = {**ON, **over}
    return check_config(out)


def test_structure_is_off_and_absent_by_default(repo):
    for name in ("config.yaml", "smoke.yaml"):
        cfg = load_config(repo / "config" / name)
        assert "structure" not in cfg["simulation"]  # the pools' job configs are unchanged
    raw = yaml.safe_load((repo / "config" / "structured.yaml").read_text())
    assert raw["simulation"]["structure"]["shared_error_mm"] > 0


def test_structure_with_every_knob_zero_replays_the_plain_trials(smoke):
    zero = _on(smoke, range_gain_per_m=0.0, shared_error_mm=0.0, seed_sigma_sd=0.0)
    task = smoke["tasks"][0]["name"]
    plain = run_policy_trials(smoke, task, "A", 2, 0, 3)
    again = run_policy_trials(zero, task, "A", 2, 0, 3)
    assert plain.equals(again)


def test_range_scale_by_hand(smoke):
    cfg = _on(smoke)
    r = math.hypot(0.27 - 0.01, 0.05 + 0.02)
    assert range_scale(cfg, 0.27, 0.05) == pytest.approx(1 + 8.0 * (r - 0.22), rel=1e-15)
    assert range_scale(_on(smoke, range_gain_per_m=40.0), 0.02, -0.02) == 0.0  # floored
    assert range_scale(smoke, 0.27, 0.05) == 1.0


def test_seed_sigma_factor_by_hand(smoke):
    cfg = _on(smoke)
    for policy, seed in (("A", 0), ("B", 2)):
        z = rng_for(cfg["study_seed"], "seed-sigma", policy, seed).standard_normal()
        assert seed_sigma_factor(cfg, policy, seed) == pytest.approx(math.exp(0.3 * z), rel=1e-15)
    assert seed_sigma_factor(smoke, "A", 0) == 1.0
    assert len({seed_sigma_factor(cfg, "A", s) for s in range(3)}) == 3


def test_a_pose_error_is_shared_by_every_policy_and_seed(smoke):
    cfg = _on(smoke)
    cfg["simulation"]["tau_mm"] = 0.0
    task = cfg["tasks"][0]["name"]
    # own sigma 0: the aim error is the pose's shared error alone, times the range factor
    a = run_trials(cfg, task, "A", 0.0, 0, 0, 3)
    b = run_trials(cfg, task, "B", 0.0, 2, 0, 3)
    np.testing.assert_array_equal(a["aim_error_x_mm"], b["aim_error_x_mm"])
    poses = task_poses(cfg, task, 3)
    for i in range(3):
        e = 5.0 * rng_for(cfg["study_seed"], "pose-aim", task, i).standard_normal(2)
        e = e * range_scale(cfg, poses[i, 0], poses[i, 1])
        assert a["aim_error_x_mm"][i] == pytest.approx(e[0], rel=1e-12)
        assert a["aim_error_y_mm"][i] == pytest.approx(e[1], rel=1e-12)


def test_a_policy_trial_adds_its_own_error_and_seed_bias(smoke):
    cfg = _on(smoke)
    task = cfg["tasks"][0]["name"]
    df = run_policy_trials(cfg, task, "B", 1, 0, 2)
    sigma = 6.0 * seed_sigma_factor(cfg, "B", 1)
    assert (df["sigma_mm"] == sigma).all()
    bias = seed_bias_mm(cfg, "B", 1)
    poses = task_poses(cfg, task, 2)
    for i in range(2):
        own = sigma * aim_noise_unit(cfg, task, "B", 1, i)
        shared = 5.0 * rng_for(cfg["study_seed"], "pose-aim", task, i).standard_normal(2)
        e = (own + shared) * range_scale(cfg, poses[i, 0], poses[i, 1])
        assert df["aim_error_x_mm"][i] == pytest.approx(e[0] + bias[0], rel=1e-12)
        assert df["aim_error_y_mm"][i] == pytest.approx(e[1] + bias[1], rel=1e-12)


def test_structure_changes_the_pool_chunks_job_config(smoke):
    task = smoke["tasks"][0]["name"]
    assert chunk_config(_on(smoke), task, "A") != chunk_config(smoke, task, "A")
