"""The docs site: generated reference pages are fresh and complete, and the site builds strictly."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalsim.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import gen_docs  # noqa: E402  (tools/ is not a package)


def test_generated_pages_are_fresh():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _schema_paths(node, prefix=""):
    for name, child in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path
        yield from _schema_paths(child, path)
        items = child.get("items")
        if isinstance(items, dict):
            yield from _schema_paths(items, f"{path}[]")


def test_config_page_has_every_schema_key_once():
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    page = gen_docs.config_page()
    paths = list(_schema_paths(schema))
    assert len(paths) > 50
    for path in paths:
        assert page.count(f"| `{path}` |") == 1, path


def test_cli_page_has_every_subcommand_and_option():
    page = gen_docs.cli_page()
    parser = build_parser()
    for action in parser._actions:
        for name, sub in getattr(action, "choices", None) and action.choices.items() or []:
            assert f"## `evalsim {name}`" in page, name
            for opt in sub._actions:
                for flag in opt.option_strings:
                    assert flag in page, (name, flag)


def test_products_page_lists_every_product_and_caption_with_its_text():
    from evalsim.products.manifest import PRODUCTS, product_paths

    page = gen_docs.products_page()
    captions = sorted((ROOT / "workflow/report").glob("*.rst"))
    for path in captions:
        if path.stem in gen_docs.NOT_PRODUCTS:
            continue
        first_words = " ".join(path.read_text().split()[:6]).replace("``", "`")
        assert first_words in page, path.stem
    for p in PRODUCTS:
        assert f"### `{p.id}` ({p.kind})" in page, p.key
        assert f"`{product_paths(p)['csv' if p.kind == 'table' else 'png']}`" in page, p.key
        assert f"builder: `evalsim.products.{p.builder.replace(':', '.')}`" in page, p.key
    assert "### `F04_scene`" in page  # a report page of its own rule


def test_api_page_lists_public_modules_only():
    names = gen_docs.public_modules()
    assert "evalsim.stats.proportion.intervals" in names
    assert not any("._" in n for n in names)
    page = gen_docs.api_page()
    for name in names:
        assert f"::: {name}\n" in page


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None and shutil.which("mkdocs") is None,
    reason="mkdocs is a dev dependency (requirements-dev.txt); not installed here",
)
def test_site_builds_strictly(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT / "src"))
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "wilson_interval" in api


def _nav_pages(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from _nav_pages(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _nav_pages(value)


def test_every_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = set(_nav_pages(config["nav"]))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages == nav


def test_readme_is_short_and_links_the_guide():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= 250
    for page in sorted((ROOT / "docs" / "guide").glob("*.md")):
        assert f"(docs/guide/{page.name}" in readme, page.name


def _hand_written_prose() -> dict[str, str]:
    """README without its generated sections, and the hand-written site pages, without code."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = re.sub(
        r"<!-- BEGIN generated:.*?<!-- END generated:[a-z]+ -->", "", readme, flags=re.S
    )
    pages = {"README.md": readme}
    for path in [*(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "guide").glob("*.md")]:
        pages[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return {name: re.sub(r"```.*?```", "", text, flags=re.S) for name, text in pages.items()}


def _normalised(text: str) -> str:
    return re.sub(r"[\s_–]+", "-", text.lower()).replace("'", "")


def test_hand_written_prose_neither_counts_nor_lists_a_registry():
    from evalsim.stats.boundaries import SPENDING_FAMILIES
    from evalsim.stats.proportion.intervals import METHODS

    count = re.compile(
        r"\b(both|two|three|four|five|six|seven|eight|nine|ten|\d+) "
        r"(interval |spending |boundary )?(methods|families|corrections|scenes)\b",
        re.I,
    )
    for name, text in _hand_written_prose().items():
        assert not count.search(text), (name, count.search(text).group(0))
        for paragraph in text.split("\n\n"):
            words = _normalised(paragraph)
            for members in (METHODS, tuple(SPENDING_FAMILIES)):
                named = [m for m in members if _normalised(m) in words]
                assert named != list(members), (name, paragraph[:80])
