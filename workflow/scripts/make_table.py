"""Build one table product by calling an evalsim builder named in the rule's params.

params.builder: "module:function" under evalsim.products; params.kwargs: plain values from
the config; named inputs (*.parquet / *.csv) are read into DataFrames and passed by name.
"""

import importlib
import logging
import sys

import pandas as pd

from evalsim.tables import write_table

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
logging.basicConfig(stream=sys.stderr, level=logging.INFO)

module_name, func_name = snakemake.params.builder.split(":")  # noqa: F821
builder = getattr(importlib.import_module(f"evalsim.products.{module_name}"), func_name)
frames = {
    name: pd.read_parquet(path) if str(path).endswith(".parquet") else pd.read_csv(path)
    for name, path in snakemake.input.items()  # noqa: F821
}
df = builder(**frames, **dict(snakemake.params.kwargs))  # noqa: F821
out = snakemake.output  # noqa: F821
write_table(df, out.csv, out.md, out.tex, out.rst, out.html)
logging.info("wrote %s (%d rows)", snakemake.output.csv, len(df))  # noqa: F821
