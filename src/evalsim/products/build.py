"""Run one product's builder: read its inputs, call it, write the table or the figure.

The one job script of every manifest product (``workflow/scripts/make_product.py``) calls
:func:`build_product`; :mod:`evalsim.products.manifest` says what each product's builder,
inputs and arguments are.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from evalsim.tables import write_table

# Heavy dependencies are imported where a product needs them: matplotlib and seaborn
# (evalsim.figures) for figures, MuJoCo (evalsim.sim.pool) and the sequential kernels
# (evalsim.stats.sequential.io) for design inputs. Every product is a process of its own,
# so a table job does not pay about 1 s of CPU for imports it never uses.

__all__ = ["build_product", "read_inputs", "resolve_builder"]

log = logging.getLogger(__name__)


def resolve_builder(name: str):
    """The builder function ``"module:function"`` under :mod:`evalsim.products`; ``module``
    may be dotted (``"design.detection:mde_table"``).

    The manifest names builders rather than importing them so that Snakemake can read it
    without loading every builder's dependencies (see :mod:`evalsim.products.manifest`).
    """
    module_name, func_name = name.split(":")
    return getattr(importlib.import_module(f"evalsim.products.{module_name}"), func_name)


def read_inputs(inputs: Mapping[str, str | list[str]]) -> dict:
    """Inputs by name: design files as ``{stem: design}``; beside designs, the pools by
    :func:`evalsim.sim.pool.read_pool`; otherwise Parquet and CSV files as DataFrames, and a
    list of them as ``{stem: DataFrame}``."""
    if "designs" in inputs:
        from evalsim.sim.pool import read_pool  # heavy (MuJoCo): see the module's imports
        from evalsim.stats.sequential.io import load_design  # heavy (numba kernels)

        out = {"designs": {Path(p).stem: load_design(p) for p in inputs["designs"]}}
        if "pools" in inputs:
            out["pools"] = read_pool(inputs["pools"])
        return out
    return {
        name: {Path(p).stem: _read(p) for p in path} if isinstance(path, list) else _read(path)
        for name, path in inputs.items()
    }


def _read(path: str) -> pd.DataFrame:
    return pd.read_parquet(path) if str(path).endswith(".parquet") else pd.read_csv(path)


def build_product(builder: str, inputs: Mapping, outputs: Mapping, kwargs: Mapping) -> None:
    """Build one product: a table (outputs csv, md, tex, rst, html) or a figure (png, pdf)."""
    is_table = "csv" in outputs
    if not is_table:  # the house style before the figure is drawn (fonts, sizes, palette)
        from evalsim.figures import save_figure, set_style  # heavy (matplotlib, seaborn)

        set_style()
    result = resolve_builder(builder)(**read_inputs(inputs), **dict(kwargs))
    if is_table:
        write_table(
            result, outputs["csv"], outputs["md"], outputs["tex"], outputs["rst"], outputs["html"]
        )
        log.info("wrote %s (%d rows)", outputs["csv"], len(result))
    else:
        save_figure(result, outputs["png"], outputs["pdf"])
        log.info("wrote %s", outputs["png"])
