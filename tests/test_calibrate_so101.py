"""The SO-101 calibration rule (versions 3 to 8) on a simulated simulator.

``evalsim.sim.calibration_scoring.run_job`` (one MuJoCo job) is replaced by a function of the
knobs with known rates, linear in the knobs, so the rule's steps run in milliseconds: the distance
and acceptance are the written formulas, the design is a resolution-IV half fraction plus the
centre on common trials, the linear model recovers the known rates and the choice their
optimum on the grid, the sigma = 0 floor excludes points, and the final point runs on trials
the design never used, with study_seed + 1; version 5's intercept step and final run give
every seed its own block of trials (distinct poses); version 6 adds version 3's fixed-pad
slope to version 4's model and anchors it on version 5's final run; version 7 designs on
distinct poses and weighs its intercept step by distinct poses; version 8 shifts version 7's
model by the mean residual of its fresh runs. The real runs (MuJoCo) are recorded in
config/README.md.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from evalsim.sim import calibrate_so101 as cal
from evalsim.sim import calibration_model as model
from evalsim.sim import calibration_scoring as scoring
from evalsim.sim import calibration_steps as steps
from evalsim.sim import rollout

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


def test_design_is_a_resolution_iv_half_fraction_and_the_centre():
    x = model.design_coded(4)
    assert x.shape == (9, 4) and (x[0] == 0).all()
    corners = x[1:]
    assert {tuple(r) for r in corners} == {
        (a, b, c, a * b * c) for a, b, c in itertools.product((-1.0, 1.0), repeat=3)
    }
    # main effects orthogonal to each other and to every two-knob interaction
    assert (corners.T @ corners == 8 * np.eye(4)).all()
    for i, j in itertools.combinations(range(4), 2):
        inter = corners[:, i] * corners[:, j]
        assert (corners.T @ inter == 0).all()


def test_linear_fit_is_least_squares():
    rng = np.random.default_rng(3)
    x = model.design_coded(4)
    y = rng.random(len(x))
    beta = model.fit_linear(x, y)
    # reference: the normal equations, solved independently
    xx = np.column_stack([np.ones(len(x)), x])
    np.testing.assert_allclose(beta, np.linalg.solve(xx.T @ xx, xx.T @ y), atol=1e-12)


def test_rule_fits_the_design_chooses_the_optimum_and_evaluates_fresh_trials():
    res = cal.run_rule(CONFIG, version=3, knobs=KNOBS, design_trials=2000, final_trials=500)
    design = res[res["stage"] == "design"]
    assert len(design) == 5  # 2^(3-1) + the centre
    # every design job ran the same trials 0 .. 1999 (common random numbers)
    jobs = [c for c in CALLS if c[2] is not None]
    design_jobs, final_jobs = jobs[: 5 * 4], jobs[5 * 4 :]
    assert {(c[4], c[5]) for c in design_jobs} == {(0, 2000)}
    # the final point: trials no step of the choice saw, every (policy, seed)
    assert {(c[4], c[5]) for c in final_jobs} == {(2000, 2500)}
    assert {(c[2], c[3]) for c in final_jobs} == {("A", 0), ("A", 1), ("B", 0), ("B", 1)}
    final = res[res["chosen"]]
    assert len(final) == 1 and (final["stage"] == "final").all()
    f = final.iloc[0]
    assert f["n_per_policy"] == 2 * 500
    # the known optimum (feasible: its sigma = 0 rate is above the floor)
    np.testing.assert_allclose(_coded(f.to_dict()), OPT, atol=1e-9)
    assert _sigma0(f.to_dict()) >= steps.SIGMA0_MIN_RATE
    predicted = res[res["stage"] == "predicted"].iloc[-1]
    for k in scoring.RATES:  # the model recovers the known (linear) rates
        pol, crit = k.split("_")[1], k.split("_")[0]
        want = _rates(f.to_dict())[pol][0 if crit == "strict" else 1]
        assert predicted[k] == pytest.approx(want, abs=2e-3)
    assert bool(f["accepted"]) == scoring.accepted(f.to_dict(), scoring.targets(CONFIG))
    assert f["accepted"]


def test_the_sigma0_floor_excludes_points(monkeypatch):
    """With the optimum below the sigma = 0 floor, the choice stays above it."""
    monkeypatch.setattr(steps, "SIGMA0_MIN_RATE", 0.965)  # feasible at coded hold >= 0.55
    res = cal.run_rule(CONFIG, version=3, knobs=KNOBS, design_trials=2000, final_trials=100)
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
        cal.run_rule(CONFIG, version=3, knobs=KNOBS, design_trials=20, final_trials=20)


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


def test_version_4_full_factorial_fixed_knob_and_final_trials_after_version_3s():
    res = cal.run_rule(
        CONFIG,
        version=4,
        knobs=KNOBS,
        fixed={"pad_friction_sd": 0.385},
        design_trials=2000,
        final_start=3000,
        final_trials=500,
    )
    design = res[res["stage"] == "design"]
    assert len(design) == 2**3 + 1
    coded = design[[f"x_{k}" for k in KNOBS]].to_numpy()
    assert {tuple(r) for r in coded[1:]} == set(itertools.product((-1.0, 1.0), repeat=3))
    assert (res["pad_friction_sd"] == 0.385).all()  # the held knob at every point
    jobs = [c for c in CALLS if c[2] is not None]
    assert {(c[4], c[5]) for c in jobs[: 9 * 4]} == {(0, 2000)}
    assert {(c[4], c[5]) for c in jobs[9 * 4 :]} == {(3000, 3500)}
    f = res[res["chosen"]].iloc[0].to_dict()
    np.testing.assert_allclose(_coded(f), OPT, atol=1e-9)  # the known optimum
    assert f["accepted"]
    # the written rule: version 4's final trials come after version 3's, the design before
    v3, v4 = cal.RULES[3], cal.RULES[4]
    assert v4["final_start"] >= v3["design_trials"] + v3["final_trials"]
    assert v4["design_trials"] <= v4["final_start"]
    assert not set(v4["knobs"]) & set(v4["fixed"])


def test_final_trials_overlapping_the_design_stop_the_rule():
    with pytest.raises(ValueError, match="fresh"):
        cal.run_rule(CONFIG, version=4, knobs=KNOBS, fixed={}, design_trials=20, final_start=10)
    assert not CALLS


def test_command_line_passes_the_version_and_knobs(monkeypatch, capsys):
    seen = []

    def fake_rule(config, processes, version, **settings):
        seen.append((config, processes, version, settings))
        return pd.DataFrame({"stage": ["final"], "chosen": [True]})

    monkeypatch.setattr(cal, "run_rule", fake_rule)
    monkeypatch.setattr(cal, "load_config", lambda path: {"path": path})
    cal.main(["--config", "c.yaml", "--version", "4", "--processes", "2"])
    cal.main(["--knobs", '{"pad_width_m": [0.026, 0.002]}'])
    assert seen[0] == ({"path": "c.yaml"}, 2, 4, {})
    assert seen[1][1:] == (1, cal.ADOPTED_VERSION, {"knobs": {"pad_width_m": (0.026, 0.002)}})
    assert cal.ADOPTED_VERSION in cal.RULES
    assert "final" in capsys.readouterr().out


def test_distinct_pose_ranges_give_every_seed_its_own_block():
    start, n, n_seeds = 2000, 7, 3
    ranges = scoring.distinct_pose_ranges(start, n, n_seeds)
    # reference: the indices start .. start + 3 n - 1 cut into consecutive slices of n
    every = list(range(start, start + n * n_seeds))
    assert [list(r) for r in ranges] == [every[s * n : (s + 1) * n] for s in range(n_seeds)]
    # the rule's blocks: intercept step 2000-4999, final 5000-7999 for three seeds
    v5 = cal.RULES[5]
    step = scoring.distinct_pose_ranges(v5["intercept_start"], v5["intercept_trials"], 3)
    final = scoring.distinct_pose_ranges(v5["final_start"], v5["final_trials"], 3)
    assert [(r.start, r.stop) for r in step] == [(2000, 3000), (3000, 4000), (4000, 5000)]
    assert [(r.start, r.stop) for r in final] == [(5000, 6000), (6000, 7000), (7000, 8000)]
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


def test_version_5_shifts_version_4s_intercepts_on_distinct_poses(monkeypatch, tmp_path):
    monkeypatch.setattr(scoring, "run_job", fake_run_easy_early)
    rule4 = {**cal.RULES[4], "knobs": KNOBS, "fixed": {"pad_friction_sd": 0.385}}
    monkeypatch.setitem(cal.RULES, 4, {**rule4, "design_trials": EASY_UNTIL})
    settings = {"intercept_start": 2000, "intercept_trials": 1000, "final_start": 4000}
    res = cal.run_rule(CONFIG, version=5, design_csv=None, final_trials=500, **settings)
    jobs = [c for c in CALLS if c[2] is not None]
    assert {(c[4], c[5]) for c in jobs[: 9 * 4]} == {(0, EASY_UNTIL)}  # version 4's design
    # intercept step and final: seed s its own block, the same blocks for both policies
    want_step = {(p, s, 2000 + 1000 * s, 3000 + 1000 * s) for p in "AB" for s in (0, 1)}
    want_final = {(p, s, 4000 + 500 * s, 4500 + 500 * s) for p in "AB" for s in (0, 1)}
    assert {c[2:] for c in jobs[9 * 4 : 9 * 4 + 4]} == want_step
    assert {c[2:] for c in jobs[9 * 4 + 4 :]} == want_final
    assert list(res["stage"]) == ["design"] * 9 + ["intercept", "predicted", "final"]
    step = res[res["stage"] == "intercept"].iloc[0]
    # version 4's model (fitted on the easy trials) is EASY too high at its own point
    for k in ("strict_A", "strict_B"):
        assert step[f"model_{k}"] - step[k] == pytest.approx(EASY, abs=3e-3)
    for k in ("loose_A", "loose_B"):
        assert step[f"model_{k}"] - step[k] == pytest.approx(0.0, abs=2e-3)
    # shifted, the model finds the known optimum; version 4's own choice misses it
    f = res[res["chosen"]].iloc[0].to_dict()
    np.testing.assert_allclose(_coded(f), OPT, atol=1e-9)
    assert f["accepted"] and f["n_per_policy"] == 2 * 500
    x4 = step[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    assert not np.allclose(x4, OPT, atol=0.05)
    # from version 4's design CSV: the same result without rerunning the design
    path = tmp_path / "v4.csv"
    res[res["stage"] == "design"].to_csv(path, index=False)
    CALLS.clear()
    again = cal.run_rule(CONFIG, version=5, design_csv=str(path), final_trials=500, **settings)
    assert not any(c[4] < 2000 for c in CALLS if c[2] is not None)
    cols = ["strict_A", "loose_A", "strict_B", "loose_B", *(f"x_{k}" for k in KNOBS)]
    pd.testing.assert_frame_equal(again[cols], res[cols])


def test_version_5_final_trials_overlapping_the_intercept_step_stop_the_rule():
    with pytest.raises(ValueError, match="fresh"):
        cal.run_rule(
            CONFIG, version=5, intercept_start=2000, intercept_trials=1000, final_start=3500
        )
    assert not CALLS


def test_add_knob_extends_a_model_by_a_linear_knob_without_interactions():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(6, 4))
    for beta in (rng.normal(size=7), rng.normal(size=4)):  # with and without the products
        extended = model.add_knob(beta, 3, -0.0316)
        b = beta
        # reference, written out: the 3-knob model at the first three knobs plus the slope
        want = b[0] + x[:, :3] @ b[1:4] - 0.0316 * x[:, 3]
        if len(b) == 7:
            want += b[4] * x[:, 0] * x[:, 1] + b[5] * x[:, 0] * x[:, 2] + b[6] * x[:, 1] * x[:, 2]
        np.testing.assert_allclose(model.predict(extended, x), want, atol=1e-12)
        assert len(extended) == (11 if len(b) == 7 else 5)
    with pytest.raises(ValueError):
        model.add_knob(np.zeros(6), 3, 0.1)


def test_grid_within_keeps_the_coded_values_inside_the_design_box():
    grid = model.CHOICE_GRID
    # reference: version 6's fixed pad (3.8 mm +- 1.5) inside version 3's box (3.5 +- 1.5 mm),
    # millimetres compared in plain Python
    want = [g for g in grid if 2.0 - 1e-6 <= 3.8 + 1.5 * g <= 5.0 + 1e-6]
    got = model.grid_within(grid, (0.0038, 0.0015), (0.0035, 0.0015))
    np.testing.assert_allclose(got, want)
    assert got.min() == pytest.approx(-1.0) and got.max() == pytest.approx(0.8)
    np.testing.assert_allclose(cal.FIXED_PAD_GRID_V6, want)
    assert cal.KNOBS_V6["fixed_pad_extra_m"] == pytest.approx((0.0038, 0.0015))


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


def _version6_world(monkeypatch):
    """Versions 3-5 in the fake world: version 3's design over the three knobs, version 4's
    over hold and pads with the fixed pad held at its centre (coded 0; the optimum has 0.6),
    both on the easy early trials; version 5 on later distinct poses."""
    monkeypatch.setattr(scoring, "run_job", fake_run_easy_early)
    monkeypatch.setitem(cal.RULES, 3, {**cal.RULES[3], "knobs": KNOBS, "design_trials": 2000})
    two = {k: KNOBS[k] for k in ("grip_hold_fraction", "pad_width_m")}
    rule4 = {**cal.RULES[4], "knobs": two, "fixed": {"fixed_pad_extra_m": 0.0035}}
    monkeypatch.setitem(cal.RULES, 4, {**rule4, "design_trials": EASY_UNTIL})
    rule5 = {"intercept_start": 2000, "intercept_trials": 1000, "final_start": 4000}
    monkeypatch.setitem(cal.RULES, 5, {**cal.RULES[5], **rule5, "final_trials": 500})
    knobs6 = {**two, "fixed_pad_extra_m": (0.0035, 0.0015)}
    return {"knobs": knobs6, "final_start": 6000, "final_trials": 500}


def test_version_6_adds_the_fixed_pad_and_anchors_on_version_5s_final(monkeypatch, tmp_path):
    settings = _version6_world(monkeypatch)
    none = {"design_csv": None, "v3_design_csv": None, "v5_run_csv": None}
    res = cal.run_rule(CONFIG, version=6, **settings, **none)
    assert list(res["stage"]) == ["anchor", "predicted", "final"]
    jobs = [c for c in CALLS if c[2] is not None]
    # the final: seed s its own block of 500 from 6000, the same blocks for both policies
    want_final = {(p, s, 6000 + 500 * s, 6500 + 500 * s) for p in "AB" for s in (0, 1)}
    assert {c[2:] for c in jobs[-4:]} == want_final
    assert all(c[5] <= 5000 for c in jobs[:-4])  # versions 3-5 before it
    anchor = res.iloc[0]
    # the anchor is version 5's final run, at the fixed pad's held value (coded 0)
    assert anchor["x_fixed_pad_extra_m"] == pytest.approx(0.0)
    assert anchor["fixed_pad_extra_m"] == pytest.approx(0.0035)
    assert not np.allclose(_coded(anchor.to_dict()), OPT, atol=0.05)  # version 5 missed it
    # the fixed pad's slopes: the fake world's, per coded unit of 1.5 mm
    known = {"strict_A": 0.01, "loose_A": -0.02, "strict_B": 0.0, "loose_B": -0.008}
    for k, v in known.items():
        assert anchor[f"slope_fixed_pad_extra_m_{k}"] == pytest.approx(v, abs=1e-3)
    assert anchor["slope_fixed_pad_extra_m_cube30"] == pytest.approx(0.0, abs=1e-9)
    # version 4's model (fitted on the easy trials) is EASY too high at version 5's point
    for k in ("strict_A", "strict_B"):
        assert anchor[f"model_{k}"] - anchor[k] == pytest.approx(EASY, abs=3e-3)
    # shifted, with the fourth knob, the choice is the known optimum, and it passes
    f = res[res["chosen"]].iloc[0].to_dict()
    np.testing.assert_allclose(_coded(f), OPT, atol=1e-9)
    assert f["accepted"] and f["n_per_policy"] == 2 * 500
    # from the three runs' CSVs: the same result, nothing of versions 3-5 rerun
    res5 = cal.run_rule(CONFIG, version=5, design_csv=None)
    res3 = cal.run_rule(CONFIG, version=3)
    paths = {k: str(tmp_path / f"{k}.csv") for k in none}
    res5.to_csv(paths["design_csv"], index=False)
    res5.to_csv(paths["v5_run_csv"], index=False)
    res3.to_csv(paths["v3_design_csv"], index=False)
    CALLS.clear()
    again = cal.run_rule(CONFIG, version=6, **settings, **paths)
    assert all(c[4] >= 6000 for c in CALLS if c[2] is not None)
    cols = ["strict_A", "loose_A", "strict_B", "loose_B", *(f"x_{k}" for k in KNOBS)]
    pd.testing.assert_frame_equal(again[cols], res[cols], atol=1e-9)


def test_version_6_final_trials_before_version_5s_end_stop_the_rule():
    with pytest.raises(ValueError, match="fresh"):
        cal.run_rule(CONFIG, version=6, final_start=cal.FINAL_START_V5)
    assert not CALLS
    v5, v6 = cal.RULES[5], cal.RULES[6]
    assert v6["final_start"] == v5["final_start"] + 3 * v5["final_trials"]  # 8000 for 3 seeds


def _version7_settings(monkeypatch) -> dict:
    """Version 7 in the fake world: its three knobs, the design on the easy early trials
    (each seed its own block of 200 from 0), the intercept step and the final after them."""
    monkeypatch.setattr(scoring, "run_job", fake_run_easy_early)
    return {
        "knobs": KNOBS,
        "fixed": {"pad_friction_sd": 0.385},
        "design_start": 0,
        "design_trials": 200,
        "intercept_start": EASY_UNTIL,
        "intercept_trials": 400,
        "final_start": EASY_UNTIL + 1000,
        "final_trials": 500,
    }


def test_version_7_designs_on_distinct_poses_and_weighs_the_intercept_step(monkeypatch):
    settings = _version7_settings(monkeypatch)
    res = cal.run_rule(CONFIG, version=7, **settings)
    stages = list(res["stage"])
    assert stages == ["design"] * 9 + ["predicted", "intercept", "predicted", "final"]
    jobs = [c for c in CALLS if c[2] is not None]
    # the design: the full 2^3 factorial and the centre, seed s its own block of 200 from 0
    want_design = {(p, s, 200 * s, 200 * (s + 1)) for p in "AB" for s in (0, 1)}
    assert {c[2:] for c in jobs[: 9 * 4]} == want_design
    coded = res[res["stage"] == "design"][[f"x_{k}" for k in KNOBS]].to_numpy()
    assert {tuple(r) for r in coded} == {(0.0,) * 3} | set(itertools.product((-1.0, 1.0), repeat=3))
    want_step = {(p, s, 2000 + 400 * s, 2400 + 400 * s) for p in "AB" for s in (0, 1)}
    want_final = {(p, s, 3000 + 500 * s, 3500 + 500 * s) for p in "AB" for s in (0, 1)}
    assert {c[2:] for c in jobs[9 * 4 : 9 * 4 + 4]} == want_step
    assert {c[2:] for c in jobs[9 * 4 + 4 :]} == want_final
    # sigma = 0 streams: every task at every design point and at both choices
    assert sum(c[2] is None for c in CALLS) == len(CONFIG["tasks"]) * (9 + 2)
    # reference: the design rows refitted here (intercept, knobs, products), the first
    # choice's prediction, and the shift by 2/3 of measured minus predicted (400 vs 200 poses)
    design = res[res["stage"] == "design"]
    x = coded
    mm = np.column_stack(
        [np.ones(len(x)), x, x[:, 0] * x[:, 1], x[:, 0] * x[:, 2], x[:, 1] * x[:, 2]]
    )
    step = res[res["stage"] == "intercept"].iloc[0]
    x1 = step[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    row1 = np.concatenate([[1.0], x1, [x1[0] * x1[1], x1[0] * x1[2], x1[1] * x1[2]]])
    second = res[res["stage"] == "predicted"].iloc[1]
    x2 = second[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    row2 = np.concatenate([[1.0], x2, [x2[0] * x2[1], x2[0] * x2[2], x2[1] * x2[2]]])
    for k in scoring.RATES:
        beta = np.linalg.lstsq(mm, design[k].to_numpy(), rcond=None)[0]
        assert step[f"model_{k}"] == pytest.approx(row1 @ beta, abs=1e-9)
        shifted = row2 @ beta + (2.0 / 3.0) * (step[k] - row1 @ beta)
        assert second[k] == pytest.approx(shifted, abs=1e-9)
    # the easy design trials leave the model EASY too high; the step measures it
    for k in ("strict_A", "strict_B"):
        assert step[f"model_{k}"] - step[k] == pytest.approx(EASY, abs=3e-3)
    f = res[res["chosen"]].iloc[0]
    assert f["stage"] == "final" and f["n_per_policy"] == 2 * 500
    assert f["accepted"] == scoring.accepted(f.to_dict(), scoring.targets(CONFIG))


def test_version_7_trial_blocks_must_follow_each_other():
    for bad in ({"intercept_start": 13999}, {"final_start": 16999}):  # two seeds here
        with pytest.raises(ValueError, match="fresh"):
            cal.run_rule(CONFIG, version=7, **bad)
    assert not CALLS
    v7 = cal.RULES[7]
    # the published blocks for three seeds: after the exploration (11000-12499), each after
    # the last
    assert v7["design_start"] == 13000 and v7["design_start"] + 3 * v7["design_trials"] == 14500
    assert v7["intercept_start"] == 15000 and v7["final_start"] == 18000
    assert v7["intercept_start"] + 3 * v7["intercept_trials"] == v7["final_start"]


def test_shift_intercepts_with_a_weight_moves_that_share():
    beta = np.array([0.5, 0.1, -0.2, 0.05])
    x = np.array([0.3, -0.4, 1.0])
    old = 0.5 + 0.1 * 0.3 - 0.2 * -0.4 + 0.05 * 1.0  # written out
    shifted = model.shift_intercepts({"strict_A": beta}, x, {"strict_A": 0.9}, 0.25)
    assert model.predict(shifted["strict_A"], x)[0] == pytest.approx(old + 0.25 * (0.9 - old))
    with pytest.raises(ValueError, match="weight"):
        model.shift_intercepts({"strict_A": beta}, x, {"strict_A": 0.9}, 1.5)


def test_version_8_shifts_version_7s_model_by_its_fresh_runs(monkeypatch, tmp_path):
    settings = _version7_settings(monkeypatch)
    monkeypatch.setitem(cal.RULES, 7, {**cal.RULES[7], **settings})
    run7 = cal.run_rule(CONFIG, version=7)
    path = tmp_path / "v7.csv"
    run7.to_csv(path, index=False)
    CALLS.clear()
    res = cal.run_rule(CONFIG, version=8, v7_run_csv=str(path), final_start=5000, final_trials=600)
    assert list(res["stage"]) == ["anchor", "predicted", "final"]
    jobs = [c for c in CALLS if c[2] is not None]
    # nothing of version 7 rerun; the final: seed s its own block of 600 from 5000
    assert {c[2:] for c in jobs} == {
        (p, s, 5000 + 600 * s, 5600 + 600 * s) for p in "AB" for s in (0, 1)
    }
    # reference: the design refitted here, the two fresh runs' mean residual, weight
    # (800 + 1000) / (800 + 1000 + 400) (fresh against design poses per policy, two seeds)
    design = run7[run7["stage"] == "design"]
    x = design[[f"x_{k}" for k in KNOBS]].to_numpy()

    def rows(x):
        x = np.atleast_2d(x)
        return np.column_stack(
            [np.ones(len(x)), x, x[:, 0] * x[:, 1], x[:, 0] * x[:, 2], x[:, 1] * x[:, 2]]
        )

    fresh = run7[run7["stage"].isin(["intercept", "final"])]
    xf = fresh[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    anchor, chosen = res.iloc[0], res.iloc[1]
    w = 1800 / 2200
    assert anchor["weight"] == pytest.approx(w)
    xc = chosen[[f"x_{k}" for k in KNOBS]].to_numpy(dtype=float)
    for k in scoring.RATES:
        beta = np.linalg.lstsq(rows(x), design[k].to_numpy(), rcond=None)[0]
        resid = np.mean(fresh[k].to_numpy() - rows(xf) @ beta)
        assert anchor[f"shift_{k}"] == pytest.approx(w * resid, abs=1e-9)
        assert chosen[k] == pytest.approx((rows(xc) @ beta)[0] + w * resid, abs=1e-9)
    f = res[res["chosen"]].iloc[0]
    assert f["n_per_policy"] == 2 * 600
    assert f["accepted"] == scoring.accepted(f.to_dict(), scoring.targets(CONFIG))


def test_version_8_final_trials_before_version_7s_end_stop_the_rule():
    with pytest.raises(ValueError, match="fresh"):
        cal.run_rule(CONFIG, version=8, final_start=cal.RULES[7]["final_start"] + 1000)
    assert not CALLS
    v7, v8 = cal.RULES[7], cal.RULES[8]
    assert v8["final_start"] == v7["final_start"] + 3 * v7["final_trials"]  # 21000, 3 seeds


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
    with pytest.raises(ValueError, match="n_knobs"):
        model.add_knob(np.zeros(6), 3, 0.1)


def test_grid_within_keeps_both_edges_of_the_box_and_cuts_below_it():
    grid = model.CHOICE_GRID
    # knob 3.5 +- 1.5 mm inside a box 3.5 +- 1.2 mm (2.3-4.7 mm): coded -0.8 .. +0.8, both
    # edges on the grid and kept; reference in plain Python millimetres
    got = model.grid_within(grid, (0.0035, 0.0015), (0.0035, 0.0012))
    want = [g for g in grid if 2.3 - 1e-6 <= 3.5 + 1.5 * g <= 4.7 + 1e-6]
    np.testing.assert_allclose(got, want)
    assert got.min() == pytest.approx(-0.8) and got.max() == pytest.approx(0.8)
