"""Calibration of the scene by a documented sweep rule (not by hand).

Rule
----
1. Take the study config. Replace its ``study_seed`` by ``study_seed + 1`` so the calibration
   draws (cube poses, aim noise, seed biases) are independent of the pools it calibrates.
2. For every point of a grid over scene parameters (default: jaw opening x pad width),
   run the study's own design on the first task: every policy of the targets, training seeds
   ``0 .. n_seeds - 1``, ``trials_per_seed`` trials each (default 2 x 3 x 300 = 1800 trials).
2a. Feasibility: at every point also run the fixed sigma = 0 check on every configured task --
   the first :data:`SIGMA0_TRIALS` (200) trials of the sigma sweep's sigma = 0 stream (seed 0,
   no seed bias: perfect aim) on the same calibration draws. The point is *admissible* only if
   at least :data:`SIGMA0_MIN_RATE` (99%) of them succeed (strict) on every task: issue 3's
   test "sigma = 0 succeeds in >= 99% of 200 trials" is a hard constraint, not a term of the
   score, and a task the gripper cannot do even with perfect aim (a 40 mm cube turned 45 deg
   is 56.6 mm across) is a flaw of the scene, not a policy's failure.
3. Score each point by how likely the study's pools are to land inside the document's Wilson
   intervals if the point's strict rates (pooled over its calibration seeds) were the true
   rates: for every target policy, the exact binomial probability that the first training
   seed's ``trials_per_seed`` trials (Table A) and the ``n_seeds * trials_per_seed`` pooled
   trials give a rate inside the target interval. With ``P_inside`` the product of these
   probabilities, ``score = -log10(P_inside)`` (0 = certain to land inside). This is issue 3's
   aim stated as a number: it weighs a rate's distance from each end of its interval by the
   sampling spread of the pools, so a point that leaves one policy at the edge of its interval
   scores worse than one that leaves both a margin. The loose rates are reported, not scored.
4. Choose the admissible grid point with the smallest score; ties go to the first in grid
   order. If no point is admissible the rule stops with an error (it never relaxes the
   constraint). If the chosen rates miss the targets, they are reported as they come.
5. Refine: around the stage-1 choice, sweep every parameter of :data:`REFINE` over
   ``center + k * step`` for k = -2..2 (jaw opening in 0.5 mm steps, pad width in 2.5 mm),
   all combinations, on the same calibration design, and choose again (admissible points,
   same score). The center is admissible, so every round has a choice.
6. If that choice lies on the edge of the refinement grid in any parameter, re-center the
   refinement grid on it and repeat step 5 (at most :data:`MAX_REFINE_ROUNDS` rounds).

The two parameters act on different failures, both of which grow with sigma. The jaw
opening sets the tolerance across the jaws; the pad width the tolerance along them (see
:data:`DEFAULT_GRID`). Nothing here makes failures of the pose alone: sigma = 0 must succeed
(step 2a). ``rho_strict`` (the A-B phi of the calibration sample) is reported as a
diagnostic, not scored.

The targets are the document's numbers: the sweep chooses scene parameters, it does not
change how the pools are computed, and the pools' own rates are reported as they come.

History. The first landing swept jaw opening x arm reach with 20 mm pads and scored squared
distances from the intervals' midpoints (plus the loose rates at weight 0.25) on 300 trials
of seed 0. Its choice (59.5 mm, 0.451 m) put A at 0.703 on the calibration draws, and the
pools' seed 0 at 0.680, below A's interval. Step 3's score replaced the midpoint score because
it scores what issue 3 asks (landing inside) with the pools' own sampling spread. Rerun over
opening x reach with 20 mm pads, step 3 found at best P_inside = 0.38 (59 mm, 0.450 m: A
0.696, B 0.893): with narrow pads A's rate is at most about 0.78 of B's wherever B is inside
its interval, while the document's intervals need about 0.84 at their centres (0.737 /
0.877). The grid over the pad width was added for that reason: wide pads remove the hard
along-the-jaws limit, leave the yaw-spread tolerance across the jaws, and raise the ratio to
about 0.80. The price is the loose test: with wide pads nearly every pad that comes down
touches the cube, so the loose rates approach 1 (document: 0.863, 0.960).

Run: ``python -m evalsim.sim.calibrate --config config/config.yaml --processes 2``.
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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalsim.config import load_config
from evalsim.io import atomic_path
from evalsim.stats.proportion.binomial import binom_cdf, binom_sf, prob_at_least

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """A calibration target: a policy's strict success rate should lie in [low, high]."""

    policy: str
    low: float
    high: float


#: Document 000, part A: the strict Wilson intervals of policies A (221/300) and B (263/300).
DOCUMENT_TARGETS = (Target("A", 0.684, 0.783), Target("B", 0.835, 0.909))

#: Document 000's loose rates, reported next to the sweep (not scored).
DOCUMENT_LOOSE = {"A": 0.863, "B": 0.960}

#: Default stage-1 grid. The jaw opening (m) sets the aim tolerance across the closing
#: direction: a pad that comes down on the cube's top instead of beside it. The pad width (m,
#: along the jaws) sets the aim tolerance along the jaws: a pad that closes on the cube's
#: corner region squeezes it out or turns it. The two tolerances fail differently with sigma:
#: across the jaws the tolerance varies with the cube's yaw (8.5 to 14.75 mm at a 59.5 mm
#: opening), a spread of easy and hard poses whose success falls off gently with sigma;
#: along narrow pads a second, hard limit multiplies in, and the rate falls off more steeply.
#: The arm's reach stays at the config value (0.451 m, chosen by the first landing's sweep of
#: opening x reach): from 0.450 m up the rates do not depend on it, and below 0.440 m
#: sigma = 0 fails more than 1% of the time (config/README.md).
DEFAULT_GRID = {
    "jaw_opening_m": [0.057, 0.059, 0.061, 0.063],
    "pad_width_m": [0.02, 0.03, 0.04, 0.05],
}

#: Step 2a: trials of the fixed sigma = 0 check and the least strict success rate admitted.
SIGMA0_TRIALS = 200
SIGMA0_MIN_RATE = 0.99

#: Stage-2 refinement: step (m) of each parameter; the grid is center + k * step, k = -2..2.
REFINE = {"jaw_opening_m": 0.0005, "pad_width_m": 0.0025}
#: Step 6: at most this many refinement rounds.
MAX_REFINE_ROUNDS = 3


def calibration_config(config: dict, overrides: dict) -> dict:
    """The config of one grid point: scene overrides, study_seed + 1."""
    cfg = copy.deepcopy(config)
    cfg["study_seed"] = int(config["study_seed"]) + 1
    cfg["scene"].update(overrides)
    return cfg


def _run(args: tuple[dict, str, str | None, int, int]) -> pd.DataFrame:
    """One job of a sweep: a policy's seed, or (policy ``None``) a task's sigma = 0 check."""
    from evalsim.sim.rollout import SWEEP_POLICY, run_policy_trials, run_trials

    cfg, task, policy, seed, trials = args
    if policy is None:  # the sigma sweep's stream at sigma = 0: seed 0, no bias
        return run_trials(cfg, task, SWEEP_POLICY, 0.0, 0, 0, trials)
    return run_policy_trials(cfg, task, policy, seed, 0, trials)


def prob_inside(rate: float, n: int, low: float, high: float) -> float:
    """P(low <= K / n <= high) for K ~ Binomial(n, rate): the chance a pool lands inside.

    The interval's ends are inclusive (the document prints them to three decimals).
    """
    if n < 1 or not 0.0 <= rate <= 1.0 or low > high:
        raise ValueError(
            f"need n >= 1, 0 <= rate <= 1 and low <= high; got {n}, {rate}, {low}, {high}"
        )
    k_lo = max(0, math.ceil(low * n - 1e-9))
    k_hi = min(n, math.floor(high * n + 1e-9))
    if k_hi < k_lo:
        return 0.0
    # difference of the two tails on the far side of the mean: both small, no cancellation
    if rate * n > k_hi:  # P(X <= k_hi) - P(X <= k_lo - 1)
        below = binom_cdf(k_lo - 1, n, rate) if k_lo > 0 else 0.0
        return max(0.0, binom_cdf(k_hi, n, rate) - below)
    return max(0.0, prob_at_least(k_lo, n, rate) - binom_sf(k_hi, n, rate))


def score(
    rates: dict[str, float], trials_per_seed: int, n_seeds: int, targets=DOCUMENT_TARGETS
) -> float:
    """The calibration score of one grid point: -log10 of P_inside (smaller is better).

    ``rates[policy]`` is the point's strict rate; P_inside multiplies, over the targets, the
    probability that ``trials_per_seed`` trials (the first seed, Table A) and
    ``n_seeds * trials_per_seed`` trials (all seeds pooled) land inside the target interval.
    """
    p = 1.0
    for t in targets:
        p *= prob_inside(rates[t.policy], trials_per_seed, t.low, t.high)
        if n_seeds > 1:
            p *= prob_inside(rates[t.policy], n_seeds * trials_per_seed, t.low, t.high)
    return math.inf if p <= 0.0 else max(0.0, -math.log10(p))


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
    trials_per_seed: int | None = None,
    n_seeds: int | None = None,
    processes: int = 1,
    targets=DOCUMENT_TARGETS,
    check_trials: int = SIGMA0_TRIALS,
    min_rate: float = SIGMA0_MIN_RATE,
) -> pd.DataFrame:
    """Rates, sigma = 0 check and score at every grid point; one row per point, in grid order.

    ``trials_per_seed`` and ``n_seeds`` default to the config's ``simulation`` values (the
    study's design). ``success_sigma0`` is the lowest sigma = 0 rate over the configured
    tasks (one column per task too). ``chosen`` marks the admissible point
    (``success_sigma0 >= min_rate``) of smallest score. Raises ValueError if no point is
    admissible.
    """
    grid = grid or DEFAULT_GRID
    sim = config["simulation"]
    trials_per_seed = int(trials_per_seed or sim["trials_per_seed"])
    n_seeds = int(n_seeds or sim["n_seeds"])
    names = list(grid)
    points = [dict(zip(names, vals, strict=True)) for vals in itertools.product(*grid.values())]
    policies = [t.policy for t in targets]
    runs = [(pol, seed) for pol in policies for seed in range(n_seeds)]
    first = config["tasks"][0]["name"]
    tasks = [t["name"] for t in config["tasks"]]
    jobs = [
        (calibration_config(config, pt), first, pol, seed, trials_per_seed)
        for pt in points
        for pol, seed in runs
    ]
    jobs += [
        (calibration_config(config, pt), task, None, 0, check_trials)
        for pt in points
        for task in tasks
    ]
    frames = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=processes) if processes > 1 else nullcontext() as ex:
        for frame in (ex.map if ex is not None else map)(_run, jobs):
            frames.append(frame)
            if len(frames) % 10 == 0 or len(frames) == len(jobs):
                log.info(
                    "calibration: %d/%d jobs (%d points), %.0f s",
                    len(frames),
                    len(jobs),
                    len(points),
                    time.perf_counter() - t0,
                )
    rows = []
    for i, pt in enumerate(points):
        row = dict(pt)
        per_policy = {
            pol: pd.concat(
                [frames[i * len(runs) + j] for j, (p2, _) in enumerate(runs) if p2 == pol],
                ignore_index=True,
            )
            for pol in policies
        }
        rates = {}
        for pol, df in per_policy.items():
            rates[pol] = float(df["success"].mean())
            row[f"success_{pol}"] = rates[pol]
            row[f"success_seed0_{pol}"] = float(df.loc[df["seed"] == 0, "success"].mean())
            row[f"success_loose_{pol}"] = float(df["success_loose"].mean())
        if len(policies) == 2:  # diagnostic only, not in the score
            row["rho_strict"] = paired_correlation(*(per_policy[p]["success"] for p in policies))
        row["trials_per_seed"] = trials_per_seed
        row["n_seeds"] = n_seeds
        checks = len(points) * len(runs) + i * len(tasks)
        for j, task in enumerate(tasks):
            row[f"success_sigma0_{task}"] = float(frames[checks + j]["success"].mean())
        row["success_sigma0"] = min(row[f"success_sigma0_{t}"] for t in tasks)
        row["admissible"] = row["success_sigma0"] >= min_rate
        row["score"] = score(rates, trials_per_seed, n_seeds, targets)
        row["p_inside"] = 10.0 ** -row["score"]
        rows.append(row)
    out = pd.DataFrame(rows)
    out["chosen"] = False
    ok = out["admissible"].to_numpy()
    if not ok.any():
        raise ValueError(
            f"no grid point is admissible: sigma = 0 succeeds in at most "
            f"{out['success_sigma0'].max():.3f} of {check_trials} trials of some task, "
            f"need >= {min_rate} for every task"
        )
    admissible = np.flatnonzero(ok)  # ties, including all-infinite scores: first in grid order
    best = admissible[np.argmin(out["score"].to_numpy()[admissible])]
    out.loc[int(best), "chosen"] = True
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
    config: dict, processes: int = 1, grid: dict[str, list[float]] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Steps 1-6 of the rule: the stage-1 grid, the refinement rounds, the chosen scene keys.

    The second frame holds every refinement round (column ``round``, 1-based); ``chosen``
    marks the last round's choice only.
    """
    grid = grid or DEFAULT_GRID
    stage1 = sweep(config, grid, processes=processes)
    best = stage1.loc[stage1["chosen"]].iloc[0]
    chosen = {k: float(best[k]) for k in grid}
    rounds = []
    for r in range(1, MAX_REFINE_ROUNDS + 1):
        grid2 = refine_grid(chosen)
        res = sweep(config, grid2, processes=processes).assign(round=r)
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
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--grid", type=json.loads, default=None, help="JSON {param: [values]}")
    ap.add_argument(
        "--single", action="store_true", help="sweep --grid only (no refinement rounds)"
    )
    ap.add_argument("--out", default=None, help="CSV of the sweep")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    log.setLevel(logging.INFO)
    t0 = time.perf_counter()
    pd.set_option("display.width", 250)
    config = load_config(args.config)
    if args.single:
        res = sweep(config, args.grid, processes=args.processes)
        chosen = res.loc[res["chosen"]].iloc[0].to_dict()
    else:
        stage1, stage2, chosen = two_stage(config, args.processes, args.grid)
        res = pd.concat([stage1.assign(stage=1), stage2.assign(stage=2)], ignore_index=True)
    print(res.round(4).to_string(index=False))
    print(f"chosen: {chosen}  ({time.perf_counter() - t0:.0f} s)")
    if args.out:
        with atomic_path(args.out) as tmp:
            res.to_csv(tmp, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
