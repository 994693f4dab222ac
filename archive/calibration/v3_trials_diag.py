"""Diagnostic (not part of rule v4): v3's point, trials 0-999 of every (policy, seed) on
study_seed + 1, per-trial outcomes saved, to measure the draws' shared (pose, surface) noise."""

import pandas as pd
from points import V3  # archive/calibration/points.py (the script's folder is on sys.path)

from evalsim.config import load_config
from evalsim.sim import calibration_scoring as scoring

config = load_config("config/config.yaml")
point = V3
frames = scoring.run_jobs(2, scoring.policy_jobs(config, point, 0, 1000))
df = pd.concat(frames, ignore_index=True)
df.to_parquet("results/calibration/so101_v3_point_trials_0_999.parquet")
print(len(df))
