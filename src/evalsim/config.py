"""The study config: load, check against the JSON schema, fill defaults.

The schema (``workflow/schemas/config.schema.yaml``, JSON Schema draft 2020-12) is the single
description of every key. :func:`check_config` turns the first schema violations into one
readable :class:`ConfigError` that names the key path and the allowed values or keys, and
adds the cross-key checks a schema cannot express (a comparison must name configured
policies; names must be unique). Per-pair keys left at null (:data:`PAIR_KEYS`:
``experiment.comparisons``, ``design.paired_pools.pairs``) become every pair of the
configured policies, in config order (:func:`policy_pairs`). It runs in
``workflow/rules/common.smk`` before any job.

Keys whose null means a derived default have one function each, which the product manifest
and the rules call and the checks use: :func:`coverage_policy` (``experiment.coverage_policy``)
and :func:`multi_pair` (``multi.policy_a`` and ``multi.policy_b``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from evalsim.stats.boundaries import BOUNDARY_FAMILIES, kind_problem

REPO_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """The config breaks the schema or a cross-key rule; the message names the key."""


def load_schema(path: str | os.PathLike | None = None) -> dict:
    """Load the config schema (YAML)."""
    with open(path or REPO_SCHEMA, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = []
    for part in error.absolute_path:
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return "".join(parts).lstrip(".") or "<top level>"


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key_path(error)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        where = f"in '{key}'" if key != "<top level>" else "at the top level"
        return (
            f"config: unknown key(s) {', '.join(repr(e) for e in extra)} {where}; "
            f"allowed keys: {', '.join(allowed)}"
        )
    if error.validator == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value)
        return f"config key '{key}': {error.instance!r} is not allowed; allowed values: {allowed}"
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        lo_b = "[" if "minimum" in schema else "("
        hi_b = "]" if "maximum" in schema else ")"
        rng = f"{lo_b}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{hi_b}"
        return f"config key '{key}': {error.instance!r} is out of range; allowed: {rng}"
    if error.validator == "required":
        return f"config key '{key}': {error.message}"
    if error.validator == "type":
        return f"config key '{key}': {error.instance!r} is not of type {error.validator_value}"
    return f"config key '{key}': {error.message}"


def _fill_defaults(instance: Any, schema: dict) -> None:
    """Fill ``default`` values of object properties in place, recursively."""
    if isinstance(instance, dict) and schema.get("type") == "object":
        for name, sub in schema.get("properties", {}).items():
            if name not in instance and "default" in sub:
                instance[name] = copy.deepcopy(sub["default"])
            if name in instance:
                _fill_defaults(instance[name], sub)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for item in instance:
            _fill_defaults(item, schema["items"])


def _check_unique(key: str, items: list) -> None:
    """The ``name`` of every item of the list at config key ``key`` is unique."""
    names = [item.get("name") for item in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"config key '{key}': duplicate name(s) {', '.join(dup)}")


def _cross_checks(config: dict) -> None:
    for list_key in ("policies", "tasks"):
        _check_unique(list_key, config.get(list_key, []))
    policies = [p["name"] for p in config.get("policies", [])]
    named = []  # (key, policy name) of every place that names a configured policy
    experiment = config.get("experiment", {})
    for i, pair in enumerate(experiment.get("comparisons", [])):
        named += [(f"experiment.comparisons[{i}]", name) for name in pair]
    if experiment.get("coverage_policy") is not None:
        named.append(("experiment.coverage_policy", experiment["coverage_policy"]))
    paired = config.get("design", {}).get("paired_pools", {})
    for i, pair in enumerate(paired.get("pairs") or []):
        named += [(f"design.paired_pools.pairs[{i}]", name) for name in pair]
    multi = config.get("multi", {})
    named += [(f"multi.{k}", multi[k]) for k in ("policy_a", "policy_b") if multi.get(k)]
    _sequential_checks(config.get("sequential", {}))
    drift = config.get("drift", {})
    named += [(f"drift.policies[{i}]", name) for i, name in enumerate(drift.get("policies", []))]
    simreal = config.get("simreal", {})
    named += [
        (f"simreal.policies[{i}]", name) for i, name in enumerate(simreal.get("policies", []))
    ]
    for key, name in named:
        if name not in policies:
            raise ConfigError(
                f"config key '{key}': unknown policy {name!r}; "
                f"configured policies: {', '.join(policies)}"
            )


def _simreal_checks(config: dict) -> None:
    """The simreal section (T37, F11) names configured tasks and seeds and its own gaps (its
    policies are checked with every other policy name, in :func:`_cross_checks`)."""
    sr = config.get("simreal")
    if not sr:
        return
    tasks = [t["name"] for t in config["tasks"]]
    if sr["task"] is not None and sr["task"] not in tasks:
        raise ConfigError(
            f"config key 'simreal.task': unknown task {sr['task']!r}; "
            f"configured tasks: {', '.join(tasks)}"
        )
    n_seeds = config["simulation"]["n_seeds"]
    for i, seed in enumerate(sr["seeds"]):
        if seed >= n_seeds:
            raise ConfigError(
                f"config key 'simreal.seeds[{i}]': seed {seed} is not simulated; allowed values: "
                f"0 .. {n_seeds - 1} (simulation.n_seeds = {n_seeds})"
            )
    _check_unique("simreal.gaps", sr["gaps"])
    names = [g["name"] for g in sr["gaps"]]
    if sr["gaps"] and config["scene"]["name"] != "so101":
        raise ConfigError(
            f"config key 'simreal.gaps': the real twin needs scene.name so101, got "
            f"{config['scene']['name']!r}; set simreal.gaps to [] to turn the twins off"
        )
    if sr["figure_gap"] is not None and sr["figure_gap"] not in names:
        raise ConfigError(
            f"config key 'simreal.figure_gap': unknown gap {sr['figure_gap']!r}; allowed "
            f"values: {', '.join(names) or '(no gaps configured)'}"
        )
    if min(sr["n_sim"]) < max(sr["n_real"]):
        raise ConfigError(
            f"config key 'simreal.n_sim': {min(sr['n_sim'])} is below the largest "
            f"simreal.n_real, {max(sr['n_real'])}; every N_sim must be >= every n_real"
        )


def policy_names(config: dict) -> list[str]:
    """The configured policies' names, in config order."""
    return [p["name"] for p in config.get("policies", [])]


def coverage_policy(config: dict) -> str:
    """``experiment.coverage_policy``, or the first configured policy when it is null."""
    return config["experiment"].get("coverage_policy") or policy_names(config)[0]


def multi_pair(config: dict) -> tuple[str, str | None]:
    """(``multi.policy_a``, ``multi.policy_b``), null meaning the first and the second
    configured policy (None for B when only one is configured: :func:`check_config` refuses
    that config)."""
    names = policy_names(config)
    a = config["multi"]["policy_a"] or names[0]
    b = config["multi"]["policy_b"] or (names[1] if len(names) > 1 else None)
    return a, b


def simreal_task(config: dict) -> str:
    """``simreal.task``, or the first configured task when it is null."""
    return config["simreal"]["task"] or config["tasks"][0]["name"]


def simreal_policies(config: dict) -> list[str]:
    """``simreal.policies``, or every configured policy when it is empty."""
    return list(config["simreal"]["policies"]) or policy_names(config)


def _product_checks(config: dict) -> None:
    """Cross-key rules the product manifest's builders rely on (T03, T11, T34, F01, F08)."""
    # experiment.coverage_policy, when set, names a configured policy (_cross_checks); its
    # default, the first policy, always does.
    k, n = config["experiment"]["high_score_k"], config["experiment"]["high_score_n"]
    if k > n:
        raise ConfigError(
            f"config key 'experiment.high_score_k': {k!r} exceeds experiment.high_score_n = "
            f"{n!r}; allowed values: 0 to {n!r}"
        )
    a, b = multi_pair(config)
    if b is None or a == b:
        raise ConfigError(
            f"config key 'multi.policy_b': {'none' if b is None else repr(b)} (multi.policy_a "
            f"is {a!r}); T34 needs two different policies; configured policies: "
            f"{', '.join(policy_names(config))}"
        )


def _drift_checks(drift: dict) -> None:
    """The drift section's grid must cover every session it describes (T36, F10)."""
    if not drift:
        return
    if len(drift["policies"]) not in (0, 2):
        raise ConfigError(
            f"config key 'drift.policies': {drift['policies']!r} must name two policies (A, B) "
            "or be empty (the first two configured policies)"
        )
    offsets = [float(v) for v in drift["offsets_mm"]]
    if offsets[0] != 0 or any(b <= a for a, b in zip(offsets, offsets[1:], strict=False)):
        raise ConfigError(
            f"config key 'drift.offsets_mm': {offsets} must start at 0 and increase strictly"
        )
    if drift["figure_n"] not in drift["n_per_policy"]:
        raise ConfigError(
            f"config key 'drift.figure_n': {drift['figure_n']!r} is not allowed; allowed values: "
            f"{', '.join(map(str, drift['n_per_policy']))} (drift.n_per_policy)"
        )
    need = max(drift["rates_mm_per_100"]) * 2 * max(drift["n_per_policy"]) / 100.0
    if need > offsets[-1]:
        raise ConfigError(
            f"config key 'drift.offsets_mm': the largest offset {offsets[-1]:g} mm is below the "
            f"{need:g} mm that max(rates_mm_per_100) * 2 * max(n_per_policy) / 100 reaches"
        )


def _sequential_checks(seq: dict) -> None:
    """Cross-key rules of the ``sequential`` section (names, parameters, list lengths)."""
    designs = seq.get("designs", [])
    names = [d["name"] for d in designs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"config key 'sequential.designs': duplicate name(s) {', '.join(dup)}")
    for i, d in enumerate(designs):
        # the boundary families' kinds and parameters: evalsim.stats.boundaries
        problem = kind_problem(d["boundary"], d["kind"])
        if problem is not None:
            raise ConfigError(
                f"config key 'sequential.designs[{i}].boundary': {d['boundary']!r} {problem}"
            )
        parameter = BOUNDARY_FAMILIES[d["boundary"]].parameter
        if parameter is not None and parameter not in d:
            raise ConfigError(
                f"config key 'sequential.designs[{i}]': boundary {d['boundary']} needs {parameter}"
            )
    refs = [("sequential.sheet_design", seq.get("sheet_design"))]
    refs += [
        (f"sequential.pools.designs[{i}]", n)
        for i, n in enumerate(seq.get("pools", {}).get("designs", []))
    ]
    for key, name in refs:
        if name is not None and name not in names:
            raise ConfigError(
                f"config key '{key}': unknown design {name!r}; "
                f"configured designs: {', '.join(names)}"
            )
    opt = seq.get("optimise", {})
    floors = opt.get("min_power")
    if floors is not None and len(floors) != len(opt.get("alternatives", [])):
        raise ConfigError(
            "config key 'sequential.optimise.min_power': needs one floor per alternative "
            f"({len(opt.get('alternatives', []))}), got {len(floors)}"
        )


def check_config(config: dict, schema: dict | None = None) -> dict:
    """Validate ``config`` and return a copy with defaults filled in.

    Raises
    ------
    ConfigError
        On the first violation (sorted by key path), naming the key and what is allowed.
    """
    schema = schema if schema is not None else load_schema()
    checked = copy.deepcopy(dict(config))
    _fill_defaults(checked, schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(checked), key=lambda e: (list(map(str, e.absolute_path)), e.validator)
    )
    if errors:
        # The most specific error first: deepest key path.
        best = max(errors, key=lambda e: len(e.absolute_path))
        raise ConfigError(_describe(best))
    _fill_policy_pairs(checked)
    _cross_checks(checked)
    _product_checks(checked)
    _drift_checks(checked.get("drift", {}))
    _simreal_checks(checked)
    return checked


def policy_pairs(names: list[str]) -> list[list[str]]:
    """Every pair of ``names`` in their order: [[P1, P2], [P1, P3], ..., [P2, P3], ...]."""
    return [[a, b] for i, a in enumerate(names) for b in names[i + 1 :]]


# Keys holding pairs of policy names; null means every pair of the configured policies.
PAIR_KEYS = (("experiment", "comparisons"), ("design", "paired_pools", "pairs"))


def _fill_policy_pairs(config: dict) -> None:
    """Fill each per-pair key of :data:`PAIR_KEYS` left at null with every pair."""
    pairs = policy_pairs([p["name"] for p in config.get("policies", [])])
    for *parents, key in PAIR_KEYS:
        node = config
        for name in parents:
            node = node.get(name) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(key) is None:
            if not pairs:
                names = ", ".join(p["name"] for p in config.get("policies", []))
                raise ConfigError(
                    f"config key '{'.'.join([*parents, key])}': null means every pair of the "
                    f"configured policies, but there is only one ({names}); add a policy"
                )
            node[key] = copy.deepcopy(pairs)


def load_config(path: str | os.PathLike) -> dict:
    """Read a YAML config file and check it."""
    with open(path, encoding="utf-8") as fh:
        return check_config(yaml.safe_load(fh) or {})


def canonical(obj):
    """``obj`` with every dict's keys in sorted order, recursively (lists keep their order).

    Snakemake compares a job's params by their ``repr``, and a dict's repr follows its key
    order: without this, reordering or reformatting ``config.yaml`` would rerun every chunk
    (issue 26). The workflow makes the whole checked config canonical
    (``workflow/rules/common.smk``); the values are unchanged, and the Parquet metadata hashes
    sorted-key JSON (:func:`config_hash`), so the chunks' bytes are too.
    """
    if isinstance(obj, dict):
        return {k: canonical(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list | tuple):
        return type(obj)(canonical(v) for v in obj)
    return obj


def config_hash(config: dict) -> str:
    """SHA-256 of the config's canonical JSON: stamped into Parquet metadata."""
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
