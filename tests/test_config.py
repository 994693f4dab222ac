"""The config check: bad keys and values fail before any job, naming the key."""

from __future__ import annotations

import copy

import pytest
import yaml

from evalsim.config import (
    ConfigError,
    check_config,
    config_hash,
    coverage_policy,
    load_config,
    multi_pair,
)


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


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        pytest.param(
            ("polices",),
            [],
            r"'polices'.*allowed keys:.*policies",
            id="unknown_top_key_names_key_and_allowed",
        ),
        pytest.param(("scene", "colour"), "red", r"'colour' in 'scene'", id="unknown_nested_key"),
        pytest.param(
            ("policies", 0, "sigma_mm"),
            -1,
            r"policies\[0\]\.sigma_mm.*-1.*out of range",
            id="negative_sigma_names_key",
        ),
        pytest.param(("confidence",), 1.5, r"'confidence'.*1.5", id="probability_out_of_range"),
        pytest.param(
            ("scene", "name"),
            "so100",
            r"scene.name.*allowed values: 'so101', 'gripper_table'",
            id="enum_lists_allowed_values",
        ),
        pytest.param(("study_seed",), "abc", r"study_seed", id="wrong_type"),
        pytest.param(
            ("experiment", "comparisons"),
            [["A", "Z"]],
            r"unknown policy 'Z'.*A, B",
            id="comparison_of_unknown_policy",
        ),
        pytest.param(
            ("design", "paired_pools", "pairs"),
            [["A", "C"]],
            r"design.paired_pools.pairs\[0\].*unknown policy 'C'",
            id="paired_pools_policy_must_exist",
        ),
    ],
)
def test_bad_value_fails_naming_it(good, path, value, match):
    node = good
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError, match=match):
        check_config(good)


def test_coverage_policy_of_an_unknown_policy_fails_in_check_config(good):
    good["experiment"]["coverage_policy"] = "Z"
    with pytest.raises(ConfigError) as err:
        check_config(good)
    assert str(err.value) == (
        "config key 'experiment.coverage_policy': unknown policy 'Z'; configured policies: A, B"
    )


def test_high_score_k_above_n_fails_in_check_config(good):
    good["experiment"]["high_score_k"] = 11
    good["experiment"]["high_score_n"] = 10
    with pytest.raises(ConfigError) as err:
        check_config(good)
    assert str(err.value) == (
        "config key 'experiment.high_score_k': 11 exceeds experiment.high_score_n = 10; "
        "allowed values: 0 to 10"
    )
    good["experiment"]["high_score_k"] = 10  # k = n is allowed
    assert check_config(good)["experiment"]["high_score_k"] == 10


@pytest.mark.parametrize(
    ("multi", "policies", "message"),
    [
        pytest.param(
            {"policy_a": "B", "policy_b": "B"},
            None,
            "config key 'multi.policy_b': 'B' (multi.policy_a is 'B'); T34 needs two different "
            "policies; configured policies: A, B",
            id="same_policy_twice",
        ),
        pytest.param(
            {"policy_b": "A"},
            None,
            "config key 'multi.policy_b': 'A' (multi.policy_a is 'A'); T34 needs two different "
            "policies; configured policies: A, B",
            id="b_equals_the_default_a",
        ),
        pytest.param(
            {},
            ["A"],
            "config key 'multi.policy_b': none (multi.policy_a is 'A'); T34 needs two different "
            "policies; configured policies: A",
            id="one_policy_has_no_default_b",
        ),
    ],
)
def test_multi_pair_of_one_policy_fails_in_check_config(good, multi, policies, message):
    good["multi"] = {**good.get("multi", {}), "policy_a": None, "policy_b": None, **multi}
    if policies is not None:
        good["policies"] = [p for p in good["policies"] if p["name"] in policies]
        # null pairs would need two policies (checked first)
        good["experiment"]["comparisons"] = [["A", "A"]]
        good["design"]["paired_pools"]["pairs"] = [["A", "A"]]
        good["drift"]["policies"] = []
    with pytest.raises(ConfigError) as err:
        check_config(good)
    assert str(err.value) == message


def test_derived_defaults_are_the_first_policies(good):
    good["experiment"]["coverage_policy"] = None
    good["multi"] = {**good.get("multi", {}), "policy_a": None, "policy_b": None}
    cfg = check_config(good)
    assert coverage_policy(cfg) == "A"
    assert multi_pair(cfg) == ("A", "B")
    good["experiment"]["coverage_policy"] = "B"
    good["multi"].update(policy_a="B", policy_b="A")
    cfg = check_config(good)
    assert (coverage_policy(cfg), multi_pair(cfg)) == ("B", ("B", "A"))


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
