"""Issue 46: the primary reading, pool readings, pool checks that can fail, ten new claims.

Fast: every ledger row here is built from tables given in the test (or none), never from a
pipeline run; references come from SciPy, statsmodels and plain Python in this file.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy
import yaml
from ledger_pools import pools
from scipy.stats import beta, binom, fisher_exact, norm
from statsmodels.stats.proportion import proportion_confint

from evalsim.config import canonical, check_config
from evalsim.ledger import VERDICTS, build_ledger, load_claims
from evalsim.ledger.checks import (
    coverage_contrast,
    library_defaults,
    min_coverage,
    not_wider_cases,
    scipy_fisher_tolerance,
)
from evalsim.ledger.claims import PRIMARY
from evalsim.ledger.verdicts import POOL_VERDICTS
from evalsim.products.manifest import PRODUCTS

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def claims():
    return {c.id: c for c in load_claims(REPO / "config" / "claims.yaml")}


def _row(claims, cid, **tables):
    return build_ledger([claims[cid]], "/nonexistent", overrides=tables).iloc[0]


# ------------------------------------------------------------------ item 1: the written rule
def test_every_claim_states_its_primary_reading(claims):
    for c in claims.values():
        assert c.primary in PRIMARY, c.id
        assert (c.primary == "premise unstated") == c.premise_unstated, c.id


def test_the_primary_reading_decides_even_when_another_matches(tmp_path):
    # A rule that let any matching reading decide would call this "matches".
    raw = {
        "id": "9-01", "doc": "9", "quote": "q", "stated": "0.5", "rule": "value",
        "primary": "document inputs",
        "sources": [
            {"method": "stated", "table": "T99", "column": "v", "where": {"g": "a"}},
            {"method": "other", "table": "T99", "column": "v", "where": {"g": "b"}},
        ],
    }  # fmt: skip
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"docs": {"9": "doc9.txt"}, "claims": [raw]}))
    t99 = pd.DataFrame({"g": ["a", "b"], "v": [0.7, 0.5]})
    row = build_ledger(load_claims(path), "/x", {"T99": t99}).iloc[0]
    assert row.verdict == "document error", row.reason
    assert row.reason.startswith("Primary reading (document inputs): off by 0.2")
    assert "other = 0.5 (matches)" in row.reason


# The four rows issue 46 lists, each decided by the rule (the sentence it quotes above it).
def test_significant_only_11_percent_restates_table_e(claims):
    # 000 l.288 "the difference is significant only 11% of the time": Table E's 0.113.
    t06 = pd.DataFrame({"n": [20], "power_pool_rates": [0.1188]})
    row = _row(claims, "000-40", T06=t06)
    assert claims["000-36.n20"].stated_text == "0.113"
    assert (row.verdict, row.reproduced) == ("matches", "11.3"), row.reason
    assert "0.118" in row.reason and "document rounding" in row.reason  # reported, not deciding


def test_ten_trials_about_046_wide_restates_table_b(claims):
    # 000 l.333 "Ten trials give an interval about 0.46 wide": Table B's 0.463; the exact mean
    # Wilson width at the document's 221/300 (statsmodels, here) is reported beside it.
    lo, hi = proportion_confint(np.arange(11), 10, alpha=0.05, method="wilson")
    exact = float(binom.pmf(np.arange(11), 10, 221 / 300) @ (hi - lo))
    assert exact == pytest.approx(0.4618, abs=5e-5)
    row = _row(claims, "000-44")
    assert (row.verdict, row.reproduced) == ("matches", "0.463"), row.reason
    assert f"{exact:.6g}" in row.reason


def test_halving_costs_four_times_is_the_lessons_derivation(claims):
    # 000 l.96 "The half-width is about z sqrt(p(1-p)/n); halving it needs n four times larger".
    t04 = pd.DataFrame(
        {"observed rate": [0.5, 0.7], "n for +-0.05": [381, 320], "n for +-0.1": [93, 78]}
    )
    row = _row(claims, "000-47", T04=t04)
    assert row.verdict == "matches", row.reason
    assert float(row.reproduced) == pytest.approx(4.0, rel=1e-12)
    assert "(381 / 93 + 320 / 78) / 2" not in row.reason  # the formula, not a retyped number
    assert f"{(381 / 93 + 320 / 78) / 2:.6g} (document rounding)" in row.reason


def test_one_in_five_at_80_percent_power_is_exact(claims):
    # 001 l.128 "80% power promises ... one experiment in five returns a null": 1 - 0.80.
    row = _row(claims, "001-28")
    assert row.verdict == "matches", row.reason
    assert "exactly" in row.reason


# ------------------------------------------------------------------ item 2: pool readings
def _pool_fed_tables() -> set[str]:
    config = canonical(check_config(yaml.safe_load((REPO / "config/config.yaml").read_text())))
    fed = set()
    for p in PRODUCTS:
        paths = []
        for v in p.inputs(config).values():
            paths += v if isinstance(v, list) else [v]
        if any(str(x).startswith("results/pools/") for x in paths):
            fed.add(p.id.split("_")[0])
    return fed


def _tables_read(src: dict) -> set[str]:
    if "table" in src:
        return {str(src["table"])}
    return {str(v["table"]) for v in (src.get("values") or {}).values()}


def test_every_reading_of_a_pool_fed_table_says_whether_it_is_on_our_pools(claims):
    fed = _pool_fed_tables()
    assert {"T07", "T08", "T09", "T10", "T28", "T30"} <= fed
    for c in claims.values():
        if c.rule == "simulation":  # decided by the model's two questions, (b) on the pools
            continue
        for src in c.sources:
            if _tables_read(src) & fed and "T30" not in _tables_read(src):
                assert "on_pools" in src, (c.id, src.get("method"))


@pytest.mark.parametrize("cid", ["000-01", "000-40", "000-41", "000-45"])
def test_a_reading_on_our_pools_is_never_a_document_error(claims, cid):
    # Issue 46: these four claims' pool readings were labelled "document error".
    far = {
        "T03": pd.DataFrame({"policy": ["A", "B"], "P(>=9/10) at p_pool": [0.2153, 0.6453]}),
        "T09": pd.DataFrame({"policy": ["A", "B"], "drawn": [0.9, 0.9]}),
        "T10": pd.DataFrame(
            {"policy_a": ["A", "A"], "policy_b": ["B", "B"], "n": [20, 100]}
            | {"fisher_p_lt_alpha": [0.9, 0.01]}
        ),
    }
    row = _row(claims, cid, **far)
    pool_methods = [s["method"] for s in claims[cid].sources if s.get("on_pools")]
    assert pool_methods
    for m in pool_methods:
        assert f"{m} = " in row.reason
        tail = row.reason.split(f"{m} = ")[1]
        assert tail.split("(")[1].startswith("simulation differs"), row.reason


def test_the_pool_vocabulary_is_part_of_the_verdicts():
    assert POOL_VERDICTS <= set(VERDICTS)
    assert "document error" not in POOL_VERDICTS and "document rounding" not in POOL_VERDICTS


# ------------------------------------------------------------------ item 3: resolution
def test_a_pool_check_states_its_resolution_and_can_fail(claims):
    # 000-26 "The true gap is 0.14": pooled seeds, 900 trials each (T30).
    a, b = 0.75, 0.88
    row = _row(
        claims,
        "000-26",
        **pools(pd.DataFrame({"policy": ["A", "B"], "rate": [a, b]} | {"trials": [900, 900]})),
    )
    assert row.verdict == "matches", row.reason
    assert "of 900" in row.reason and "resolution: range width" in row.reason
    # Half the width is about 2 SE of the two gaps (ours at 900, the document's at 300 each).
    se = math.sqrt(sum(p * (1 - p) for p in (a, b)) / 900 + (0.737 * 0.263 + 0.877 * 0.123) / 300)
    width = float(row.reason.split("range width ")[1].split(",")[0])
    assert width == pytest.approx(2 * 1.96 * se, rel=0.2)
    # The same check fails when our gap is far (it can fail), ...
    row = _row(
        claims,
        "000-26",
        **pools(pd.DataFrame({"policy": ["A", "B"], "rate": [0.8, 0.82]} | {"trials": [900, 900]})),
    )
    assert row.verdict == "simulation differs", row.reason
    # ... and says it cannot resolve when its range also holds "no gap".
    row = _row(
        claims,
        "000-26",
        **pools(pd.DataFrame({"policy": ["A", "B"], "rate": [0.75, 0.82]} | {"trials": [60, 60]})),
    )
    assert row.verdict == "not resolvable with the pools", row.reason
    assert "the range holds 0" in row.reason


def test_the_calibration_is_stated_on_table_a_rows(claims):
    for cid in ("000-21", "000-22", "000-23", "000-24"):
        assert "calibrated" in claims[cid].note.lower()
        src = claims[cid].sources[0]
        assert src["table"] == "T30" and src["where"]["scope"] == "pooled seeds"


# ------------------------------------------------------------------ item 5: ten claims
def test_clopper_pearson_is_not_strictly_wider_at_110_cases():
    # 001 l.35 "the exact Clopper-Pearson interval is the conservative, strictly wider
    # alternative": statsmodels' beta and wilson methods, n = 1..100.
    count, first = 0, None
    for n in range(1, 101):
        k = np.arange(n + 1)
        cl, ch = proportion_confint(k, n, alpha=0.05, method="beta")
        wl, wh = proportion_confint(k, n, alpha=0.05, method="wilson")
        bad = np.flatnonzero((ch - cl) <= (wh - wl))
        count += bad.size
        first = first or (n if bad.size else None)
    assert (count, first) == (110, 46)
    assert not_wider_cases("clopper_pearson", "wilson", 100)[0][0] == count
    # at 0/50 the upper bounds: Clopper-Pearson 0.0711, Wilson 0.0713
    assert beta.ppf(0.975, 1, 50) == pytest.approx(0.0711, abs=5e-5)


def test_clopper_pearson_coverage_is_at_least_nominal_and_wilsons_is_not():
    # 004 l.32 "guarantees coverage probability no less than the nominal confidence level".
    def coverage(method, n, p):
        k = np.arange(n + 1)
        lo, hi = proportion_confint(k, n, alpha=0.05, method=method)
        return float(binom.pmf(k, n, p) @ ((lo <= p) & (p <= hi)))

    grid = np.linspace(0.001, 0.999, 499)
    cp = min(coverage("beta", 20, p) for p in grid)
    wi = min(coverage("wilson", 20, p) for p in grid)
    assert cp >= 0.95 > wi
    assert min_coverage("clopper_pearson", [20])[0][0] == pytest.approx(cp, abs=2e-3)
    assert min_coverage("clopper_pearson", [20])[0][0] >= 0.95 - 1e-12
    assert coverage_contrast("wilson", "clopper_pearson", "minimum", [20])[0][0] < 0
    assert coverage_contrast("wilson", "clopper_pearson", "closeness", [20])[0][0] > 0


def test_library_facts_are_read_from_the_installed_libraries():
    # 000 l.178 "SciPy uses 1e-14"; l.210-211 the defaults. Read here another way: the
    # default of binomtest's proportion_ci and of proportion_confint.
    from statsmodels.stats.proportion import proportion_confint as pc

    src = inspect.getsource(fisher_exact)
    assert "epsilon = 1e-14" in src
    assert scipy_fisher_tolerance()[0][0] == 1e-14
    ci = scipy.stats.binomtest(3, 10).proportion_ci()
    exact = scipy.stats.binomtest(3, 10).proportion_ci(method="exact", confidence_level=0.95)
    assert (ci.low, ci.high) == (exact.low, exact.high)
    assert pc(3, 10) == pc(3, 10, alpha=0.05, method="normal")
    values, detail = library_defaults("exact", "normal")
    assert list(values) == [0.95, 1.0, 1.0] and "method='exact'" in detail
    assert list(library_defaults("wilson", "wilson")[0]) == [0.95, 0.0, 0.0]


def test_new_claims_against_their_references(claims):
    # 000 l.94 "The center moves toward 0.5 by z^2/2n": the exact shift at 9/10.
    z, n, ph = 1.96, 10, 0.9
    shift = (z * z / n) * (0.5 - ph) / (1 + z * z / n)
    assert shift == pytest.approx(-0.111, abs=5e-4) and z * z / (2 * n) == pytest.approx(
        0.192, abs=5e-4
    )
    lo, hi = proportion_confint(9, 10, alpha=2 * norm.sf(z), method="wilson")
    t01 = pd.DataFrame({"case": ["9/10"], "wilson_lower": [lo], "wilson_upper": [hi]})
    row = _row(claims, "000-62", T01=t01)
    assert row.verdict == "document error" and float(row.reproduced) == pytest.approx(
        -shift, rel=1e-4
    )
    # 002 l.11 "neither of you did anything wrong": Fisher's p of 9/10 vs 6/10.
    row = _row(claims, "002-21")
    p = fisher_exact([[9, 1], [6, 4]])[1]
    assert row.verdict == "matches" and float(row.reproduced) == pytest.approx(p, rel=1e-5)
    assert p == pytest.approx(0.303, abs=5e-4)
    # 002 l.43 "climbs with the number of looks": a fall between two looks refutes it.
    f03 = pd.DataFrame({"n_looks": [1, 2, 4], "exact_false_win_rate": [0.03, 0.05, 0.08]})
    assert _row(claims, "002-20", F03=f03).verdict == "matches"
    f03["exact_false_win_rate"] = [0.03, 0.05, 0.04]
    assert _row(claims, "002-20", F03=f03).verdict == "document error"
    # 004 l.77 "if correlation ... becomes weak, the power gain diminishes" (T13's rho grid).
    t13 = pd.DataFrame(
        {"design": "paired", "method": "normal, separate variances", "rho": [0, 0.25, 0.5]}
        | {"n_per_arm": [90, 70, 47]}
    )
    assert _row(claims, "004-22", T13=t13).verdict == "matches"
    t13["n_per_arm"] = [40, 70, 47]
    assert _row(claims, "004-22", T13=t13).verdict == "document error"
    # 004 l.81 "over-optimistic p-values", on our pools: never a document error.
    t28 = pd.DataFrame(
        {"policy": ["A", "B"], "cluster_by": "task", "micro": [0.70, 0.80]}
        | {"hierarchical_width": [0.2, 0.2], "naive_width": [0.1, 0.1]}
    )
    row = _row(claims, "004-23", T28=t28)
    d = 0.1 * 2 * norm.ppf(0.975)
    want = norm.sf(d / math.sqrt(0.08)) / norm.sf(d / math.sqrt(0.02))
    assert row.verdict == "matches" and float(row.reproduced) == pytest.approx(want, rel=1e-5)
    t28["hierarchical_width"] = [0.05, 0.05]
    assert _row(claims, "004-23", T28=t28).verdict == "simulation differs"


def test_ten_new_claims_each_name_a_product_and_a_primary_reading(claims):
    new = ["000-60", "000-61", "000-62", "001-40", "002-20", "002-21", "004-20", "004-21"]
    new += ["004-22", "004-23"]
    for cid in new:
        c = claims[cid]
        assert c.primary in PRIMARY and c.sources
        for src in c.sources:
            assert src.get("table") or src.get("check") or src.get("values") or src.get("expr")
