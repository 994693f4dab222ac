"""The adopted SO-101 calibration rule and its record, on a simulated simulator.

``evalsim.sim.calibration_scoring.run_job`` (one MuJoCo job) is replaced by a function of the
knobs with known rates, linear in the knobs, so the rule's steps run in milliseconds: the
distance and acceptance are the written formulas, the design is the full factorial plus the
centre on distinct poses, the model recovers the known rates and the choice their optimum on
the grid, the sigma = 0 floor excludes points, the two fresh runs shift the model's
intercepts by their weighted mean residual, and the final point runs on trials no step used,
with study_seed + 1. The record (config/calibration/so101.yaml) is checked against the study's
config and against itself. The real runs (MuJoCo) are recorded in config/README.md.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalsim.config import load_config
from evalsim.sim import calibrate_so101 as cal
from evalsim.sim import calibration_model as model
from evalsim.sim import calibration_scoring as scoring
from evalsim.sim import calibration_steps as steps
from evalsim.sim import rollout

ROOT = Path(__file__).resolve().parents[1]
DOC = {"A": {"strict": 221, "loose": 259, "n": 300}, "B": {"strict": 263, "loose": 288, "n": 300}}
CONFIG = {
    "study_seed": 11,
    "alpha": 0.05,
    "scene": {"name": "so101", "so101": {}},
    "simulation": {"trials_per_seed": 300, "n_seeds": 2, "document": DOC},
    "tasks": [{"name": "cube30", "cube_mass_kg": 0.05}, {"name": "cube40", "cube_mass_kg": 0.12}],
}
KNOBS = {
    "grip_hold_fraction": (0.15, 0.02),
    "pad_width_m": (0.030, 0.004),
    "fixed_pad_extra_m": (0.0035, 0.0015),
}
#: The lesson's four rates are reached at these coded values (on the choice's grid).
OPT = np.array([0.3, -0.5, 0.6])
CALLS: list[tuple] = []


def _coded(point: dict) -> np.ndarray:
    return np.array([(point[k] - c) / h for k, (c, h) in KNOBS.items()])


def _rates(point: dict) -> dict[str, tuple[float, float]]:
    """Known rates, linear in the coded knobs: the lesson's at OPT. Four rates, three knobs,
    so strict A and B move together along one direction the knobs cannot separate; the slopes
    below make OPT the unique zero of D."""
    dx = _coded(point) - OPT
    return {
        "A": (221 / 300 + dx @ [0.03, 0.02, 0.01], 259 / 300 + dx @ [0.0, 0.0, -0.02]),
        "B": (263 / 300 + dx @ [0.02, 0.005, 0.0], 288 / 300 + dx @ [0.0, 0.0, -0.008]),
    }


def _sigma0(point: dict) -> float:
    """sigma = 0 success, linear in the coded hold: 0.96 at OPT, below the 95% floor at coded
    hold < -0.2."""
    return 0.96 + 0.02 * (_coded(point)[0] - OPT[0])


def fake_run(args) -> pd.DataFrame:
    cfg, task, policy, seed, start, stop = args
    assert cfg["study_seed"] == CONFIG["study_seed"] + 1  # independent draws
    point = {k: cfg["scene"]["so101"][k] for k in KNOBS}
    CALLS.append((tuple(sorted(point.items())), task, policy, seed, start, stop))
    i = np.arange(start, stop)
    u = (i * 0.6180339887 + 0.1 * seed) % 1.0  # trial i's fixed uniform
    if policy is None:
        return pd.DataFrame({"seed": 0, "trial": i, "success": u < _sigma0(point)})
    strict, loose = _rates(point)[policy]
    success = u < strict
    loose_ok = (u < loose) | success
    failure = np.where(success, "none", np.where(loose_ok, "dropped", "pushed"))
    return pd.DataFrame(
        {
            "policy": policy,
            "seed": seed,
            "trial": i,
            "success": success,
            "success_loose": loose_ok,
            "failure": failure,
        }
    )


@pytest.fixture(autouse=True)
def _simulated(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(scoring, "run_job", fake_run)


def test_targets_are_the_lessons_rates_with_their_se_and_the_gap():
    tgt = scoring.targets(CONFIG)
    assert tgt["strict_A"] == pytest.approx(
        (221 / 300, math.sqrt(0.73667 * 0.26333 / 300)), rel=1e-4
    )
    assert tgt["loose_B"][0] == pytest.approx(0.96)
    assert tgt["gap"] == pytest.approx(((263 - 221) / 300, 0.015))
    row = {k: v for k, (v, _) in tgt.items()}
    assert scoring.distance(row, tgt) == 0.0 and scoring.accepted(row, tgt)
    # one SE off on one loose rate: distance 1, still accepted; a little more: rejected
    se = tgt["loose_A"][1]
    row1 = {**row, "loose_A": row["loose_A"] + se}
    assert scoring.distance(row1, tgt) == pytest.approx(1.0)
    assert scoring.accepted(row1, tgt)
    assert not scoring.accepted({**row, "loose_A": row["loose_A"] + 1.01 * se}, tgt)
    assert not scoring.accepted({**row, "gap": row["gap"] + 0.016}, tgt)


def test_linear_fit_is_least_squares():
    rng = np.random.default_rng(3)
    x = model.design_full(4)
    y = rng.random(len(x))
    beta = model.fit_linear(x, y)
    # reference: the normal equations, solved independently
    xx = np.column_stack([np.ones(len(x)), x])
    np.testing.assert_allclose(beta, np.linalg.solve(xx.T @ xx, xx.T @ y), atol=1e-12)


def test_full_factorial_design_is_every_corner_and_the_centre():
    for k in (2, 3, 4):
        x = model.design_full(k)
        assert x.shape == (2**k + 1, k) and (x[0] == 0).all()
        corners = x[1:]
        want = set(itertools.product((-1.0, 1.0), repeat=k))
        assert {tuple(r) for r in corners} == want and len(corners) == len(want)
        # every main effect and two-knob product orthogonal to every other one
        cols = [corners[:, i] for i in range(k)]
        cols += [corners[:, i] * corners[:, j] for i, j in itertools.combinations(range(k), 2)]
        m = np.column_stack(cols)
        assert (m.T @ m == 2**k * np.eye(len(cols))).all()


def test_model_matrix_and_the_fit_with_two_knob_interactions():
    rng = np.random.default_rng(5)
    x = model.design_full(3)
    # reference columns, written out: 1, x1, x2, x3, x1 x2, x1 x3, x2 x3
    ref = np.array(
        [[1, a, b, c, a * b, a * c, b * c] for a, b, c in x],
        dtype=float,
    )
    np.testing.assert_array_equal(model.model_matrix(x, interactions=True), ref)
    np.testing.assert_array_equal(model.model_matrix(x), ref[:, :4])
    # rates with an interaction: recovered exactly with it, not without it
    coef = np.array([0.8, 0.01, 0.03, 0.02, -0.015, 0.0, 0.005])
    y = ref @ coef
    beta = model.fit_linear(x, y, interactions=True)
    np.testing.assert_allclose(beta, coef, atol=1e-12)
    grid = rng.uniform(-1, 1, size=(50, 3))
    want = coef[0] + grid @ coef[1:4]
    want += sum(
        c * grid[:, i] * grid[:, j]
        for c, (i, j) in zip(coef[4:], itertools.combinations(range(3), 2), strict=True)
    )
    np.testing.assert_allclose(model.predict(beta, grid), want, atol=1e-12)
    linear = model.fit_linear(x, y)
    assert len(linear) == 4
    assert not np.allclose(model.predict(linear, grid), want, atol=1e-3)
    # with noise: least squares, the normal equations solved independently
    y = rng.random(len(x))
    np.testing.assert_allclose(
        model.fit_linear(x, y, interactions=True),
        np.linalg.solve(ref.T @ ref, ref.T @ y),
        atol=1e-12,
    )


def test_distinct_pose_ranges_give_every_seed_its_own_block():
    start, n, n_seeds = 2000, 7, 3
    ranges = scoring.distinct_pose_ranges(start, n, n_seeds)
    # reference: the indices start .. start + 3 n - 1 cut into consecutive slices of n
    every = list(range(start, start + n * n_seeds))
    assert [list(r) for r in ranges] == [every[s * n : (s + 1) * n] for s in range(n_seeds)]
    # the rule's blocks: intercept step 2000-4999, final 5000-7999 for three seeds
    rule = cal.RULE  # the adopted rule's fresh runs: 15000-17999 and 18000-20999, 3 seeds
    step = scoring.distinct_pose_ranges(rule["intercept_start"], rule["intercept_trials"], 3)
    final = scoring.distinct_pose_ranges(rule["second_start"], rule["second_trials"], 3)
    assert [(r.start, r.stop) for r in step] == [(15000, 16000), (16000, 17000), (17000, 18000)]
    assert [(r.start, r.stop) for r in final] == [(18000, 19000), (19000, 20000), (20000, 21000)]
    # distinct trial indices are distinct poses (the pose stream is keyed by task and index)
    config = {
        "study_seed": 4,
        "scene": {"x_range_m": [0.1, 0.3], "y_range_m": [-0.1, 0.1], "yaw_max_deg": 30},
    }
    poses = rollout.task_poses(config, "cube30", ranges[-1].stop)
    used = np.vstack([poses[list(r)] for r in ranges])
    assert len(np.unique(used, axis=0)) == n * n_seeds
    with pytest.raises(ValueError):
        scoring.distinct_pose_ranges(0, 0, 3)


def test_shift_intercepts_moves_only_the_intercepts_of_the_measured_rates():
    rng = np.random.default_rng(8)
    models = {k: rng.normal(size=7) for k in ("strict_A", "loose_A", "cube30")}
    x = np.array([1.0, 0.2, 0.6])
    measured = {"strict_A": 0.71, "loose_A": 0.88}
    shifted = model.shift_intercepts(models, x, measured)
    for k, want in measured.items():
        b = models[k]
        # reference prediction, written out: 1, x1, x2, x3, x1 x2, x1 x3, x2 x3
        old = b[0] + b[1:4] @ x + b[4] * x[0] * x[1] + b[5] * x[0] * x[2] + b[6] * x[1] * x[2]
        assert shifted[k][0] == pytest.approx(b[0] + want - old, abs=1e-12)
        np.testing.assert_array_equal(shifted[k][1:], b[1:])  # slopes and interactions kept
        assert model.predict(shifted[k], x)[0] == pytest.approx(want, abs=1e-12)
    np.testing.assert_array_equal(shifted["cube30"], models["cube30"])  # not measured: kept
    assert shifted["strict_A"] is not models["strict_A"]  # the input is not changed


#: Version 5's fake world: trials before EASY_UNTIL have strict rates EASY points higher.
EASY_UNTIL, EASY = 2000, 0.03


def fake_run_easy_early(args) -> pd.DataFrame:
    """:func:`fake_run` with the early trials' strict rates EASY higher (the luck of versions
    3 and 4's design trials), loose rates unchanged (they stay above the strict ones)."""
    cfg, task, policy, seed, start, stop = args
    out = fake_run(args)
    if policy is None:
        return out
    point = {k: cfg["scene"]["so101"][k] for k in KNOBS}
    strict = _rates(point)[policy][0]
    u = (out["trial"].to_numpy() * 0.6180339887 + 0.1 * seed) % 1.0
    out["success"] = u < strict + EASY * (out["trial"].to_numpy() < EASY_UNTIL)
    out["failure"] = np.where(out["success"], "none", out["failure"].replace("none", "dropped"))
    return out


def test_choose_searches_only_the_given_grids():
    # D's minimum (the lesson's rates, D = 0) at coded (0.5, 0.9); the second knob's grid
    # stops at 0.4
    tgt = scoring.targets(CONFIG)
    models = {
        k: np.array([tgt[k][0] - 0.01 * 0.5 - 0.02 * (1 + i) * 0.9, 0.01, 0.02 * (1 + i)])
        for i, k in enumerate(scoring.RATES)
    }
    models["strict_B"] = models["strict_A"] + np.array([tgt["gap"][0], 0.0, 0.0])
    s0 = {"cube30": np.array([0.99, 0.0, 0.0])}
    floor = {"cube30": steps.SIGMA0_MIN_RATE}
    x, _ = model.choose(models, s0, tgt, ["A", "B"], floor, 2)
    assert x[1] == pytest.approx(0.9)
    short = model.CHOICE_GRID[model.CHOICE_GRID <= 0.4]
    x, pred = model.choose(models, s0, tgt, ["A", "B"], floor, 2, [model.CHOICE_GRID, short])
    assert x[1] == pytest.approx(0.4) and x[1] in short
    with pytest.raises(ValueError, match="grid"):
        model.choose(models, s0, tgt, ["A", "B"], floor, 2, [short])


def test_shift_intercepts_with_a_weight_moves_that_share():
    beta = np.array([0.5, 0.1, -0.2, 0.05])
    x = np.array([0.3, -0.4, 1.0])
    old = 0.5 + 0.1 * 0.3 - 0.2 * -0.4 + 0.05 * 1.0  # written out
    shifted = model.shift_intercepts({"strict_A": beta}, x, {"strict_A": 0.9}, 0.25)
    assert model.predict(shifted["strict_A"], x)[0] == pytest.approx(old + 0.25 * (0.9 - old))
    with pytest.raises(ValueError, match="weight"):
        model.shift_intercepts({"strict_A": beta}, x, {"strict_A": 0.9}, 1.5)


def test_mean_residual_is_the_mean_of_measured_minus_predicted():
    beta = np.array([0.5, 0.1, -0.2])
    x = np.array([[0.2, 0.4], [-1.0, 0.5]])
    want = ((0.6 - (0.5 + 0.02 - 0.08)) + (0.3 - (0.5 - 0.1 - 0.1))) / 2  # written out
    assert model.mean_residual(beta, x, [0.6, 0.3]) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError):
        model.mean_residual(beta, x, [0.6])


def test_choose_reports_gap_and_distance_meets_every_floor_and_ties_to_the_centre():
    tgt = scoring.targets(CONFIG)
    # every rate flat at the lesson's: D = 0 everywhere, so the tie goes to the centre
    flat = {k: np.array([tgt[k][0], 0.0, 0.0]) for k in scoring.RATES}
    s0 = {"cube30": np.array([0.99, 0.0, 0.0])}
    x, pred = model.choose(flat, s0, tgt, ["A", "B"], {"cube30": 0.95}, 2)
    np.testing.assert_array_equal(x, [0.0, 0.0])
    # rates that move: D's minimum at coded (-0.6, -0.8); two tasks' floors, one per knob,
    # each excluding that minimum, so only both together pin the choice
    models = {
        k: np.array([tgt[k][0] + 0.01 * (1 + i) * 0.6 + 0.015 * 0.8, 0.01 * (1 + i), 0.015])
        for i, k in enumerate(scoring.RATES)
    }
    s0 = {"cube30": np.array([0.95, 0.04, 0.0]), "cube40": np.array([0.95, 0.0, 0.04])}
    floors = {"cube30": 0.95, "cube40": 0.95}  # each needs its knob >= 0
    x, pred = model.choose(models, s0, tgt, ["A", "B"], floors, 2)
    assert x[0] >= 0.0 and x[1] >= 0.0
    # reference, written out: the best admissible point of the grid by brute force
    best = None
    for a in model.CHOICE_GRID:
        for b in model.CHOICE_GRID:
            if a < -1e-12 or b < -1e-12:
                continue
            r = {k: m[0] + m[1] * a + m[2] * b for k, m in models.items()}
            r["gap"] = r["strict_B"] - r["strict_A"]
            d = sum(((r[k] - v) / t) ** 2 for k, (v, t) in tgt.items())
            if best is None or d < best[0] - 1e-12:
                best = (d, a, b, r)
    np.testing.assert_allclose(x, best[1:3], atol=1e-12)
    assert pred["distance"] == pytest.approx(best[0], rel=1e-12)
    assert pred["gap"] == pytest.approx(best[3]["strict_B"] - best[3]["strict_A"], abs=1e-12)
    assert pred["sigma0_cube40"] == pytest.approx(0.95 + 0.04 * x[1], abs=1e-12)


def test_model_helpers_name_their_errors_and_weight_zero_keeps_the_model():
    beta = np.array([0.5, 0.1, -0.2])
    kept = model.shift_intercepts({"strict_A": beta}, np.array([0.3, 0.1]), {"strict_A": 0.9}, 0.0)
    np.testing.assert_array_equal(kept["strict_A"], beta)
    with pytest.raises(ValueError, match="one measured value per coded point"):
        model.mean_residual(beta, np.zeros((2, 2)), [0.1])


#: The adopted rule in the fake world: its knobs, the design on the easy early trials (each
#: seed its own block of 200 from 0), the two fresh runs and the final after them.
FAKE_RULE = {
    "knobs": KNOBS,
    "fixed": {"pad_friction_sd": 0.385},
    "design_start": 0,
    "design_trials": 200,
    "intercept_start": EASY_UNTIL,
    "intercept_trials": 400,
    "second_start": EASY_UNTIL + 1000,
    "second_trials": 500,
    "final_start": 5000,
    "final_trials": 600,
}


def _rows(x):
    """Model rows written out: 1, x1, x2, x3, x1 x2, x1 x3, x2 x3."""
    x = np.atleast_2d(x)
    return np.column_stack(
        [np.ones(len(x)), x, x[:, 0] * x[:, 1], x[:, 0] * x[:, 2], x[:, 1] * x[:, 2]]
    )


def test_model_run_designs_on_distinct_poses_and_weighs_the_first_fresh_run(monkeypatch):
    monkeypatch.setattr(scoring, "run_job", fake_run_easy_early)
    res = cal.model_run(CONFIG, 1, {**cal.RULE, **FAKE_RULE})
    stages = list(res["stage"])
    assert stages == ["design"] * 9 + ["predicted", "intercept", "predicted", "final"]
    jobs = [c for c in CALLS if c[2] is not None]
    # the design: the full 2^3 factorial and the centre, seed s its own block of 200 from 0
    want_design = {(p, s, 200 * s, 200 * (s + 1)) for p in "AB" for s in (0, 1)}
    assert {c[2:] for c in jobs[: 9 * 4]} == want_design
    coded = res[res["stage"] == "design"][[f"x_{k}" for k in KNOBS]].to_numpy()
    assert {tuple(r) for r in coded} == {(0.0,) * 3} | set(itertools.product((-1.0, 1.0), repeat=3))
    want_step = {(p, s, 2000 + 400 * s, 2400 + 400 * s) for p in "AB" for s in (0, 1)}
    want_second = {(p, s, 3000 + 500 * s, 3500 + 500 * s) for p in "AB" for s in (0, 1)}
    assert {c[2:] for c in jobs[9 * 4 : 9 * 4 + 4]} == want_step
    assert {c[2:] for c in jobs[9 * 4 + 4 :]} == want_second
    # sigma = 0 streams: every task at every design point and at both choices
    assert sum(c[2] is None for c in CALLS) == len(CONFIG["tasks"]) * (9 + 2)
    # reference: the design rows refitted here, the first choice's prediction, and the shift
    # by 2/3 of measured minus predicted (400 vs 200 poses)
    design = res[res["stage"] == "design"]
    step = res[res["stage"] == "intercept"].iloc[0]
    x1 = step[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    second = res[res["stage"] == "predicted"].iloc[1]
    x2 = second[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    for k in scoring.RATES:
        beta = np.linalg.lstsq(_rows(coded), design[k].to_numpy(), rcond=None)[0]
        assert step[f"model_{k}"] == pytest.approx((_rows(x1) @ beta)[0], abs=1e-9)
        shifted = (_rows(x2) @ beta)[0] + (2.0 / 3.0) * (step[k] - (_rows(x1) @ beta)[0])
        assert second[k] == pytest.approx(shifted, abs=1e-9)
    # the easy design trials leave the model EASY too high; the step measures it
    for k in ("strict_A", "strict_B"):
        assert step[f"model_{k}"] - step[k] == pytest.approx(EASY, abs=3e-3)


def test_rule_shifts_the_model_by_its_fresh_runs_and_reuses_a_saved_model_run(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(scoring, "run_job", fake_run_easy_early)
    run = cal.model_run(CONFIG, 1, {**cal.RULE, **FAKE_RULE})
    path = tmp_path / "model_run.csv"
    run.to_csv(path, index=False)
    CALLS.clear()
    res = cal.run_rule(CONFIG, 1, str(path), **FAKE_RULE)
    assert list(res["stage"]) == ["anchor", "predicted", "final"]
    jobs = [c for c in CALLS if c[2] is not None]
    # nothing of the model run rerun; the final: seed s its own block of 600 from 5000
    assert {c[2:] for c in jobs} == {
        (p, s, 5000 + 600 * s, 5600 + 600 * s) for p in "AB" for s in (0, 1)
    }
    # reference: the design refitted here, the two fresh runs' mean residual, weight
    # (800 + 1000) / (800 + 1000 + 400) (fresh against design poses per policy, two seeds)
    design = run[run["stage"] == "design"]
    x = design[[f"x_{k}" for k in KNOBS]].to_numpy()
    fresh = run[run["stage"].isin(["intercept", "final"])]
    xf = fresh[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    anchor, chosen = res.iloc[0], res.iloc[1]
    w = 1800 / 2200
    assert anchor["weight"] == pytest.approx(w)
    xc = chosen[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    for k in scoring.RATES:
        beta = np.linalg.lstsq(_rows(x), design[k].to_numpy(), rcond=None)[0]
        resid = np.mean(fresh[k].to_numpy() - _rows(xf) @ beta)
        assert anchor[f"shift_{k}"] == pytest.approx(w * resid, abs=1e-9)
        assert chosen[k] == pytest.approx((_rows(xc) @ beta)[0] + w * resid, abs=1e-9)
    f = res[res["chosen"]].iloc[0]
    assert f["n_per_policy"] == 2 * 600
    assert f["accepted"] == scoring.accepted(f.to_dict(), scoring.targets(CONFIG))
    # without the saved run: the same rows, the model run done first
    again = cal.run_rule(CONFIG, 1, None, **FAKE_RULE)
    pd.testing.assert_frame_equal(
        again.drop(columns="seconds", errors="ignore"), res.drop(columns="seconds", errors="ignore")
    )


def test_rule_on_plain_trials_finds_the_known_optimum_above_the_sigma0_floor():
    res = cal.run_rule(CONFIG, 1, None, **FAKE_RULE)
    f = res[res["chosen"]].iloc[0].to_dict()
    np.testing.assert_allclose(_coded(f), OPT, atol=1e-9)
    assert _sigma0(f) >= steps.SIGMA0_MIN_RATE and f["accepted"]


def test_the_sigma0_floor_excludes_points(monkeypatch):
    """With the optimum below the sigma = 0 floor, the choice stays above it."""
    monkeypatch.setattr(steps, "SIGMA0_MIN_RATE", 0.965)  # feasible at coded hold >= 0.55
    res = cal.run_rule(CONFIG, 1, None, **FAKE_RULE)
    f = res[res["chosen"]].iloc[0].to_dict()
    assert _coded(f)[0] >= 0.5 - 1e-9 and _sigma0(f) >= 0.965 - 2e-3
    assert f["sigma0_cube30"] >= 0.965 and f["sigma0_cube40"] >= 0.965  # measured
    assert not np.allclose(_coded(f), OPT)


def test_no_admissible_point_stops_the_rule(monkeypatch):
    def all_fail(args):
        cfg, task, policy, seed, start, stop = args
        if policy is None:
            return pd.DataFrame({"seed": 0, "trial": np.arange(start, stop), "success": False})
        return fake_run(args)

    monkeypatch.setattr(scoring, "run_job", all_fail)
    with pytest.raises(ValueError, match="admissible"):
        cal.run_rule(CONFIG, 1, None, **FAKE_RULE)


@pytest.mark.parametrize(
    "bad", [{"intercept_start": 399}, {"second_start": 2799}, {"final_start": 3999}]
)
def test_trial_blocks_must_follow_each_other(bad):
    with pytest.raises(ValueError, match="fresh"):
        cal.run_rule(CONFIG, 1, None, **{**FAKE_RULE, **bad})
    assert not CALLS


# --------------------------------------------------------------------------- the record


def test_record_blocks_follow_each_other_for_three_seeds():
    rule = cal.RULE
    # after the exploration (11000-12499), each block after the last for three seeds
    assert rule["design_start"] == 13000 and rule["design_start"] + 3 * 500 == 14500
    assert rule["intercept_start"] + 3 * rule["intercept_trials"] == rule["second_start"]
    assert rule["second_start"] + 3 * rule["second_trials"] == rule["final_start"] == 21000
    cal._check_blocks({"simulation": {"n_seeds": 3}}, rule)  # no error


def test_record_point_is_its_coded_choice_and_the_study_configs():
    rec = cal.RECORD
    knobs = rec["knobs"]
    # the coded choice, decoded by hand: centre + coded * half-range, then the held knobs
    decoded = {k: c + x * h for (k, (c, h)), x in zip(knobs.items(), rec["coded"], strict=True)}
    assert cal.point_differences({**decoded, **rec["fixed"]}, rec["point"]) == []
    assert all(x in model.CHOICE_GRID.round(9) for x in np.round(rec["coded"], 9))
    for path in ("config/config.yaml", "config/smoke.yaml"):  # structured.yaml: merged over
        config = load_config(ROOT / path)
        assert cal.check_config(config) == [], path


def test_record_acceptance_table_is_its_own_arithmetic():
    rec = cal.RECORD
    acc = rec["acceptance"]
    n_final = 3 * rec["trials"]["final"][1]  # 6,000 distinct poses per policy
    doc = load_config(ROOT / "config/config.yaml")["simulation"]["document"]
    rows = {r["rate"]: r for r in acc["rows"]}
    measured = {}
    for k in scoring.RATES:
        crit, pol = k.split("_")
        r = rows[k]
        n_doc = doc[pol]["n"]
        assert r["lesson_successes"] == doc[pol][crit]
        assert r["lesson"] == pytest.approx(doc[pol][crit] / n_doc, abs=5e-4)
        assert r["measured"] == pytest.approx(r["successes"] / n_final, abs=5e-4)
        se = math.sqrt(r["lesson"] * (1 - r["lesson"]) / n_doc)
        miss = (r["successes"] / n_final - doc[pol][crit] / n_doc) / se
        assert r["miss_se"] == pytest.approx(miss, abs=0.006)
        assert r["within"] == (abs(miss) <= 1.0)
        measured[k] = r["successes"] / n_final
    measured["gap"] = measured["strict_B"] - measured["strict_A"]
    assert rows["gap"]["measured"] == pytest.approx(measured["gap"], abs=5e-4)
    tgt = scoring.targets(load_config(ROOT / "config/config.yaml"))
    assert acc["gap_tolerance"] == scoring.GAP_TOL == tgt["gap"][1]
    assert scoring.accepted(measured, tgt) and rec["adopted"]
    assert scoring.distance(measured, tgt) == pytest.approx(acc["distance"], abs=0.006)


def test_check_command_says_which_knob_differs(tmp_path, capsys):
    assert cal.main(["check"]) == 0
    text = (ROOT / "config/config.yaml").read_text()
    moved = text.replace("pad_width_m: 0.0305", "pad_width_m: 0.0306", 1)
    assert moved != text
    path = tmp_path / "config.yaml"
    path.write_text(moved)
    assert cal.main(["check", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pad_width_m: 0.0306" in err[0] and "0.0305" in err[0]
    assert cal.main(["check", "--config", str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.yaml" in err[0]


def test_rerun_command_fails_unless_it_chooses_the_records_point(monkeypatch, capsys):
    chosen = {**cal.RECORD["point"]}

    def fake_rule(config, processes, model_run_csv):
        return pd.DataFrame([{**chosen, "stage": "final", "chosen": True}])

    monkeypatch.setattr(cal, "run_rule", fake_rule)
    assert cal.main(["rerun"]) == 0
    chosen["grip_hold_fraction"] = 0.157
    assert cal.main(["rerun"]) == 1
    assert "grip_hold_fraction: 0.157" in capsys.readouterr().err
