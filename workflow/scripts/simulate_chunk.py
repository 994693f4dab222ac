"""Run one chunk of trials (a policy's pool chunk, its real twins, or one sigma of the sweep)
into Parquet."""

import logging
import sys

from evalsim.sim.pool import write_pool
from evalsim.sim.rollout import run_policy_trials, run_sweep_trials
from evalsim.sim.twin import run_twin_trials

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")

p = snakemake.params  # noqa: F821
cfg = p.job  # only what changes this job's output (evalsim.sim.jobs), not the whole config
if p.kind == "pool":
    df = run_policy_trials(cfg, p.task, p.policy, p.seed, p.start, p.stop)
    write_pool(df, snakemake.output[0], cfg)  # noqa: F821
elif p.kind == "twin":
    df = run_twin_trials(cfg, p.gap, p.task, p.policy, p.seed, p.start, p.stop)
    write_pool(df, snakemake.output[0], cfg)  # noqa: F821
else:
    df = run_sweep_trials(cfg, p.sigma_mm, 0, p.trials)
    write_pool(df, snakemake.output[0], cfg, sort=["sigma_mm", "trial"])  # noqa: F821
logging.info("wrote %s: %d trials, %d successes", snakemake.output[0], len(df), df.success.sum())  # noqa: F821
