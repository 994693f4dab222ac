"""The config check: bad keys and values fail before any job, naming the key."""

from __future__ import annotations

import copy

import pytest
import yaml

from evalsim.config import ConfigError, check_config, config_hash, load_config


@pytest.fixture()
def good(repo):
    with open(repo / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


def test_default_and_smoke_configs_pass(repo):
    for name in ("config.yaml", "smoke.yaml"):
        cfg = load_config(repo / "config" / name)
        assert cfg["policies"]


def test_defaults_filled(good):
    del good["confidence"]
    assert check_config(good)["confidence"] == 0.95


def test_unknown_top_key_names_key_and_allowed(good):
    good["polices"] = []
    with pytest.raises(ConfigError, match=r"'polices'.*allowed keys:.*policies"):
        check_config(good)


def test_unknown_nested_key(good):
    good["scene"]["colour"] = "red"
    with pytest.raises(ConfigError, match=r"'colour' in 'scene'"):
        check_config(good)


def test_negative_sigma_names_key(good):
    good["policies"][0]["sigma_mm"] = -1
    with pytest.raises(ConfigError, match=r"policies\[0\]\.sigma_mm.*-1.*out of range"):
        check_config(good)


def test_probability_out_of_range(good):
    good["confidence"] = 1.5
    with pytest.raises(ConfigError, match=r"'confidence'.*1.5"):
        check_config(good)


def test_enum_lists_allowed_values(good):
    good["scene"]["name"] = "so100"
    with pytest.raises(ConfigError, match=r"scene.name.*allowed values: 'so101', 'gripper_table'"):
        check_config(good)


def test_wrong_type(good):
    good["study_seed"] = "abc"
    with pytest.raises(ConfigError, match=r"study_seed"):
        check_config(good)


def test_comparison_of_unknown_policy(good):
    good["experiment"]["comparisons"] = [["A", "Z"]]
    with pytest.raises(ConfigError, match=r"unknown policy 'Z'.*A, B"):
        check_config(good)


def test_duplicate_policy(good):
    good["policies"].append(copy.deepcopy(good["policies"][0]))
    with pytest.raises(ConfigError, match="duplicate"):
        check_config(good)


def test_config_hash_stable(good):
    assert config_hash(good) == config_hash(copy.deepcopy(good))
    good["study_seed"] += 1
    assert config_hash(good) != config_hash(copy.deepcopy(good) | {"study_seed": 0})


def test_atomic_write_leaves_no_temp_and_normal_mode(tmp_path):
    import os

    from evalsim.io import atomic_path, write_text_atomic

    dest = tmp_path / "sub" / "out.txt"
    write_text_atomic(dest, "hello\n")
    assert dest.read_text() == "hello\n"
    umask = os.umask(0)
    os.umask(umask)
    assert dest.stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(RuntimeError), atomic_path(dest) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert dest.read_text() == "hello\n"
    assert [p.name for p in dest.parent.iterdir()] == ["out.txt"]


def test_paired_pools_policy_must_exist(good):
    good["design"]["paired_pools"]["pairs"] = [["A", "C"]]
    with pytest.raises(ConfigError, match=r"design.paired_pools.pairs\[0\].*unknown policy 'C'"):
        check_config(good)
