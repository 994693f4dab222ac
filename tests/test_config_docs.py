"""The config is documented once: the schema holds every key's description, unit, default and
reason, and config/README.md's key tables are generated from it (no hand-written key table)."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import gen_docs  # noqa: E402  (tools/ is not a package)

SCHEMA = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
README = (ROOT / "config" / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"<!-- BEGIN generated:keys (.+?) -->\n.*?<!-- END generated:keys -->", re.S)


def undocumented(schema: dict) -> list[tuple[str, str]]:
    """(key, what) for every key of the schema without a description or an ``x-unit``."""
    missing = []
    for key, node in gen_docs.schema_keys(schema):
        for field in ("description", gen_docs.UNIT):
            value = node.get(field)
            if not isinstance(value, str) or not value.strip():
                missing.append((key, field))
    return missing


def test_every_schema_key_has_a_description_and_a_unit():
    keys = [key for key, _ in gen_docs.schema_keys(SCHEMA)]
    assert len(keys) > 250 and "tasks[].cube_mass_kg" in keys and "study_seed" in keys
    assert undocumented(SCHEMA) == []
    # the rule for unitless keys is stated where a new key's author reads it
    assert f'"{gen_docs.NO_UNIT}"' in SCHEMA["description"]


def test_the_unit_check_bites():
    broken = copy.deepcopy(SCHEMA)
    del broken["properties"]["simulation"]["properties"]["tau_mm"][gen_docs.UNIT]
    broken["properties"]["tasks"]["items"]["properties"]["name"]["description"] = " "
    assert undocumented(broken) == [
        ("tasks[].name", "description"),
        ("simulation.tau_mm", gen_docs.UNIT),
    ]


def hand_key_rows(text: str, schema: dict) -> list[str]:
    """Markdown table rows outside generated blocks whose first cell names a config key (its
    path, or its own name: ``pad_friction`` as well as ``scene.so101.pad_friction``)."""
    names = set()
    for key, _ in gen_docs.schema_keys(schema):
        names |= {key, key.rsplit(".", 1)[-1], key.split("[]")[0]}
    rows = []
    for line in _BLOCK.sub("", text).splitlines():
        cell = re.match(r"\s*\|\s*`([^`]+)`", line)
        if cell and set(re.split(r"[\s,]+", cell.group(1).strip(" .…"))) & names:
            rows.append(line)
    return rows


def test_config_readme_has_no_hand_written_key_table():
    assert hand_key_rows(README, SCHEMA) == []


def test_the_hand_table_check_bites():
    for row in (
        "| `simulation.tau_mm` | mm | 1.0 | bias |",
        "| `pad_friction` | 0.30 | 0.27 | worn pads |",
        "| `scene.so101.above_m`, `lift_m` | m | 0.05, 0.08 | heights |",
    ):
        assert hand_key_rows(f"x\n\n{row}\n", SCHEMA) == [row]
    generated = gen_docs.config_readme(
        "<!-- BEGIN generated:keys alpha -->\n<!-- END generated:keys -->\n"
    )
    assert "| `alpha` |" in generated and hand_key_rows(generated, SCHEMA) == []
    assert hand_key_rows("| 0 | +1, -1 | 0.40 |\n| `cube30` | A | 137 |\n", SCHEMA) == []


def test_config_readme_blocks_show_every_key_once():
    shown = [
        key
        for prefixes in _BLOCK.findall(README)
        for key, _ in gen_docs.block_keys(prefixes, SCHEMA)
    ]
    every = [key for key, _ in gen_docs.schema_keys(SCHEMA)]
    assert sorted(shown) == sorted(every)


def test_a_block_names_keys_sections_and_lists():
    keys = [key for key, _ in gen_docs.block_keys("alpha policies simulation.sweep", SCHEMA)]
    assert keys == [
        "alpha",
        "policies",
        "policies[].name",
        "policies[].sigma_mm",
        "simulation.sweep.sigma_mm",
        "simulation.sweep.trials",
        "simulation.sweep.task",
    ]
    table = gen_docs.key_table("alpha policies", SCHEMA)
    alpha = SCHEMA["properties"]["alpha"]
    row = next(line for line in table.splitlines() if line.startswith("| `alpha` |"))
    assert row == (
        f"| `alpha` | {alpha[gen_docs.UNIT]} | {alpha['default']} | {alpha['description']}"
        + (f" {alpha[gen_docs.REASON]}" if gen_docs.REASON in alpha else "")
        + " |"
    )
