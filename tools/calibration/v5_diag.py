"""Diagnostic after rule version 5 (not part of it): version 3's point (the study's values) on
version 5's distinct-pose blocks (trials 2000-4999 and 5000-7999, seed s its own block), and
version 5's chosen point rerun on its final blocks, with the trials kept for per-seed rates."""

import logging

import pandas as pd

from evalsim.config import load_config
from evalsim.sim import calibrate_so101 as cal

logging.basicConfig(level=logging.WARNING, format="%(message)s")
config = load_config("config/config.yaml")
v3 = {
    "pad_friction_sd": 0.385,
    "grip_hold_fraction": 0.148,
    "pad_width_m": 0.026,
    "fixed_pad_extra_m": 0.0038,
}
v5 = {
    "pad_friction_sd": 0.345,
    "grip_hold_fraction": 0.158,
    "pad_width_m": 0.0258,
    "fixed_pad_extra_m": 0.0038,
}
frames = []
for name, point, start in (("v3", v3, 2000), ("v3", v3, 5000), ("v5", v5, 5000)):
    jobs = cal._distinct_pose_jobs(config, point, start, 1000)
    f = pd.concat(cal._map(2, jobs), ignore_index=True)
    f["point"], f["block_start"] = name, start
    frames.append(f)
    row = cal.rates_of(f, ["A", "B"])
    row["distance"] = cal.distance(row, cal.targets(config))
    row["accepted"] = cal.accepted(row, cal.targets(config))
    print(name, start, {k: round(v, 4) for k, v in row.items()}, flush=True)
allf = pd.concat(frames, ignore_index=True)
allf.to_parquet("results/calibration/so101_v5_diag_trials.parquet")
g = allf.groupby(["point", "block_start", "policy", "seed"])[["success", "success_loose"]].mean()
print(g.round(4).to_string())
