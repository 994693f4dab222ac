"""Build one sequential table or figure (T31-T33, F05-F07) from design files and pools.

params.builder: "module:function" under evalsim.products; input.designs: design files (the
builder gets {name: design}); input.pools (optional): the pools Parquet; params.kwargs: config.
"""

import importlib
import logging
import sys
from pathlib import Path

from evalsim.sim.pool import read_pool
from evalsim.stats.sequential_io import load_design

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO)

module_name, func_name = snakemake.params.builder.split(":")  # noqa: F821
builder = getattr(importlib.import_module(f"evalsim.products.{module_name}"), func_name)
inputs = {"designs": {Path(p).stem: load_design(p) for p in snakemake.input.designs}}  # noqa: F821
if "pools" in snakemake.input.keys():  # noqa: F821
    inputs["pools"] = read_pool(snakemake.input.pools)  # noqa: F821
is_table = "csv" in snakemake.output.keys()  # noqa: F821
if not is_table:  # the house style before the figure is drawn (fonts, sizes, palette)
    from evalsim.figures import set_style

    set_style()
result = builder(**inputs, **dict(snakemake.params.kwargs))  # noqa: F821
if is_table:
    from evalsim.tables import write_table

    out = snakemake.output  # noqa: F821
    write_table(result, out.csv, out.md, out.tex, out.rst, out.html)
else:
    from evalsim.figures import save_figure

    save_figure(result, snakemake.output.png, snakemake.output.pdf)  # noqa: F821
logging.info("wrote %s", ", ".join(snakemake.output))  # noqa: F821
