"""Tables out: every table product is a CSV (machine), Markdown (people) and LaTeX (papers).

Table builders in ``evalsim.products`` return a ``pandas.DataFrame``; they may set
``df.attrs["title"]`` and ``df.attrs["note"]``. The title becomes the Markdown heading and the
LaTeX caption; the note becomes the paragraph under the Markdown table and a footnote-size
paragraph under the LaTeX tabular. For the HTML report, :func:`report_rst` writes the table
and its note as a reStructuredText fragment, which each table's caption in
``workflow/report/`` includes, so the report shows the note beside the table.
Floats are written with a fixed format so that the same numbers give the same bytes; every
file is written atomically (:func:`evalsim.io.atomic_path`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from evalsim.io import atomic_path, write_text_atomic

__all__ = [
    "FLOAT_FORMAT",
    "note_rst",
    "read_table",
    "report_rst",
    "table_id",
    "to_latex",
    "to_markdown",
    "write_table",
]

FLOAT_FORMAT = "%.10g"

# Characters LaTeX treats specially in text, and their text-mode spelling.
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# Unicode the tables use that pdfLaTeX's default UTF-8 input cannot typeset; other
# characters are passed through (XeLaTeX and LuaLaTeX typeset them).
_LATEX_UNICODE = {
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "μ": r"$\mu$",
    "ρ": r"$\rho$",
    "σ": r"$\sigma$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≈": r"$\approx$",
    "≠": r"$\neq$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "−": r"$-$",
    "√": r"$\surd$",
    "·": r"$\cdot$",
    "…": r"\ldots{}",
    "–": "--",
    "—": "---",
}
# reStructuredText inline markup characters: escaped so a note is always plain text.
_RST_SPECIALS = set("\\*_`|[]<>:")

_ID = re.compile(r"^(T\d{2})(?:_|$)")


def table_id(path: str | os.PathLike) -> str:
    """The product ID of a table file: ``T07`` for ``results/tables/T07_pools.csv``.

    Tables without a reserved ``T``/``F`` number (e.g. ``sim_pool_rates``, or ``F03_peeking``,
    the table behind figure F03) keep their whole file stem, so that no two labels collide.
    """
    stem = Path(path).name.split(".")[0]
    match = _ID.match(stem)
    return match.group(1) if match else stem


def _cell(value: object, digits: int) -> str:
    """A cell as text: floats to ``digits`` significant digits, NaN as empty."""
    if isinstance(value, float):
        if value != value:  # NaN
            return ""
        return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3g}"
    return str(value)


def to_markdown(df: pd.DataFrame, digits: int = 4) -> str:
    """Render ``df`` as a GitHub Markdown table (no extra dependency)."""

    def cell(value: object) -> str:
        return _cell(value, digits).replace("|", "\\|")

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


def latex_escape(text: object) -> str:
    """``text`` as LaTeX text: specials escaped, common math symbols spelled for pdfLaTeX."""
    out = []
    for ch in str(text):
        out.append(_LATEX_SPECIALS.get(ch) or _LATEX_UNICODE.get(ch) or ch)
    return "".join(out)


def to_latex(df: pd.DataFrame, label: str, digits: int = 4) -> str:
    """Render ``df`` as a LaTeX ``table`` float with booktabs rules.

    The caption is ``df.attrs["title"]`` (or ``label`` without one), the label is ``label``
    (the product ID, see :func:`table_id`), and the note follows the tabular in footnote size.
    Numeric columns are right-aligned, others left-aligned; cells use the Markdown digits.
    Needs ``\\usepackage{booktabs}`` in the preamble.

    References
    ----------
    .. [1] Fear, S. (2020). *Publication quality tables in LaTeX* (the booktabs package
       documentation), CTAN.
    """
    align = "".join(
        "r"
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        else "l"
        for dtype in df.dtypes
    )
    title = df.attrs.get("title") or label
    lines = [
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{latex_escape(title)}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(latex_escape(c) for c in df.columns) + " \\\\",
        "\\midrule",
    ]
    for row in df.itertuples(index=False):
        lines.append(" & ".join(latex_escape(_cell(v, digits)) for v in row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if df.attrs.get("note"):
        lines += ["\\par\\medskip", f"{{\\footnotesize {latex_escape(df.attrs['note'])}\\par}}"]
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def _rst_text(text: str) -> str:
    return "".join("\\" + ch if ch in _RST_SPECIALS else ch for ch in text)


def note_rst(df: pd.DataFrame) -> str:
    """The table's note as one reStructuredText paragraph for the HTML report's caption.

    Markdown code spans (```x```) become inline literals; every other character that rst
    would read as markup (``*``, ``_``, ``|``, ...) is escaped, so any note renders as
    written. Empty (a blank line) when the table has no note.
    """
    note = " ".join(str(df.attrs.get("note") or "").split())
    if not note:
        return "\n"
    parts = note.split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: treat it as text
        parts = [note.replace("`", "'")]
    out = []
    for i, part in enumerate(parts):
        if i % 2 and part.strip():
            out.append(f"``{part.strip()}``")
        else:
            out.append(_rst_text(part))
    return "**Note.** " + "".join(out) + "\n"


# Cell padding and rules for the report's rendering of a table (its page resets table CSS).
_REPORT_STYLE = (
    "<style>table.evalsim-table{border-collapse:collapse;margin:.5em 0}"
    "table.evalsim-table th,table.evalsim-table td{padding:.1em .5em;"
    "border-bottom:1px solid #64748b;text-align:right;white-space:nowrap}</style>"
)


def report_rst(df: pd.DataFrame, digits: int = 4) -> str:
    """The table (cells as in the Markdown) and its note as reStructuredText for the report.

    A ``csv-table`` with inline content, every cell escaped as in :func:`note_rst`, then the
    note; a short ``raw`` style block gives the cells padding in Snakemake's report page.
    """

    def quoted(text: object) -> str:
        return '"' + _rst_text(str(text)).replace('"', '""') + '"'

    lines = [".. raw:: html", "", "   " + _REPORT_STYLE, ""]
    lines += [".. csv-table::", "   :header-rows: 1", "   :class: evalsim-table", ""]
    lines.append("   " + ",".join(quoted(c) for c in df.columns))
    for row in df.itertuples(index=False):
        lines.append("   " + ",".join(quoted(_cell(v, digits)) for v in row))
    return "\n".join(lines) + "\n\n" + note_rst(df)


def write_table(
    df: pd.DataFrame,
    csv_path: str | os.PathLike,
    md_path: str | os.PathLike,
    tex_path: str | os.PathLike | None = None,
    rst_path: str | os.PathLike | None = None,
) -> None:
    """Write ``df`` to ``csv_path``, ``md_path`` and, if given, ``tex_path`` and
    ``rst_path`` (the table and its note for the report, :func:`report_rst`), each atomically.

    The LaTeX label is :func:`table_id` of ``csv_path``.
    """
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    write_text_atomic(md_path, to_markdown(df))
    if tex_path is not None:
        write_text_atomic(tex_path, to_latex(df, table_id(csv_path)))
    if rst_path is not None:
        write_text_atomic(rst_path, report_rst(df))


def read_table(csv_path: str | os.PathLike) -> pd.DataFrame:
    """Read a table product back (the ledger and the tests use this)."""
    return pd.read_csv(csv_path)
