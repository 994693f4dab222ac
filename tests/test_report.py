"""The report stage: every product reaches the HTML report, claims point at declared tables,
F02 draws the document's flowchart, the README's generated sections are current."""

from __future__ import annotations

import base64
import json
import os
import re
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import pandas as pd
import pytest
from claim_tables import claim_tables

from evalsim.flowchart import PROTOCOL_MERMAID, layout, parse_mermaid
from evalsim.ledger import load_claims, section
from evalsim.products.report import declared_products, gallery_markdown, protocol_flowchart
from evalsim.tables import REPORT_MAX_COLUMNS, table_id

matplotlib.use("Agg")


def report_results(html: str) -> dict:
    """The report's ``results`` object: path -> name, caption, mime_type, data_uri, ..."""
    start = html.index('<script id="results">')  # the libraries above have their own `results`
    start = html.index("var results = ", start) + len("var results = ")
    return json.JSONDecoder().raw_decode(html, start)[0]


def data_uri_text(uri: str) -> str:
    """The text a ``data:...;base64,...`` URI carries."""
    head, data = uri.split(",", 1)
    return base64.b64decode(data).decode("utf-8") if head.endswith(";base64") else data


@pytest.fixture(scope="module")
def products(repo):
    return declared_products(repo)


def test_every_declared_table_and_figure_is_wrapped_in_report_with_a_caption(repo, products):
    tables = [p for p in products if p.kind == "table"]
    figures = [p for p in products if p.kind == "figure"]
    assert len(tables) >= 20 and len(figures) >= 3
    for p in tables + figures:
        assert p.caption, f"{p.path} (rule {p.rule}) is not wrapped in report()"
        assert (repo / p.caption).is_file(), f"{p.path}: caption {p.caption} missing"
    ledger = [p for p in products if p.path == "results/report/claims.html"]
    assert ledger and ledger[0].caption


def test_every_table_is_declared_with_latex_and_its_report_fragment(repo, products):
    """Each table rule declares .csv, .md, .tex, the rst fragment (the note) its caption
    includes and the HTML page (the rows, full width) that is its entry in the report."""
    by_rule: dict[str, set[str]] = {}
    for p in products:
        by_rule.setdefault(p.rule, set()).add(p.path)
    csvs = {p.path for p in products if re.fullmatch(r"results/tables/[^/]+\.csv", p.path)}
    assert csvs == {p.csv for p in products if p.kind == "table"}, (
        "every table's CSV has its page in the report, and only tables have one"
    )
    for p in products:
        if p.path in csvs:  # the CSV itself stays out of the report: its page is the entry
            assert p.caption is None, f"{p.path}: the CSV, not its page, is the report entry"
    for p in (p for p in products if p.kind == "table"):
        stem = Path(p.path).stem
        expected = {
            f"results/tables/{stem}.csv",
            f"results/tables/{stem}.md",
            f"results/tables/{stem}.tex",
            f"results/report/tables/{stem}.rst",
            f"results/report/tables/{stem}.html",
        }
        assert expected <= by_rule[p.rule], f"rule {p.rule}: {expected - by_rule[p.rule]}"
        caption = (repo / p.caption).read_text(encoding="utf-8")
        assert ".. include:: {{ snakemake.output.rst }}" in caption, (
            f"{p.caption} does not include the table and its note"
        )


def test_every_caption_renders_without_rst_errors(repo, tmp_path):
    """Captions are rst (rendered by docutils in the report): a stray |x| or *x is an error
    box in the report. Each is rendered as Snakemake does, with an empty table fragment."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    fragment = tmp_path / "fragment.rst"
    fragment.write_text("\n", encoding="utf-8")
    snakemake = SimpleNamespace(output=SimpleNamespace(rst=str(fragment)), config={})
    for path in sorted((repo / "workflow" / "report").glob("*.rst")):
        text = Environment().from_string(path.read_text(encoding="utf-8"))
        rst = text.render(snakemake=snakemake, categories={}, files=[])
        html = publish_parts(rst, writer="html")["body"]
        assert "system-message" not in html and "problematic" not in html, path.name


# Appended by Snakemake to the workflow description before rendering (snakemake/report,
# auto_report): a link target per category and per result.
RST_LINKS = """

.. _Workflow: javascript:show_panel('workflow')
.. _Statistics: javascript:show_panel('statistics')
{% for cat, catresults in categories|dictsort %}
.. _{{ cat.name }}: javascript:app.showCategory('{{ cat.name|urlencode }}')
{% endfor %}
{% for res in files %}
.. _{{ res.target }}: javascript:app.showResultInfo('{{ res.path|urlencode }}')
{% endfor %}
"""


def render_overview(repo, products) -> tuple[str, str]:
    """workflow/report/workflow.rst rendered as Snakemake renders the report's first screen,
    with the declared products as its results: (rst after Jinja, HTML body)."""
    from docutils.core import publish_parts
    from jinja2 import Environment
    from snakemake.report import Category

    categories: dict = {}
    files = []
    for p in products:
        if p.category is None:
            continue
        rec = SimpleNamespace(target=Path(p.path).name, path=p.path)
        categories.setdefault(Category(p.category), {}).setdefault("Other", []).append(rec)
        files.append(rec)
    text = (repo / "workflow" / "report" / "workflow.rst").read_text(encoding="utf-8")
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    rst = env.from_string(text + RST_LINKS).render(
        snakemake=SimpleNamespace(config={}), categories=categories, files=files
    )
    return rst, publish_parts(rst, writer="html")["html_body"]


def test_report_opens_on_an_overview_of_documents_products_and_every_category(repo, products):
    """The first screen: each document with its products, the rest "beyond the documents",
    then every category (drift, multi, sequential included) with its products, all linked."""
    rst, html = render_overview(repo, products)
    assert "system-message" not in html and "problematic" not in html
    docs, cats = rst.split("Documents and their products", 1)[1].split("\nCategories\n", 1)
    reported = [p for p in products if p.category is not None]
    for p in reported:
        name = Path(p.path).name
        # listed once among the documents (or beyond them), once under its category
        assert docs.count(f"<{name}_>`_") == 1, f"{name}: not exactly once under documents"
        line = next(ln for ln in cats.splitlines() if ln.startswith(f"- `{p.category}`_"))
        assert f"<{name}_>`_" in line, f"{name}: not under its category {p.category}"
    categories = {p.category for p in reported}
    assert {"drift", "multi", "sequential", "report", "resample"} <= categories
    for cat in categories:
        assert f"javascript:app.showCategory('{cat}')" in html, cat
    lines = {ln.split(" -- ", 1)[0]: ln for ln in docs.splitlines() if ln.startswith("- **")}
    assert (
        "T10_compare.html_" in lines["- **000**"]
        and "F01_width_coverage.png_" in lines["- **000**"]
    )
    assert "T20_fisher_pvalue_ladder.html_" in lines["- **002**"]
    assert "T23_clopper_pearson_vs_wilson.html_" in lines["- **004**"]
    beyond = docs.split("- **Beyond the documents**", 1)[1]
    assert "F09_ranking.png_" in beyond and "T31_sequential_designs.html_" in beyond


def test_the_workflow_profile_gives_the_report_its_landing_metadata(repo):
    """Snakemake's report opens on the workflow graph unless it has metadata; the workflow
    profile (read by every `snakemake` run in the checkout) passes some, numbers only, and a
    stylesheet."""
    import yaml

    profile = yaml.safe_load((repo / "profiles" / "default" / "config.yaml").read_text())
    metadata = repo / profile["report-metadata"]
    values = yaml.safe_load(metadata.read_text())
    assert values and all(isinstance(v, (int, float)) for v in values.values())
    # and its stylesheet: the main panel starts at its top (the overview is taller than 900 px)
    css = (repo / profile["report-stylesheet"]).read_text()
    assert "align-items: flex-start" in css


def test_every_claim_source_is_a_table_some_rule_declares(repo, products):
    declared = [Path(p.path).name for p in products if p.kind == "table"]
    claims = load_claims(repo / "config" / "claims.yaml")
    rules = "".join(p.read_text() for p in (repo / "workflow" / "rules").glob("*.smk"))
    undeclared = sorted(
        ref
        for ref in claim_tables(claims)
        if not any(d.startswith(f"{ref}_") for d in declared) and f'"{ref}"' not in rules
    )
    assert not undeclared, f"claims point at tables no rule declares: {undeclared}"


def test_f02_parses_the_documents_flowchart_and_draws_it():
    chart = parse_mermaid(PROTOCOL_MERMAID)
    assert [n.id for n in chart.nodes] == ["T", "P", "R", "K", "W", "F"]
    assert ("K", "W") in chart.edges and ("K", "F") in chart.edges
    pos = layout(chart)
    assert [pos[i][1] for i in "TPRK"] == [0, 1, 2, 3]
    assert pos["W"][1] == pos["F"][1] == 4 and pos["W"][0] < pos["F"][0]
    fig = protocol_flowchart()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "count k successes" in texts
    assert sum(t.get_bbox_patch() is not None for t in fig.axes[0].texts) == 6


def test_flowchart_rejects_bad_input():
    with pytest.raises(ValueError, match="flowchart TD"):
        parse_mermaid("graph LR\n A --> B")
    with pytest.raises(ValueError, match="cannot parse"):
        parse_mermaid('flowchart TD\n A["a"] -> B["b"]')
    with pytest.raises(ValueError, match="without a label"):
        parse_mermaid('flowchart TD\n A["a"] --> B')
    with pytest.raises(ValueError, match="cycle"):
        layout(parse_mermaid('flowchart TD\n A["a"] --> B["b"]\n B --> A'))


def test_readme_gallery_is_current(repo, products):
    readme = (repo / "README.md").read_text(encoding="utf-8")
    assert section(readme, "gallery") == gallery_markdown(repo, products).strip("\n")


def test_readme_disagreements_rows_are_ledger_claims(repo):
    """The README's snapshot lists claims by id with their stated value from claims.yaml."""
    readme = (repo / "README.md").read_text(encoding="utf-8")
    body = section(readme, "disagreements")
    claims = {c.id: c for c in load_claims(repo / "config" / "claims.yaml")}
    rows = [ln for ln in body.splitlines() if ln.startswith("| ") and not ln.startswith("| id")]
    assert rows
    for ln in rows:
        cells = [c.strip() for c in ln.strip("|").split(" | ")]
        assert cells[0] in claims, cells[0]
        assert cells[1] == claims[cells[0]].stated_display.replace("|", "\\|")
        assert cells[3] != "matches"


@pytest.mark.slow
def test_smoke_run_resolves_every_claim_and_reports_every_product(
    products, smoke_run, smoke_report
):
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    work = smoke_run.work
    ledger = pd.read_csv(work / "results" / "claims.csv")
    missing = ledger[ledger["verdict"] == "missing source"]
    # A missing row would mean a claim the smoke study cannot check; tables and columns must
    # exist in any case.
    broken = missing[~missing["reason"].str.fullmatch(r"(.*: no row with [^;]*;? ?)+")]
    assert broken.empty, broken[["id", "reason"]].to_string()
    if not os.environ.get("EVALSIM_DOCUMENTS"):  # no documents here: their code cannot run
        missing = missing[~missing["reason"].str.startswith("results/document_code.csv:")]
    # The smoke grids hold every row a claim reads: no claim may lack its source.
    assert missing.empty, missing[["id", "reason"]].to_string()
    assert len(ledger) > 150
    for csv in sorted((work / "results" / "tables").glob("*.csv")):
        tex = csv.with_suffix(".tex").read_text(encoding="utf-8")
        shape = pd.read_csv(csv).shape  # rows x columns must match the LaTeX body
        body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0].splitlines()
        assert len(body) == shape[0] and f"\\label{{{table_id(csv)}}}" in tex, csv.name
        assert all(row.count(" & ") == shape[1] - 1 for row in body), csv.name
    html = smoke_report.read_text(encoding="utf-8", errors="replace")
    for p in products:
        if p.kind in ("table", "figure") or p.path == "results/report/claims.html":
            # Each report entry is keyed by its path, with the file embedded.
            assert f'"{p.path}": {{"name": ' in html, f"{p.path} not in the report"
    # Each table's entry is its HTML page (title, every row, note), shown full width; its
    # caption in the sidebar carries the note (from results/report/tables/) but not the rows.
    results = report_results(html)
    tables = {p.path: p for p in products if p.kind == "table"}
    assert {path for path in results if path.startswith("results/report/tables/")} == set(tables)
    for path, p in tables.items():
        entry = results[path]
        caption = entry["caption"]
        csv = pd.read_csv(work / p.csv)
        md = (work / p.csv).with_suffix(".md").read_text(encoding="utf-8").rstrip("\n")
        assert entry["mime_type"] == "text/html", path
        page = data_uri_text(entry["data_uri"])
        if not md.splitlines()[-1].startswith("|"):  # the table has a note
            assert "<strong>Note.</strong>" in caption, f"{path}: no note in its report caption"
            assert "<strong>Note.</strong>" in page, f"{path}: no note under its rows"
        assert "evalsim-table" not in caption, f"{path}: its rows are in the narrow sidebar"
        assert "system-message" not in caption, f"{path}: rst error in its report caption"
        # a wide table is shown in stacked blocks of its columns, each with every row
        blocks = page.count('<table class="evalsim-table"')
        assert blocks == 1 or csv.shape[1] > REPORT_MAX_COLUMNS, path
        assert page.count("<tr>") == blocks * (len(csv) + 1), f"{path}: a row is missing"
        heads = {unescape(h.replace("<wbr>", "")) for h in re.findall(r"<th>(.*?)</th>", page)}
        assert heads == {str(c) for c in csv.columns}, f"{path}: a column is missing"
