"""The report stage: every product reaches the HTML report, claims point at declared tables,
F02 draws the document's flowchart, the README's generated sections are current."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import pandas as pd
import pytest

from evalsim.flowchart import PROTOCOL_MERMAID, layout, parse_mermaid
from evalsim.ledger import load_claims, section
from evalsim.products.report import declared_products, gallery_markdown, protocol_flowchart
from evalsim.tables import table_id

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def products(repo):
    return declared_products(repo)


def _claim_tables(claims) -> set[str]:
    refs = set()

    def visit(spec):
        if isinstance(spec, dict):
            if "table" in spec:
                refs.add(spec["table"])
            for value in spec.values():
                visit(value)
        elif isinstance(spec, list):
            for value in spec:
                visit(value)

    for c in claims:
        visit(list(c.sources))
        visit(c.criterion)
    return refs


def test_every_declared_table_and_figure_is_wrapped_in_report_with_a_caption(repo, products):
    tables = [p for p in products if p.kind == "table"]
    figures = [p for p in products if p.kind == "figure"]
    assert len(tables) >= 20 and len(figures) >= 3
    for p in tables + figures:
        assert p.caption, f"{p.path} (rule {p.rule}) is not wrapped in report()"
        assert (repo / p.caption).is_file(), f"{p.path}: caption {p.caption} missing"
    ledger = [p for p in products if p.path == "results/claims.csv"]
    assert ledger and ledger[0].caption


def test_every_table_is_declared_with_latex_and_its_report_fragment(repo, products):
    """Each table rule declares .csv, .md, .tex and the rst fragment its caption includes."""
    by_rule: dict[str, set[str]] = {}
    for p in products:
        by_rule.setdefault(p.rule, set()).add(p.path)
    for p in (p for p in products if p.kind == "table"):
        stem = Path(p.path).stem
        expected = {
            f"results/tables/{stem}.csv",
            f"results/tables/{stem}.md",
            f"results/tables/{stem}.tex",
            f"results/report/tables/{stem}.rst",
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
        rst = text.render(snakemake=snakemake)
        html = publish_parts(rst, writer="html")["body"]
        assert "system-message" not in html and "problematic" not in html, path.name


def test_every_claim_source_is_a_table_some_rule_declares(repo, products):
    declared = [Path(p.path).name for p in products if p.kind == "table"]
    claims = load_claims(repo / "config" / "claims.yaml")
    rules = "".join(p.read_text() for p in (repo / "workflow" / "rules").glob("*.smk"))
    undeclared = sorted(
        ref
        for ref in _claim_tables(claims)
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
        if p.kind in ("table", "figure") or p.path == "results/claims.csv":
            # Each report entry is keyed by its path, with the file embedded.
            assert f'"{p.path}": {{"name": ' in html, f"{p.path} not in the report"
    # Each table's caption carries its rows and note (included from results/report/tables/).
    entries = re.findall(
        r'"(results/tables/[^"]+\.csv)": \{"name": .*?"caption": "(.*?)(?<!\\)"', html
    )
    assert {path for path, _ in entries} == {p.path for p in products if p.kind == "table"}
    for path, caption in entries:
        md = (work / path).with_suffix(".md").read_text(encoding="utf-8").rstrip("\n")
        if not md.splitlines()[-1].startswith("|"):  # the table has a note
            assert "<strong>Note.</strong>" in caption, f"{path}: no note in its report caption"
        assert "evalsim-table" in caption, f"{path}: its rows are not in its report caption"
        assert "system-message" not in caption, f"{path}: rst error in its report caption"
