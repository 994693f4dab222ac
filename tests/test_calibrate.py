"""The calibration rule's choice, ties and refinement rounds on a simulated simulator.

``evalsim.sim.calibrate._run`` (one MuJoCo job) is replaced by a function of the scene
parameters with known rates, so the rule's steps 2a-6 run in milliseconds on grids with
several admissible points, a tie and refinement rounds. The expected scores are computed here
from SciPy's binomial pmf, not from the module.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from evalsim.sim import calibrate

TRIALS, SEEDS, CHECK = 300, 3, 200
CONFIG = {
    "study_seed": 7,
    "scene": {"jaw_opening_m": 0.0565, "pad_width_m": 0.05},
    "simulation": {"trials_per_seed": TRIALS, "n_seeds": SEEDS},
    "tasks": [{"name": "cube30"}, {"name": "cube40"}],
}
CENTRE = {"A": 0.7335, "B": 0.872}  # inside both document intervals, with margin
BEST = {"jaw_opening_m": 0.0595, "pad_width_m": 0.045}


def fake_rates(scene: dict) -> dict[str, float]:
    """Rates fall off linearly from CENTRE with the distance from BEST."""
    penalty = 20 * abs(scene["jaw_opening_m"] - BEST["jaw_opening_m"]) + 4 * abs(
        scene["pad_width_m"] - BEST["pad_width_m"]
    )
    return {pol: r - penalty for pol, r in CENTRE.items()}


def fake_run(args) -> pd.DataFrame:
    cfg, task, policy, seed, trials = args
    scene = cfg["scene"]
    assert cfg["study_seed"] == CONFIG["study_seed"] + 1  # calibration draws, not the pools'
    if policy is None:  # sigma = 0 check: exactly 99% when the jaws open >= 58 mm
        k = round((0.99 if scene["jaw_opening_m"] >= 0.058 else 0.5) * trials)
        if task == "cube40" and scene["pad_width_m"] > 0.0475:
            k = round(0.985 * trials)  # the second task fails with the widest pads
    else:
        assert task == "cube30"  # the design runs on the first task
        k = round(fake_rates(scene)[policy] * trials)
    success = np.arange(trials) < k
    return pd.DataFrame({"seed": seed, "success": success, "success_loose": success})


@pytest.fixture(autouse=True)
def _simulated(monkeypatch):
    monkeypatch.setattr(calibrate, "_run", fake_run)


def brute_score(scene: dict) -> float:
    p = 1.0
    for t in calibrate.DOCUMENT_TARGETS:
        rate = round(fake_rates(scene)[t.policy] * TRIALS) / TRIALS
        for n in (TRIALS, SEEDS * TRIALS):
            p *= sum(binom.pmf(k, n, rate) for k in range(n + 1) if t.low <= k / n <= t.high)
    return -math.log10(p)


def test_sweep_chooses_the_best_admissible_point_and_breaks_ties_in_grid_order():
    grid = {"jaw_opening_m": [0.056, 0.062, 0.059, 0.060], "pad_width_m": [0.045]}
    res = calibrate.sweep(CONFIG, grid)
    assert res["jaw_opening_m"].tolist() == grid["jaw_opening_m"]  # grid order kept
    # 0.056 fails sigma = 0 on both tasks; exactly 0.99 is admissible (the bound is >=)
    assert res["success_sigma0"].tolist() == [0.5, 0.99, 0.99, 0.99]
    assert res["admissible"].tolist() == [False, True, True, True]
    for r in res.itertuples():
        scene = {"jaw_opening_m": r.jaw_opening_m, "pad_width_m": r.pad_width_m}
        assert r.score == pytest.approx(brute_score(scene), rel=1e-9)
        assert r.p_inside == pytest.approx(10**-r.score, rel=1e-12)
        assert r.success_A == round(fake_rates(scene)["A"] * TRIALS) / TRIALS
        assert (r.trials_per_seed, r.n_seeds) == (TRIALS, SEEDS)
    # 0.059 and 0.060 are equally far from the best 0.0595: a tie, the first in grid order wins
    assert res.loc[2, "score"] == res.loc[3, "score"] < res.loc[1, "score"]
    assert res["chosen"].tolist() == [False, False, True, False]


def test_the_worst_task_decides_admissibility():
    grid = {"jaw_opening_m": [0.0595], "pad_width_m": [0.045, 0.05]}
    res = calibrate.sweep(CONFIG, grid)
    assert res["success_sigma0_cube30"].tolist() == [0.99, 0.99]
    assert res["success_sigma0_cube40"].tolist() == [0.99, 0.985]
    assert res["success_sigma0"].tolist() == [0.99, 0.985]
    assert res["admissible"].tolist() == [True, False]
    assert res["chosen"].tolist() == [True, False]
    with pytest.raises(ValueError, match=r"no grid point is admissible.*0\.985.*>= 0\.99"):
        calibrate.sweep(CONFIG, {"jaw_opening_m": [0.0595], "pad_width_m": [0.05]})


def test_two_stage_refines_until_the_choice_is_inside_the_grid():
    grid = {"jaw_opening_m": [0.056, 0.059, 0.062], "pad_width_m": [0.02, 0.04]}
    stage1, stage2, chosen = calibrate.two_stage(CONFIG, grid=grid)
    best1 = stage1.loc[stage1["chosen"]].iloc[0]
    assert (best1.jaw_opening_m, best1.pad_width_m) == (0.059, 0.04)
    # round 1 around (0.059, 0.04): the best pad 0.045 is on the grid's edge -> round 2
    r1 = stage2[stage2["round"] == 1]
    assert sorted(set(r1["pad_width_m"])) == [0.035, 0.0375, 0.04, 0.0425, 0.045]
    assert sorted(set(r1["jaw_opening_m"])) == [0.058, 0.0585, 0.059, 0.0595, 0.06]
    r2 = stage2[stage2["round"] == 2]
    assert sorted(set(r2["pad_width_m"])) == [0.04, 0.0425, 0.045, 0.0475, 0.05]
    assert sorted(set(r2["jaw_opening_m"])) == [0.0585, 0.059, 0.0595, 0.06, 0.0605]
    assert set(stage2["round"]) == {1, 2}  # round 2's choice is interior: no round 3
    assert chosen == pytest.approx(BEST)
    assert stage2["chosen"].sum() == 1
    last = stage2.loc[stage2["chosen"]].iloc[0]
    assert last["round"] == 2 and last.score == pytest.approx(brute_score(BEST))
    # the widest pads fail the second task's sigma = 0 check although their rates tie
    assert not r2.loc[r2["pad_width_m"] == 0.05, "admissible"].any()


def test_refinement_stops_after_the_last_round(monkeypatch):
    monkeypatch.setattr(calibrate, "MAX_REFINE_ROUNDS", 1)
    grid = {"jaw_opening_m": [0.056, 0.059, 0.062], "pad_width_m": [0.02, 0.04]}
    _, stage2, chosen = calibrate.two_stage(CONFIG, grid=grid)
    assert set(stage2["round"]) == {1}
    assert chosen == pytest.approx({"jaw_opening_m": 0.0595, "pad_width_m": 0.045})
