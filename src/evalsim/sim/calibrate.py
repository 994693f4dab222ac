"""Calibration of the scene by a documented sweep rule (not by hand).

Rule
----
1. Take the study config. Replace its ``study_seed`` by ``study_seed + 1`` so the calibration
   draws (cube poses, aim noise, seed biases) are independent of the pools it calibrates.
2. For every point of a grid over scene parameters (default: jaw opening x the arm's reach),
   run ``trials`` trials of each policy on the first task, training seed 0.
2a. Feasibility: at every point also run the fixed sigma = 0 check -- the first
   :data:`SIGMA0_TRIALS` (200) trials of the sigma sweep's sigma = 0 stream (first task, seed 0,
   no seed bias: perfect aim) on the same calibration draws. The point is *admissible* only if
   at least :data:`SIGMA0_MIN_RATE` (99%) of them succeed (strict): issue 3's test "sigma = 0
   succeeds in >= 99% of 200 trials" is a hard constraint, not a term of the score. The check
   does not depend on ``trials``, so a point's verdict is the same in every round.
3. Score each point by the squared distance of its rates to the targets, in units of each
   target's half-width::

       score = sum_i w_i * ((rate_i - center_i) / half_width_i) ** 2

   with the strict targets of document 000 part A given as Wilson intervals (A: [0.684,
   0.783], B: [0.835, 0.909]; weight 1) and the loose ("jaw closed on cube") rates as
   points (A: 0.863, B: 0.960; half-width 0.04, weight 0.25).
4. Choose the admissible grid point with the smallest score; ties go to the first in grid
   order. If no point is admissible the rule stops with an error (it never relaxes the
   constraint). If the chosen rates miss the targets, they are reported as they come.
5. Refine: around the stage-1 choice, sweep every parameter of :data:`REFINE` over
   ``center + k * step`` for k = -2..2 (jaw opening in 0.5 mm steps, reach in 1 mm steps),
   all combinations, with twice the trials, and choose again (admissible points, same
   score). The center is admissible, so every round has a choice.
6. If that choice lies on the edge of the refinement grid in any parameter, re-center the
   refinement grid on it and repeat step 5 (at most :data:`MAX_REFINE_ROUNDS` rounds).

The two parameters act on different failures. The jaw opening sets the aim tolerance across
the closing direction: failures that grow with sigma. The arm's reach (from a shoulder
``arm_shoulder_z_m`` above the base, see :mod:`evalsim.sim.controller`) decides how far down
the cube's sides the pads get at far-out poses. Short reaches make failures of the pose,
shared by every policy (the jaws close on the cube's top edges whatever the aim), but then
sigma = 0 fails too, which step 2a forbids; a slightly longer reach leaves a shallower grasp
that holds at perfect aim but tolerates less aim error than near the robot. ``rho_strict``
(the A-B phi of the calibration sample) is reported as a diagnostic, not scored.

The targets are the document's numbers: the sweep chooses scene parameters, it does not
change how the pools are computed, and the pools' own rates are reported as they come.

Run: ``python -m evalsim.sim.calibrate --config config/config.yaml --processes 2``.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import logging
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalsim.config import load_config

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """A calibration target: a rate column of one policy, its center, half-width, weight."""

    policy: str
    column: str
    center: float
    half_width: float
    weight: float = 1.0


#: Document 000, part A: strict Wilson intervals and the loose rates.
DOCUMENT_TARGETS = (
    Target("A", "success", (0.684 + 0.783) / 2, (0.783 - 0.684) / 2),
    Target("B", "success", (0.835 + 0.909) / 2, (0.909 - 0.835) / 2),
    Target("A", "success_loose", 0.863, 0.04, 0.25),
    Target("B", "success_loose", 0.960, 0.04, 0.25),
)

#: Default stage-1 grid: the jaw opening (m) sets the aim tolerance across the closing
#: direction (failures that grow with sigma); the arm's reach (m, shoulder to pad tops) sets
#: which far-out poses the pads cannot reach down to (failures of the pose, not of sigma).
#: With the shoulder 0.40 m up, the floor of the reach is above the nominal grasp height for
#: 36% of the default workspace's poses at reach 0.425 m, 7.5% at 0.445 m and none from
#: 0.456 m; the pads reach less than 3 mm down the cube's side for 11% at 0.425 m and none
#: from 0.44 m. The reach values run up to 0.46 m so that the grid holds points where even the
#: shallowest grasp of the workspace holds at perfect aim (the sigma = 0 check, step 2a),
#: while far poses keep a smaller aim tolerance than near ones.
DEFAULT_GRID = {
    "jaw_opening_m": [0.057, 0.059, 0.061, 0.063, 0.065, 0.067],
    "arm_reach_m": [0.43, 0.435, 0.44, 0.445, 0.45, 0.455, 0.46],
}

#: Step 2a: trials of the fixed sigma = 0 check and the least strict success rate admitted.
SIGMA0_TRIALS = 200
SIGMA0_MIN_RATE = 0.99

#: Stage-2 refinement: step (m) of each parameter; the grid is center + k * step, k = -2..2.
REFINE = {"jaw_opening_m": 0.0005, "arm_reach_m": 0.001}
#: Step 6: at most this many refinement rounds.
MAX_REFINE_ROUNDS = 3


def calibration_config(config: dict, overrides: dict) -> dict:
    """The config of one grid point: scene overrides, study_seed + 1."""
    cfg = copy.deepcopy(config)
    cfg["study_seed"] = int(config["study_seed"]) + 1
    cfg["scene"].update(overrides)
    return cfg


def _run(args: tuple[dict, str | None, int]) -> pd.DataFrame:
    """One job of a sweep: a policy's trials, or (policy ``None``) the sigma = 0 check."""
    from evalsim.sim.rollout import run_policy_trials, run_sweep_trials

    cfg, policy, trials = args
    if policy is None:
        return run_sweep_trials(cfg, 0.0, 0, trials)
    return run_policy_trials(cfg, cfg["tasks"][0]["name"], policy, 0, 0, trials)


def score(rates: dict[tuple[str, str], float], targets=DOCUMENT_TARGETS) -> float:
    """The calibration score of one grid point (smaller is better)."""
    return float(
        sum(
            t.weight * ((rates[(t.policy, t.column)] - t.center) / t.half_width) ** 2
            for t in targets
        )
    )


def paired_correlation(a: pd.Series, b: pd.Series) -> float:
    """Pearson (phi) correlation of two policies' outcomes on the same trials (NaN if constant)."""
    x = a.to_numpy(dtype=float)
    y = b.to_numpy(dtype=float)
    if len(x) != len(y):
        raise ValueError(f"outcome lists differ in length: {len(x)} vs {len(y)}")
    if x.std() == 0.0 or y.std() == 0.0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def sweep(
    config: dict,
    grid: dict[str, list[float]] | None = None,
    trials: int = 300,
    processes: int = 1,
    targets=DOCUMENT_TARGETS,
    check_trials: int = SIGMA0_TRIALS,
    min_rate: float = SIGMA0_MIN_RATE,
) -> pd.DataFrame:
    """Rates, sigma = 0 check and score at every grid point; one row per point, in grid order.

    ``chosen`` marks the admissible point (``success_sigma0 >= min_rate``) of smallest score.
    Raises ValueError if no point is admissible.
    """
    grid = grid or DEFAULT_GRID
    names = list(grid)
    points = [dict(zip(names, vals, strict=True)) for vals in itertools.product(*grid.values())]
    policies = sorted({t.policy for t in targets})
    jobs = [(calibration_config(config, pt), pol, trials) for pt in points for pol in policies]
    jobs += [(calibration_config(config, pt), None, check_trials) for pt in points]
    if processes > 1:
        with ProcessPoolExecutor(max_workers=processes) as ex:
            frames = list(ex.map(_run, jobs))
    else:
        frames = [_run(j) for j in jobs]
    rows = []
    for i, pt in enumerate(points):
        rates, row = {}, dict(pt)
        for j, pol in enumerate(policies):
            df = frames[i * len(policies) + j]
            for col in ("success", "success_loose"):
                rates[(pol, col)] = float(df[col].mean())
                row[f"{col}_{pol}"] = rates[(pol, col)]
        if len(policies) == 2:  # diagnostic only, not in the score
            a, b = (frames[i * len(policies) + j]["success"] for j in range(2))
            row["rho_strict"] = paired_correlation(a, b)
        row["trials"] = trials
        row["success_sigma0"] = float(frames[len(points) * len(policies) + i]["success"].mean())
        row["admissible"] = row["success_sigma0"] >= min_rate
        row["score"] = score(rates, targets)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["chosen"] = False
    ok = out["admissible"].to_numpy()
    if not ok.any():
        raise ValueError(
            f"no grid point is admissible: sigma = 0 succeeds in at most "
            f"{out['success_sigma0'].max():.3f} of {check_trials} trials, need >= {min_rate}"
        )
    out.loc[int(np.where(ok, out["score"].to_numpy(), np.inf).argmin()), "chosen"] = True
    return out


def refine_grid(chosen: dict[str, float], refine: dict[str, float] = REFINE) -> dict:
    """Stage-2 grid: ``center + k * step`` (k = -2..2) for every parameter of ``refine``."""
    return {
        name: [round(float(chosen[name]) + k * step, 6) for k in (-2, -1, 0, 1, 2)]
        for name, step in refine.items()
    }


def on_edge(chosen: dict[str, float], grid: dict[str, list[float]]) -> bool:
    """True if ``chosen`` sits at the first or last value of any parameter of ``grid``."""
    return any(chosen[k] in (min(v), max(v)) for k, v in grid.items() if len(v) > 1)


def two_stage(
    config: dict, trials: int = 300, processes: int = 1
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Steps 1-6 of the rule: the stage-1 grid, the refinement rounds, the chosen scene keys.

    The second frame holds every refinement round (column ``round``, 1-based); ``chosen``
    marks the last round's choice only.
    """
    stage1 = sweep(config, DEFAULT_GRID, trials, processes)
    best = stage1.loc[stage1["chosen"]].iloc[0]
    chosen = {k: float(best[k]) for k in DEFAULT_GRID}
    rounds = []
    for r in range(1, MAX_REFINE_ROUNDS + 1):
        grid2 = refine_grid(chosen)
        res = sweep(config, grid2, 2 * trials, processes).assign(round=r)
        row = res.loc[res["chosen"]].iloc[0]
        chosen = {k: float(row[k]) for k in grid2}
        rounds.append(res)
        if not on_edge(chosen, grid2):
            break
    for res in rounds[:-1]:
        res["chosen"] = False
    return stage1, pd.concat(rounds, ignore_index=True), chosen


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--grid", type=json.loads, default=None, help="JSON {param: [values]}")
    ap.add_argument("--out", default=None, help="CSV of the sweep")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    t0 = time.perf_counter()
    pd.set_option("display.width", 200)
    config = load_config(args.config)
    if args.grid is None:
        stage1, stage2, chosen = two_stage(config, args.trials, args.processes)
        res = pd.concat([stage1.assign(stage=1), stage2.assign(stage=2)], ignore_index=True)
        print(res.round(4).to_string(index=False))
        print(f"chosen: {chosen}  ({time.perf_counter() - t0:.0f} s)")
    else:
        res = sweep(config, args.grid, args.trials, args.processes)
        print(res.round(4).to_string(index=False))
        chosen = res.loc[res["chosen"]].iloc[0].to_dict()
        print(f"chosen: {chosen}  ({time.perf_counter() - t0:.0f} s)")
    if args.out:
        from evalsim.io import atomic_path

        with atomic_path(args.out) as tmp:
            res.to_csv(tmp, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
