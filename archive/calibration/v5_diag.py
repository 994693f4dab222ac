"""Diagnostic after rule version 5 (not part of it): version 3's point (the study's values) on
version 5's distinct-pose blocks (trials 2000-4999 and 5000-7999, seed s its own block), and
version 5's chosen point rerun on its final blocks, with the trials kept for per-seed rates."""

import logging

import pandas as pd
from points import V3, V5  # archive/calibration/points.py (the script's folder is on sys.path)

from evalsim.config import load_config
from evalsim.sim import calibration_scoring as scoring

logging.basicConfig(level=logging.WARNING, format="%(message)s")
config = load_config("config/config.yaml")
frames = []
for name, point, start in (("v3", V3, 2000), ("v3", V3, 5000), ("v5", V5, 5000)):
    jobs = scoring.distinct_pose_jobs(config, point, start, 1000)
    f = pd.concat(scoring.run_jobs(2, jobs), ignore_index=True)
    f["point"], f["block_start"] = name, start
    frames.append(f)
    row = scoring.rates_of(f, ["A", "B"])
    row["distance"] = scoring.distance(row, scoring.targets(config))
    row["accepted"] = scoring.accepted(row, scoring.targets(config))
    print(name, start, {k: round(v, 4) for k, v in row.items()}, flush=True)
allf = pd.concat(frames, ignore_index=True)
allf.to_parquet("results/calibration/so101_v5_diag_trials.parquet")
g = allf.groupby(["point", "block_start", "policy", "seed"])[["success", "success_loose"]].mean()
print(g.round(4).to_string())
