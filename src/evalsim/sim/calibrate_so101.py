"""The adopted calibration of the SO-101 scene to the lesson's Table A: its rule, rerun.

The rule, its chosen point and its acceptance table are data, the calibration record
``config/calibration/so101.yaml`` (:data:`RECORD`; its ``text`` is the rule, written and
committed before it was run). This module runs that rule: a design on distinct poses, a
response-surface model, two fresh runs that re-estimate the model's intercepts, the choice and
a final run on fresh poses (:func:`run_rule`). The rule's earlier versions, their runs and
numbers are in ``config/README.md``; their code is no longer part of the package
(``archive/calibration/README.md``).

Commands: ``python -m evalsim.sim.calibrate_so101 check`` (fast: the config carries the
record's point; ``make reproduce`` runs it first) and ``python -m evalsim.sim.calibrate_so101
rerun --processes 2`` (the whole rule, about 70,000 trials; it fails unless it chooses the
record's point again; ``--model-run CSV`` reuses a saved model run, then 12,000 trials).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from evalsim.config import load_config
from evalsim.io import atomic_path
from evalsim.sim.calibration_model import design_full, mean_residual, predict, shift_intercepts
from evalsim.sim.calibration_scoring import RATES, score_point_distinct
from evalsim.sim.calibration_steps import (
    anchored_choice,
    choose_feasible,
    final_row,
    fit_models,
    run_design,
)
from evalsim.stats.two_sample.fisher import fisher_pvalue

log = logging.getLogger(__name__)

#: The calibration record: the adopted rule's text, settings, point and acceptance.
RECORD_PATH = Path(__file__).resolve().parents[3] / "config" / "calibration" / "so101.yaml"
#: Bootstrap resamples of :func:`pass_chance`.
N_BOOT = 4000
#: Tolerance when comparing a point's knobs with the record's (the record rounds to 1e-9 m).
POINT_RTOL = 1e-9


def load_record(path: str | Path = RECORD_PATH) -> dict:
    """The calibration record (``config/calibration/so101.yaml``) as a dict."""
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def rule_settings(record: dict) -> dict:
    """The rule's settings from the record: knobs, held knobs, its trial blocks, its design."""
    t = record["trials"]
    return {
        "knobs": {k: tuple(v) for k, v in record["knobs"].items()},
        "fixed": dict(record["fixed"]),
        "design": design_full,
        "interactions": True,
        "design_start": t["design"][0],
        "design_trials": t["design"][1],
        "intercept_start": t["first_fresh_run"][0],
        "intercept_trials": t["first_fresh_run"][1],
        "second_start": t["second_fresh_run"][0],
        "second_trials": t["second_fresh_run"][1],
        "final_start": t["final"][0],
        "final_trials": t["final"][1],
    }


#: The record, read once.
RECORD = load_record()
#: The adopted rule's settings (:func:`rule_settings` of :data:`RECORD`).
RULE = rule_settings(RECORD)


def point_differences(point: dict, want: dict) -> list[str]:
    """One line per knob of ``want`` whose value in ``point`` differs (missing included)."""
    out = []
    for k, v in want.items():
        got = point.get(k)
        if got is None or not np.isclose(float(got), float(v), rtol=POINT_RTOL, atol=0.0):
            out.append(f"{k}: {got!r}, the record has {v!r}")
    return out


def check_config(config: dict, record: dict | None = None) -> list[str]:
    """Differences between the config's ``scene.so101`` and the record's adopted point
    (empty when the config carries it, or when the scene is not the SO-101)."""
    record = RECORD if record is None else record
    if config["scene"]["name"] != "so101":
        return []
    return point_differences(config["scene"].get("so101", {}), record["point"])


def _read_run(path: str | None, what: str) -> pd.DataFrame | None:
    """A version's run from its CSV ``path``, or None when there is none (the caller reruns)."""
    if path is None or not Path(path).exists():
        return None
    log.info("%s: %s", what, path)
    return pd.read_csv(path)


def _design_rows(run: pd.DataFrame, knobs: dict) -> tuple[np.ndarray, pd.DataFrame]:
    """A run's design rows in their order, and their coded points."""
    design = run[run["stage"] == "design"].sort_values("order").reset_index(drop=True)
    return design[[f"x_{k}" for k in knobs]].to_numpy(dtype=float), design


def _check_blocks(config: dict, rule: dict) -> None:
    """ValueError unless each block of trials (design, two fresh runs, final) starts after the
    one before it ends, for every seed: the fresh runs' poses are fresh."""
    n_seeds = int(config["simulation"]["n_seeds"])
    blocks = [
        (rule["design_start"], rule["design_trials"]),
        (rule["intercept_start"], rule["intercept_trials"]),
        (rule["second_start"], rule["second_trials"]),
        (rule["final_start"], rule["final_trials"]),
    ]
    for (a, n), (b, _) in itertools.pairwise(blocks):
        if b < a + n_seeds * n:
            raise ValueError("the trial blocks must be fresh: each after the one before it")


def model_run(config: dict, processes: int, rule: dict) -> pd.DataFrame:
    """The rule's steps 1-7: the design, its model, the first choice, the first fresh run and
    the intercept shift, the second choice and the second fresh run. One row per design point
    (``stage`` "design"), per choice tried ("predicted"), the first fresh run ("intercept")
    and the second ("final")."""
    _check_blocks(config, rule)
    n_seeds = int(config["simulation"]["n_seeds"])
    coded, design = run_design(config, rule, processes)
    models, sigma0_models = fit_models(config, coded, design, rule["interactions"])
    x1, point1, _, tried1 = choose_feasible(
        config, rule, models, sigma0_models, processes, len(design)
    )
    step = score_point_distinct(
        config, point1, rule["intercept_start"], rule["intercept_trials"], processes
    )
    step.update({f"model_{k}": float(predict(models[k], x1)[0]) for k in RATES})
    step.update({f"x_{k}": float(v) for k, v in zip(rule["knobs"], x1, strict=True)})
    order = len(design) + len(tried1)
    step.update(stage="intercept", order=order)
    n_step = rule["intercept_trials"] * n_seeds
    weight = n_step / (n_step + rule["design_trials"] * n_seeds)
    shifted = shift_intercepts(models, x1, {k: step[k] for k in RATES}, weight)
    x, point, measured, tried = choose_feasible(
        config, rule, shifted, sigma0_models, processes, order + 1
    )
    final = score_point_distinct(
        config, point, rule["second_start"], rule["second_trials"], processes
    )
    final = final_row(config, rule, final, x, measured, order + 1 + len(tried))
    parts = [design, pd.DataFrame(tried1), pd.DataFrame([step]), pd.DataFrame(tried)]
    out = pd.concat([*parts, pd.DataFrame([final])], ignore_index=True)
    out["chosen"] = out["stage"] == "final"
    return out


def run_rule(
    config: dict, processes: int = 1, model_run_csv: str | None = None, **settings
) -> pd.DataFrame:
    """The adopted rule (the record's ``text``; ``settings`` replace some of :data:`RULE`'s).

    Steps 1-7 come from ``model_run_csv`` when that file exists (a saved :func:`model_run`),
    else they run. Returns the anchor row (``stage`` "anchor": the weight, the shifts, the
    unshifted model at the second fresh run's point), one row per choice tried (``stage``
    "predicted") and the final row (``stage`` "final", ``chosen``, ``accepted``). Raises
    ValueError when a block of trials is not after the one before it.
    """
    rule = {**RULE, **settings}
    _check_blocks(config, rule)
    run = _read_run(model_run_csv, "the model run")
    if run is None:
        run = model_run(config, processes, rule)
    coded, design = _design_rows(run, rule["knobs"])
    models, sigma0_models = fit_models(config, coded, design, rule["interactions"])
    fresh = run[run["stage"].isin(["intercept", "final"])].sort_values("order")
    xs = fresh[[f"x_{k}" for k in rule["knobs"]]].to_numpy(dtype=float)
    n_seeds = int(config["simulation"]["n_seeds"])
    n_fresh = int(fresh["n_per_policy"].sum())
    weight = n_fresh / (n_fresh + rule["design_trials"] * n_seeds)
    shifted = {}
    for k, beta in models.items():
        beta = np.array(beta, dtype=float)
        beta[0] += weight * mean_residual(beta, xs, fresh[k].to_numpy(dtype=float))
        shifted[k] = beta
    anchor = {f"model_{k}": float(predict(models[k], xs[-1])[0]) for k in RATES}
    anchor.update({f"shift_{k}": float(shifted[k][0] - models[k][0]) for k in RATES})
    anchor.update(stage="anchor", order=0, weight=weight, n_fresh_per_policy=n_fresh)
    return anchored_choice(config, processes, rule, rule, shifted, sigma0_models, anchor)


def chosen_point(res: pd.DataFrame, record: dict | None = None) -> dict:
    """The knobs of ``res``'s chosen row (the record's knobs and held knobs)."""
    record = RECORD if record is None else record
    row = res[res["chosen"]].iloc[0]
    return {k: float(row[k]) if k in row else None for k in record["point"]}


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
    policy -> {"strict": k, "loose": k, "n": n}. (The previous rule's score; kept as a
    diagnostic of a point's pools.)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="the config carries the record's adopted point")
    check.add_argument("--config", default="config/config.yaml")
    rerun = sub.add_parser("rerun", help="rerun the adopted rule; it must choose the point")
    rerun.add_argument("--config", default="config/config.yaml")
    rerun.add_argument("--processes", type=int, default=1)
    rerun.add_argument("--model-run", default=None, help="CSV of a saved model run (steps 1-7)")
    rerun.add_argument("--out", default=None, help="CSV of the anchor, choices and final row")
    args = ap.parse_args(argv)
    try:
        config = load_config(args.config)
    except (OSError, ValueError) as exc:  # a missing file, bad YAML or a ConfigError
        print(f"{args.config}: {exc}", file=sys.stderr)
        return 2
    if args.command == "check":
        diffs = check_config(config)
        for line in diffs:
            print(f"{args.config}: scene.so101.{line} ({RECORD_PATH.name})", file=sys.stderr)
        return 2 if diffs else 0
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    for logger in (log, logging.getLogger(score_point_distinct.__module__)):
        logger.setLevel(logging.INFO)  # progress: the rule's steps and every point's score
    res = run_rule(config, args.processes, args.model_run)
    pd.set_option("display.width", 250)
    print(res.round(4).to_string(index=False))
    if args.out:
        with atomic_path(args.out) as tmp:
            res.to_csv(tmp, index=False, float_format="%.6g")
    diffs = point_differences(chosen_point(res), RECORD["point"])
    for line in diffs:
        print(f"rerun chose {line}", file=sys.stderr)
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
