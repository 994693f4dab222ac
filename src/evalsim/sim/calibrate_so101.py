"""Calibration of the SO-101 scene by a written rule: the chance that T30 passes.

Rule
----
1. Take the study config with ``scene.name: so101``. Replace ``study_seed`` by
   ``study_seed + 1``, so the calibration's draws (cube poses, aim noise, seed biases) are
   independent of the pools it calibrates.
2. Stage 1: at every point of :data:`STAGE1_GRID` (the first task's cube mass 50, 100,
   150 g, with the field notes' pads: 30 mm wide, the fixed pad 5 mm thicker), run the study's
   own design on the first task: every policy of the document's counts, training seeds
   ``0 .. n_seeds - 1``, ``trials_per_seed`` trials each. The grid is absolute, so the rule
   does not depend on the values it wrote into the config.
3. Feasibility: a point is *admissible* only if at least :data:`SIGMA0_MIN_RATE` (95%,
   issue 11 (b)) of the first :data:`SIGMA0_TRIALS` trials of the sigma sweep's sigma = 0
   stream succeed (strict) on every configured task. (To save CPU the check runs in the
   order of step 5 and stops at the first admissible point.)
4. Score each point by its chance of passing T30, measured on its own draws: a bootstrap of
   the whole design. One replicate draws ``trials_per_seed`` trial indices with replacement
   (the same indices for every policy and seed, as the pools share poses), counts strict and
   loose successes of seed 0 and of all seeds pooled, and passes when every one of T30's rows
   has a two-sided Fisher p >= ``alpha`` against the document's count
   (:func:`evalsim.products.simulate.acceptance_table`). ``p_pass`` is the fraction of
   :data:`N_BOOT` replicates that pass (the bootstrap's stream is keyed by the point's knob
   values, so a point scores the same in either stage); ``score = -log10(p_pass)``.
5. Choose the admissible point with the largest ``p_pass`` (ties: first in grid order).
6. Stage 2, only when stage 1's choice has ``p_pass < PASS_MIN`` (0.7): the product
   :func:`stage2_grid` around it -- the chosen mass and 25 g more (drops of both policies),
   pads 30 and 34 mm wide (drops of off-centre grasps, so mostly the noisier policy's), and
   the fixed pad 3, 4 or 5 mm thicker (pushes) -- scored by steps 3-4 on the same draws
   (points already scored are not rerun). The choice is step 5 over both stages. If it still
   has ``p_pass < PASS_MIN``, it is used and reported with that shortfall (the rule never
   relaxes its constraint, and the pools are never redrawn).

The pools are then drawn once with the chosen values, on the study's own seed.

Run: ``python -m evalsim.sim.calibrate_so101 --config config/config.yaml --processes 2``.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import logging
import math
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext

import numpy as np
import pandas as pd

from evalsim.config import load_config
from evalsim.seeding import rng_for
from evalsim.sim.calibrate import paired_correlation
from evalsim.stats.two_sample.fisher import fisher_pvalue

log = logging.getLogger(__name__)

#: Stage 1: the first task's ``cube_mass_kg`` (kg), which loads the gripper's grip and the
#: unassisted arm servos (drops grow), at the field notes' pads: ``scene.so101.pad_width_m``
#: (how far off-centre along the jaws a cube may be gripped before it pivots out of a 4 cm
#: hold: drops at large sigma) and ``scene.so101.fixed_pad_extra_m`` (the fixed jaw's
#: clearance: pushes). Measured effects of each knob: config/README.md.
STAGE1_GRID = {
    "cube_mass_kg": [0.05, 0.10, 0.15],
    "pad_width_m": [0.030],
    "fixed_pad_extra_m": [0.005],
}
DEFAULT_GRID = STAGE1_GRID
#: Stage 2 (rule step 6): offsets from stage 1's choice for the mass; absolute values for
#: the pads.
STAGE2_MASS_STEPS_KG = (0.0, 0.025)
STAGE2_PAD_WIDTH_M = (0.030, 0.034)
STAGE2_FIXED_PAD_EXTRA_M = (0.003, 0.004, 0.005)
SIGMA0_TRIALS = 200
SIGMA0_MIN_RATE = 0.95
N_BOOT = 4000
PASS_MIN = 0.7


#: Knobs that belong to the first task (the lesson's cube) rather than to ``scene.so101``.
TASK_KNOBS = ("cube_mass_kg",)
#: Knobs of ``scene.so101`` the rule may sweep (physical ones only).
_SCENE_KNOBS = ("pad_width_m", "fixed_pad_extra_m", "pad_friction", "grip_torque_nm", "lift_s")


def calibration_config(config: dict, overrides: dict) -> dict:
    """The config of one grid point: ``study_seed + 1`` and the point's knobs.

    Knobs of :data:`TASK_KNOBS` set the first task's key; the others ``scene.so101``'s.
    """
    cfg = copy.deepcopy(config)
    cfg["study_seed"] = int(config["study_seed"]) + 1
    cfg["scene"]["name"] = "so101"
    scene = {k: v for k, v in overrides.items() if k not in TASK_KNOBS}
    cfg["scene"]["so101"] = {**(cfg["scene"].get("so101") or {}), **scene}
    cfg["tasks"][0].update({k: v for k, v in overrides.items() if k in TASK_KNOBS})
    return cfg


def _run(args: tuple[dict, str, str | None, int, int]) -> pd.DataFrame:
    from evalsim.sim.rollout import SWEEP_POLICY, run_policy_trials, run_trials

    cfg, task, policy, seed, trials = args
    if policy is None:
        return run_trials(cfg, task, SWEEP_POLICY, 0.0, 0, 0, trials)
    return run_policy_trials(cfg, task, policy, seed, 0, trials)


def pass_chance(
    frames: pd.DataFrame,
    document: dict,
    alpha: float,
    n_boot: int = N_BOOT,
    rng: np.random.Generator | None = None,
) -> float:
    """Bootstrap chance that T30 passes (every Fisher p >= alpha) for pools like ``frames``.

    ``frames`` holds one calibration point's trials (columns policy, seed, trial, success,
    success_loose) with the same trial indices for every policy and seed. ``document`` maps
    policy -> {"strict": k, "loose": k, "n": n}.
    """
    rng = rng or np.random.default_rng(0)
    trials = np.sort(frames["trial"].unique())
    n = len(trials)
    seeds = np.sort(frames["seed"].unique())
    cols, accept = [], []
    for pol, doc in document.items():
        for crit, col in (("strict", "success"), ("loose", "success_loose")):
            wide = (
                frames[frames["policy"] == pol]
                .pivot(index="trial", columns="seed", values=col)
                .reindex(index=trials, columns=seeds)
                .to_numpy(dtype=float)
            )
            if np.isnan(wide).any():
                raise ValueError(f"policy {pol!r} lacks trials of some seed")
            for w in (wide[:, :1], wide):  # seed 0, then all seeds pooled
                cols.append(w.sum(axis=1))
                n_study = n * w.shape[1]
                k = np.arange(n_study + 1)
                p = fisher_pvalue(k, n_study, int(doc[crit]), int(doc["n"]))
                accept.append(np.asarray(p) >= alpha)
    x = np.column_stack(cols)  # per trial: successes over the scope's seeds
    w = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot)  # bootstrap weights
    counts = np.rint(w @ x).astype(np.int64)
    ok = np.ones(n_boot, dtype=bool)
    for j, acc in enumerate(accept):
        ok &= acc[counts[:, j]]
    return float(ok.mean())


def document_counts(config: dict) -> dict:
    """The document's counts (policy -> strict, loose, n) from ``simulation.document``."""
    return {p: dict(v) for p, v in config["simulation"]["document"].items()}


def _point_key(point: dict) -> tuple:
    """A point's knob values, rounded to 0.1 mg / 1 um: its identity across stages."""
    return tuple(sorted((k, round(float(v), 7)) for k, v in point.items()))


def _executor(processes: int):
    return ProcessPoolExecutor(max_workers=processes) if processes > 1 else nullcontext()


def score_points(config: dict, points: list[dict], processes: int = 1, n_boot: int = N_BOOT):
    """Rates, failure types, phi and pass chance of each point (rule steps 1, 2 and 4)."""
    sim = config["simulation"]
    n, n_seeds = int(sim["trials_per_seed"]), int(sim["n_seeds"])
    document = document_counts(config)
    alpha = float(config["alpha"])
    first = config["tasks"][0]["name"]
    runs = [(pol, s) for pol in document for s in range(n_seeds)]
    jobs = [(calibration_config(config, pt), first, pol, s, n) for pt in points for pol, s in runs]
    frames = []
    t0 = time.perf_counter()
    with _executor(processes) as ex:
        for frame in (ex.map if ex is not None else map)(_run, jobs):
            frames.append(frame)
            log.info(
                "calibration: %d/%d jobs, %.0f s", len(frames), len(jobs), time.perf_counter() - t0
            )
    rows = []
    for i, pt in enumerate(points):
        df = pd.concat(frames[i * len(runs) : (i + 1) * len(runs)], ignore_index=True)
        row = dict(pt)
        for pol, g in df.groupby("policy", sort=False):
            row[f"strict_{pol}"] = float(g["success"].mean())
            row[f"loose_{pol}"] = float(g["success_loose"].mean())
            for f in ("missed", "pushed", "dropped"):
                row[f"{f}_{pol}"] = float((g["failure"] == f).mean())
        a, b = (df[df["policy"] == p].sort_values(["seed", "trial"]) for p in list(document)[:2])
        row["phi_strict"] = paired_correlation(a["success"], b["success"])
        keys = [f"{k}={v}" for k, v in _point_key(pt)]
        rng = rng_for(int(config["study_seed"]) + 1, "calibration", "bootstrap", *keys)
        row["p_pass"] = pass_chance(df, document, alpha, n_boot, rng)
        row["score"] = math.inf if row["p_pass"] == 0 else -math.log10(row["p_pass"])
        rows.append(row)
    out = pd.DataFrame(rows)
    out["sigma0_min"] = np.nan
    out["admissible"] = pd.NA
    out["chosen"] = False
    return out


def choose(config: dict, table: pd.DataFrame, processes: int = 1) -> pd.DataFrame:
    """Rule steps 3 and 5: the sigma = 0 check in order of ``p_pass``, up to the first pass.

    Rows already checked (``admissible`` set) are not rerun. Sets ``chosen`` on one row.
    """
    out = table.copy()
    out["chosen"] = False
    knobs = [c for c in out.columns if c in (*TASK_KNOBS, *_SCENE_KNOBS)]
    tasks = [t["name"] for t in config["tasks"]]
    with _executor(processes) as ex:
        for i in np.argsort(-out["p_pass"].to_numpy(), kind="stable"):
            if pd.isna(out.loc[i, "admissible"]):
                point = {k: float(out.loc[i, k]) for k in knobs}
                cfg = calibration_config(config, point)
                jobs = [(cfg, t, None, 0, SIGMA0_TRIALS) for t in tasks]
                checks = list((ex.map if ex is not None else map)(_run, jobs))
                rates = {t: float(c["success"].mean()) for t, c in zip(tasks, checks, strict=True)}
                for t, r in rates.items():
                    out.loc[i, f"sigma0_{t}"] = r
                out.loc[i, "sigma0_min"] = min(rates.values())
                out.loc[i, "admissible"] = min(rates.values()) >= SIGMA0_MIN_RATE
                log.info("sigma = 0 check of point %d: %s", i, rates)
            if out.loc[i, "admissible"]:
                out.loc[i, "chosen"] = True
                return out
    raise ValueError(
        f"no grid point is admissible: sigma = 0 succeeds in at most "
        f"{out['sigma0_min'].max():.3f} of {SIGMA0_TRIALS} trials, need >= {SIGMA0_MIN_RATE}"
    )


def grid_points(grid: dict[str, list[float]]) -> list[dict]:
    """The product of a grid's values, in grid order."""
    return [dict(zip(grid, vals, strict=True)) for vals in itertools.product(*grid.values())]


def sweep(
    config: dict,
    grid: dict[str, list[float]] | None = None,
    processes: int = 1,
    n_boot: int = N_BOOT,
) -> pd.DataFrame:
    """One stage: rates, sigma = 0 check and pass chance at every grid point (steps 1-5)."""
    points = grid_points(grid or STAGE1_GRID)
    return choose(config, score_points(config, points, processes, n_boot), processes)


def stage2_grid(choice: dict) -> dict[str, list[float]]:
    """Rule step 6: the stage-2 grid around stage 1's choice (``cube_mass_kg`` read from it)."""
    mass = float(choice["cube_mass_kg"])
    return {
        "cube_mass_kg": [round(mass + d, 7) for d in STAGE2_MASS_STEPS_KG],
        "pad_width_m": list(STAGE2_PAD_WIDTH_M),
        "fixed_pad_extra_m": list(STAGE2_FIXED_PAD_EXTRA_M),
    }


def two_stage(config: dict, processes: int = 1, n_boot: int = N_BOOT) -> pd.DataFrame:
    """The whole rule (steps 1-6): both stages' rows (column ``stage``), one ``chosen``."""
    stage1 = sweep(config, STAGE1_GRID, processes, n_boot).assign(stage=1)
    best = stage1.loc[stage1["chosen"]].iloc[0]
    if best["p_pass"] >= PASS_MIN:
        return stage1
    done = {_point_key({k: row[k] for k in STAGE1_GRID}) for _, row in stage1.iterrows()}
    todo = [pt for pt in grid_points(stage2_grid(best)) if _point_key(pt) not in done]
    stage2 = score_points(config, todo, processes, n_boot).assign(stage=2)
    both = pd.concat([stage1, stage2], ignore_index=True)
    return choose(config, both, processes)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument(
        "--grid",
        type=json.loads,
        default=None,
        help="JSON {knob: [values]}: one stage on this grid (default: the two-stage rule)",
    )
    ap.add_argument("--out", default=None, help="CSV of the sweep")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    config = load_config(args.config)
    res = (
        sweep(config, args.grid, args.processes) if args.grid else two_stage(config, args.processes)
    )
    pd.set_option("display.width", 250)
    print(res.round(4).to_string(index=False))
    if args.out:
        from evalsim.io import atomic_path

        with atomic_path(args.out) as tmp:
            res.to_csv(tmp, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
