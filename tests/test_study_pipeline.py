"""S01: lesson 25's experiment as a locked study built from pools (a small synthetic pool
here; the workflow runs it on the real ones): poses from the pool, outcomes read through the
locked schedule, k/n per arm equal to the pool's own counts, and the same bytes twice."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact

from evalsim.products.studies import S01_FILES, build_lesson_study


def _pools(n=30):
    rng = np.random.default_rng(7)
    poses = rng.uniform(-0.05, 0.05, size=(n, 2))
    rows = []
    for policy, p in (("A", 0.55), ("B", 0.8)):
        for seed in (0, 1):
            ok = rng.random(n) < p
            for i in range(n):
                rows.append(
                    {
                        "task": "cube30",
                        "policy": policy,
                        "seed": seed,
                        "trial": i,
                        "cube_x_m": 0.2 + poses[i, 0],
                        "cube_y_m": poses[i, 1],
                        "cube_yaw_rad": 0.1 * i,
                        "success": bool(ok[i]),
                        "failure": "none" if ok[i] else ("missed" if i % 2 else "dropped"),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("s01")
    pools = _pools()
    doc1 = build_lesson_study(pools, base / "one" / "S01", "cube30", ["A", "B"], 20, seed=5)
    doc2 = build_lesson_study(pools, base / "two" / "S01", "cube30", ["A", "B"], 20, seed=5)
    return base, pools, doc1, doc2


def test_outcomes_are_the_pools_through_the_schedule(built):
    base, pools, doc, _ = built
    seed0 = pools[(pools["seed"] == 0) & (pools["trial"] < 20)]
    arms = {a["arm"]: a for a in doc["arms"]}
    for policy in ("A", "B"):
        sub = seed0[seed0["policy"] == policy]
        assert (arms[policy]["k"], arms[policy]["n"]) == (int(sub["success"].sum()), 20)
        fails = sub[~sub["success"]]["failure"].value_counts().to_dict()
        assert arms[policy]["failure_types"] == fails
    ka, kb = arms["A"]["k"], arms["B"]["k"]
    want = fisher_exact([[ka, 20 - ka], [kb, 20 - kb]]).pvalue
    assert doc["headline"]["pvalue"] == pytest.approx(want, rel=1e-9)
    assert doc["deviations"]["out_of_order"] == [] and doc["blind"] is False
    lock = json.loads((base / "one" / "S01" / "lock.json").read_text())
    xs = sorted(t["x_cm"] for t in lock["schedule"] if t["arm"] == "A")
    assert xs == sorted(round(100 * x, 2) for x in seed0[seed0.policy == "A"]["cube_x_m"])


def test_same_config_same_bytes(built):
    base, *_ = built
    for name in S01_FILES:
        one, two = base / "one" / "S01" / name, base / "two" / "S01" / name
        assert one.read_bytes() == two.read_bytes(), name


def test_a_pool_too_small_is_refused(tmp_path):
    with pytest.raises(ValueError, match="has 30 trials, not 40"):
        build_lesson_study(_pools(), tmp_path / "S01", "cube30", ["A", "B"], 40)
