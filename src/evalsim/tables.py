"""Tables out: every table product is a CSV (machine) and a Markdown file (people).

Table builders in ``evalsim.products`` return a ``pandas.DataFrame``; they may set
``df.attrs["title"]`` and ``df.attrs["note"]`` which become the Markdown heading and the
paragraph under the table. Floats are written with a fixed format so that the same numbers
give the same bytes.
"""

from __future__ import annotations

import os

import pandas as pd

from evalsim.io import atomic_path, write_text_atomic

FLOAT_FORMAT = "%.10g"


def to_markdown(df: pd.DataFrame, digits: int = 4) -> str:
    """Render ``df`` as a GitHub Markdown table (no extra dependency)."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            if value != value:  # NaN
                return ""
            return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3g}"
        return str(value).replace("|", "\\|")

    header = "| " + " | ".join(str(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    parts = []
    if df.attrs.get("title"):
        parts += [f"## {df.attrs['title']}", ""]
    parts += [header, rule, *rows]
    if df.attrs.get("note"):
        parts += ["", str(df.attrs["note"])]
    return "\n".join(parts) + "\n"


def write_table(df: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike) -> None:
    """Write ``df`` to ``csv_path`` and ``md_path`` atomically."""
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    write_text_atomic(md_path, to_markdown(df))


def read_table(csv_path: str | os.PathLike) -> pd.DataFrame:
    """Read a table product back (the ledger and the tests use this)."""
    return pd.read_csv(csv_path)
