"""The steps of the SO-101 calibration rule (:mod:`evalsim.sim.calibrate_so101`):
a design's points and trials, the fitted response surfaces, the choice with its sigma = 0
feasibility loop, and the final row with its acceptance. One point's trials and score are
:mod:`evalsim.sim.calibration_scoring`'s; the response-surface algebra is
:mod:`evalsim.sim.calibration_model`'s.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from evalsim.sim.calibration_model import choose, fit_linear, point_of
from evalsim.sim.calibration_scoring import (
    RATES,
    accepted,
    distinct_pose_jobs,
    point_row,
    policies,
    policy_jobs,
    run_jobs,
    score_point_distinct,
    sigma0_jobs,
    sigma0_of,
    sigma0_rates,
    targets,
)

log = logging.getLogger(__name__)

#: The sigma = 0 floor: a chosen point must lift the cube at perfect aim this often on every
#: task (its measured sigma = 0 stream, :data:`evalsim.sim.calibration_scoring.SIGMA0_TRIALS`
#: trials a task).
SIGMA0_MIN_RATE = 0.95
#: Choices the feasibility loop tries before it gives up.
MAX_FEASIBILITY_TRIES = 3


def run_design(config: dict, rule: dict, processes: int) -> tuple[np.ndarray, pd.DataFrame]:
    """A rule's design (its coded points and one row per point, ``stage`` "design", with the
    sigma = 0 rates)."""
    knobs, fixed, design_trials = rule["knobs"], rule["fixed"], rule["design_trials"]
    names = list(knobs)
    tasks = [t["name"] for t in config["tasks"]]
    coded = rule["design"](len(names))
    points = [{**point_of(x, knobs), **fixed} for x in coded]
    jobs = []
    start = rule.get("design_start")  # None: trials 0 .. design_trials - 1 of every seed

    def point_jobs(point: dict) -> list[tuple]:
        if start is None:
            return policy_jobs(config, point, 0, design_trials)
        return distinct_pose_jobs(config, point, start, design_trials)

    for point in points:  # every design job in one pool: the 2 cores stay busy
        jobs += point_jobs(point) + sigma0_jobs(config, point)
    t0 = time.perf_counter()
    frames = run_jobs(processes, jobs)
    log.info("design: %d points in %.0f s", len(points), time.perf_counter() - t0)
    n_pol, rows = len(point_jobs(points[0])), []
    for i, (x, point) in enumerate(zip(coded, points, strict=True)):
        mine = frames[i * (n_pol + len(tasks)) : (i + 1) * (n_pol + len(tasks))]
        row = point_row(config, point, mine[:n_pol])
        row.update({f"sigma0_{t}": v for t, v in sigma0_of(config, mine[n_pol:]).items()})
        row.update({f"x_{k}": float(v) for k, v in zip(names, x, strict=True)})
        row.update(stage="design", order=i)
        rows.append(row)
    return coded, pd.DataFrame(rows)


def fit_models(
    config: dict, coded: np.ndarray, design: pd.DataFrame, interactions: bool
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The fitted models of the four rates and of every task's sigma = 0 rate."""
    tasks = [t["name"] for t in config["tasks"]]
    models = {k: fit_linear(coded, design[k].to_numpy(), interactions) for k in RATES}
    sigma0_models = {
        t: fit_linear(coded, design[f"sigma0_{t}"].to_numpy(), interactions) for t in tasks
    }
    return models, sigma0_models


def choose_feasible(
    config: dict,
    rule: dict,
    models: dict[str, np.ndarray],
    sigma0_models: dict[str, np.ndarray],
    processes: int,
    first_order: int,
) -> tuple[np.ndarray, dict, dict[str, float], list[dict]]:
    """The rule's step 5 with its feasibility loop: (coded point, point, measured sigma = 0
    rates, one row per choice tried)."""
    knobs, fixed = rule["knobs"], rule["fixed"]
    names = list(knobs)
    tasks = [t["name"] for t in config["tasks"]]
    required = dict.fromkeys(tasks, SIGMA0_MIN_RATE)
    tried = []
    for attempt in range(MAX_FEASIBILITY_TRIES):
        x, pred = choose(
            models,
            sigma0_models,
            targets(config),
            policies(config),
            required,
            len(names),
            rule.get("grids"),
        )
        point = {**point_of(x, knobs), **fixed}
        measured = sigma0_rates(config, point, processes)
        log.info("choice %d: %s predicted %s; sigma = 0 %s", attempt, point, pred, measured)
        tried.append(
            {
                **point,
                **pred,
                **{f"sigma0_measured_{t}": v for t, v in measured.items()},
                **{f"x_{k}": float(v) for k, v in zip(names, x, strict=True)},
                "stage": "predicted",
                "order": first_order + attempt,
            }
        )
        if min(measured.values()) >= SIGMA0_MIN_RATE:
            return x, point, measured, tried
        for t, v in measured.items():
            if v < SIGMA0_MIN_RATE:
                required[t] += pred[f"sigma0_{t}"] - v
    raise ValueError("no chosen point is admissible (sigma = 0 below SIGMA0_MIN_RATE)")


def final_row(
    config: dict,
    rule: dict,
    row: dict,
    x: np.ndarray,
    measured: dict[str, float],
    order: int,
) -> dict:
    row.update({f"sigma0_{t}": v for t, v in measured.items()})
    row.update({f"x_{k}": float(v) for k, v in zip(rule["knobs"], x, strict=True)})
    row.update(stage="final", order=order)
    row["accepted"] = accepted(row, targets(config))
    return row


def anchored_choice(
    config: dict,
    processes: int,
    rule: dict,
    choice_rule: dict,
    shifted: dict[str, np.ndarray],
    sigma0_models: dict[str, np.ndarray],
    anchor: dict,
) -> pd.DataFrame:
    """The rule's last steps: the choice on the shifted models (``choice_rule``'s
    knobs, fixed knobs and grids), then the final run on ``rule``'s fresh distinct poses; one
    row for the anchor, one per choice tried, the final row."""
    x, point, measured, tried = choose_feasible(
        config, choice_rule, shifted, sigma0_models, processes, 1
    )
    final = score_point_distinct(
        config, point, rule["final_start"], rule["final_trials"], processes
    )
    final = final_row(config, choice_rule, final, x, measured, 1 + len(tried))
    out = pd.DataFrame([anchor, *tried, final])
    out["chosen"] = out["stage"] == "final"
    return out
