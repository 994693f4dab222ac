"""The docs site: generated reference pages are fresh and complete, and the site builds strictly."""

from __future__ import annotations

import ast
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
    """Every hand-written text that could list a registry's members, without code: the README
    without its generated sections, the site's hand-written pages, config/README.md, the
    report's captions, the config files' comments, the schema's descriptions and the modules'
    docstrings. Paragraphs are separated by blank lines."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = re.sub(
        r"<!-- BEGIN generated:.*?<!-- END generated:[a-z]+ -->", "", readme, flags=re.S
    )
    pages = {"README.md": readme}
    for path in [
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "docs" / "guide").glob("*.md"),
        ROOT / "config" / "README.md",
        *(ROOT / "workflow" / "report").glob("*.rst"),
    ]:
        pages[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    pages = {name: re.sub(r"```.*?```", "", text, flags=re.S) for name, text in pages.items()}
    for path in sorted((ROOT / "config").rglob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        comments = [line.split("#", 1)[1] for line in lines if "#" in line]
        pages[path.relative_to(ROOT).as_posix()] = "\n\n".join(comments)
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    pages["workflow/schemas/config.schema.yaml"] = "\n\n".join(_descriptions(schema))
    for path in sorted((ROOT / "src" / "evalsim").rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if doc:
            pages[path.relative_to(ROOT).as_posix()] = doc
    return pages


def _descriptions(node) -> list[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for v in node.values() for d in _descriptions(v)]
    if isinstance(node, list):
        return [d for v in node for d in _descriptions(v)]
    return []


def _normalised(text: str) -> str:
    return re.sub(r"[\s_–]+", "-", text.lower()).replace("'s", "").replace("'", "")


#: Ids that are ordinary words, matched by their labels only.
_COMMON_WORDS = {"power", "shape", "optimised"}


def _registries() -> dict[str, dict[str, set[str]]]:
    """Every registry: member id -> the normalised names prose would call it by."""
    from evalsim.products.manifest import PRODUCTS
    from evalsim.sim.scenes import SCENES
    from evalsim.stats.boundaries import BOUNDARY_FAMILIES
    from evalsim.stats.multi.tasks import CORRECTIONS
    from evalsim.stats.names import TWO_SAMPLE_TESTS
    from evalsim.stats.proportion.intervals import REGISTRY

    def names(entries) -> dict[str, set[str]]:
        out = {}
        for key, entry in entries.items():
            label = getattr(entry, "short", None) or getattr(entry, "label", None)
            out[key] = {_normalised(n) for n in (key, label) if n and n not in _COMMON_WORDS}
        return out

    return {
        "interval methods": names(REGISTRY),
        "two-sample tests": names(TWO_SAMPLE_TESTS),
        "multiplicity corrections": names(CORRECTIONS),
        "boundary families": names(BOUNDARY_FAMILIES),
        "scenes": names(SCENES),
        "products": names({p.id: p for p in PRODUCTS}),
    }


def _named(words: str, members: dict[str, set[str]]) -> list[str]:
    """The members a normalised paragraph names."""
    return [
        key
        for key, aliases in members.items()
        if any(re.search(rf"(?<![a-z0-9]){re.escape(a)}(?![a-z0-9])", words) for a in aliases)
    ]


def hand_listed(paragraph: str, registries: dict) -> list[str]:
    """The registries a paragraph lists by hand: every member named (every member but one in
    a registry of four or more, where a stale list misses the newest; both members of a
    registry of two in one sentence)."""
    out = []
    for concept, members in registries.items():
        if len(members) <= 2:
            units = re.split(r"(?<=[.;:])\s", paragraph)
            least = len(members)
        else:
            units = [paragraph]
            least = len(members) - 1 if len(members) >= 4 else len(members)
        if any(len(_named(_normalised(u), members)) >= least for u in units):
            out.append(concept)
    return out


#: A count of a registry's members written out ("five intervals", "three unpaired tests").
HAND_COUNT = re.compile(
    r"\b(both|two|three|four|five|six|seven|eight|nine|ten|\d+) (interval |spending |boundary "
    r"|multiplicity )?(methods|families|corrections|scenes)\b"
    r"|\b(two|three|four|five|six|seven|eight|nine|ten|\d+) (unpaired |two-sample )tests\b"
    r"|\b(three|four|five|six|seven|eight|nine|ten|[3-9]|\d\d+) intervals\b",
    re.I,
)

#: Where a registry's members are defined or implemented: their own module may name them.
DEFINED_IN = {
    "interval methods": {"src/evalsim/stats/proportion/intervals.py"},
    "two-sample tests": {
        "src/evalsim/stats/names.py",
        "src/evalsim/stats/two_sample/conditional.py",
        "src/evalsim/stats/two_sample/unconditional.py",
        "src/evalsim/stats/two_sample/unconditional_power.py",
        "src/evalsim/stats/two_sample/_unconditional_kernels.py",
    },
    "multiplicity corrections": {"src/evalsim/stats/multi/tasks.py"},
    "boundary families": {
        "src/evalsim/stats/boundaries.py",
        "src/evalsim/stats/sequential/designs.py",
    },
    "scenes": {"src/evalsim/sim/scenes.py"},
    "products": {"src/evalsim/products/manifest.py"},
}


def _paragraphs(text: str) -> list[str]:
    """Blank-line paragraphs; each row of a Markdown table on its own."""
    out = []
    for block in text.split("\n\n"):
        rows = [line for line in block.splitlines() if line.lstrip().startswith("|")]
        out += rows or [block]
    return out


def test_hand_written_prose_neither_counts_nor_lists_a_registry():
    registries = _registries()
    found = []
    for name, text in _hand_written_prose().items():
        for match in HAND_COUNT.finditer(text):
            found.append((name, match.group(0)))
        for paragraph in _paragraphs(text):
            for concept in hand_listed(paragraph, registries):
                if name not in DEFINED_IN[concept]:
                    found.append((name, concept, " ".join(paragraph.split())[:90]))
    assert found == []


def test_the_prose_check_bites():
    registries = _registries()
    stale = "Exact coverage of the Wald, Wilson, Clopper-Pearson, Jeffreys and Agresti-Coull"
    assert hand_listed(stale, registries) == ["interval methods"]
    assert hand_listed("Fisher's, Boschloo's and Barnard's tests", registries) == [
        "two-sample tests"
    ]
    assert hand_listed("Holm, Hochberg and BH adjust", registries) == ["multiplicity corrections"]
    assert hand_listed("Boschloo saves trials over Fisher", registries) == []
    assert HAND_COUNT.search("the five intervals against p")
    assert hand_listed("which scene: `so101` or `gripper_table`", registries) == ["scenes"]
    assert hand_listed("so101: 38 trials/s. gripper_table: 84 trials/s.", registries) == []
    assert HAND_COUNT.search("Two scenes share the keys")
    assert not HAND_COUNT.search("the same three tests on the trials")
    assert not HAND_COUNT.search("Both intervals use the pairs")


def test_config_readme_key_tables_come_from_the_schema():
    stale = "x\n<!-- BEGIN generated:keys fisher.f12 -->\n| old |\n<!-- END generated:keys -->\ny\n"
    text = gen_docs.config_readme(stale)
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    keys = schema["properties"]["fisher"]["properties"]["f12"]["properties"]
    assert "| old |" not in text and text.startswith("x\n") and text.endswith("y\n")
    for name, node in keys.items():
        row = next(line for line in text.splitlines() if f"`fisher.f12.{name}`" in line)
        assert node["x-unit"] in row and str(node["default"]) in row
        assert node["description"] in row
    # every generated block of config/README.md names keys or sections of the schema
    readme = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
    prefixes = re.findall(r"<!-- BEGIN generated:keys (.+?) -->", readme)
    assert prefixes and all(gen_docs.key_table(p) for p in prefixes)


def test_schema_units_and_reasons_are_text():
    # YAML reads an unquoted `[k, n]` as a list, and a comma in a flow mapping cuts a text
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in (gen_docs.UNIT, gen_docs.REASON, "description"):
                    yield path, key, value
                else:
                    yield from walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for value in node:
                yield from walk(value, path)

    found = list(walk(schema, ""))
    assert sum(key == gen_docs.UNIT for _, key, _ in found) > 10
    assert [f for f in found if not isinstance(f[2], str)] == []

    # no key of a schema node is a fragment of a text cut at a comma (words, no value)
    def fragments(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if value is None and " " in str(key):
                    yield key
                yield from fragments(value)
        elif isinstance(node, list):
            for value in node:
                yield from fragments(value)

    assert list(fragments(schema)) == []
    assert list(fragments(yaml.safe_load("a: {description: x (0, 1) y, type: integer}")))
