"""One point of the SO-101 calibration: its draws, trials and score (the rule's steps 1-3 and
its acceptance; :mod:`evalsim.sim.calibrate_so101` runs the rule).

A point is a set of ``scene.so101`` knobs (and :data:`TASK_KNOBS` of the first task). Its
trials run on ``study_seed + 1`` (draws independent of the study's pools) as jobs of
:func:`run_job`: trials ``start .. stop - 1`` of one (task, policy, seed), or of the sigma
sweep's sigma = 0 stream. :func:`targets`, :func:`distance` and :func:`accepted` are the rule's
targets (the lesson's Table A), its distance D and its acceptance.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext

import pandas as pd

from evalsim.sim.rollout import SWEEP_POLICY, run_policy_trials, run_trials

log = logging.getLogger(__name__)

#: Knobs that belong to the first task (the lesson's cube) rather than to ``scene.so101``.
TASK_KNOBS = ("cube_mass_kg",)
#: The acceptance's tolerance on the strict gap B - A (rule step 7).
GAP_TOL = 0.015
#: Trials of the sigma = 0 stream per task in a point's feasibility check.
SIGMA0_TRIALS = 200
#: The four rates the rule calibrates (the document's first two policies).
RATES = ("strict_A", "loose_A", "strict_B", "loose_B")


def calibration_config(config: dict, overrides: dict) -> dict:
    """The config of one point: ``study_seed + 1`` and the point's knobs.

    Knobs of :data:`TASK_KNOBS` set the first task's key; the others ``scene.so101``'s.
    """
    cfg = copy.deepcopy(config)
    cfg["study_seed"] = int(config["study_seed"]) + 1
    cfg["scene"]["name"] = "so101"
    scene = {k: v for k, v in overrides.items() if k not in TASK_KNOBS}
    cfg["scene"]["so101"] = {**(cfg["scene"].get("so101") or {}), **scene}
    cfg["tasks"][0].update({k: v for k, v in overrides.items() if k in TASK_KNOBS})
    return cfg


def run_job(args: tuple[dict, str, str | None, int, int, int]) -> pd.DataFrame:
    """One job: trials ``start .. stop - 1`` of (task, policy, seed); policy None is the sigma
    sweep's sigma = 0 stream."""
    cfg, task, policy, seed, start, stop = args
    if policy is None:
        return run_trials(cfg, task, SWEEP_POLICY, 0.0, 0, start, stop)
    return run_policy_trials(cfg, task, policy, seed, start, stop)


def _executor(processes: int):
    return ProcessPoolExecutor(max_workers=processes) if processes > 1 else nullcontext()


def run_jobs(processes: int, jobs: list) -> list[pd.DataFrame]:
    """:func:`run_job` on every job, in order; on ``processes`` processes when more than 1."""
    with _executor(processes) as ex:
        return list((ex.map if ex is not None else map)(run_job, jobs))


def document_counts(config: dict) -> dict:
    """The document's counts (policy -> strict, loose, n) from ``simulation.document``."""
    return {p: dict(v) for p, v in config["simulation"]["document"].items()}


def policies(config: dict) -> list[str]:
    """The document's first two policies (A and B): the calibration's."""
    return list(document_counts(config))[:2]


def targets(config: dict) -> dict[str, tuple[float, float]]:
    """Target -> (lesson's value, tolerance): the four rates with their SE, and the gap.

    Keys ``strict_A``, ``loose_A``, ``strict_B``, ``loose_B`` (for the document's first two
    policies) and ``gap`` (strict, second minus first).
    """
    doc = document_counts(config)
    out = {}
    for pol, d in list(doc.items())[:2]:
        for crit in ("strict", "loose"):
            p = d[crit] / d["n"]
            out[f"{crit}_{pol}"] = (p, math.sqrt(p * (1.0 - p) / d["n"]))
    a, b = list(doc)[:2]
    out["gap"] = (doc[b]["strict"] / doc[b]["n"] - doc[a]["strict"] / doc[a]["n"], GAP_TOL)
    return out


def rates_of(frames: pd.DataFrame, policies: list[str]) -> dict[str, float]:
    """The four rates, the gap and the failure-type shares of a point's trials."""
    row: dict[str, float] = {}
    for pol in policies:
        g = frames[frames["policy"] == pol]
        row[f"strict_{pol}"] = float(g["success"].mean())
        row[f"loose_{pol}"] = float(g["success_loose"].mean())
        for f in ("missed", "pushed", "dropped", "held_low"):
            row[f"{f}_{pol}"] = float((g["failure"] == f).mean())
    row["gap"] = row[f"strict_{policies[1]}"] - row[f"strict_{policies[0]}"]
    row["n_per_policy"] = int((frames["policy"] == policies[0]).sum())
    return row


def distance(row: dict, tgt: dict[str, tuple[float, float]]) -> float:
    """Rule step 3: the sum of squared standardised misses of the four rates and the gap."""
    return float(sum(((row[k] - v) / tol) ** 2 for k, (v, tol) in tgt.items()))


def accepted(row: dict, tgt: dict[str, tuple[float, float]]) -> bool:
    """Rule step 7: every rate within 1 SE of the lesson's, the gap within GAP_TOL."""
    return all(abs(row[k] - v) <= tol for k, (v, tol) in tgt.items())


def policy_jobs(config: dict, point: dict, start: int, stop: int) -> list[tuple]:
    """Jobs of trials ``start .. stop - 1`` of every (policy, seed) of the first task."""
    n_seeds = int(config["simulation"]["n_seeds"])
    cfg = calibration_config(config, point)
    first = config["tasks"][0]["name"]
    return [(cfg, first, pol, s, start, stop) for pol in policies(config) for s in range(n_seeds)]


def distinct_pose_ranges(start: int, trials_per_seed: int, n_seeds: int) -> list[range]:
    """The rule's step 1: trial indices of training seeds ``0 .. n_seeds - 1``, each seed
    its own block (seed ``s``: ``start + s * trials_per_seed`` onwards), so no two trials of a
    policy share a pose or surfaces (those are keyed by task and trial index only)."""
    if start < 0 or trials_per_seed < 1 or n_seeds < 1:
        raise ValueError("need start >= 0, trials_per_seed >= 1 and n_seeds >= 1")
    return [
        range(start + s * trials_per_seed, start + (s + 1) * trials_per_seed)
        for s in range(n_seeds)
    ]


def distinct_pose_jobs(config: dict, point: dict, start: int, trials_per_seed: int) -> list[tuple]:
    """Jobs of every (policy, seed) of the first task on :func:`distinct_pose_ranges`."""
    n_seeds = int(config["simulation"]["n_seeds"])
    cfg = calibration_config(config, point)
    first = config["tasks"][0]["name"]
    ranges = distinct_pose_ranges(start, trials_per_seed, n_seeds)
    return [
        (cfg, first, pol, s, r.start, r.stop)
        for pol in policies(config)
        for s, r in enumerate(ranges)
    ]


def sigma0_jobs(config: dict, point: dict) -> list[tuple]:
    """Jobs of the sigma = 0 stream's first :data:`SIGMA0_TRIALS` trials of every task."""
    cfg = calibration_config(config, point)
    return [(cfg, t["name"], None, 0, 0, SIGMA0_TRIALS) for t in config["tasks"]]


def point_row(config: dict, point: dict, frames: list[pd.DataFrame]) -> dict[str, float]:
    """A point's row: its knobs, :func:`rates_of` its trials and its distance."""
    row = {**point, **rates_of(pd.concat(frames, ignore_index=True), policies(config))}
    row["distance"] = distance(row, targets(config))
    return row


def sigma0_of(config: dict, frames: list[pd.DataFrame]) -> dict[str, float]:
    """Task -> strict success of its sigma = 0 frame (frames in the tasks' order)."""
    tasks = [t["name"] for t in config["tasks"]]
    return {t: float(c["success"].mean()) for t, c in zip(tasks, frames, strict=True)}


def score_point(
    config: dict, point: dict, start: int, stop: int, processes: int = 1
) -> dict[str, float]:
    """Rates, gap, failure shares and distance of one point on trials ``start .. stop - 1`` of
    every (policy, seed) (rule steps 1-3)."""
    t0 = time.perf_counter()
    row = point_row(config, point, run_jobs(processes, policy_jobs(config, point, start, stop)))
    row["seconds"] = time.perf_counter() - t0
    log.info("point %s: D %.2f (%.0f s)", point, row["distance"], row["seconds"])
    return row


def score_point_distinct(
    config: dict, point: dict, start: int, trials_per_seed: int, processes: int = 1
) -> dict[str, float]:
    """:func:`score_point` on :func:`distinct_pose_ranges` (the rule's fresh runs)."""
    t0 = time.perf_counter()
    jobs = distinct_pose_jobs(config, point, start, trials_per_seed)
    row = point_row(config, point, run_jobs(processes, jobs))
    row["seconds"] = time.perf_counter() - t0
    log.info("point %s: D %.2f (%.0f s)", point, row["distance"], row["seconds"])
    return row


def sigma0_rates(config: dict, point: dict, processes: int = 1) -> dict[str, float]:
    """Strict success of the sigma = 0 stream's first :data:`SIGMA0_TRIALS` trials on every
    task."""
    return sigma0_of(config, run_jobs(processes, sigma0_jobs(config, point)))
