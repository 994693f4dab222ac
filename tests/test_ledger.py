"""The claims ledger: claims file well-formed, verdict rules, and verdicts that follow the data."""

from __future__ import annotations

import os
import re
from pathlib import Path

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


def documents_dir(repo):
    """The four documents: $EVALSIM_DOCUMENTS, else ../shared/seeds beside the repository."""
    env = os.environ.get("EVALSIM_DOCUMENTS")
    return Path(env) if env else repo.parent / "shared" / "seeds"


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
    seeds = documents_dir(repo)
    if not seeds.is_dir():
        pytest.skip(f"documents not found at {seeds} (set EVALSIM_DOCUMENTS to their folder)")
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


def test_stated_method_decides_and_other_readings_are_reported(claims):
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


def _t14(ge20, gt20, normal):
    return _table(
        quantity=[
            "exact (>= 20 points) P(|k1 - k2| >= 4)",
            "exact (> 20 points) P(|k1 - k2| >= 5)",
            "normal approximation, no continuity correction",
        ],
        value=[ge20, gt20, normal],
    )


def test_unstated_premise_gives_ambiguous_when_readings_disagree(claims):
    # 001-11 "about one time in six", premise unstated (>= or > 20 points).
    (claim,) = _by_id(claims, "001-11")
    assert claim.premise_unstated and not claim.method_stated
    row = _ledger(claims, "001-11", T14=_t14(0.170, 0.095, 0.160))
    assert row.verdict == "ambiguous", row.reason
    assert "leaves out a premise" in row.reason
    reproduced, not_by = row.reason.split("; not by: ")
    assert "0.17" in reproduced and "0.16" in reproduced and "0.095" in not_by
    # All readings agree: no ambiguity, the best reading decides.
    row = _ledger(claims, "001-11", T14=_t14(0.170, 0.160, 0.165))
    assert row.verdict == "matches approximately", row.reason
    assert "Other readings" in row.reason
    # All readings disagree with the document: "differs", not "ambiguous".
    row = _ledger(claims, "001-11", T14=_t14(0.30, 0.25, 0.28))
    assert row.verdict == "differs", row.reason


def test_order_of_magnitude_rule(claims):
    # 001-18 "on the order of a thousand trials": the nearest power of ten must be 10**3.
    def t16(n05, n07):
        return _table(row=["n at 0.5 (wilson)", "n at 0.7 (wilson)"], n=[n05, n07])

    row = _ledger(claims, "001-18", T16=t16(1067, 897))
    assert row.verdict == "matches approximately" and "same order" in row.reason
    for n05, n07 in [(120, 95), (4000, 3300)]:  # 10**2 and 10**4, not 10**3
        row = _ledger(claims, "001-18", T16=t16(n05, n07))
        assert row.verdict == "differs", (n05, row.reason)
        assert "different order" in row.reason


def test_simulation_rule_with_an_absolute_criterion(claims):
    # 000-26 "the true gap is 0.14": criterion |b - a - 0.14| <= 0.09.
    def t07(a, b):
        return _table(policy=["A", "B"], rate=[a, b], trials=[300, 300])

    row = _ledger(claims, "000-26", T07=t07(0.737, 0.877))
    assert row.verdict == "depends on the simulation", row.reason
    assert float(row.reproduced) == pytest.approx(0.14)
    assert _ledger(claims, "000-26", T07=t07(0.70, 0.92)).verdict == "depends on the simulation"
    for a, b in [(0.60, 0.90), (0.80, 0.82), (0.88, 0.737)]:  # gaps 0.30, 0.02, -0.143
        row = _ledger(claims, "000-26", T07=t07(a, b))
        assert row.verdict == "differs", (a, b, row.reason)
        assert "> 0.09" in row.reason


def test_at_least_and_at_most_rules(claims):
    # 001-22 at_least 15: the worst-case MDE at 20 per arm must be >= the 15-point gap.
    def t17(mde):
        return _table(quantity=["MDE (worst case)"], n_per_arm=[20], mde_normal_points=[mde])

    assert _ledger(claims, "001-22", T17=t17(44.3)).verdict == "matches"
    assert _ledger(claims, "001-22", T17=t17(15.0)).verdict == "matches"
    row = _ledger(claims, "001-22", T17=t17(12.0))
    assert row.verdict == "differs" and "not >=" in row.reason
    # 000-46 at_most 0.80: power at 100 trials each must stay below 0.80.
    t06 = _table(n=[50, 100], power=[0.3, 0.55], power_pool_rates=[0.35, 0.6])
    assert _ledger(claims, "000-46", T06=t06).verdict == "matches"
    t06.loc[1, "power"] = 0.85
    row = _ledger(claims, "000-46", T06=t06)
    assert row.verdict == "differs" and "not <=" in row.reason


def test_at_least_slack_allows_rounding(claims):
    # 001-20 at_least 40 with abs 0.5: 39.6 rounds to 40 ("40-plus"), 39.4 does not.
    def t17(mde):
        return _table(
            quantity=["MDE (worst case)"],
            n_per_arm=[25],
            mde_normal_points=[mde],
            mde_exact_fisher_points=[mde + 3],
        )

    row = _ledger(claims, "001-20", T17=t17(39.6))
    assert row.verdict == "matches" and "allowing 0.5" in row.reason
    assert _ledger(claims, "001-20", T17=t17(39.4)).verdict == "differs"


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


ESCAPE = "().__class__.__mro__[1].__subclasses__()"


def test_expression_escape_is_refused_naming_the_claim(tmp_path):
    from evalsim.safe_expr import ExpressionError

    base = {"id": "x-9", "doc": "d", "quote": "q", "stated": "1", "rule": "value"}
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"claims": [dict(base, sources=[{"expr": ESCAPE}])]}))
    with pytest.raises(
        ExpressionError,
        match=r"claim 'x-9': expr .*__subclasses__.*: call of .*; allowed functions",
    ):
        load_claims(p)
    # The same refusal when a claim is judged without load_claims' check.
    from evalsim.ledger import Tables, evaluate_source

    with pytest.raises(ExpressionError, match="claim 'x-9'.*Attribute not allowed"):
        evaluate_source(Tables("/nonexistent"), {"expr": "(1).__class__"}, "x-9")


@pytest.mark.parametrize(
    ("expr", "match"),
    [
        ("__import__('os')", "call of '__import__'"),
        ("open", "unknown name 'open'"),
        ("[x for x in (1, 2)]", "ListComp not allowed"),
        ("(lambda: 1)()", "call of"),
        ("norm.ppf.__globals__", "Attribute not allowed"),
        ("sqrt(x=4)", "keyword arguments"),
        ("'a' * 3", "constant 'a' is not a number"),
        ("True + 1", "constant True is not a number"),
        ("(1, 2)[0]", "Subscript not allowed"),
        ("1 +", "does not parse"),
        ("1 if a else 2", "IfExp not allowed"),
        ("a and 1", "BoolOp not allowed"),
        ("a in [1]", "Compare not allowed"),
        ("~a", "UnaryOp not allowed"),
        ("a @ a", "BinOp not allowed"),
    ],
)
def test_expressions_outside_the_whitelist_are_refused(expr, match):
    from evalsim.safe_expr import ExpressionError, evaluate

    with pytest.raises(ExpressionError, match=match):
        evaluate(expr, {"a": 1.0})


def test_whitelisted_expressions_evaluate_like_python():
    from scipy import stats

    from evalsim.safe_expr import evaluate

    a, b = 0.7, np.array([0.2, 0.5])
    names = {"a": a, "b": b}
    assert evaluate("-a + 2 * a ** 2 / 4 - 7 // 2 + 7 % 4", names) == -a + 2 * a**2 / 4 - 3 + 3
    assert evaluate("+a", names) == a
    assert evaluate("[a, 1]", names) == [a, 1]
    assert evaluate("(a, 2.5)", names) == [a, 2.5]
    np.testing.assert_array_equal(evaluate("b * 2", names), b * 2)
    assert evaluate("max(a, b)", names) == 0.7 and evaluate("min(b)", names) == 0.2
    assert evaluate("max(abs(0.987 - 0.95), abs(0.942 - 0.95))") == pytest.approx(0.037)
    assert evaluate("norm.ppf(0.975)") == stats.norm.ppf(0.975)
    assert evaluate("norm.cdf(1)") == stats.norm.cdf(1) and evaluate("norm.sf(1)") == stats.norm.sf(
        1
    )
    assert evaluate("binom.pmf(3, 10, a)", names) == stats.binom.pmf(3, 10, a)
    assert evaluate("binom.cdf(3, 10, a)", names) == stats.binom.cdf(3, 10, a)
    assert evaluate("binom.sf(3, 10, a)", names) == stats.binom.sf(3, 10, a)
    assert evaluate("ceil(2.1) + floor(2.9) + round(2.6) + log10(100) + sqrt(16)") == 14.0
    assert evaluate("a < 1", names) and not evaluate("a > 1", names)
    assert evaluate("a >= 0.7", names) and not evaluate("a >= 0.71", names)
    assert evaluate("a <= 0.7", names) and not evaluate("a <= 0.69", names)
    assert evaluate("a == 0.7", names) and evaluate("a != 0.5", names)
    assert not evaluate("a == 0.5", names) and not evaluate("a != 0.7", names)
    assert evaluate("0 < a < 1", names) and not evaluate("0 < a < 0.5", names)
    assert not evaluate("1 < a < 2", names)
    np.testing.assert_array_equal(evaluate("0.1 < b < 0.3", names), [True, False])


def test_every_expression_of_the_claims_file_passes_the_whitelist(claims):
    from evalsim.safe_expr import evaluate

    exprs = [s for c in claims for s in c.sources if "expr" in s]
    assert len(exprs) > 20
    for src in exprs:  # every named value at 0.6: a finite number comes out
        value = evaluate(src["expr"], dict.fromkeys(src.get("values") or {}, 0.6))
        assert np.all(np.isfinite(np.asarray(value, dtype=float))), src["expr"]
