"""Tables out: every table product is a CSV (machine), Markdown (people) and LaTeX (papers).

Table builders in ``evalsim.products`` return a ``pandas.DataFrame``; they may set
``df.attrs["title"]`` and ``df.attrs["note"]``. The title becomes the Markdown heading and the
LaTeX caption; the note becomes the paragraph under the Markdown table and a footnote-size
paragraph under the LaTeX tabular. For the HTML report, :func:`report_html` writes the table's
page (title, rows at the panel's full width, note), which is the table's entry in the report,
and :func:`report_rst` the note as a reStructuredText fragment, which the table's caption in
``workflow/report/`` includes, so the sidebar shows the caption and the note, not the rows.
Floats are written with a fixed format so that the same numbers give the same bytes; every
file is written atomically (:func:`evalsim.io.atomic_path`).
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pandas as pd

from evalsim.io import atomic_path, write_text_atomic

__all__ = [
    "FLOAT_FORMAT",
    "note_html",
    "note_rst",
    "read_table",
    "report_html",
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
    spans = _note_spans(df)
    if not spans:
        return "\n"
    out = [f"``{text}``" if code else _rst_text(text) for code, text in spans]
    return "**Note.** " + "".join(out) + "\n"


def _note_spans(df: pd.DataFrame) -> list[tuple[bool, str]]:
    """The table's note (whitespace collapsed) as (is a Markdown code span, text) pieces, the
    code spans stripped; an unmatched backtick makes the whole note text. Empty without a
    note."""
    note = " ".join(str(df.attrs.get("note") or "").split())
    if not note:
        return []
    parts = note.split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: treat it as text
        parts = [note.replace("`", "'")]
    return [
        (True, part.strip()) if i % 2 and part.strip() else (False, part)
        for i, part in enumerate(parts)
    ]


# The table's page in the HTML report (shown full width beside the sidebar, in an iframe).
# Headers may wrap at underscores, text cells at spaces; numbers do not. When the table is
# wider than the panel, the page's script lowers the font size (down to _MIN_FONT_PX) until
# the last column is in view, and tells the report page (postMessage) how it fits, which the
# browser test reads.
_MIN_FONT_PX = 8
_PAGE_STYLE = (
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#0f172a;"
    "margin:0;padding:10px 14px}"
    "h1{font-size:15px;margin:0 0 8px}"
    "table.evalsim-table{border-collapse:collapse;font-size:13px;"
    "font-variant-numeric:tabular-nums}"
    "table.evalsim-table th{position:sticky;top:0;background:#e2e8f0;vertical-align:bottom;"
    "text-align:right;padding:.25em .45em;font-weight:600;overflow-wrap:normal}"
    "table.evalsim-table td{padding:.15em .45em;border-bottom:1px solid #cbd5e1;"
    "text-align:right;white-space:nowrap}"
    "table.evalsim-table td.t{white-space:normal;overflow-wrap:anywhere;text-align:left;"
    "min-width:4em}"
    "table.evalsim-table th:first-child,table.evalsim-table td:first-child{text-align:left}"
    "table.evalsim-table tbody tr:nth-child(even){background:#f8fafc}"
    "p.note{font-size:13px;line-height:1.45;max-width:75em;margin:10px 0}"
    "p.part{font-size:12px;color:#475569;margin:12px 0 4px}"
    "code{background:#f1f5f9;padding:0 2px}"
)
_FIT_SCRIPT = """
(function () {
  var tables = Array.prototype.slice.call(document.querySelectorAll("table.evalsim-table"));
  var size = parseFloat(getComputedStyle(tables[0]).fontSize);
  function lastRight() {
    return Math.max.apply(null, tables.map(function (table) {
      var row = table.rows[0];
      return row.cells[row.cells.length - 1].getBoundingClientRect().right;
    }));
  }
  function setSize() {
    tables.forEach(function (table) { table.style.fontSize = size + "px"; });
  }
  function fit() {
    var width = document.documentElement.clientWidth;
    while (lastRight() > width && size > %(min)d) {
      size -= 0.5;
      setSize();
    }
    var right = lastRight();
    if (window.parent !== window) {
      window.parent.postMessage({evalsimTable: %(id)s, fontPx: size, lastColumnRight: right,
        width: width, fits: right <= width}, "*");
    }
  }
  fit();
  window.addEventListener("resize", function () {
    size = %(max)d; setSize(); fit();
  });
})();
"""


def _html_text(text: object) -> str:
    return html.escape(str(text), quote=False)


def _html_header(text: object) -> str:
    """A column name that may break after its underscores (``fisher_<wbr>power``)."""
    return _html_text(text).replace("_", "_<wbr>")


def _html_cell(text: str) -> str:
    """A cell: numbers and short words stay on one line, right-aligned; other text
    (``class="t"``: with spaces, or longer than 12 characters) may wrap."""
    try:
        float(text)
    except ValueError:
        if " " in text or len(text) > 12:
            return f'<td class="t">{_html_text(text)}</td>'
    return f"<td>{_html_text(text)}</td>"


def note_html(df: pd.DataFrame) -> str:
    """The table's note as one HTML paragraph (Markdown code spans as ``<code>``); empty
    when the table has no note."""
    spans = _note_spans(df)
    if not spans:
        return ""
    out = [f"<code>{_html_text(t)}</code>" if code else _html_text(t) for code, t in spans]
    return '<p class="note"><strong>Note.</strong> ' + "".join(out) + "</p>"


#: Widest table the report's main panel shows as one block. At 1400 px with the category
#: list open, 16 columns fit at 11 px or more; 22 (T08) needed 8.5 px. A wider table is
#: shown as stacked blocks that each repeat its leading text columns (:func:`column_blocks`).
REPORT_MAX_COLUMNS = 16
#: At most this many leading text columns (names: policy, task, section, ...) are repeated.
_MAX_KEY_COLUMNS = 4


def column_blocks(df: pd.DataFrame, max_columns: int = REPORT_MAX_COLUMNS) -> list[list[str]]:
    """The columns of each block a table is shown in: one block when it has at most
    ``max_columns``; else its leading text columns (up to four, the row's names) in every
    block, and the other columns in order, split into the fewest blocks of at most
    ``max_columns`` columns each, of sizes differing by at most one."""
    columns = [str(c) for c in df.columns]
    if len(columns) <= max_columns:
        return [columns]
    keys = []
    for c in columns[:_MAX_KEY_COLUMNS]:
        if pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]):
            break
        keys.append(c)
    rest = columns[len(keys) :]
    per_block = max(1, max_columns - len(keys))
    blocks = -(-len(rest) // per_block)
    size, extra = divmod(len(rest), blocks)
    out, start = [], 0
    for i in range(blocks):
        stop = start + size + (1 if i < extra else 0)
        out.append(keys + rest[start:stop])
        start = stop
    return out


def report_html(df: pd.DataFrame, table: str = "", digits: int = 4) -> str:
    """The table's page for the HTML report: its title, every row (cells as in the Markdown)
    at the panel's full width, and its note under the rows. A table wider than
    :data:`REPORT_MAX_COLUMNS` is shown as stacked blocks of its columns
    (:func:`column_blocks`), each with the row names.

    ``table`` is the product ID (e.g. ``T10``), which the page reports to the report page
    with its fit (``postMessage``: ``{evalsimTable, fontPx, lastColumnRight, width, fits}``).
    """
    title = str(df.attrs.get("title") or table)
    cells = [[_cell(v, digits) for v in row] for row in df.itertuples(index=False)]
    index = {str(c): i for i, c in enumerate(df.columns)}
    blocks = column_blocks(df)
    parts = []
    for i, columns in enumerate(blocks):
        head = "".join(f"<th>{_html_header(c)}</th>" for c in columns)
        body = "\n".join(
            "<tr>" + "".join(_html_cell(row[index[c]]) for c in columns) + "</tr>" for row in cells
        )
        ident = ' id="evalsim-table"' if i == 0 else ""
        label = (
            f'<p class="part">Columns, part {i + 1} of {len(blocks)}</p>\n'
            if len(blocks) > 1
            else ""
        )
        parts.append(
            f'{label}<table class="evalsim-table"{ident}>\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>\n"
        )
    script = _FIT_SCRIPT % {"id": json.dumps(table), "min": _MIN_FONT_PX, "max": 13}
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_html_text(title)}</title>\n<style>{_PAGE_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{_html_text(title)}</h1>\n"
        + "".join(parts)
        + f"{note_html(df)}\n<script>{script}</script>\n</body>\n</html>\n"
    )


def report_rst(df: pd.DataFrame) -> str:
    """The table's note as reStructuredText, for the table's caption in the report's sidebar.

    The rows are not here: the report shows them full width in the main panel
    (:func:`report_html`); the sidebar keeps the caption and the note (:func:`note_rst`).
    """
    return note_rst(df)


def write_table(
    df: pd.DataFrame,
    csv_path: str | os.PathLike,
    md_path: str | os.PathLike,
    tex_path: str | os.PathLike | None = None,
    rst_path: str | os.PathLike | None = None,
    html_path: str | os.PathLike | None = None,
) -> None:
    """Write ``df`` to ``csv_path``, ``md_path`` and, if given, ``tex_path``, ``rst_path``
    (the note for the table's caption in the report, :func:`report_rst`) and ``html_path``
    (the table's page in the report, :func:`report_html`), each atomically.

    The LaTeX label is :func:`table_id` of ``csv_path``.
    """
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    write_text_atomic(md_path, to_markdown(df))
    if tex_path is not None:
        write_text_atomic(tex_path, to_latex(df, table_id(csv_path)))
    if rst_path is not None:
        write_text_atomic(rst_path, report_rst(df))
    if html_path is not None:
        write_text_atomic(html_path, report_html(df, table_id(csv_path)))


def read_table(csv_path: str | os.PathLike) -> pd.DataFrame:
    """Read a table product back (the ledger and the tests use this)."""
    return pd.read_csv(csv_path)
