"""Build one table or figure of the product manifest (evalsim.products.manifest).

params.builder: "module:function" under evalsim.products; params.kwargs: its arguments from
the config. Named inputs reach the builder by name: Parquet and CSV files as DataFrames,
design files (input "designs") as {name: design}, with the pools then read by read_pool. A
table output (csv, md, tex, rst, html) is written by write_table, a figure (png, pdf) by
save_figure.
"""

import logging
import sys

from evalsim.products.build import build_product

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO)
build_product(
    snakemake.params.builder,  # noqa: F821
    dict(snakemake.input.items()),  # noqa: F821
    dict(snakemake.output.items()),  # noqa: F821
    dict(snakemake.params.kwargs),  # noqa: F821
)
