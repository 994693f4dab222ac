"""Adoption step (rule v4, step 7): version 3's point rerun on its final trials 500-999."""

import logging

import pandas as pd
from points import V3  # archive/calibration/points.py (the script's folder is on sys.path)

from evalsim.config import load_config
from evalsim.sim import calibration_scoring as scoring

logging.basicConfig(level=logging.INFO, format="%(message)s")
config = load_config("config/config.yaml")
point = V3
row = scoring.score_point(config, point, 500, 1000, processes=2)
row["accepted"] = scoring.accepted(row, scoring.targets(config))
pd.DataFrame([row]).to_csv(
    "results/calibration/so101_v3_final_rerun.csv", index=False, float_format="%.6g"
)
print(pd.Series(row).to_string())
