"""The claims ledger: claims file well-formed, verdict rules, and verdicts that follow the data."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml

from evalsim.ledger import (
    VERDICTS,
    build_ledger,
    ledger_markdown,
    load_claims,
    readme_disagreements,
    replace_section,
    section,
)

SEEDS = "/work/shared/seeds"


@pytest.fixture(scope="module")
def claims_path(repo):
    return repo / "config" / "claims.yaml"


@pytest.fixture(scope="module")
def claims(claims_path):
    return load_claims(claims_path)


def _by_id(claims, cid):
    return [c for c in claims if c.id == cid]


def _norm(text: str) -> str:
    text = text.replace("\u2212", "-").replace(",", "").replace("\u2011", "-")
    return re.sub(r"(\d)[ \u00a0\u202f](\d{3})\b", r"\1\2", text)  # "3 200" -> "3200"


def test_claims_cover_the_four_documents(claims, claims_path):
    docs = yaml.safe_load(claims_path.read_text())["docs"]
    assert {c.doc for c in claims} == set(docs.values())
    assert len(claims) > 150
    assert len({c.id for c in claims}) == len(claims)


def test_every_stated_number_is_printed_on_its_lines(claims, claims_path, repo):
    """The stated value (or the printed words) appears on the lines the claim cites."""
    import pathlib

    seeds = pathlib.Path(SEEDS)
    if not seeds.exists():
        pytest.skip("documents not available")
    texts = {}
    for c in claims:
        if c.doc not in texts:
            texts[c.doc] = (seeds / c.doc).read_text(encoding="utf-8").splitlines()
        lines = texts[c.doc]
        assert c.lines and max(c.lines) <= len(lines), c.id
        text = _norm(" ".join(lines[i - 1] for i in c.lines))
        wanted = [c.printed] if c.printed else c.stated_text.strip("[]").split(", ")
        for w in wanted:
            assert _norm(w) in text, f"{c.id}: {w!r} not on lines {c.lines}"


def _table(**cols):
    return pd.DataFrame(cols)


def _ledger(claims, cid, **tables):
    # A root without results/: only the tables given here exist.
    return build_ledger(_by_id(claims, cid), "/nonexistent", overrides=tables).iloc[0]


def test_value_rule_matches_then_differs_when_the_result_moves(claims):
    t03 = _table(
        policy=["A", "B"],
        **{"P(>=9/10) at p_stated": [0.2160, 0.6466], "P(>=9/10) at p_pool": [0.2153, 0.6453]},
    )
    row = _ledger(claims, "000-02", T03=t03)
    assert row.verdict == "matches"
    assert row.reproduced == "0.2153"
    t03.loc[:, "P(>=9/10) at p_pool"] = [0.25, 0.6453]
    row = _ledger(claims, "000-02", T03=t03)
    assert row.verdict == "differs", row.reason


def test_approx_one_in_n(claims):
    t03 = _table(policy=["A", "B"], **{"P(>=9/10) at p_stated": [0.215, 0.645]})
    assert _ledger(claims, "000-01", T03=t03).verdict == "matches approximately"
    t03.loc[0, "P(>=9/10) at p_stated"] = 0.30  # one in 3.3, not one in five
    assert _ledger(claims, "000-01", T03=t03).verdict == "differs"


def test_simulation_rule_uses_two_standard_errors(claims):
    t07 = _table(policy=["A", "B"], rate=[0.72, 0.88], trials=[300, 300])
    row = _ledger(claims, "000-21", T07=t07)
    assert row.verdict == "depends on the simulation", row.reason
    # 0.737 vs 0.60 with n = 300 each: SE ~ 0.037, 3.7 SE apart.
    t07.loc[0, "rate"] = 0.60
    row = _ledger(claims, "000-21", T07=t07)
    assert row.verdict == "differs"
    assert "SE" in row.reason


def test_mc_rule_within_rounding_and_within_2_se(claims):
    f03 = _table(n_looks=[1, 40], exact_false_win_rate=[0.02819, 0.11249])
    assert _ledger(claims, "002-06", F03=f03).verdict == "matches"
    assert _ledger(claims, "002-07", F03=f03).verdict == "matches approximately"
    f03.loc[1, "exact_false_win_rate"] = 0.125
    assert _ledger(claims, "002-07", F03=f03).verdict == "differs"


def test_missing_table_column_and_row_are_reported(claims):
    row = _ledger(claims, "000-02")
    assert row.verdict == "missing source"
    assert "T03" in row.reason
    bad = _table(policy=["A"], other=[0.2])
    row = _ledger(claims, "000-02", T03=bad)
    assert row.verdict == "missing source" and "no column" in row.reason
    only_b = _table(policy=["B"], **{"P(>=9/10) at p_stated": [0.6], "P(>=9/10) at p_pool": [0.6]})
    row = _ledger(claims, "000-02", T03=only_b)
    assert row.verdict == "missing source" and "no row" in row.reason


def test_unstated_premise_gives_ambiguous_when_readings_disagree(claims):
    t25 = _table(
        n=[10, 10, 100, 100],
        method=["wilson", "clopper_pearson", "wilson", "clopper_pearson"],
        width_points=[38.6, 44.2, 11.9, 12.7],
        half_width_points=[19.3, 22.1, 5.96, 6.36],
    )
    # 004-01 states its method ("spans"): the full width decides, the half-width is reported.
    row = _ledger(claims, "004-01", T25=t25)
    assert row.verdict == "differs"
    assert "half-width" in row.reason


def test_roundoff_rule(claims):
    t01 = _table(
        case=[
            "k = 0..20 of 20, z = Phi^-1(0.975) = 1.959963985",
            "k = 0..20 of 20, z = 1.959964 (as printed)",
        ],
        max_abs_diff_vs_scipy=[2.2e-16, 2.1e-9],
    )
    assert _ledger(claims, "000-07", T01=t01).verdict == "matches"
    t01.loc[0, "max_abs_diff_vs_scipy"] = 1e-6
    assert _ledger(claims, "000-07", T01=t01).verdict == "differs"


def test_markdown_and_readme_section(claims):
    t03 = _table(
        policy=["A", "B"],
        **{"P(>=9/10) at p_stated": [0.2160, 0.6466], "P(>=9/10) at p_pool": [0.2153, 0.6453]},
    )
    df = build_ledger(claims[:3], "/nonexistent", overrides={"T03": t03})
    md = ledger_markdown(df, [{"doc": "000", "quote": "q", "reason": "r"}])
    assert "| verdict | claims |" in md and "Statements not checked" in md
    assert set(df["verdict"]) <= set(VERDICTS)
    body = readme_disagreements(df)
    readme = (
        "a\n<!-- BEGIN generated:disagreements -->\nold\n<!-- END generated:disagreements -->\nb\n"
    )
    new = replace_section(readme, "disagreements", body)
    assert section(new, "disagreements") == body.rstrip()
    assert new.startswith("a\n") and new.endswith("b\n")
    assert replace_section(new, "disagreements", body) == new
    with pytest.raises(ValueError, match="no section markers"):
        replace_section("no markers", "gallery", body)


def test_load_claims_rejects_duplicates_and_unknown_rules(tmp_path):
    base = {"id": "x-1", "doc": "d", "quote": "q", "stated": "1", "rule": "value", "sources": []}
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"claims": [base, base]}))
    with pytest.raises(ValueError, match="duplicate"):
        load_claims(p)
    p.write_text(yaml.safe_dump({"claims": [dict(base, rule="vibes")]}))
    with pytest.raises(ValueError, match="unknown rule 'vibes'"):
        load_claims(p)
    p.write_text(yaml.safe_dump({"claims": [dict(base, tolerence={"abs": 1})]}))
    with pytest.raises(ValueError, match="unknown key.*tolerence"):
        load_claims(p)
    p.write_text(yaml.safe_dump({"claims": [dict(base, sources=[{"tabel": "T01"}])]}))
    with pytest.raises(ValueError, match="unknown source key.*tabel"):
        load_claims(p)


def test_decimals_of_printed_values():
    from evalsim.ledger import _decimals

    assert _decimals("0.960") == 3
    assert _decimals("94") == 0
    assert _decimals("-5.93") == 2
    assert _decimals("2.2e-16") is None
    assert re.fullmatch(r"\d+", "94")
    assert np.isclose(0.5 * 10.0 ** -_decimals("0.215"), 0.0005)


def test_readme_command_rewrites_and_checks_the_section(claims, tmp_path):
    from evalsim.ledger import main

    t03 = _table(
        policy=["A", "B"],
        **{"P(>=9/10) at p_stated": [0.2160, 0.6466], "P(>=9/10) at p_pool": [0.2153, 0.6453]},
    )
    df = build_ledger(claims[:3], "/nonexistent", overrides={"T03": t03})
    ledger = tmp_path / "claims.csv"
    df.to_csv(ledger, index=False)
    readme = tmp_path / "README.md"
    readme.write_text(
        "x\n<!-- BEGIN generated:disagreements -->\nstale\n<!-- END generated:disagreements -->\n"
    )
    args = ["readme", "--ledger", str(ledger), "--readme", str(readme)]
    args += ["--sections", "disagreements"]
    assert main([*args, "--check"]) == 1
    assert main(args) == 0
    assert "000-01" in readme.read_text() and "stale" not in readme.read_text()
    assert main([*args, "--check"]) == 0
