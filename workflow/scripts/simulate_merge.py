"""Merge pool files (chunks or per-seed pools) into one sorted Parquet file."""

import logging
import sys

from evalsim.sim.pool import POOL_SORT, SWEEP_SORT, merge_pools

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")

sort = SWEEP_SORT if snakemake.params.kind == "sweep" else POOL_SORT  # noqa: F821
cfg = snakemake.params.job  # noqa: F821  (evalsim.sim.jobs: the merged files' own config)
df = merge_pools(list(snakemake.input), snakemake.output[0], cfg, sort=sort)  # noqa: F821
logging.info("wrote %s: %d rows from %d files", snakemake.output[0], len(df), len(snakemake.input))  # noqa: F821
