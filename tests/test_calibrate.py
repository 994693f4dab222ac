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
WIDE_PADS_FAIL_ABOVE = 0.0475  # pads wider than this fail the second task's sigma = 0 check


def fake_rates(scene: dict) -> dict[str, float]:
    """Rates fall off linearly from CENTRE with the distance from BEST."""
    penalty = 20 * abs(scene["jaw_opening_m"] - BEST["jaw_opening_m"]) + 4 * abs(
        scene["pad_width_m"] - BEST["pad_width_m"]
    )
    return {pol: r - penalty for pol, r in CENTRE.items()}


def fake_run(args) -> pd.DataFrame:
    cfg, task, policy, seed, trials = args
    scene = cfg["scene"]
    assert cfg["study_seed"] == SEEN_SEED["base"] + 1  # calibration draws, not the pools'
    if policy is None:  # sigma = 0 check: exactly 99% when the jaws open >= 58 mm
        assert seed == 0
        k = round((0.99 if scene["jaw_opening_m"] >= 0.058 else 0.5) * trials)
        if task == "cube40" and scene["pad_width_m"] > WIDE_PADS_FAIL_ABOVE:
            k = round(0.985 * trials)  # the second task fails with the widest pads
        success = np.arange(trials) < k
        return pd.DataFrame({"seed": seed, "success": success, "success_loose": success})
    assert task == CONFIG["tasks"][0]["name"]  # the design runs on the first task
    # seed 0 has 3 more successes than the pooled rate, seed 2 three fewer (pooled unchanged)
    k = round(fake_rates(scene)[policy] * trials) + {0: 3, 1: 0, 2: -3}[seed]
    success = np.arange(trials) < k
    loose = np.arange(trials) < k + 10
    return pd.DataFrame({"seed": seed, "success": success, "success_loose": loose})


SEEN_SEED = {"base": CONFIG["study_seed"]}


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
        k_a = round(fake_rates(scene)["A"] * TRIALS)
        assert r.success_A == k_a / TRIALS
        assert r.success_seed0_A == (k_a + 3) / TRIALS
        assert r.success_loose_A == (k_a + 10) / TRIALS
        a = np.concatenate([np.arange(TRIALS) < k_a + d for d in (3, 0, -3)])
        k_b = round(fake_rates(scene)["B"] * TRIALS)
        b = np.concatenate([np.arange(TRIALS) < k_b + d for d in (3, 0, -3)])
        assert r.rho_strict == pytest.approx(np.corrcoef(a, b)[0, 1], rel=1e-12)
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
    assert stage1[["jaw_opening_m", "pad_width_m"]].values.tolist() == [
        [j, p] for j in grid["jaw_opening_m"] for p in grid["pad_width_m"]
    ]
    assert stage2.index.tolist() == list(range(len(stage2)))
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


def test_three_rounds_keep_only_the_last_choice(monkeypatch):
    import sys

    here = sys.modules[__name__]
    monkeypatch.setattr(here, "BEST", {"jaw_opening_m": 0.0595, "pad_width_m": 0.05})
    monkeypatch.setattr(here, "WIDE_PADS_FAIL_ABOVE", 1.0)
    grid = {"jaw_opening_m": [0.059], "pad_width_m": [0.02, 0.04]}
    _, stage2, chosen = calibrate.two_stage(CONFIG, grid=grid)
    # round 1 around 0.04 picks 0.045 (edge), round 2 around 0.045 picks 0.05 (edge),
    # round 3 around 0.05 picks 0.05 (inside): three rounds, one choice
    assert sorted(set(stage2["round"])) == [1, 2, 3]
    assert chosen == pytest.approx({"jaw_opening_m": 0.0595, "pad_width_m": 0.05})
    assert stage2.loc[stage2["chosen"], "round"].tolist() == [3]


def test_sweep_logs_its_progress(caplog):
    import logging

    grid = {"jaw_opening_m": [0.059, 0.06], "pad_width_m": [0.045]}
    with caplog.at_level(logging.INFO, logger="evalsim.sim.calibrate"):
        calibrate.sweep(CONFIG, grid)
    jobs = 2 * (2 * SEEDS + 2)  # points x (policies x seeds + sigma = 0 check per task)
    msgs = [r.getMessage() for r in caplog.records]
    assert [m.split(",")[0] for m in msgs] == [
        "calibration: 10/16 jobs (2 points)",
        f"calibration: {jobs}/{jobs} jobs (2 points)",
    ]
    assert all(m.endswith(" s") for m in msgs)
    assert all(0 <= float(m.split(", ")[1][:-2]) < 600 for m in msgs)


def test_score_prob_inside_and_grid_helpers():
    t = calibrate.DOCUMENT_TARGETS
    rates = {"A": 0.7335, "B": 0.872}

    def inside(rate, n, lo, hi):
        return sum(binom.pmf(k, n, rate) for k in range(n + 1) if lo <= k / n <= hi)

    one_seed = inside(0.7335, 300, t[0].low, t[0].high) * inside(0.872, 300, t[1].low, t[1].high)
    assert calibrate.score(rates, 300, 1) == pytest.approx(-math.log10(one_seed), rel=1e-9)
    assert calibrate.score({"A": 1.0, "B": 0.872}, 300, 2) == math.inf
    # the lower tail branch with k_lo = 0: P(K <= 5) for Bin(10, 0.9)
    assert calibrate.prob_inside(0.9, 10, 0.0, 0.5) == pytest.approx(binom.cdf(5, 10, 0.9))
    for bad in [(0.5, 0, 0.1, 0.9), (1.5, 10, 0.1, 0.9), (0.5, 10, 0.9, 0.1)]:
        with pytest.raises(ValueError, match=r"^need n >= 1, 0 <= rate <= 1 and low <= high"):
            calibrate.prob_inside(*bad)
    assert calibrate.refine_grid({"a": 0.06, "b": 1.0}, {"a": 0.0005, "b": 0.25}) == {
        "a": [0.059, 0.0595, 0.06, 0.0605, 0.061],
        "b": [0.5, 0.75, 1.0, 1.25, 1.5],
    }
    assert not calibrate.on_edge({"a": 1.0}, {"a": [1.0]})  # a single value has no edge
    assert calibrate.on_edge({"a": 2.0}, {"a": [1.0, 2.0]})
    assert not calibrate.on_edge({"a": 2.0, "b": 5}, {"a": [1.0, 2.0, 3.0], "b": [5]})
    x = pd.Series([1, 0, 1, 1])
    assert math.isnan(calibrate.paired_correlation(x, pd.Series([1, 1, 1, 1])))
    assert math.isnan(calibrate.paired_correlation(pd.Series([0, 0, 0, 0]), x))
    assert calibrate.paired_correlation(x, x) == pytest.approx(1.0)


def test_main_runs_the_rule_and_writes_the_sweep(tmp_path, capsys, monkeypatch, repo):
    from evalsim.config import load_config

    path = repo / "config" / "smoke.yaml"
    smoke = load_config(path)
    monkeypatch.setitem(SEEN_SEED, "base", smoke["study_seed"])
    monkeypatch.setitem(CONFIG, "tasks", smoke["tasks"])
    out = tmp_path / "sweep.csv"
    grid = '{"jaw_opening_m": [0.056, 0.059], "pad_width_m": [0.045]}'
    args = ["--config", str(path), "--grid", grid, "--processes", "1"]
    calibrate.main([*args, "--single", "--out", str(out)])
    text = capsys.readouterr().out
    assert "chosen: {'jaw_opening_m': 0.059, 'pad_width_m': 0.045," in text
    df = pd.read_csv(out)
    assert df["jaw_opening_m"].tolist() == [0.056, 0.059] and df["chosen"].tolist() == [0, 1]
    assert "stage" not in df.columns
    calibrate.main([*args, "--out", str(out)])
    text = capsys.readouterr().out
    assert "chosen: {'jaw_opening_m': 0.0595, 'pad_width_m': 0.045}" in text
    df = pd.read_csv(out)
    assert sorted(set(df["stage"])) == [1, 2] and (df["stage"] == 1).sum() == 2
    assert df.loc[df["chosen"] == 1, "stage"].tolist() == [1, 2]  # one choice per stage
