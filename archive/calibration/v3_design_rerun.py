"""Version 3's design rerun (deterministic draws): the rows rule version 6 takes its fixed-pad
slopes from; written as results/calibration/so101_v3.csv (stage "design", as run_rule's)."""

import logging

from evalsim.config import load_config
from evalsim.io import atomic_path
from evalsim.sim import calibrate_so101 as cal
from evalsim.sim import calibration_steps as steps

logging.basicConfig(level=logging.INFO, format="%(message)s")
config = load_config("config/config.yaml")
coded, design = steps.run_design(config, cal.RULES[3], processes=2)
design["chosen"] = False
with atomic_path("results/calibration/so101_v3.csv") as tmp:
    design.to_csv(tmp, index=False, float_format="%.6g")
print(design.round(4).to_string(index=False))
