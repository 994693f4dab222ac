"""The config section ``sequential``: defaults, and bad values refused naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from evalsim.config import ConfigError, check_config, load_schema
from evalsim.stats.boundaries import BOUNDARY_FAMILIES, DESIGN_KINDS, families_for, or_list

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def good():
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_defaults_fill_a_missing_section(good):
    cfg = copy.deepcopy(good)
    del cfg["sequential"]
    seq = check_config(cfg)["sequential"]
    assert seq["n_max"] == 200 and seq["alternative"] == "one-sided" and seq["looks"] == "every"
    assert [d["name"] for d in seq["designs"]][:2] == ["paired-pocock", "paired-obrien-fleming"]
    assert seq["futility"] == {"z": 0.0, "from": 100}


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda s: s.update(alternative="greater"), r"sequential.alternative.*one-sided"),
        (lambda s: s.update(n_max=900), r"sequential.n_max"),
        (
            lambda s: s.update(sheet_design="nope"),
            r"sequential.sheet_design.*unknown design 'nope'",
        ),
        (lambda s: s["pools"].update(designs=["x"]), r"sequential.pools.designs\[0\]"),
        (
            lambda s: s["designs"].append({"name": "p", "kind": "unpaired", "boundary": "power"}),
            r"needs rho",
        ),
        (
            lambda s: s["designs"].append({"name": "q", "kind": "paired", "boundary": "optimised"}),
            r"unpaired",
        ),
        (
            lambda s: s["designs"].append(
                {"name": "paired-pocock", "kind": "paired", "boundary": "pocock"}
            ),
            r"duplicate",
        ),
        (lambda s: s["optimise"].update(min_power=[0.5]), r"min_power.*one floor per alternative"),
        (lambda s: s["designs"][0].update(boundary="haybittle"), r"boundary.*allowed values"),
    ],
)
def test_bad_sequential_config_names_the_key(good, edit, match):
    cfg = copy.deepcopy(good)
    edit(cfg["sequential"])
    with pytest.raises(ConfigError, match=match):
        check_config(cfg)


# ------------------------------------------------------------------ the boundary-family registry


def _design_items(schema: dict) -> dict:
    return schema["properties"]["sequential"]["properties"]["designs"]["items"]["properties"]


def test_schema_boundary_enum_is_the_registry():
    items = _design_items(load_schema())
    assert items["boundary"]["enum"] == list(BOUNDARY_FAMILIES)
    assert items["kind"]["enum"] == list(DESIGN_KINDS)
    for family in BOUNDARY_FAMILIES.values():
        if family.parameter is not None:
            assert family.parameter in items, family.id


@pytest.mark.parametrize(
    "family", [f for f in BOUNDARY_FAMILIES.values() if f.parameter is not None], ids=str
)
def test_a_family_without_its_parameter_is_refused(good, family):
    cfg = copy.deepcopy(good)
    kind = family.kinds[0]
    cfg["sequential"]["designs"].append({"name": "x", "kind": kind, "boundary": family.id})
    match = rf"sequential.designs\[\d+\]': boundary {family.id} needs {family.parameter}$"
    with pytest.raises(ConfigError, match=match):
        check_config(cfg)


@pytest.mark.parametrize(
    ("family", "kind"),
    [
        (f.id, kind)
        for f in BOUNDARY_FAMILIES.values()
        for kind in DESIGN_KINDS
        if not f.takes(kind)
    ],
)
def test_a_family_of_another_kind_is_refused_naming_the_registry_families(good, family, kind):
    cfg = copy.deepcopy(good)
    spec = {"name": "x", "kind": kind, "boundary": family, "rho": 1.0, "b": 0.2}
    cfg["sequential"]["designs"].append(spec)
    kinds = or_list(BOUNDARY_FAMILIES[family].kinds)
    takes = or_list(families_for(kind))
    with pytest.raises(ConfigError) as err:
        check_config(cfg)
    assert str(err.value) == (
        f"config key 'sequential.designs[{len(cfg['sequential']['designs']) - 1}].boundary': "
        f"{family!r} is for {kinds} designs; {kind} designs take {takes}"
    )
