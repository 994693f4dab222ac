"""F04: render the scene with MuJoCo's offscreen renderer (evalsim.sim.render)."""

import logging
import os
import sys

os.environ["MUJOCO_GL"] = snakemake.params.backend  # noqa: F821  (before mujoco is imported)
os.environ.setdefault("PYOPENGL_PLATFORM", snakemake.params.backend)  # noqa: F821

import pandas as pd  # noqa: E402

from evalsim.figures import save_figure, set_style  # noqa: E402
from evalsim.sim.render import render_scene_figure  # noqa: E402

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO)
set_style()
fig = render_scene_figure(snakemake.config, pd.read_parquet(snakemake.input.pools))  # noqa: F821
save_figure(fig, snakemake.output.png, snakemake.output.pdf)  # noqa: F821
logging.info("wrote %s with MUJOCO_GL=%s", snakemake.output.png, os.environ["MUJOCO_GL"])  # noqa: F821
