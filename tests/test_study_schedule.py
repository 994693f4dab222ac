"""The locked schedule: every condition runs every arm back to back, blocks in order,
balanced arm orders (exactly where the counts allow, within the binomial band over 200 seeds
where they do not), random blind codes, and the same seed giving the same schedule."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
import yaml
from scipy.stats import binom

from evalsim.study.example import EXAMPLE_STUDY
from evalsim.study.protocol import parse_protocol
from evalsim.study.schedule import CODE_ALPHABET, arm_orders, blind_codes, make_schedule

EXAMPLE = yaml.safe_load(EXAMPLE_STUDY)


def _protocol(arms=("a", "b"), per_block=(5, 6), replicates=1):
    raw = copy.deepcopy(EXAMPLE)
    raw["arms"] = [{"name": a} for a in arms]
    raw["question"]["primary"] = {"a": arms[0], "b": arms[1]}
    raw["plan"] = {}
    total = sum(per_block)
    raw["conditions"] = {
        "positions": {"list": [{"name": f"P{i:02d}", "x_cm": i, "y_cm": 0} for i in range(total)]},
        "blocks": {"factors": {"session": [f"s{j}" for j in range(len(per_block))]}},
        "replicates": replicates,
    }
    raw["design"]["n"] = total * replicates
    p = parse_protocol(raw)
    sizes = Counter(c.block for c in p.conditions())
    assert sorted(sizes.values()) == sorted(n * replicates for n in per_block)
    return p


def _by_condition(trials):
    out = {}
    for t in trials:
        out.setdefault(t.condition, []).append(t)
    return out


def test_every_condition_runs_every_arm_back_to_back_within_its_block():
    p = _protocol(arms=("a", "b", "c"), per_block=(6, 6))
    codes, trials = make_schedule(p, seed=1)
    assert [t.index for t in trials] == list(range(len(trials)))
    assert len({t.trial for t in trials}) == len(trials) == 36
    for cond, ts in _by_condition(trials).items():
        assert sorted(t.arm for t in ts) == ["a", "b", "c"]
        idx = [t.index for t in ts]
        assert idx == list(range(idx[0], idx[0] + 3)), cond  # consecutive
        assert [t.slot for t in ts] == [1, 2, 3]
        assert all(t.code == codes[t.arm] for t in ts)
    blocks = [t.block for t in trials]
    assert blocks == sorted(blocks, key=lambda b: b[-1])  # blocks run in the file's order


def test_three_arms_each_arm_in_each_slot_equally_often_per_block():
    p = _protocol(arms=("a", "b", "c"), per_block=(6, 6))
    for seed in range(30):
        _, trials = make_schedule(p, seed=seed)
        for block in {t.block for t in trials}:
            slots = Counter((t.arm, t.slot) for t in trials if t.block == block)
            m = sum(1 for t in trials if t.block == block) // 3
            assert set(slots.values()) == {m // 3}, (seed, block, slots)


def test_two_arms_lead_balance_over_200_seeds():
    """Even blocks: exactly half AB per seed. Odd blocks (5 conditions): the odd one out
    leads for arm a in a Binomial(200, 1/2) number of seeds, inside its 99.9% band."""
    p = _protocol(per_block=(5, 6))
    extra_a = Counter()
    orders = set()
    for seed in range(200):
        _, trials = make_schedule(p, seed=seed)
        for block in ("session=s0", "session=s1"):
            leads = Counter(t.arm for t in trials if t.block == block and t.slot == 1)
            m = sum(leads.values())
            if m % 2 == 0:
                assert leads["a"] == leads["b"] == m // 2, (seed, leads)
            else:
                assert abs(leads["a"] - leads["b"]) == 1
                extra_a[block] += leads["a"] > leads["b"]
        orders.add(tuple((t.position, t.arm) for t in trials))
    lo, hi = binom.ppf(0.0005, 200, 0.5), binom.isf(0.0005, 200, 0.5)
    assert list(extra_a) == ["session=s1"]  # the 5-condition block
    assert lo <= extra_a["session=s1"] <= hi
    assert len(orders) == 200  # every seed its own schedule


def test_condition_order_is_shuffled_uniformly_enough():
    """The first condition of a 6-condition block is each condition about 1/6 of the time."""
    p = _protocol(per_block=(6,))
    first = Counter()
    for seed in range(300):
        _, trials = make_schedule(p, seed=seed)
        first[trials[0].position] += 1
    assert len(first) == 6
    lo, hi = binom.ppf(0.0005, 300, 1 / 6), binom.isf(0.0005, 300, 1 / 6)
    assert all(lo <= c <= hi for c in first.values()), first


def test_same_seed_same_schedule():
    p = _protocol()
    assert make_schedule(p, 42) == make_schedule(p, 42)
    assert make_schedule(p, 42)[1] != make_schedule(p, 43)[1]


def test_blind_codes_are_random_and_not_derived_from_names():
    codes = blind_codes(["baseline", "candidate"], seed=5)
    assert len(set(codes.values())) == 2
    assert all(len(c) == 4 and set(c) <= set(CODE_ALPHABET) for c in codes.values())
    # other names, same seed: the same codes in the same places -- names play no part
    assert list(blind_codes(["x", "y"], seed=5).values()) == list(codes.values())
    # over seeds the code of an arm varies
    assert len({blind_codes(["baseline", "candidate"], seed=s)["baseline"] for s in range(50)}) > 45


@pytest.mark.parametrize("m, k", [(1, 2), (7, 2), (4, 4), (10, 3)])
def test_arm_orders_are_permutations_balanced_within_one(m, k):
    import numpy as np

    orders = arm_orders(m, k, np.random.default_rng(0))
    assert len(orders) == m
    assert all(sorted(o) == list(range(k)) for o in orders)
    for slot in range(k):
        counts = Counter(o[slot] for o in orders)
        vals = [counts.get(a, 0) for a in range(k)]
        assert max(vals) - min(vals) <= 1
