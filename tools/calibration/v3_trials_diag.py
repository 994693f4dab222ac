"""Diagnostic (not part of rule v4): v3's point, trials 0-999 of every (policy, seed) on
study_seed + 1, per-trial outcomes saved, to measure the draws' shared (pose, surface) noise."""

import pandas as pd

from evalsim.config import load_config
from evalsim.sim import calibrate_so101 as cal

config = load_config("config/config.yaml")
point = {
    "pad_friction_sd": 0.385,
    "grip_hold_fraction": 0.148,
    "pad_width_m": 0.026,
    "fixed_pad_extra_m": 0.0038,
}
frames = cal._map(2, cal._policy_jobs(config, point, 0, 1000))
df = pd.concat(frames, ignore_index=True)
df.to_parquet("results/calibration/so101_v3_point_trials_0_999.parquet")
print(len(df))
