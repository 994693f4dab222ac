"""Simulate success against a constant perception offset for the drift stage (T36, F10)."""

import logging
import sys

from evalsim.products.drift import CURVE_SORT, simulate_offset_curve
from evalsim.sim.pool import write_pool

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")

p = snakemake.params  # noqa: F821
cfg = p.job  # only what changes the curve (evalsim.sim.jobs.offset_job_config)
df = simulate_offset_curve(cfg, p.policies, p.offsets_mm, p.trials, snakemake.threads)  # noqa: F821
write_pool(df, snakemake.output[0], cfg, sort=CURVE_SORT)  # noqa: F821
logging.info("wrote %s: %d trials", snakemake.output[0], len(df))  # noqa: F821
