"""Issue 46, items 14-15: the report's product names, START_HERE's first screen and map, and
a copied clone's .venv rebuilt by make."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evalsim.products.manifest import DOCUMENT_NAMES, PRODUCTS

REPO = Path(__file__).resolve().parents[1]
PAGE = (REPO / "docs" / "START_HERE.md").read_text(encoding="utf-8")


def test_document_names_belong_to_products_and_label_the_report():
    ids = {p.id for p in PRODUCTS}
    assert set(DOCUMENT_NAMES) <= ids
    for p in PRODUCTS:
        (label,) = p.report_label.values()  # one label: a second one becomes a toggle
        short = p.id.split("_")[0] if re.fullmatch(r"[TF]\d+", p.id.split("_")[0]) else p.id
        assert short in label, (p.id, label)  # the id beside the name
        assert not re.search(r"results/|figures/|\.(png|csv|html)\b", label)  # a name, not a path
    t08 = next(p for p in PRODUCTS if p.id.startswith("T08_"))
    assert t08.report_label == {"product": "Table B, lesson 25 (T08)"}
    smk = (REPO / "workflow" / "rules" / "products.smk").read_text()
    assert "labels=product.report_label" in smk


def test_start_here_maps_lesson_25_tables_a_to_e_and_figure_b():
    for name in ["Table A", "Table B", "Table C", "Table D", "Table E", "Figure B"]:
        (pid,) = [k for k, v in DOCUMENT_NAMES.items() if v == f"{name}, lesson 25"]
        short = pid.split("_")[0]
        assert re.search(rf"\| {name} \| `?{short}`? \|", PAGE), (name, short)


def test_start_here_first_screen_has_the_run_time_and_load():
    first = "\n".join(PAGE.splitlines()[:30]).lower()
    assert re.search(r"\d+ min \d+ s", first) and "2 cores" in first
    assert "idle" in first and "loaded" in first


def test_start_here_says_what_a_copied_venv_does():
    assert "copied" in PAGE and "make" in PAGE and ".venv" in PAGE


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_rebuilds_a_venv_that_imports_another_checkout(tmp_path):
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    pth = site / "__editable__.evalsim-0.1.0.pth"
    (tmp_path / ".venv" / ".installed").touch()

    def dry_run():
        out = subprocess.run(["make", "-n", "venv"], cwd=tmp_path, capture_output=True, text=True)
        return out.stdout

    pth.write_text("/some/original/clone/src\n")
    plan = dry_run()
    assert "rm -rf .venv" in plan and "-m venv .venv" in plan
    pth.write_text(f"{tmp_path}/src\n")
    assert "rm -rf" not in dry_run()


def test_report_overview_names_products_by_the_documents_names():
    from types import SimpleNamespace

    from jinja2 import Environment

    text = (REPO / "workflow" / "report" / "workflow.rst").read_text(encoding="utf-8")
    macros = text.split("The **evalsim** study", 1)[0]
    env = Environment(trim_blocks=True, lstrip_blocks=True)

    def label(target, labels):
        rec = SimpleNamespace(target=target, labels=labels)
        return env.from_string(macros + "{{ product_label(rec) }}").render(rec=rec).strip()

    t08 = next(p for p in PRODUCTS if p.id.startswith("T08_"))
    assert label(f"{t08.id}.html", t08.report_label) == "Table B, lesson 25 (T08)"
    t30 = next(p for p in PRODUCTS if p.id.startswith("T30_"))
    assert label(f"{t30.id}.html", t30.report_label) == "T30"
    assert label("F01_width_coverage.png", None) == "F01"
