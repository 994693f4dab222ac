"""Write examples/drifting_session.csv: a SYNTHETIC trial log with a planted drift.

Not robot data and not made by the pipeline: a seeded draw for the ``--order`` walkthrough
(issue 18). Two policies of the same quality ("A", "B") run one session on one task, all of A
first (trials 1-60), then all of B (trials 61-120), one trial every 3 minutes from 09:00. A
servo overheats after the 30th trial: trials 1-30 succeed with probability 0.90, every later
trial with 0.45, independently. The policies do not differ; the drift and the blocked order
make B look worse. The design was fixed before drawing: the exact-test warning rule flags A's
60 trials with probability about 0.93 (evalsim.stats.independence.rejection_rates_mc) and B's
with at most alpha.

Columns: policy, task, trial (1-based session index), time (ISO 8601), success.

Run from the repository root:  .venv/bin/python examples/make_drifting_log.py
The output is deterministic (evalsim.seeding.rng_for with study seed 2026).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evalsim.seeding import rng_for

STUDY_SEED = 2026
N_PER_POLICY = 60
COOL, HOT = 0.90, 0.45  # success probability before and after the servo overheats
HOT_FROM = 30  # first session trial (0-based) with the hot servo
OUT = Path(__file__).resolve().parent / "drifting_session.csv"


def make_log() -> pd.DataFrame:
    n = 2 * N_PER_POLICY
    j = np.arange(n)
    p = np.where(j < HOT_FROM, COOL, HOT)
    success = rng_for(STUDY_SEED, "drifting_session").random(n) < p
    times = pd.Timestamp("2026-03-02T09:00:00") + pd.to_timedelta(3 * j, unit="min")
    return pd.DataFrame(
        {
            "policy": ["A"] * N_PER_POLICY + ["B"] * N_PER_POLICY,
            "task": "pick_cube",
            "trial": j + 1,
            "time": times.strftime("%Y-%m-%dT%H:%M:%S"),
            "success": success.astype(int),
        }
    )


if __name__ == "__main__":
    make_log().to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT}")
