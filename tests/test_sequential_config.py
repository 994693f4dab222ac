"""The config section ``sequential``: defaults, and bad values refused naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from evalsim.config import ConfigError, check_config

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
