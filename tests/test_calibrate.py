"""The calibration rule's choice, ties and refinement rounds on a simulated simulator.

``evalsim.sim.calibrate._run`` (one MuJoCo job) is replaced by a function of the scene
parameters with known rates, so the rule's steps 2a-6 run in milliseconds on grids with
several admissible points, a tie and refinement rounds. The expected scores are computed here
from SciPy's binomial pmf, not from the module.
"""

from __future__ import annotations

import json
import math
import re

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
REAL_RUN = calibrate._run  # the MuJoCo job, before the fixture below replaces it


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


# ----------------------------------------------------------------------------- the real job
def test_run_is_one_job_of_the_real_simulator(repo):
    """``_run`` on a few MuJoCo trials: the sigma = 0 check and a policy's seed."""
    from evalsim.config import load_config
    from evalsim.sim.rollout import SWEEP_POLICY, run_policy_trials, run_trials

    cfg = load_config(repo / "config" / "smoke.yaml")
    cfg["scene"]["name"] = "gripper_table"  # the fast scene: a few trials take ~0.1 s
    cfg = calibrate.calibration_config(cfg, {})
    second = cfg["tasks"][1]["name"]
    check = REAL_RUN((cfg, second, None, 0, 3))
    # the sigma sweep's stream at sigma = 0: seed 0, trials 0.., no bias, perfect aim
    pd.testing.assert_frame_equal(check, run_trials(cfg, second, SWEEP_POLICY, 0.0, 0, 0, 3))
    assert check["task"].tolist() == [second] * 3
    assert check["policy"].tolist() == [SWEEP_POLICY] * 3
    assert check["trial"].tolist() == [0, 1, 2] and (check["seed"] == 0).all()
    assert (check["sigma_mm"] == 0).all()
    assert (check[["bias_x_mm", "bias_y_mm", "aim_error_x_mm", "aim_error_y_mm"]] == 0).all().all()
    job = REAL_RUN((cfg, second, "A", 1, 3))
    pd.testing.assert_frame_equal(job, run_policy_trials(cfg, second, "A", 1, 0, 3))
    sigma_a = {p["name"]: p["sigma_mm"] for p in cfg["policies"]}["A"]
    assert job["policy"].tolist() == ["A"] * 3 and (job["sigma_mm"] == sigma_a).all()
    assert job["trial"].tolist() == [0, 1, 2] and (job["seed"] == 1).all()
    assert job["task"].tolist() == [second] * 3


# ----------------------------------------------------------------------------- processes
class FakePool:
    """Stands in for ProcessPoolExecutor: records the pools made, maps in this process."""

    made: list = []
    maps: list = []

    def __init__(self, max_workers):
        FakePool.made.append(max_workers)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, jobs):
        FakePool.maps.append(len(jobs))
        return map(fn, jobs)


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.setattr(FakePool, "made", [])
    monkeypatch.setattr(FakePool, "maps", [])
    monkeypatch.setattr(calibrate, "ProcessPoolExecutor", FakePool)
    return FakePool


def test_processes_decide_the_pool_and_not_the_rows(pool):
    grid = {"jaw_opening_m": [0.059, 0.06], "pad_width_m": [0.045]}
    serial = calibrate.sweep(CONFIG, grid)  # processes = 1 by default: no pool
    assert pool.made == [] and pool.maps == []
    jobs = 2 * (2 * SEEDS + 2)
    for processes in (2, 3):
        res = calibrate.sweep(CONFIG, grid, processes=processes)
        pd.testing.assert_frame_equal(res, serial)
        assert pool.made[-1] == processes and pool.maps[-1] == jobs
    assert len(pool.made) == 2
    grid = {"jaw_opening_m": [0.056, 0.059, 0.062], "pad_width_m": [0.02, 0.04]}
    calibrate.two_stage(CONFIG, grid=grid)  # default: one process
    assert len(pool.made) == 2
    calibrate.two_stage(CONFIG, processes=3, grid=grid)  # stage 1 and two rounds
    assert pool.made[2:] == [3, 3, 3]


def test_sweep_scores_against_the_given_targets():
    targets = (calibrate.Target("A", 0.5, 0.7), calibrate.Target("B", 0.6, 0.8))
    grid = {"jaw_opening_m": [0.0595], "pad_width_m": [0.045]}
    (row,) = calibrate.sweep(CONFIG, grid, targets=targets).itertuples()
    p = 1.0
    for t in targets:
        rate = round(CENTRE[t.policy] * TRIALS) / TRIALS
        for n in (TRIALS, SEEDS * TRIALS):
            p *= sum(binom.pmf(k, n, rate) for k in range(n + 1) if t.low <= k / n <= t.high)
    assert row.score == pytest.approx(-math.log10(p), rel=1e-9)


def test_helpers_at_their_edges():
    import warnings

    # two seeds: the pooled term counts (2 x 300 trials)
    t = calibrate.DOCUMENT_TARGETS
    rates = {"A": 0.7335, "B": 0.872}

    def inside(rate, n, lo, hi):
        return sum(binom.pmf(k, n, rate) for k in range(n + 1) if lo <= k / n <= hi)

    p = 1.0
    for x in t:
        p *= inside(rates[x.policy], 300, x.low, x.high) * inside(
            rates[x.policy], 600, x.low, x.high
        )
    assert calibrate.score(rates, 300, 2) == pytest.approx(-math.log10(p), rel=1e-9)
    # k_lo = 1 on the upper-tail branch: P(K = 1) of Bin(2, 0.9) = 0.18
    assert calibrate.prob_inside(0.9, 2, 0.5, 0.5) == pytest.approx(2 * 0.9 * 0.1, rel=1e-12)
    # the refinement grid is rounded to the micrometre
    assert calibrate.refine_grid({"a": 0.1234567}, {"a": 0.001})["a"] == [
        0.121457,
        0.122457,
        0.123457,
        0.124457,
        0.125457,
    ]
    # a constant list has no correlation (NaN, without a warning); std 1 is not constant
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = pd.Series([1, 0, 1, 1])
        assert math.isnan(calibrate.paired_correlation(x, pd.Series([1, 1, 1, 1])))
        assert math.isnan(calibrate.paired_correlation(pd.Series([0, 0, 0, 0]), x))
    two = pd.Series([0, 2, 0, 2])  # population std exactly 1
    assert two.to_numpy(dtype=float).std() == 1.0
    assert calibrate.paired_correlation(two, pd.Series([0, 1, 0, 1])) == pytest.approx(1.0)
    assert calibrate.paired_correlation(pd.Series([1, 0, 1, 0]), two) == pytest.approx(-1.0)


# ----------------------------------------------------------------------------- command line
def _csv_matches(path, ref: pd.DataFrame) -> None:
    """The written CSV holds ``ref``'s columns (no index) and its floats to 6 digits."""
    df = pd.read_csv(path)
    assert df.columns.tolist() == ref.columns.tolist()
    for col in ref.columns:
        if ref[col].dtype == float:
            want = [float(f"{v:.6g}") for v in ref[col]]
            assert df[col].tolist() == pytest.approx(want, rel=1e-12, nan_ok=True), col
        else:
            assert df[col].tolist() == ref[col].tolist(), col


def test_main_defaults_print_and_write_the_sweep(tmp_path, capsys, monkeypatch, repo, pool):
    """``--config`` defaults to config/config.yaml and ``--processes`` to 2."""
    import logging
    import re
    import time

    from evalsim.config import load_config

    full = load_config(repo / "config" / "config.yaml")
    monkeypatch.setitem(SEEN_SEED, "base", full["study_seed"])
    monkeypatch.setitem(CONFIG, "tasks", full["tasks"])
    monkeypatch.chdir(repo)
    monkeypatch.setattr(logging.root, "handlers", [])  # as in a fresh interpreter
    monkeypatch.setattr(logging.root, "level", logging.DEBUG)
    grid = {"jaw_opening_m": [0.056, 0.0595], "pad_width_m": [0.045]}
    out = tmp_path / "sweep.csv"
    t0 = time.perf_counter()
    calibrate.main(["--grid", json.dumps(grid), "--single", "--out", str(out)])
    elapsed = time.perf_counter() - t0
    assert pool.made == [2]
    ref = calibrate.sweep(full, grid)
    chosen = ref.loc[ref["chosen"]].iloc[0].to_dict()
    text, err = capsys.readouterr()
    table, last = text.rstrip("\n").rsplit("\n", 1)
    assert table == ref.round(4).to_string(index=False)
    m = re.fullmatch(r"chosen: (.*)  \((\d+) s\)", last)
    assert m and m.group(1) == str(chosen)
    assert 0 <= int(m.group(2)) <= elapsed + 1
    _csv_matches(out, ref)
    # the progress log: bare messages on stderr; other loggers stay at WARNING
    jobs = 2 * (2 * full["simulation"]["n_seeds"] + len(full["tasks"]))
    lines = err.splitlines()
    assert lines and all(line.startswith("calibration: ") for line in lines)
    assert lines[-1].startswith(f"calibration: {jobs}/{jobs} jobs (2 points), ")
    assert logging.root.level == logging.WARNING


def test_main_two_stages_write_both(tmp_path, capsys, monkeypatch, repo, pool):
    from evalsim.config import load_config

    path = repo / "config" / "smoke.yaml"
    smoke = load_config(path)
    monkeypatch.setitem(SEEN_SEED, "base", smoke["study_seed"])
    monkeypatch.setitem(CONFIG, "tasks", smoke["tasks"])
    grid = {"jaw_opening_m": [0.056, 0.059], "pad_width_m": [0.045]}
    out = tmp_path / "sweep.csv"
    args = ["--config", str(path), "--grid", json.dumps(grid), "--processes", "3"]
    calibrate.main([*args, "--out", str(out)])
    stage1, stage2, chosen = calibrate.two_stage(smoke, grid=grid)
    ref = pd.concat([stage1.assign(stage=1), stage2.assign(stage=2)], ignore_index=True)
    assert pool.made == [3] * (1 + stage2["round"].max())
    text = capsys.readouterr().out
    assert text.startswith(ref.round(4).to_string(index=False) + "\nchosen: " + str(chosen))
    _csv_matches(out, ref)


def test_main_usage_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        calibrate.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    first, rest = calibrate.__doc__.split("\n", 1)
    assert "\n\n" + first + "\n\n" in out  # the first line of the docstring, alone
    assert rest.split("\n")[2] not in out
    for option in ("--grid", "--single", "--out"):
        # documented: help on the same line, or on the next line at the help column
        pattern = rf"^ +{option}( [A-Z_]+)?(  +\S| *\n {{20,}}[^ -])"
        assert re.search(pattern, out, flags=re.M), option
