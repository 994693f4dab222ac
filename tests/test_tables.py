"""Table writers: CSV, Markdown, LaTeX (booktabs), the report's note fragment and the
table's page in the report."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from docutils.core import publish_parts
from jinja2 import Environment

from evalsim.tables import (
    REPORT_MAX_COLUMNS,
    column_blocks,
    latex_escape,
    note_html,
    note_rst,
    report_html,
    report_rst,
    table_id,
    to_latex,
    to_markdown,
    write_table,
)

NOTE = (
    "doc_* columns quote the document; *_exact = the same at the pool rate; max_z = the "
    "largest |resampled - exact| / SE; z^2/4n^2 keeps Wilson open; 5% of σ ≤ 9 mm & "
    "`n_for_fisher_power` [sic] <b>: done."
)


@pytest.fixture
def df() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "policy": ["A", "B_2"],
            "sigma_mm": [9.0, 6.0],
            "k": [221, 263],
            "rate": [221 / 300, np.nan],
            "flag": [True, False],
        }
    )
    frame.attrs["title"] = "T07 - Table A: the pools (σ in mm, 100% & more)"
    frame.attrs["note"] = NOTE
    return frame


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("results/tables/T07_pools.csv", "T07"),
        ("results/tables/T10_compare.tex", "T10"),
        ("T29", "T29"),
        ("results/tables/F03_peeking.csv", "F03_peeking"),
        ("results/tables/sim_pool_rates.csv", "sim_pool_rates"),
        ("results/tables/T123_x.csv", "T123_x"),
    ],
)
def test_table_id(path, expected):
    assert table_id(path) == expected


def test_latex_is_a_booktabs_float_with_title_caption_and_id_label(df):
    tex = to_latex(df, "T07")
    lines = tex.splitlines()
    assert lines[0] == "\\begin{table}[htbp]" and lines[-1] == "\\end{table}"
    assert lines[2] == ("\\caption{T07 - Table A: the pools ($\\sigma$ in mm, 100\\% \\& more)}")
    assert lines[3] == "\\label{T07}"
    # numbers right-aligned, text and booleans left-aligned
    assert lines[4] == "\\begin{tabular}{lrrrl}"
    top, mid, bottom = (lines.index(r) for r in ("\\toprule", "\\midrule", "\\bottomrule"))
    assert top < mid < bottom and lines[bottom + 1] == "\\end{tabular}"
    assert lines[top + 1] == "policy & sigma\\_mm & k & rate & flag \\\\"
    body = lines[mid + 1 : bottom]
    assert body == [
        "A & 9 & 221 & 0.7367 & True \\\\",
        "B\\_2 & 6 & 263 &  & False \\\\",
    ]
    note = lines[bottom + 3]
    assert note.startswith("{\\footnotesize doc\\_* columns")
    assert (
        "\\textbar{}resampled - exact\\textbar{}" in note
        and "z\\textasciicircum{}2/4n\\textasciicircum{}2" in note
    )
    assert "5\\% of $\\sigma$ $\\leq$ 9 mm \\& " in note
    assert "\\textless{}b\\textgreater{}" in note


def test_latex_without_title_or_note_uses_the_label():
    tex = to_latex(pd.DataFrame({"x": [1]}), "sim_pool_rates")
    assert "\\caption{sim\\_pool\\_rates}" in tex and "\\label{sim_pool_rates}" in tex
    assert "footnotesize" not in tex


def test_latex_escape_covers_every_special():
    assert latex_escape("\\&%$#_{}~^|") == (
        "\\textbackslash{}\\&\\%\\$\\#\\_\\{\\}\\textasciitilde{}\\textasciicircum{}\\textbar{}"
    )
    assert latex_escape("a – b — c…") == "a -- b --- c\\ldots{}"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles(df, tmp_path):
    doc = (
        "\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
        + to_latex(df, "T07")
        + "\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    res = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-2000:]


def _rendered_text(rst: str) -> str:
    html = publish_parts(rst, writer="html")["body"]
    assert "system-message" not in html, html
    return html


def test_note_rst_renders_every_character_as_written(df):
    html = _rendered_text(note_rst(df))
    # docutils escapes HTML; compare against the note with the same escaping
    expected = (
        NOTE.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace(
            "`n_for_fisher_power`",
            '<tt class="docutils literal">n_for_fisher_power</tt>',
        )
    )
    assert "<strong>Note.</strong> " + expected in html


def test_note_rst_is_blank_without_a_note_and_survives_an_odd_backtick():
    assert note_rst(pd.DataFrame({"x": [1]})) == "\n"
    frame = pd.DataFrame({"x": [1]})
    frame.attrs["note"] = "one ` stray\nbacktick"
    html = _rendered_text(note_rst(frame))
    assert "one ' stray backtick" in html


def test_report_rst_is_the_note_only(df):
    """The sidebar shows the caption and the note; the rows are on the table's page."""
    html = _rendered_text(report_rst(df))
    assert "<table" not in html and "<strong>Note.</strong>" in html
    assert report_rst(df) == note_rst(df)


def test_report_html_shows_every_cell_escaped_then_the_note(df):
    frame = df.copy()
    frame.attrs = dict(df.attrs)
    frame["text"] = ['say "hi", *now*', "|x| <b> a_b `c`"]
    page = report_html(frame, "T07")
    assert page.startswith("<!doctype html>")
    assert "<h1>T07 - Table A: the pools (σ in mm, 100% &amp; more)</h1>" in page
    table = page.split('<table class="evalsim-table" id="evalsim-table">', 1)[1]
    table = table.split("</table>", 1)[0]
    head = re.findall(r"<th>(.*?)</th>", table, re.S)
    # column names may break after an underscore
    assert head == ["policy", "sigma_<wbr>mm", "k", "rate", "flag", "text"]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)
    cells = [re.findall(r"<td(?: class=\"t\")?>(.*?)</td>", r, re.S) for r in rows]
    assert cells == [
        ["A", "9", "221", "0.7367", "True", 'say "hi", *now*'],
        ["B_2", "6", "263", "", "False", "|x| &lt;b&gt; a_b `c`"],  # NaN: empty
    ]
    # text with spaces may wrap (class "t"); numbers and single words stay on one line
    assert '<td class="t">say "hi", *now*</td>' in table and "<td>0.7367</td>" in table
    assert page.index("</table>") < page.index("<strong>Note.</strong>")
    assert note_html(frame) in page
    assert '"T07"' in page.split("<script>", 1)[1]  # the page reports its fit under its ID


def _wide_frame(values: int, keys: int = 3) -> pd.DataFrame:
    """``keys`` text columns (the row names), then ``values`` numeric columns."""
    data = {f"name{i}": ["A", "B"] for i in range(keys)}
    data.update({f"v{j}": [j, j + 0.5] for j in range(values)})
    return pd.DataFrame(data)


@pytest.mark.parametrize("values", [21, 22, 23, 30, 44, 45, 70])
def test_column_blocks_split_a_wide_table_with_its_row_names_in_every_block(values):
    frame = _wide_frame(values)
    blocks = column_blocks(frame, max_columns=24)
    keys = ["name0", "name1", "name2"]
    if values + 3 <= 24:
        assert blocks == [list(frame.columns)]
        return
    # fewest blocks of at most 24 columns; every block starts with the row names
    need = -(-values // (24 - 3))
    assert len(blocks) == need
    assert all(b[:3] == keys and len(b) <= 24 for b in blocks)
    # every other column exactly once, in order; block sizes differ by at most one
    assert [c for b in blocks for c in b[3:]] == [f"v{j}" for j in range(values)]
    sizes = [len(b) for b in blocks]
    assert max(sizes) - min(sizes) <= 1


def test_column_blocks_repeat_only_leading_text_columns():
    frame = pd.DataFrame({"n": [1], "name": ["x"], **{f"v{j}": [j] for j in range(30)}})
    blocks = column_blocks(frame, max_columns=24)
    assert [b[0] for b in blocks] == ["n", "v14"]  # a numeric first column is no row name
    many = _wide_frame(30, keys=6)
    assert all(b[:4] == ["name0", "name1", "name2", "name3"] for b in column_blocks(many, 24))


def test_report_html_shows_a_wide_table_as_stacked_blocks_of_all_cells(df):
    frame = _wide_frame(REPORT_MAX_COLUMNS + 5)
    frame.attrs = dict(df.attrs)
    page = report_html(frame, "T34")
    tables = re.findall(r'<table class="evalsim-table"[^>]*>(.*?)</table>', page, re.S)
    assert len(tables) == 2 and page.count('id="evalsim-table"') == 1
    assert "part 1 of 2" in page and "part 2 of 2" in page
    seen = {}
    for table in tables:
        head = [h.replace("<wbr>", "") for h in re.findall(r"<th>(.*?)</th>", table, re.S)]
        assert head[:3] == ["name0", "name1", "name2"] and len(head) <= REPORT_MAX_COLUMNS
        rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)
        for r, row in enumerate(rows):
            for h, cell in zip(head, re.findall(r"<td[^>]*>(.*?)</td>", row, re.S), strict=True):
                seen[(r, h)] = cell
    # every cell of the frame, once per block it is in, as the Markdown shows it
    for r, row in enumerate(frame.itertuples(index=False)):
        for h, v in zip(frame.columns, row, strict=True):
            assert seen[(r, h)] == str(v if isinstance(v, str) else f"{v:.4g}"), (r, h)
    assert page.rindex("</table>") < page.index("<strong>Note.</strong>")
    # the fit script sizes every block together
    assert 'querySelectorAll("table.evalsim-table")' in page


def test_note_html_escapes_and_sets_code_spans(df):
    html = note_html(df)
    assert html.startswith('<p class="note"><strong>Note.</strong> doc_* columns quote')
    assert "<code>n_for_fisher_power</code>" in html and "&lt;b&gt;: done." in html
    assert note_html(pd.DataFrame({"x": [1]})) == ""


def test_report_caption_includes_the_note_fragment(df, tmp_path, repo, monkeypatch):
    """Render a table's caption as Snakemake's report does (Jinja, then docutils in the
    working directory): the caption and the note written by write_table appear in the
    HTML, the rows do not (they are on the table's page)."""
    monkeypatch.chdir(tmp_path)
    paths = {
        "csv": "results/tables/T10_compare.csv",
        "md": "results/tables/T10_compare.md",
        "tex": "results/tables/T10_compare.tex",
        "rst": "results/report/tables/T10_compare.rst",
        "html": "results/report/tables/T10_compare.html",
    }
    write_table(df, **{f"{k}_path": v for k, v in paths.items()})
    caption = (repo / "workflow" / "report" / "T10_compare.rst").read_text(encoding="utf-8")
    snakemake = SimpleNamespace(output=SimpleNamespace(**paths))
    rst = Environment(trim_blocks=True, lstrip_blocks=True).from_string(caption)
    html = _rendered_text(rst.render(snakemake=snakemake))
    assert "Table E of document 000" in html
    assert "<strong>Note.</strong> doc_* columns quote the document" in html
    assert "evalsim-table" not in html and "B_2" not in html
    page = (tmp_path / paths["html"]).read_text(encoding="utf-8")
    assert "<td>B_2</td>" in page and '"T10"' in page


def test_write_table_writes_four_consistent_files_atomically(df, tmp_path):
    out = {
        "csv_path": tmp_path / "t" / "T07_pools.csv",
        "md_path": tmp_path / "t" / "T07_pools.md",
        "tex_path": tmp_path / "t" / "T07_pools.tex",
        "rst_path": tmp_path / "notes" / "T07_pools.rst",
        "html_path": tmp_path / "notes" / "T07_pools.html",
    }
    write_table(df, **out)
    back = pd.read_csv(out["csv_path"])
    assert back["k"].tolist() == [221, 263] and back["policy"].tolist() == ["A", "B_2"]
    assert out["md_path"].read_text(encoding="utf-8") == to_markdown(df)
    assert out["tex_path"].read_text(encoding="utf-8") == to_latex(df, "T07")
    assert out["rst_path"].read_text(encoding="utf-8") == report_rst(df)
    assert out["html_path"].read_text(encoding="utf-8") == report_html(df, "T07")
    leftovers = [p for d in ("t", "notes") for p in os.listdir(tmp_path / d) if p.startswith(".")]
    assert leftovers == []
    # the old two-file call still works
    write_table(df, tmp_path / "u.csv", tmp_path / "u.md")
    assert sorted(os.listdir(tmp_path)) == ["notes", "t", "u.csv", "u.md"]
