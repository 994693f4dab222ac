"""The SO-101 calibration rule on a simulated simulator.

``evalsim.sim.calibrate_so101._run`` (one MuJoCo job) is replaced by a function of the knobs
with known rates, so the rule's steps run in milliseconds: the distance and acceptance are
the written formulas, the coordinate search uses the same trials at every point and walks to
the known optimum, the sigma = 0 check skips an inadmissible point, and the final point is
rerun on more trials with study_seed + 1. The real run (MuJoCo) is recorded in
config/README.md.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalsim.sim import calibrate_so101 as cal

DOC = {"A": {"strict": 221, "loose": 259, "n": 300}, "B": {"strict": 263, "loose": 288, "n": 300}}
CONFIG = {
    "study_seed": 11,
    "alpha": 0.05,
    "scene": {"name": "so101", "so101": {}},
    "simulation": {"trials_per_seed": 300, "n_seeds": 2, "document": DOC},
    "tasks": [{"name": "cube30", "cube_mass_kg": 0.05}, {"name": "cube40", "cube_mass_kg": 0.12}],
}
KNOBS = {"grip_hold_fraction": (0.2, 0.04, 0.0, 1.0), "pad_width_m": (0.030, 0.004, 0.01, 0.05)}
OPT = {"grip_hold_fraction": 0.12, "pad_width_m": 0.026}
CALLS: list[tuple] = []


def _rates(point: dict) -> dict[str, float]:
    """Known rates: the lesson's at OPT, drifting linearly away from it."""
    dh = point["grip_hold_fraction"] - OPT["grip_hold_fraction"]
    dw = point["pad_width_m"] - OPT["pad_width_m"]
    return {
        "A": (221 / 300 + 0.5 * dh + 3.0 * dw, 259 / 300),
        "B": (263 / 300 + 0.2 * dh - 1.0 * dw, 288 / 300),
    }


def fake_run(args) -> pd.DataFrame:
    cfg, task, policy, seed, trials = args
    assert cfg["study_seed"] == CONFIG["study_seed"] + 1  # independent draws
    point = {k: cfg["scene"]["so101"][k] for k in KNOBS}
    CALLS.append((tuple(sorted(point.items())), task, policy, seed, trials))
    i = np.arange(trials)
    if policy is None:  # sigma = 0 check: the optimum's neighbour at lower hold fails it
        ok = 0.9 if point["grip_hold_fraction"] < 0.1 else 1.0
        return pd.DataFrame({"seed": 0, "trial": i, "success": i < round(ok * trials)})
    strict, loose = _rates(point)[policy]
    # deterministic counts: trial i succeeds when its (fixed) uniform is below the rate
    u = (i * 0.6180339887 + 0.1 * seed) % 1.0
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
    monkeypatch.setattr(cal, "_run", fake_run)


def test_targets_are_the_lessons_rates_with_their_se_and_the_gap():
    tgt = cal.targets(CONFIG)
    assert tgt["strict_A"] == pytest.approx(
        (221 / 300, math.sqrt(0.73667 * 0.26333 / 300)), rel=1e-4
    )
    assert tgt["loose_B"][0] == pytest.approx(0.96)
    assert tgt["gap"] == pytest.approx(((263 - 221) / 300, 0.015))
    row = {k: v for k, (v, _) in tgt.items()}
    assert cal.distance(row, tgt) == 0.0 and cal.accepted(row, tgt)
    # one SE off on one loose rate: distance 1, still accepted; a little more: rejected
    se = tgt["loose_A"][1]
    row1 = {**row, "loose_A": row["loose_A"] + se}
    assert cal.distance(row1, tgt) == pytest.approx(1.0)
    assert cal.accepted(row1, tgt)
    assert not cal.accepted({**row, "loose_A": row["loose_A"] + 1.01 * se}, tgt)
    assert not cal.accepted({**row, "gap": row["gap"] + 0.016}, tgt)


def test_rule_searches_with_common_draws_checks_sigma0_and_reruns_the_choice():
    res = cal.run_rule(CONFIG, knobs=KNOBS, max_points=30, search_trials=200, final_trials=500)
    search = res[res["stage"] == "search"]
    best = search.loc[search["distance"].idxmin()]
    # the search reaches the known optimum (within its smallest step)
    assert best["grip_hold_fraction"] == pytest.approx(OPT["grip_hold_fraction"], abs=0.011)
    assert best["pad_width_m"] == pytest.approx(OPT["pad_width_m"], abs=0.0011)
    # no point scored twice; every search job ran the same trials (common random numbers)
    keys = [tuple(sorted((k, round(r[k], 7)) for k in KNOBS)) for _, r in search.iterrows()]
    assert len(set(keys)) == len(keys)
    policy_jobs = [c for c in CALLS if c[2] is not None]
    assert {c[4] for c in policy_jobs[:-4]} == {200}
    assert {(c[2], c[3]) for c in policy_jobs} == {("A", 0), ("A", 1), ("B", 0), ("B", 1)}
    # the final point: one row, chosen, rerun on 500 trials per (policy, seed), sigma0 >= 95%
    final = res[res["chosen"]]
    assert len(final) == 1 and (final["stage"] == "final").all()
    f = final.iloc[0]
    assert f["n_per_policy"] == 2 * 500 and f["sigma0_min"] >= cal.SIGMA0_MIN_RATE
    assert f["grip_hold_fraction"] >= 0.1  # an inadmissible point is never chosen
    assert bool(f["accepted"]) == cal.accepted(f.to_dict(), cal.targets(CONFIG))


def test_no_admissible_point_stops_the_rule(monkeypatch):
    def all_fail(args):
        cfg, task, policy, seed, trials = args
        if policy is None:
            return pd.DataFrame({"seed": 0, "trial": np.arange(trials), "success": False})
        return fake_run(args)

    monkeypatch.setattr(cal, "_run", all_fail)
    with pytest.raises(ValueError, match="admissible"):
        cal.run_rule(CONFIG, knobs=KNOBS, max_points=3, search_trials=20, final_trials=20)
