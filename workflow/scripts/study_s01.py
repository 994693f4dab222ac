"""Build S01, lesson 25's experiment as a locked study, from the pools (studies_s01)."""

import logging
import sys
from pathlib import Path

from evalsim.products.studies import build_lesson_study
from evalsim.sim.pool import read_pool

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO)
pools = read_pool(snakemake.input.pools)  # noqa: F821
folder = Path(snakemake.output.lock).parent  # noqa: F821
doc = build_lesson_study(pools, folder, **dict(snakemake.params.kwargs))  # noqa: F821
logging.info("%s: %s", folder, doc["headline"]["text"])
