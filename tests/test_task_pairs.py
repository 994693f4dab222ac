"""``task_pairs`` (one function for ``compare --by task`` and T36's paired rows) against a
plain-Python reference: the trials of A and B matched key by key with dicts, task by task."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalsim.stats.multi import aggregate
from evalsim.stats.multi.aggregate import task_pairs

MISSING = object()  # a missing key value: one value of its own, as pandas' merge matches it


def _key_value(v):
    return MISSING if isinstance(v, float) and math.isnan(v) else v


def reference_task_pairs(rows: list[dict], a: str, b: str, keys: list[str], outcome: str):
    """Per task (first appearance order): (A-only, B-only, pairs), or None when a key repeats
    within a policy or A and B share no key."""
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    out = {}
    for task in tasks:
        side = {a: {}, b: {}}
        repeated = False
        for r in rows:
            if r["task"] != task or r["policy"] not in side:
                continue
            key = tuple(_key_value(r[c]) for c in keys)
            repeated = repeated or key in side[r["policy"]]
            side[r["policy"]][key] = bool(r[outcome])
        shared = [k for k in side[a] if k in side[b]]
        if not keys or repeated or not shared:
            out[str(task)] = None
            continue
        a_only = sum(side[a][k] and not side[b][k] for k in shared)
        b_only = sum(side[b][k] and not side[a][k] for k in shared)
        out[str(task)] = (a_only, b_only, len(shared))
    return out


def _random_log(rng) -> pd.DataFrame:
    rows = []
    for t in range(int(rng.integers(1, 6))):
        for policy in ("A", "B", "C"):
            if rng.random() < 0.1:  # a policy missing a task
                continue
            for seed in range(int(rng.integers(1, 3))):
                for c in range(int(rng.integers(1, 8))):
                    if rng.random() < 0.2:  # a condition one policy did not run
                        continue
                    cond = math.nan if rng.random() < 0.05 else f"c{c}"
                    for _ in range(1 + (rng.random() < 0.03)):  # now and then run twice
                        rows.append((policy, f"t{t}", seed, cond, int(rng.random() < 0.5)))
    return pd.DataFrame(rows, columns=["policy", "task", "seed", "condition", "ok"])


@pytest.mark.parametrize("code_limit", [aggregate.CODE_LIMIT, 1], ids=["codes", "tuples"])
def test_task_pairs_equals_the_plain_python_reference(monkeypatch, code_limit):
    # code_limit 1: the path that numbers the key tuples (taken when codes would overflow)
    monkeypatch.setattr(aggregate, "CODE_LIMIT", code_limit)
    rng = np.random.default_rng(2026)
    seen = {"pairs": 0, "none": 0}
    for _ in range(120):
        df = _random_log(rng)
        if df.empty:
            continue
        rows = df.to_dict(orient="records")
        for keys in (["seed", "condition"], ["condition"], ["seed"], []):
            want = reference_task_pairs(rows, "A", "B", keys, "ok")
            got = task_pairs(df, "A", "B", keys, outcome="ok")
            assert got == want
            assert list(got) == list(want)  # tasks in order of first appearance
            seen["pairs"] += sum(v is not None for v in want.values())
            seen["none"] += sum(v is None for v in want.values())
    assert seen["pairs"] > 100 and seen["none"] > 100  # both outcomes were exercised


def test_task_pairs_counts_a_small_log_by_hand():
    df = pd.DataFrame(
        {
            "policy": ["A", "B"] * 4 + ["A", "A", "B"],
            "task": ["x"] * 8 + ["y"] * 3,
            "condition": ["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c5", "d", "d", "d"],
            "success": [1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1],
        }
    )
    # x: c1 A-only, c2 B-only, c3 both, c4/c5 unshared -> 3 pairs; y: A runs d twice
    assert task_pairs(df, "A", "B", ["condition"]) == {"x": (1, 1, 3), "y": None}
