"""Build one sequential design from the config and write its design file (sequential_design)."""

import logging
import sys

from evalsim.products.sequential.designs import build_design
from evalsim.stats.sequential.io import save_design

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO)

design = build_design(**dict(snakemake.params.kwargs))  # noqa: F821
save_design(design, snakemake.output[0])  # noqa: F821
logging.info("wrote %s: %r", snakemake.output[0], design)  # noqa: F821
