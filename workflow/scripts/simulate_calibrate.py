"""Rerun the calibration sweep of the configured scene on the workflow's config; write its CSV."""

import logging
import sys

import pandas as pd

from evalsim.io import atomic_path
from evalsim.sim import calibrate, calibrate_so101

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
for name in (
    "evalsim.sim.calibrate",
    "evalsim.sim.calibrate_so101",
    "evalsim.sim.calibration_scoring",
):
    logging.getLogger(name).setLevel(logging.INFO)  # progress

p = snakemake.params  # noqa: F821
cfg, cores = snakemake.config, snakemake.threads  # noqa: F821
if cfg["scene"]["name"] == "so101":  # the rule of evalsim.sim.calibrate_so101
    res = calibrate_so101.run_rule(cfg, processes=cores)
elif p.single:  # gripper_table: one sweep of p.grid, no refinement
    res = calibrate.sweep(cfg, grid=p.grid, processes=cores)
else:  # gripper_table: stage 1 on p.grid (None = DEFAULT_GRID), then the refinement rounds
    stage1, stage2, _ = calibrate.two_stage(cfg, cores, p.grid)
    res = pd.concat([stage1.assign(stage=1), stage2.assign(stage=2)], ignore_index=True)
with atomic_path(snakemake.output[0]) as tmp:  # noqa: F821
    res.to_csv(tmp, index=False, float_format="%.6g")
print(res.loc[res["chosen"]].to_string(index=False), file=sys.stderr)
