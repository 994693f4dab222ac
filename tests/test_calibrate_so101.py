"""The SO-101 calibration rule's two stages, on a simulated simulator.

``evalsim.sim.calibrate_so101._run`` (one MuJoCo job) is replaced by a function of the knobs
with known counts, so the rule's steps run in milliseconds: stage 1's choice falls short of
``PASS_MIN``, stage 2 runs on the grid the rule writes around it (without rerunning a point
already scored), the sigma = 0 check runs in order of the pass chance, and the choice is
made over both stages. The real sweep (MuJoCo) is the rule's own run, recorded in
config/README.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalsim.sim import calibrate_so101 as cal

N, SEEDS, CHECK = 60, 3, cal.SIGMA0_TRIALS
# good points succeed in every trial, so each bootstrap count is n and T30 passes for sure
DOC = {"A": {"strict": 59, "loose": 60, "n": 60}, "B": {"strict": 60, "loose": 60, "n": 60}}
CONFIG = {
    "study_seed": 11,
    "alpha": 0.05,
    "scene": {"name": "so101", "so101": {}},
    "simulation": {"trials_per_seed": N, "n_seeds": SEEDS, "document": DOC},
    "tasks": [{"name": "cube30", "cube_mass_kg": 0.1}, {"name": "cube40", "cube_mass_kg": 0.12}],
}
# the point whose counts equal the document's exactly (in every seed), and a second one as
# good that fails the sigma = 0 check
MATCH = {"cube_mass_kg": 0.125, "pad_width_m": 0.034, "fixed_pad_extra_m": 0.004}
MATCH_BUT_FAILS_SIGMA0 = {"cube_mass_kg": 0.125, "pad_width_m": 0.030, "fixed_pad_extra_m": 0.004}
CALLS: list[tuple] = []


def _same(point: dict, ref: dict) -> bool:
    return all(abs(point[k] - v) < 1e-9 for k, v in ref.items())


def fake_run(args) -> pd.DataFrame:
    cfg, task, policy, seed, trials = args
    assert cfg["study_seed"] == CONFIG["study_seed"] + 1  # independent draws
    point = {
        "cube_mass_kg": cfg["tasks"][0]["cube_mass_kg"],
        "pad_width_m": cfg["scene"]["so101"]["pad_width_m"],
        "fixed_pad_extra_m": cfg["scene"]["so101"]["fixed_pad_extra_m"],
    }
    CALLS.append((tuple(sorted(point.items())), task, policy))
    if policy is None:  # sigma = 0 check
        ok = 0.9 if _same(point, MATCH_BUT_FAILS_SIGMA0) else 1.0
        success = np.arange(trials) < round(ok * trials)
        return pd.DataFrame({"seed": 0, "trial": np.arange(trials), "success": success})
    good = _same(point, MATCH) or _same(point, MATCH_BUT_FAILS_SIGMA0)
    # elsewhere: strict 30/60, far below the document's, so T30 never passes
    k_strict = trials if good else trials // 2
    k_loose = trials
    i = np.arange(trials)
    success = i < k_strict
    loose = i < k_loose
    failure = np.where(success, "", np.where(loose, "dropped", "pushed"))
    return pd.DataFrame(
        {
            "policy": policy,
            "seed": seed,
            "trial": i,
            "success": success,
            "success_loose": loose,
            "failure": failure,
        }
    )


@pytest.fixture(autouse=True)
def _simulated(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(cal, "_run", fake_run)


def test_stage2_grid_is_written_around_stage1s_mass():
    grid = cal.stage2_grid({"cube_mass_kg": 0.1, "pad_width_m": 0.03})
    assert grid == {
        "cube_mass_kg": [0.1, 0.125],
        "pad_width_m": [0.030, 0.034],
        "fixed_pad_extra_m": [0.003, 0.004, 0.005],
    }


def test_two_stages_choose_the_admissible_best_over_both():
    res = cal.two_stage(CONFIG, processes=1, n_boot=200)
    s1, s2 = res[res["stage"] == 1], res[res["stage"] == 2]
    assert s1["cube_mass_kg"].tolist() == [0.05, 0.10, 0.15]
    assert (s1["p_pass"] == 0).all()  # strict 30/60 vs 59/60 never passes
    # stage 1 ties at 0: the first in grid order is its choice, and its sigma = 0 check ran
    assert bool(s1["admissible"].iloc[0]) and s1["sigma0_min"].iloc[0] == 1.0
    assert s1["admissible"].iloc[1:].isna().all()
    # stage 2: 2 masses (the choice, 50 g, and 75 g) x 2 pads x 3 thicknesses = 12 points,
    # less the one stage 1 scored (50 g, 30 mm, 5 mm)
    assert len(s2) == 11
    assert sorted(set(s2["cube_mass_kg"])) == [0.05, 0.075]
    # ...the MATCH points lie outside it (stage 1 chose 50 g), so nothing passes here either
    assert (s2["p_pass"] == 0).all()
    assert res["chosen"].sum() == 1 and res.loc[res["chosen"], "stage"].item() == 1


def test_stage2_points_already_scored_are_not_rerun_and_sigma0_order(monkeypatch):
    # stage 1 at 125 g and 100 g (tie at 0: 125 g, first in grid order, is its choice); stage
    # 2 around 125 g contains the point (125 g, 30 mm, 5 mm), already scored in stage 1
    monkeypatch.setattr(
        cal,
        "STAGE1_GRID",
        {"cube_mass_kg": [0.125, 0.1], "pad_width_m": [0.030], "fixed_pad_extra_m": [0.005]},
    )

    res = cal.two_stage(CONFIG, processes=1, n_boot=300)
    s1, s2 = res[res["stage"] == 1], res[res["stage"] == 2]
    assert (s1["p_pass"] == 0).all()
    # the choice of stage 1 is the first in grid order (125 g); stage 2 = 125, 150 g x 2 x 3
    # = 12 points, minus the one already scored (125 g, 30 mm, 5 mm)
    assert len(s2) == 11
    keys = {tuple(round(r[k], 7) for k in MATCH) for _, r in s2.iterrows()}
    assert (0.125, 0.030, 0.005) not in keys
    design_calls = [c for c in CALLS if c[2] is not None]
    assert len(design_calls) == (2 + 11) * 2 * SEEDS  # each point's design ran once
    # the two exact matches pass T30 on every replicate; the one that fails sigma = 0 is
    # checked first (grid order: 30 mm pads before 34 mm), found inadmissible, then MATCH
    m = res.apply(lambda r: _same(r, MATCH), axis=1)
    f = res.apply(lambda r: _same(r, MATCH_BUT_FAILS_SIGMA0), axis=1)
    assert res.loc[m, "p_pass"].item() == 1.0 and res.loc[f, "p_pass"].item() == 1.0
    assert res.loc[f, "admissible"].item() == False  # noqa: E712
    assert res.loc[f, "sigma0_min"].item() == pytest.approx(0.9)
    assert res.loc[m, "chosen"].item() and res["chosen"].sum() == 1
    # points below the choice in p_pass were never checked
    unchecked = res["p_pass"] < 1.0
    assert res.loc[unchecked & (res["stage"] == 2), "sigma0_min"].isna().all()


def test_no_stage2_when_stage1_reaches_pass_min(monkeypatch):
    monkeypatch.setattr(
        cal,
        "STAGE1_GRID",
        {"cube_mass_kg": [0.125], "pad_width_m": [0.034], "fixed_pad_extra_m": [0.004]},
    )
    res = cal.two_stage(CONFIG, processes=1, n_boot=100)
    assert res["stage"].tolist() == [1] and res["chosen"].item()
    assert all(c[0] == tuple(sorted(MATCH.items())) for c in CALLS)
