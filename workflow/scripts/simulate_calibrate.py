"""Rerun the calibration sweep (evalsim.sim.calibrate) on the workflow's config; write its CSV."""

import logging
import sys

import pandas as pd

from evalsim.io import atomic_path
from evalsim.sim.calibrate import sweep, two_stage

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
logging.getLogger("evalsim.sim.calibrate").setLevel(logging.INFO)  # progress per 10 jobs

p = snakemake.params  # noqa: F821
cfg, cores = snakemake.config, snakemake.threads  # noqa: F821
if p.single:  # one sweep of p.grid, no refinement
    res = sweep(cfg, grid=p.grid, processes=cores)
else:  # the rule: stage 1 on p.grid (None = DEFAULT_GRID), then the refinement rounds
    stage1, stage2, _ = two_stage(cfg, cores, p.grid)
    res = pd.concat([stage1.assign(stage=1), stage2.assign(stage=2)], ignore_index=True)
with atomic_path(snakemake.output[0]) as tmp:  # noqa: F821
    res.to_csv(tmp, index=False, float_format="%.6g")
print(res.loc[res["chosen"]].to_string(index=False), file=sys.stderr)
