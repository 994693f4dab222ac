"""Write examples/trials.csv: a SYNTHETIC trial log for the evalsim command walkthrough.

Not robot data and not made by the pipeline: a small, seeded draw that has the shape of a
lab's log. Two policies ("act", "bc") each run one task ("pick_cube") with three training
seeds (0, 1, 2) on the same 15 initial cube poses ("pose00".."pose14"), so every
(task, seed, condition) is run once by each policy and `evalsim compare` can pair them:
45 trials per policy, the n of document 001's null-result sentence.

How outcomes are drawn: each pose has a difficulty z ~ N(0, 1) shared by both policies and
all seeds; a trial succeeds when sqrt(0.5) z + sqrt(0.5) e < Phi^-1(p), with fresh e ~ N(0, 1),
so each policy's long-run rate is p (act 0.70, bc 0.50: document 001's worked example) and
outcomes on the same pose correlate. A failed trial gets a failure mode drawn from a
per-policy mix of "missed", "pushed", "dropped"; a success gets "none".

Run from the repository root:  .venv/bin/python examples/make_example_log.py
The output is deterministic (evalsim.seeding.rng_for with study seed 2026).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from evalsim.seeding import rng_for

STUDY_SEED = 2026
RATES = {"act": 0.70, "bc": 0.50}
FAILURE_MIX = {  # P(missed), P(pushed), P(dropped) given a failure
    "act": (0.5, 0.2, 0.3),
    "bc": (0.3, 0.5, 0.2),
}
SEEDS = (0, 1, 2)
N_POSES = 15
RHO = 0.5  # share of the latent variance that belongs to the pose
OUT = Path(__file__).resolve().parent / "trials.csv"


def make_log() -> pd.DataFrame:
    poses = [f"pose{i:02d}" for i in range(N_POSES)]
    difficulty = rng_for(STUDY_SEED, "difficulty").standard_normal(N_POSES)
    rows = []
    for policy, p in RATES.items():
        for seed in SEEDS:
            rng = rng_for(STUDY_SEED, "trials", policy, seed)
            noise = rng.standard_normal(N_POSES)
            latent = np.sqrt(RHO) * difficulty + np.sqrt(1 - RHO) * noise
            success = latent < norm.ppf(p)
            modes = rng.choice(["missed", "pushed", "dropped"], size=N_POSES, p=FAILURE_MIX[policy])
            for pose, ok, mode in zip(poses, success, modes, strict=True):
                rows.append(
                    {
                        "policy": policy,
                        "task": "pick_cube",
                        "seed": seed,
                        "condition": pose,
                        "success": int(ok),
                        "failure": "none" if ok else str(mode),
                    }
                )
    return pd.DataFrame(rows)


if __name__ == "__main__":
    make_log().to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT}")
