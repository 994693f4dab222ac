"""Write examples/sequential_trials.csv: a SYNTHETIC running trial log for `evalsim sequential`.

Not robot data and not made by the pipeline: a seeded draw with the shape of a lab's log,
for the `evalsim sequential check` walkthrough and tests. Two policies ("base", long-run
success rate 0.50, and "new", 0.80) run one task ("pick_cube") on the same initial cube poses
("pose000", "pose001", ...), one pose after the other, base first then new: 60 poses
logged so far (120 rows). Outcomes on the same pose correlate: a pose has a difficulty
z ~ N(0, 1) shared by both policies; a trial succeeds when sqrt(0.5) z + sqrt(0.5) e <
Phi^-1(p), with fresh e ~ N(0, 1).

With the default designs (`evalsim sequential design --kind paired` or `--kind unpaired`,
one-sided, alpha 0.05, at most 200) this log crosses the "new better" boundary well before
its 60th pose; `head -n 21` of it (the first 10 poses) does not.

Run from the repository root:  .venv/bin/python examples/make_sequential_log.py
The output is deterministic (evalsim.seeding.rng_for with study seed 2026).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from evalsim.seeding import rng_for

STUDY_SEED = 2026
RATES = {"base": 0.50, "new": 0.80}
N_POSES = 60
RHO = 0.5  # share of the latent variance that belongs to the pose
OUT = Path(__file__).resolve().parent / "sequential_trials.csv"


def main() -> None:
    rng = rng_for(STUDY_SEED, "examples", "sequential")
    z = rng.standard_normal(N_POSES)
    rows = []
    for i in range(N_POSES):
        for policy, p in RATES.items():
            latent = np.sqrt(RHO) * z[i] + np.sqrt(1 - RHO) * rng.standard_normal()
            rows.append(
                {
                    "policy": policy,
                    "task": "pick_cube",
                    "condition": f"pose{i:03d}",
                    "success": int(latent < norm.ppf(p)),
                }
            )
    pd.DataFrame(rows).to_csv(OUT, index=False)
    print(f"wrote {OUT} ({len(rows)} trials, synthetic)")


if __name__ == "__main__":
    main()
