"""The claims ledger: claims file well-formed, verdict rules, and verdicts that follow the data."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from ledger_pools import pools

from evalsim.ledger import (
    VERDICTS,
    build_ledger,
    ledger_html,
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
    assert row.verdict == "document error", row.reason


def test_approx_one_in_n(claims):
    t03 = _table(policy=["A", "B"], **{"P(>=9/10) at p_pool": [0.215, 0.645]})
    assert _ledger(claims, "000-01", T03=t03).verdict == "document rounding"
    t03.loc[0, "P(>=9/10) at p_pool"] = 0.30  # one in 3.3, not one in five
    assert _ledger(claims, "000-01", T03=t03).verdict == "document error"


def test_simulation_rule_uses_two_standard_errors(claims):
    t07 = _table(policy=["A", "B"], rate=[0.72, 0.88], trials=[300, 300])
    row = _ledger(claims, "000-21", **pools(t07))
    assert row.verdict == "matches", row.reason
    # 0.737 vs 0.60 with n = 300 each: SE ~ 0.037, 3.7 SE apart.
    t07.loc[0, "rate"] = 0.60
    row = _ledger(claims, "000-21", **pools(t07))
    assert row.verdict == "simulation differs"
    assert "SE" in row.reason


def test_mc_rule_within_rounding_and_within_2_se(claims):
    f03 = _table(n_looks=[1, 40], exact_false_win_rate=[0.02819, 0.11249])
    assert _ledger(claims, "002-06", F03=f03).verdict == "matches"
    assert _ledger(claims, "002-07", F03=f03).verdict == "matches"
    f03.loc[1, "exact_false_win_rate"] = 0.125
    assert _ledger(claims, "002-07", F03=f03).verdict == "document error"


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
    assert row.verdict == "document error"
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


def _widths_at_ten(t25, t16_at_7, t16_worst, t08):
    return {
        "T25": _table(n=[10], method=["wilson"], width_points=[t25]),
        "T16": _table(
            row=["n grid"],
            n=[10],
            wilson_width_points=[t16_at_7],
            worst_case_width_points=[t16_worst],
        ),
        "T08": _table(policy=["A"], n=[10], mean_wilson_width=[t08]),
    }


def test_unstated_premise_gives_ambiguous_when_readings_disagree(claims):
    # 002-02 "At ten trials that range is roughly forty-five points wide": which k/10 is unstated.
    (claim,) = _by_id(claims, "002-02")
    assert claim.premise_unstated and not claim.method_stated
    row = _ledger(claims, "002-02", **_widths_at_ten(44.0, 38.0, 38.0, 0.38))
    assert row.verdict == "ambiguous", row.reason
    assert "leaves out a premise" in row.reason
    reproduced, not_by = row.reason.split("; not by: ")
    assert "44" in reproduced and "38" in not_by
    # All readings agree: no ambiguity, the best reading decides.
    row = _ledger(claims, "002-02", **_widths_at_ten(44.0, 46.0, 47.0, 0.45))
    assert row.verdict == "document rounding", row.reason
    assert "Other readings" in row.reason
    # The tables' readings all disagree, but the exact mean width at lesson 25's 221/300
    # (computed, issue 46) reproduces it: still "ambiguous", and a reading on our pools
    # (T08) never decides.
    row = _ledger(claims, "002-02", **_widths_at_ten(30.0, 60.0, 62.0, 0.30))
    assert row.verdict == "ambiguous", row.reason
    assert "221/300" in row.reason.split("; not by: ")[0] and "resampled" not in row.reason


def test_one_in_six_is_decided_by_the_exact_binomial(claims):
    # 001-11 states every premise (n = 20 each, p = 0.7, "20 or more points"); issue 23 lists it
    # (T14's note "not one in six" vs the ledger's "ambiguous"). The exact reading decides; the
    # normal approximation that gives one in six is reported, not counted as a premise.
    (claim,) = _by_id(claims, "001-11")
    assert claim.method_stated and not claim.premise_unstated
    row = _ledger(claims, "001-11", T14=_t14(0.2258, 0.1190, 0.1675))
    assert row.verdict == "document error", row.reason
    assert "normal approximation" in row.reason and "0.1675" in row.reason
    row = _ledger(claims, "001-11", T14=_t14(0.170, 0.095, 0.160))
    assert row.verdict == "document rounding", row.reason


def test_order_of_magnitude_rule(claims):
    # 001-18 "on the order of a thousand trials": the nearest power of ten must be 10**3.
    def t16(n05, n07):
        return _table(row=["n at 0.5 (wilson)", "n at 0.7 (wilson)"], n=[n05, n07])

    row = _ledger(claims, "001-18", T16=t16(1067, 897))
    assert row.verdict == "document rounding" and "same order" in row.reason
    for n05, n07 in [(120, 95), (4000, 3300)]:  # 10**2 and 10**4, not 10**3
        row = _ledger(claims, "001-18", T16=t16(n05, n07))
        assert row.verdict == "document error", (n05, row.reason)
        assert "different order" in row.reason


def test_gap_claim_answers_both_questions(claims):
    # 000-26 "The true gap is 0.14": (a) 0.877 - 0.737 from the document's own Table A;
    # (b) the gap of our pools, with their sampling error (no hand-set tolerance).
    def t07(a, b):
        return _table(policy=["A", "B"], rate=[a, b], trials=[300, 300])

    row = _ledger(claims, "000-26", **pools(t07(0.737, 0.877)))
    assert row.verdict == "matches", row.reason
    assert "(a) at the document's own p_a = 0.737, p_b = 0.877: 0.14 (within" in row.reason
    assert float(row.reproduced) == pytest.approx(0.14)
    for a, b in [(0.60, 0.90), (0.80, 0.82), (0.88, 0.737)]:  # gaps 0.30, 0.02, -0.143
        # 2 SE of a 300-trial pool gap is below 0.08: every one of these is far outside.
        se = math.sqrt(a * (1 - a) / 300 + b * (1 - b) / 300)
        assert abs(b - a - 0.14) > 2.5 * se
        row = _ledger(claims, "000-26", **pools(t07(a, b)))
        assert row.verdict == "simulation differs", (a, b, row.reason)
        assert "the document's number is outside" in row.reason


def test_at_least_and_at_most_rules(claims):
    # 001-22 at_least 15: the worst-case MDE at 20 per arm must be >= the 15-point gap.
    def t17(mde):
        return _table(quantity=["MDE (worst case)"], n_per_arm=[20], mde_normal_points=[mde])

    assert _ledger(claims, "001-22", T17=t17(44.3)).verdict == "matches"
    assert _ledger(claims, "001-22", T17=t17(15.0)).verdict == "matches"
    row = _ledger(claims, "001-22", T17=t17(12.0))
    assert row.verdict == "document error" and "not >=" in row.reason
    # 000-46 at_most 0.80: power at 100 trials each must stay below 0.80.
    t06 = _table(n=[50, 100], power=[0.3, 0.55], power_pool_rates=[0.35, 0.6])
    assert _ledger(claims, "000-46", T06=t06).verdict == "matches"
    t06.loc[1, "power"] = 0.85
    row = _ledger(claims, "000-46", T06=t06)
    assert row.verdict == "document error" and "not <=" in row.reason


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
    assert _ledger(claims, "001-20", T17=t17(39.4)).verdict == "document error"


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
    assert _ledger(claims, "000-07", T01=t01).verdict == "document error"


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


def test_ledger_page_lists_every_claim_with_its_verdict_under_the_counts(claims):
    t03 = _table(
        policy=["A", "B"],
        **{"P(>=9/10) at p_stated": [0.2160, 0.6466], "P(>=9/10) at p_pool": [0.2153, 0.6453]},
    )
    df = build_ledger(claims[:6], "/nonexistent", overrides={"T03": t03})
    page = ledger_html(df)
    table = page.split('<table class="evalsim-table"', 1)[1].split("</table>", 1)[0]
    head = [h.replace("<wbr>", "") for h in re.findall(r"<th>(.*?)</th>", table)]
    assert head == ["id", "quote", "stated", "reproduced", "verdict", "reason"]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    # one row per claim, in the claims file's order, with the ledger's verdict
    assert [c[0] for c in cells] == list(df["id"])
    assert [c[4] for c in cells] == list(df["verdict"])
    # the counts by verdict are the note under the rows
    note = page.split('<p class="note">', 1)[1]
    assert f"{len(df)} claims:" in note
    counts = df["verdict"].value_counts()
    assert f"{counts.get('matches', 0)} matches" in note
    assert f"{counts.get('document error', 0)} document errors" in note
    assert f"{counts.get('document rounding', 0)} document roundings" in note


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


# ----------------------------------------------------------------------------- synthetic claims
# Claims written here (not from config/claims.yaml) against tables written here, so every
# field of the claims file and every branch of the rules is checked on known numbers.
def _claims_file(tmp_path, claims, docs=None):
    p = tmp_path / "claims.yaml"
    p.write_text(yaml.safe_dump({"docs": docs or {"9": "doc9.txt"}, "claims": claims}))
    return p


def _one(**fields):
    base = {"id": "9-01", "doc": "9", "quote": "q", "stated": "0.5", "rule": "value"}
    return {**base, "sources": [{"method": "m", "table": "T99", "column": "v"}], **fields}


def test_load_claims_reads_every_field(tmp_path):
    raw = _one(
        lines=[3, 4],
        printed="one half",
        scale=0.01,
        tolerance={"abs": 0.2},
        criterion={"abs": 0.3},
        n_doc=40,
        method_stated=True,
        premise_unstated=True,
        reason="because",
        context={"ours": {"table": "T99", "column": "v"}},
    )
    (c,) = load_claims(_claims_file(tmp_path, [raw]))
    assert (c.id, c.doc, c.lines, c.quote, c.rule) == ("9-01", "doc9.txt", (3, 4), "q", "value")
    assert c.stated_text == "0.5" and c.stated.tolist() == [0.5] and c.decimals == (1,)
    assert (c.scale, c.tolerance, c.criterion, c.n_doc) == (0.01, {"abs": 0.2}, {"abs": 0.3}, 40)
    assert c.method_stated and c.premise_unstated and c.reason == "because"
    assert c.printed == "one half" and c.stated_display == "one half (= 0.5)"
    assert c.context == {"ours": {"table": "T99", "column": "v"}}
    assert c.sources == ({"method": "m", "table": "T99", "column": "v"},)
    (d,) = load_claims(_claims_file(tmp_path, [_one(doc="unlisted")]))
    assert d.doc == "unlisted" and d.lines == () and d.scale == 1.0
    assert (d.tolerance, d.criterion, d.context, d.n_doc) == ({}, {}, {}, None)
    assert not d.method_stated and not d.premise_unstated
    assert (d.reason, d.printed, d.stated_display) == ("", "", "0.5")
    (e,) = load_claims(_claims_file(tmp_path, [_one(stated=["1", "2.50"], stated_value=[1, 2.5])]))
    assert e.stated_text == "[1, 2.50]" and e.decimals == (None, None)
    (f,) = load_claims(_claims_file(tmp_path, [_one(stated="about")]))
    assert np.isnan(f.stated[0]) and f.decimals == (None,)
    p = _claims_file(tmp_path, [{k: v for k, v in _one().items() if k != "quote"}])
    with pytest.raises(ValueError, match=r"^claim '9-01': missing key 'quote'$"):
        load_claims(p)
    with pytest.raises(ValueError, match=r"^claim '\?': missing key 'id'$"):
        load_claims(_claims_file(tmp_path, [{k: v for k, v in _one().items() if k != "id"}]))


def test_expand_makes_one_claim_per_item(tmp_path):
    raw = _one(
        id="9-02",
        tolerance={"abs": 0.1},
        criterion={"se2": {"n_doc": 10, "n_repro": {"table": "T99", "column": "n"}}},
        sources=[
            {"method": "t", "table": "T99", "column": "v", "where": {"g": "x"}},
            {"method": "e", "expr": "a", "values": {"a": {"table": "T99", "column": "v"}}},
        ],
        context={"ours": {"table": "T99", "column": "v"}},
        expand=[
            {"suffix": "a", "stated": "0.25", "where": {"g": "a"}, "lines": [7], "quote": "qa"},
            {"suffix": "b", "stated": "0.75", "column": "w", "tolerance": {"rel": 0.2}},
            {"suffix": "c", "stated_value": 3, "criterion": {"abs": 1}},
        ],
    )
    a, b, c = load_claims(_claims_file(tmp_path, [raw]))
    assert [x.id for x in (a, b, c)] == ["9-02.a", "9-02.b", "9-02.c"]
    assert a.stated.tolist() == [0.25] and a.lines == (7,) and a.quote == "qa"
    assert a.sources[0]["where"] == {"g": "a"} and a.sources[0]["column"] == "v"
    assert a.sources[1]["values"]["a"]["where"] == {"g": "a"}
    assert a.context["ours"]["where"] == {"g": "a"}
    assert a.criterion["se2"]["n_repro"]["where"] == {"g": "a"}
    assert a.tolerance == {"abs": 0.1}
    assert b.sources[0]["column"] == "w" and b.sources[0]["where"] == {"g": "x"}
    assert b.tolerance == {"rel": 0.2} and b.quote == "q"
    assert "where" not in b.criterion["se2"]["n_repro"]
    assert c.stated.tolist() == [3.0] and c.criterion == {"abs": 1}
    # items are independent copies: expanding one does not leak into the next
    assert "where" not in b.sources[1]["values"]["a"] and "where" not in c.context["ours"]


def _tables(**frames):
    from evalsim.ledger import Tables

    return Tables("/nonexistent", frames)


def test_lookup_selects_rows_and_aggregates():
    from evalsim.ledger import SourceError, _lookup

    t = _tables(
        T99=pd.DataFrame(
            {
                "label": ["Alpha one", "beta", "Gamma"],
                "flag": [True, False, True],
                "x": [1.0, 2.0, 3.0],
                "v": [10.0, 20.0, 40.0],
                "w": [1.5, 2.5, 3.5],
            }
        )
    )

    def look(**spec):
        return _lookup(t, {"table": "T99", **spec})

    vals, desc = look(column="v", where={"label": "BETA "})
    assert vals.tolist() == [20.0] and desc == "T99: v [label=BETA ]"
    assert look(column="v", where={"label": "~alpha"})[0].tolist() == [10.0]
    assert look(column="v", where={"label": ["beta", "gamma"]}, agg="all")[0].tolist() == [20, 40]
    assert look(column="v", where={"flag": True}, agg="all")[0].tolist() == [10.0, 40.0]
    assert look(column="v", where={"x": 3})[0].tolist() == [40.0]
    assert look(column="v", where={"x": 3.0000000001})[0].tolist() == [40.0]  # rtol 1e-9
    for agg, want in [("first", 10.0), ("min", 10.0), ("max", 40.0), ("mean", 70 / 3)]:
        vals, desc = look(column="v", agg=agg)
        assert vals.tolist() == [pytest.approx(want)] and desc == f"T99: v ({agg})"
    vals, desc = look(column=["v", "w"], agg=["max", "min"], where={"flag": True})
    assert vals.tolist() == [40.0, 1.5]
    assert desc == "T99: v/w [flag=True] (max/min)"
    assert look(column=["v", "w"], agg="mean")[0].tolist() == [pytest.approx(70 / 3), 2.5]
    with pytest.raises(SourceError, match=r"^T99: 3 rows with , need 1$"):
        look(column="v")
    with pytest.raises(SourceError, match=r"^T99: 2 rows with flag=True, need 1$"):
        look(column="v", where={"flag": True})
    with pytest.raises(ValueError, match="unknown agg 'median'"):
        look(column="v", agg="median")
    with pytest.raises(SourceError, match=r"no column 'nope' to select rows"):
        look(column="v", where={"nope": 1})
    with pytest.raises(SourceError, match=r"^T99: no row with label=delta$"):
        look(column="v", where={"label": "delta"})


def test_expr_source_reads_its_values_and_describes_them():
    from evalsim.ledger import evaluate_source

    t = _tables(T99=pd.DataFrame({"g": ["a", "b"], "v": [0.2, 0.6], "n": [10, 30]}))
    spec = {
        "expr": "b - a",
        "values": {
            "a": {"table": "T99", "column": "v", "where": {"g": "a"}},
            "b": {"table": "T99", "column": "v", "where": {"g": "b"}},
        },
    }
    vals, desc = evaluate_source(t, spec)
    assert vals.tolist() == [pytest.approx(0.4)]
    assert desc == "expr b - a with a = T99: v [g=a]; b = T99: v [g=b]"
    spec = {"expr": "max(v) * 2", "values": {"v": {"table": "T99", "column": "v", "agg": "all"}}}
    assert evaluate_source(t, spec)[0].tolist() == [1.2]
    vals, desc = evaluate_source(t, {"expr": "[1, 2 / 4]"})
    assert vals.tolist() == [1.0, 0.5] and desc == "expr [1, 2 / 4]"
    vals, desc = evaluate_source(t, {"table": "T99", "column": "n", "multiply": 0.5, "agg": "all"})
    assert vals.tolist() == [5.0, 15.0] and desc == "T99: n (all) x 0.5"
    from evalsim.ledger import SourceError

    with pytest.raises(SourceError, match="neither table nor expr"):
        evaluate_source(t, {"method": "m"})


def _judge_one(tmp_path, raw, **frames):
    (claim,) = load_claims(_claims_file(tmp_path, [raw]))
    return build_ledger([claim], "/nonexistent", overrides=frames).iloc[0]


def test_rule_reasons_state_the_numbers(tmp_path):
    t = {"T99": pd.DataFrame({"v": [0.52]})}
    row = _judge_one(tmp_path, _one(stated="0.50"), **t)
    assert (row.verdict, row.reason) == (
        "document error",
        "off by 0.02, more than the printed digits allow",
    )
    assert _judge_one(tmp_path, _one(stated="0.5"), **t).verdict == "matches"  # half of 0.1
    row = _judge_one(tmp_path, _one(stated="0.52"), **t)
    assert (row.verdict, row.reason) == ("matches", "rounds to the printed 0.52")
    row = _judge_one(tmp_path, _one(stated="0.50", tolerance={"abs": 0.02}), **t)
    assert (row.verdict, row.reason) == ("document rounding", "|diff| 0.02 <= 0.02")
    row = _judge_one(tmp_path, _one(stated="0.50", tolerance={"abs": 0.01}), **t)
    assert (row.verdict, row.reason) == ("document error", "|diff| 0.02 > 0.01")
    row = _judge_one(tmp_path, _one(stated="0.5", rule="approx"), **t)
    assert row.reason == "relative diff 4.0% <= 10%" and row.verdict == "document rounding"
    row = _judge_one(tmp_path, _one(stated="0.45", rule="approx", tolerance={"rel": 0.1}), **t)
    assert row.reason == "relative diff 15.6% > 10%" and row.verdict == "document error"
    row = _judge_one(tmp_path, _one(stated="0.2", rule="approx", tolerance={"one_in": 2}), **t)
    assert (row.verdict, row.reason) == ("document rounding", "1/r = 1.92308, nearest to 2")
    row = _judge_one(tmp_path, _one(stated="0.2", rule="approx", tolerance={"one_in": 3}), **t)
    assert (row.verdict, row.reason) == ("document error", "1/r = 1.92308, not nearest to 3")
    row = _judge_one(tmp_path, _one(stated="0.6", rule="approx", tolerance={"order_of": True}), **t)
    assert (row.verdict, row.reason) == ("document rounding", "same order of magnitude")
    row = _judge_one(tmp_path, _one(stated="0.3", rule="approx", tolerance={"order_of": True}), **t)
    assert (row.verdict, row.reason) == ("document error", "different order of magnitude")
    # printed to the unit: half a unit is 0.5, so 0.52 "rounds to" 1 but not to 2
    assert _judge_one(tmp_path, _one(stated="1"), **t).verdict == "matches"
    assert _judge_one(tmp_path, _one(stated="2"), **t).verdict == "document error"
    row = _judge_one(tmp_path, _one(stated="1", scale=0.5), **t)  # 1 x 0.5 = 0.5: 0.02 < 0.25
    assert row.verdict == "matches" and row.reproduced == "1.04"


def _bound(stated, rule, verdict, reason=None, rounding=False):
    """A case of a bound rule on the value 0.52 read as a percentage (scale 0.01)."""
    fields = {"stated": stated, "rule": rule, "scale": 0.01}
    if rounding:
        fields["tolerance"] = {"abs": 0.005}
    want = {"verdict": verdict} if reason is None else {"verdict": verdict, "reason": reason}
    return fields, 0.52, want


@pytest.mark.parametrize(
    ("fields", "value", "want"),
    [
        _bound("50", "at_least", "matches", "52 >= 50"),
        _bound("52.4", "at_least", "document error", "52 not >= 52.4"),
        _bound("52.4", "at_least", "matches", "52 >= 52.4 (allowing 0.5 for rounding)", True),
        _bound("60", "at_most", "matches", "52 <= 60"),
        _bound("51.6", "at_most", "document error", "52 not <= 51.6"),
        _bound("51.6", "at_most", "matches", rounding=True),
        (
            {"stated": "0", "rule": "roundoff"},
            3e-15,
            {
                "verdict": "matches",
                "reason": "reproduced max difference 3e-15 <= round-off bound 1e-14",
            },
        ),
        (
            {"stated": "0", "rule": "roundoff", "tolerance": {"abs": 1e-15}},
            3e-15,
            {
                "verdict": "document error",
                "reason": "reproduced max difference 3e-15 > round-off bound 1e-15",
            },
        ),
        (
            {"rule": "judgement", "reason": "vague"},
            0.52,
            {"verdict": "ambiguous", "reason": "vague", "reproduced": "0.52"},
        ),
        ({"rule": "judgement"}, 0.52, {"reason": "not decidable by a number rule"}),
        (
            {"stated": ["0.5", "0.5"]},
            0.52,
            {"verdict": "missing source", "reason": "source gives 1 value(s), the claim states 2"},
        ),
    ],
)
def test_bound_and_roundoff_and_judgement_reasons(tmp_path, fields, value, want):
    row = _judge_one(tmp_path, _one(**fields), T99=pd.DataFrame({"v": [value]}))
    assert {k: row[k] for k in want} == want


def test_mc_and_simulation_rules(tmp_path):
    t = {"T99": pd.DataFrame({"v": [0.3], "n": [100]})}
    # mc: the exact 0.3 vs a document's 0.31 from 400 runs: SE = sqrt(0.21 / 400) = 0.0229
    row = _judge_one(tmp_path, _one(stated="0.31", rule="mc", n_doc=400), **t)
    assert row.verdict == "matches"
    assert row.reason == "0.4 SE from the exact value (SE of 400 simulated experiments)"
    row = _judge_one(tmp_path, _one(stated="0.36", rule="mc", n_doc=400), **t)
    assert row.verdict == "document error" and row.reason.startswith("2.6 SE from")
    row = _judge_one(tmp_path, _one(stated="0.3", rule="mc", n_doc=400), **t)
    assert (row.verdict, row.reason) == ("matches", "exact value rounds to the printed 0.3")
    # 0.3 +- rounding 0.0005 + 2 SE (0.04583): 0.346 is inside, 0.347 outside
    assert _judge_one(tmp_path, _one(stated="0.346", rule="mc", n_doc=400), **t).verdict == (
        "matches"
    )
    assert _judge_one(tmp_path, _one(stated="0.347", rule="mc", n_doc=400), **t).verdict == (
        "document error"
    )
    zero = {"T99": pd.DataFrame({"v": [0.0]})}
    row = _judge_one(tmp_path, _one(stated="0.01", rule="mc", n_doc=400), **zero)
    assert row.verdict == "document error" and row.reason.startswith(
        "inf SE"
    )  # zero SE, nonzero gap
    row = _judge_one(tmp_path, _one(stated="0.00", rule="mc", n_doc=400), **zero)
    assert row.verdict == "matches" and row.reason == "exact value rounds to the printed 0.00"
    # simulation, se2: SE of the difference with n_repro read from a table
    se2 = {"se2": {"n_doc": 300, "n_repro": {"table": "T99", "column": "n"}}}
    row = _judge_one(tmp_path, _one(stated="0.38", rule="simulation", criterion=se2), **t)
    se = math.sqrt(0.3 * 0.7 / 100 + 0.38 * 0.62 / 300)
    assert row.verdict == "matches"
    assert row.reason == (
        f"{0.08 / se:.1f} SE apart (two independent estimates, n = 300 document, 100 ours); "
        f"criterion 2 SE; resolution: detects a difference of {2 * se:.6g} or more"
    )
    row = _judge_one(tmp_path, _one(stated="0.42", rule="simulation", criterion=se2), **t)
    assert row.verdict == "simulation differs"
    fixed = {"se2": {"n_doc": 300, "n_repro": 1000}}
    row = _judge_one(tmp_path, _one(stated="0.38", rule="simulation", criterion=fixed), **t)
    assert row.verdict == "simulation differs" and "1000 ours" in row.reason
    row = _judge_one(tmp_path, _one(stated="0.35", rule="simulation", criterion={"abs": 0.05}), **t)
    assert (row.verdict, row.reason) == (
        "matches",
        "|diff| 0.05 <= 0.05 (criterion)",
    )
    row = _judge_one(tmp_path, _one(stated="0.36", rule="simulation", tolerance={"abs": 0.05}), **t)
    assert (row.verdict, row.reason) == ("simulation differs", "|diff| 0.06 > 0.05 (criterion)")
    lost = {"se2": {"n_doc": 300, "n_repro": {"table": "T98", "column": "n"}}}
    row = _judge_one(tmp_path, _one(stated="0.38", rule="simulation", criterion=lost), **t)
    assert row.verdict == "missing source" and "T98" in row.reason


def test_judge_claim_combines_sources(tmp_path):
    t = {
        "T99": pd.DataFrame({"g": ["a", "b"], "v": [0.5, 0.7]}),
        "T97": pd.DataFrame({"v": [0.6]}),
    }
    src = [
        {"method": "first", "table": "T99", "column": "v", "where": {"g": "b"}},
        {"method": "second", "table": "T99", "column": "v", "where": {"g": "a"}},
        {"method": "gone", "table": "T98", "column": "v"},
    ]
    ctx = {"mine": {"table": "T97", "column": "v"}, "lost": {"table": "T96", "column": "v"}}
    row = _judge_one(tmp_path, _one(sources=src, context=ctx), **t)
    assert (row.verdict, row.method, row.reproduced) == ("matches", "second", "0.5")
    assert row.source == "T99: v [g=a]"
    assert row.reason == (
        "rounds to the printed 0.5. Other readings: first = 0.7 (document error). "
        "Not available: no table results/tables/T98_*.csv [ours: mine = 0.6]"
    )
    row = _judge_one(tmp_path, _one(sources=src, method_stated=True), **t)
    assert (row.verdict, row.method) == ("document error", "first")
    row = _judge_one(tmp_path, _one(sources=src[::-1], method_stated=True), **t)
    assert (row.verdict, row.method, row.reproduced) == ("missing source", "gone", "")
    assert row.reason == "no table results/tables/T98_*.csv" and row.source == ""
    row = _judge_one(tmp_path, _one(sources=src[2:]), **t)
    assert row.verdict == "missing source" and row.method == "gone"
    row = _judge_one(tmp_path, _one(sources=[]), **t)
    assert (row.verdict, row.reason, row.method) == ("missing source", "no source", "")
    row = _judge_one(tmp_path, _one(sources=src[:2], premise_unstated=True), **t)
    assert row.verdict == "ambiguous"
    assert row.reason == (
        "the document leaves out a premise; reproduced by: second = 0.5; not by: first = 0.7"
    )
    assert (row.id, row.doc, row.lines, row.quote, row.stated) == (
        "9-01",
        "doc9.txt",
        "",
        "q",
        "0.5",
    )


def test_tables_are_found_by_id_and_read_once(tmp_path):
    from evalsim.ledger import SourceError, Tables

    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    (tables / "T99_x.csv").write_text("v\n0.5\n")
    (tables / "T991_y.csv").write_text("v\n9\n")  # T99 must not match T991
    (tables / "T98_a.csv").write_text("v\n1\n")
    (tables / "T98_b.csv").write_text("v\n2\n")
    t = Tables(tmp_path)
    assert t.path("T99") == "results/tables/T99_x.csv"
    rel, df = t.get("T99")
    assert rel == "results/tables/T99_x.csv" and df["v"].tolist() == [0.5]
    assert t.get("T99")[1] is df
    assert t.path("other.csv") == "other.csv"
    with pytest.raises(SourceError, match=r"^T98 matches several tables: T98_a.csv, T98_b.csv$"):
        t.path("T98")
    with pytest.raises(SourceError, match=r"^no table results/tables/T97_\*.csv$"):
        t.path("T97")


def test_build_command_writes_csv_and_markdown(tmp_path, capsys):
    from evalsim.ledger import main

    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    (tables / "T99_x.csv").write_text("v\n0.5\n")
    claims = _claims_file(tmp_path, [_one(), _one(id="9-02", stated="0.7")])
    doc = yaml.safe_load(claims.read_text())
    doc["skipped"] = [{"doc": "9", "quote": "a | b", "reason": "not a number"}]
    claims.write_text(yaml.safe_dump(doc))
    csv, md = tmp_path / "out" / "c.csv", tmp_path / "out" / "c.md"
    args = ["build", "--claims", str(claims), "--root", str(tmp_path)]
    assert main([*args, "--csv", str(csv), "--md", str(md)]) == 0
    assert capsys.readouterr().out == "   1  matches\n   1  document error\n"
    df = pd.read_csv(csv)
    assert df.columns.tolist() == [
        "id", "doc", "lines", "quote", "stated", "reproduced", "method", "verdict", "reason",
        "source",
    ]  # fmt: skip
    assert df["verdict"].tolist() == ["matches", "document error"]
    text = md.read_text()
    assert text.startswith("# Claims ledger: the documents' numbers, stated vs reproduced\n")
    assert "| matches | 1 |\n| document error | 1 |\n| total | 2 |" in text
    assert "## doc9.txt" in text and "| 9-02 |  | q | 0.7 | 0.5 | document error |" in text
    assert "| 9 | a \\| b | not a number |" in text


def test_readme_section_lists_the_rows_that_do_not_match(claims):
    t03 = _table(
        policy=["A", "B"],
        **{"P(>=9/10) at p_stated": [0.2160, 0.6466], "P(>=9/10) at p_pool": [0.30, 0.6453]},
    )
    # 000-01 and 000-02 read the document's own count 221/300 first (its 0.737 is a rounding).
    t03 = t03.rename(
        columns={"P(>=9/10) at p_stated": "P(>=9/10) at p_pool", "P(>=9/10) at p_pool": "x"}
    ).assign(**{"P(>=9/10) at p_stated": t03["P(>=9/10) at p_pool"]})
    df = build_ledger(_by_id(claims, "000-01") + _by_id(claims, "000-02"), "/x", {"T03": t03})
    body = readme_disagreements(df)
    assert (
        "2 claims: 1 document errors, 0 where only our simulation differs, 1 document roundings,"
        in body
    )
    assert "| id | stated | reproduced | verdict | reason |" in body
    assert (
        "| 000-02 | 0.215 | 0.216 | document error | Primary reading (document inputs): off by "
        "0.001, more than the printed" in body
    )
    assert 'Rows whose verdict is not "matches":\n\n| id |' in body
    assert "| 000-01 | one time in five (= 1/5) |" in body
    assert section("x\n<!-- BEGIN generated:s -->\n\nbody\n\n<!-- END generated:s -->", "s") == (
        "body"
    )


MD_EXPECTED = (
    "# Claims ledger\n\nGenerated by `python -m evalsim.ledger build` from `config/claims.yaml` "
    "and the pipeline's result tables. Rules and tolerances: the header of "
    "`config/claims.yaml`.\n\n| verdict | claims |\n|---|---|\n| matches | 1 |\n"
    "| document error | 1 |\n| total | 2 |\n\n## doc8.txt\n\n"
    "| id | lines | quote | stated | reproduced | verdict | reason | method |\n"
    "|---|---|---|---|---|---|---|---|\n| 8-01 |  | q1 | 0.5 | 0.5 | matches | r1 | m |\n\n"
    "## doc9.txt\n\n| id | lines | quote | stated | reproduced | verdict | reason | method |\n"
    "|---|---|---|---|---|---|---|---|\n"
    "| 9-02 | 4 | q2 | 0.7 | 0.5 | document error | r\\|2 | m |\n\n"
    "## Statements not checked\n\n| document | statement | why not |\n|---|---|---|\n"
    "| 9 | a \\| b | not a number |\n"
)


def test_ledger_markdown_layout_exactly():
    from evalsim.ledger import COLUMNS, ledger_markdown

    rows = [
        ["9-02", "doc9.txt", "4", "q2", "0.7", "0.5", "m", "document error", "r|2", "T99: v"],
        ["8-01", "doc8.txt", "", "q1", "0.5", "0.5", "m", "matches", "r1", "T99: v"],
    ]
    df = pd.DataFrame(rows, columns=COLUMNS)  # documents out of order: sorted in the output
    skipped = [{"doc": "9", "quote": "a | b", "reason": "not a number"}]
    assert ledger_markdown(df, skipped) == MD_EXPECTED
    assert "Statements not checked" not in ledger_markdown(df)


def test_write_ledger_bytes(tmp_path):
    from evalsim.ledger import COLUMNS, write_ledger

    df = pd.DataFrame([["9-01", "d", "", "q", "1", "1", "m", "matches", "r", "s"]], columns=COLUMNS)
    write_ledger(df, tmp_path / "c.csv", tmp_path / "c.md")
    assert (tmp_path / "c.csv").read_bytes() == (
        b"id,doc,lines,quote,stated,reproduced,method,verdict,reason,source\n"
        b"9-01,d,,q,1,1,m,matches,r,s\n"
    )
    assert (tmp_path / "c.md").read_text().startswith("# Claims ledger\n")


def test_skipped_list_and_claims_without_sources(tmp_path):
    from evalsim.ledger import load_skipped

    p = _claims_file(tmp_path, [_one()])
    assert load_skipped(p) == []
    doc = yaml.safe_load(p.read_text())
    doc["skipped"] = [{"doc": "9", "quote": "ünïcode", "reason": "r"}]
    p.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    assert load_skipped(p) == [{"doc": "9", "quote": "ünïcode", "reason": "r"}]
    raw = {k: v for k, v in _one().items() if k != "sources"}
    raw["expand"] = [{"suffix": "a", "stated": "1"}]
    with pytest.raises(ValueError, match=r"^claim '9-01.a': missing key 'sources'$"):
        load_claims(_claims_file(tmp_path, [raw]))


def test_simulation_reason_with_zero_difference_and_zero_se(tmp_path):
    t = {"T99": pd.DataFrame({"v": [0.0]})}
    crit = {"se2": {"n_doc": 100, "n_repro": 100}}
    row = _judge_one(tmp_path, _one(stated="0", rule="simulation", criterion=crit), **t)
    assert row.verdict == "matches" and row.reason.startswith("0.0 SE apart")


def test_section_keeps_the_body_as_written():
    text = "a\n<!-- BEGIN generated:s -->\n  body  \n<!-- END generated:s -->\nb"
    assert section(text, "s") == "  body  "


# ----------------------------------------------------------------------------- exact boundaries
# Each bound is inclusive. The planted values put the difference exactly on the bound in
# binary floating point (0.25, 0.5, 0.5 * 1.000001 and the like are computed here the way
# the rule computes them), so "<=" and "<" give different verdicts.
def test_value_and_mc_rules_include_the_half_unit_exactly(tmp_path):
    edge = 0.5 * 1.000001  # half a unit of a number printed to the unit, times the slack
    assert abs(edge - 0.0) == edge
    row = _judge_one(tmp_path, _one(stated="0"), T99=pd.DataFrame({"v": [edge]}))
    assert (row.verdict, row.reason) == ("matches", "rounds to the printed 0")
    above = np.nextafter(edge, 1.0)
    row = _judge_one(tmp_path, _one(stated="0"), T99=pd.DataFrame({"v": [above]}))
    assert row.verdict == "document error"
    row = _judge_one(
        tmp_path, _one(stated="0", rule="mc", n_doc=4), T99=pd.DataFrame({"v": [edge]})
    )
    assert (row.verdict, row.reason) == ("matches", "exact value rounds to the printed 0")
    # mc: r = 0.5 with n_doc = 16 has SE sqrt(0.25 / 16) = 0.125; "2" at scale 0.5 is 1.0 with
    # half a unit 0.25, so |diff| = 0.5 = half + 2 SE exactly
    se = math.sqrt(0.5 * 0.5 / 16)
    assert se == 0.125 and 0.25 + 2 * se == 0.5
    mc = _one(stated="2", scale=0.5, rule="mc", n_doc=16)
    row = _judge_one(tmp_path, mc, T99=pd.DataFrame({"v": [0.5]}))
    assert (row.verdict, row.reason) == (
        "matches",
        "4.0 SE from the exact value (SE of 16 simulated experiments)",
    )
    row = _judge_one(tmp_path, dict(mc, n_doc=17), T99=pd.DataFrame({"v": [0.5]}))
    assert row.verdict == "document error"  # a smaller SE: the same difference is outside


def test_rates_rounded_past_one_have_zero_variance(tmp_path):
    # a rate summed in floating point can land one ulp above 1: r (1 - r) < 0 is clipped to 0
    r = 1.0 + 2.0**-52
    assert r * (1 - r) < 0
    row = _judge_one(
        tmp_path, _one(stated="0.9", rule="mc", n_doc=100), T99=pd.DataFrame({"v": [r]})
    )
    assert row.verdict == "document error" and row.reason.startswith("inf SE from the exact value")
    # simulation: the document's 1 has no variance either, the difference is one ulp
    crit = {"se2": {"n_doc": 100, "n_repro": 100}}
    row = _judge_one(
        tmp_path, _one(stated="1", rule="simulation", criterion=crit), T99=pd.DataFrame({"v": [r]})
    )
    assert row.verdict == "matches" and row.reason.startswith("inf SE apart")


def test_bounds_include_their_edge(tmp_path):
    def judge(v, **fields):
        return _judge_one(tmp_path, _one(**fields), T99=pd.DataFrame({"v": [v]}))

    row = judge(0.5, stated="0.5", rule="at_most")
    assert (row.verdict, row.reason) == ("matches", "0.5 <= 0.5")
    row = judge(0.5, stated="0.5", rule="at_least")
    assert (row.verdict, row.reason) == ("matches", "0.5 >= 0.5")
    row = judge(0.25, stated="0", rule="roundoff", tolerance={"abs": 0.25})
    assert (row.verdict, row.reason) == (
        "matches",
        "reproduced max difference 0.25 <= round-off bound 0.25",
    )
    assert judge(
        np.nextafter(0.25, 1), stated="0", rule="roundoff", tolerance={"abs": 0.25}
    ).verdict == ("document error")
    # the tolerances allow 1e-12 beyond the bound for round-off in the tables
    row = judge(0.25 + 1e-12, stated="0", rule="approx", tolerance={"abs": 0.25})
    assert (row.verdict, row.reason) == ("document rounding", "|diff| 0.25 <= 0.25")
    assert judge(
        np.nextafter(0.25 + 1e-12, 1), stated="0", rule="approx", tolerance={"abs": 0.25}
    ).verdict == ("document error")
    row = judge(0.25 + 1e-12, stated="0", rule="simulation", criterion={"abs": 0.25})
    assert (row.verdict, row.reason) == (
        "matches",
        "|diff| 0.25 <= 0.25 (criterion)",
    )
    # rel: 0.75 vs 0.5 is exactly 50% of 0.5
    row = judge(0.75, stated="0.5", rule="approx", tolerance={"rel": 0.5})
    assert (row.verdict, row.reason) == ("document rounding", "relative diff 50.0% <= 50%")
    assert (
        judge(0.75, stated="0.5", rule="approx", tolerance={"rel": 0.25}).verdict
        == "document error"
    )
    # a stated 0 has bound 0: exactly 1e-12 away passes, the relative diff is shown against 1
    row = judge(1e-12, stated="0", rule="approx")
    assert row.verdict == "document rounding"
    row = judge(0.25, stated="0", rule="approx")
    assert (row.verdict, row.reason) == ("document error", "relative diff 25.0% > 10%")
    # simulation without any abs criterion: the bound is 0
    row = judge(0.5, stated="0.25", rule="simulation")
    assert (row.verdict, row.reason) == ("simulation differs", "|diff| 0.25 > 0 (criterion)")
    row = judge(0.25, stated="0.25", rule="simulation")
    assert (row.verdict, row.reason) == ("matches", "|diff| 0 <= 0 (criterion)")


def test_one_in_needs_a_positive_rate(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 1 / 0 in the reason
        row = _judge_one(
            tmp_path,
            _one(stated="1", rule="approx", tolerance={"one_in": 1}),
            T99=pd.DataFrame({"v": [0.0]}),
        )
    assert (row.verdict, row.reason) == ("document error", "1/r = inf, not nearest to 1")


# ----------------------------------------------------------------------------- helpers' output
def test_fmt_md_cell_where_text_and_sections():
    from evalsim.ledger import _fmt, _md_cell, _where_text

    assert _fmt(np.array([0.5, 0.25, 1 / 3])) == "[0.5, 0.25, 0.333333]"
    assert _fmt(np.array([2.0])) == "2" and _fmt(0.125) == "0.125"
    assert _md_cell("a\nb|c") == "a b\\|c"
    assert _where_text({"g": "a", "n": 3}) == "g=a, n=3"
    text = "a\n<!-- BEGIN generated:s -->\nold\n<!-- END generated:s -->\nb\n"
    new = replace_section(text, "s", "  body\n\n")
    assert new == "a\n<!-- BEGIN generated:s -->\n  body\n<!-- END generated:s -->\nb\n"
    assert section("<!-- BEGIN generated:s -->\nXbodyX\n<!-- END generated:s -->", "s") == "XbodyX"
    with pytest.raises(ValueError, match="no section markers"):
        replace_section("<!-- BEGIN generated:s -->\nbody without its end", "s", "x")


def test_lookup_edge_cases():
    from evalsim.ledger import SourceError, _lookup

    frame = pd.DataFrame(
        {
            "label": ["beta", "zeta", "n/a"],
            "x": ["3", "n/a", "0"],
            "v": [1.5, 2.5, 3.5],
            "s": ["1.5", "n/a", "2"],
        },
        index=[10, 20, 30],  # not a RangeIndex: row selection keeps the frame's index
    )
    t = _tables(T99=frame)

    def look(**spec):
        return _lookup(t, {"table": "T99", **spec})

    assert look(column="v", where={"label": "~beta"})[0].tolist() == [1.5]  # not "zeta"
    assert look(column="v", where={"x": 3})[0].tolist() == [1.5]  # "n/a" is no number
    assert look(column="v", where={"x": 0})[0].tolist() == [3.5]
    assert np.isnan(look(column="s", where={"label": "zeta"})[0][0])
    for near in (3.00002, 5e-9):  # outside rtol 1e-9 of 3, and outside atol 1e-12 of 0
        with pytest.raises(SourceError, match="no row"):
            look(column="v", where={"x": near})
    with pytest.raises(ValueError, match="zip"):
        look(column=["v", "s"], agg=["max", "min", "mean"])  # one agg per column
    vals, desc = look(column="v", where={"label": "beta", "x": 3})
    assert vals.tolist() == [1.5] and desc == "T99: v [label=beta, x=3]"


def test_expression_errors_name_the_claim_and_lists_combine_single_values():
    from evalsim.ledger import Claim, evaluate_source, judge_claim
    from evalsim.safe_expr import ExpressionError

    t = _tables(T99=pd.DataFrame({"g": ["a", "b"], "v": [0.25, 0.5]}))
    with pytest.raises(ExpressionError, match=r"^claim '\?': expr 'a \+ 1': unknown name 'a'"):
        evaluate_source(t, {"expr": "a + 1"})
    claim = Claim(
        id="9-07", doc="d", lines=(), quote="q", stated_text="1", stated=np.array([1.0]),
        decimals=(0,), rule="value", sources=({"expr": "a + 1"},),
    )  # fmt: skip
    with pytest.raises(ExpressionError, match=r"^claim '9-07': expr 'a \+ 1'"):
        judge_claim(claim, t)
    spec = {
        "expr": "[a, b]",
        "values": {
            "a": {"table": "T99", "column": "v", "where": {"g": "a"}},
            "b": {"table": "T99", "column": "v", "where": {"g": "b"}},
        },
    }
    assert evaluate_source(t, spec)[0].tolist() == [0.25, 0.5]
    from evalsim.ledger import SourceError

    with pytest.raises(SourceError, match=r"^source has neither table nor expr$"):
        evaluate_source(t, {"method": "m"})


def test_judge_claim_lists_every_reading(tmp_path):
    t = {
        "T99": pd.DataFrame({"g": ["a", "b", "c", "d"], "v": [0.5, 0.7, 0.5, 0.9]}),
        "T97": pd.DataFrame({"v": [0.6], "w": [0.25]}),
    }

    def src(method, g):
        return {"method": method, "table": "T99", "column": "v", "where": {"g": g}}

    gone = [{"method": "gone", "table": "T98", "column": "v"}, {"table": "T96", "column": "v"}]
    # a missing source before a readable one: the readable one still decides
    row = _judge_one(tmp_path, _one(sources=[*gone, src("a", "a")], lines=[3, 4]), **t)
    assert (row.verdict, row.method, row.lines) == ("matches", "a", "3,4")
    assert row.reason == (
        "rounds to the printed 0.5. Not available: no table results/tables/T98_*.csv; "
        "no table results/tables/T96_*.csv"
    )
    row = _judge_one(tmp_path, _one(sources=gone), **t)
    assert (row.verdict, row.method) == ("missing source", "gone")
    assert row.reason == "no table results/tables/T98_*.csv; no table results/tables/T96_*.csv"
    row = _judge_one(tmp_path, _one(sources=gone[::-1]), **t)
    assert (row.verdict, row.method, row.source) == ("missing source", "", "")
    # a source without a method: the method column is empty
    row = _judge_one(
        tmp_path, _one(sources=[{"table": "T99", "column": "v", "where": {"g": "a"}}]), **t
    )
    assert (row.verdict, row.method) == ("matches", "")
    # several other readings, two values of context
    ctx = {"x": {"table": "T97", "column": "v"}, "y": {"table": "T97", "column": "w"}}
    row = _judge_one(
        tmp_path, _one(sources=[src("a", "a"), src("b", "b"), src("d", "d")], context=ctx), **t
    )
    assert row.reason == (
        "rounds to the printed 0.5. Other readings: b = 0.7 (document error); "
        "d = 0.9 (document error) "
        "[ours: x = 0.6, y = 0.25]"
    )
    # premise unstated: two readings reproduce it, two do not
    srcs = [src("a", "a"), src("c", "c"), src("b", "b"), src("d", "d")]
    row = _judge_one(tmp_path, _one(sources=srcs, premise_unstated=True), **t)
    assert (row.verdict, row.reason) == (
        "ambiguous",
        "the document leaves out a premise; reproduced by: a = 0.5; c = 0.5; "
        "not by: b = 0.7; d = 0.9",
    )
    # "matches" counts as reproduced
    sim = _one(stated="0.5", rule="simulation", criterion={"abs": 0.1}, premise_unstated=True)
    row = _judge_one(tmp_path, dict(sim, sources=[src("d", "d"), src("a", "a")]), **t)
    assert (row.verdict, row.reason) == (
        "ambiguous",
        "the document leaves out a premise; reproduced by: a = 0.5; not by: d = 0.9",
    )


def test_missing_criterion_source_and_a_shape_mismatch_are_both_reported(tmp_path):
    # the first source's value fits but its criterion's n is missing; the second gives two
    # values for one stated: the second's reason decides, alone (a missing source is not
    # "not available" next to a "missing source" verdict)
    t = {"T99": pd.DataFrame({"v": [0.5]}), "T97": pd.DataFrame({"v": [0.5, 0.5]})}
    crit = {"se2": {"n_doc": 100, "n_repro": {"table": "T98", "column": "n"}}}
    srcs = [
        {"method": "one", "table": "T99", "column": "v"},
        {"method": "two", "table": "T97", "column": "v", "agg": "all"},
    ]
    row = _judge_one(tmp_path, _one(rule="simulation", criterion=crit, sources=srcs), **t)
    assert (row.verdict, row.method) == ("missing source", "two")
    assert row.reason == "source gives 2 value(s), the claim states 1"


def test_build_ledger_defaults_and_empty(tmp_path, monkeypatch):
    from evalsim.ledger import COLUMNS

    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    (tables / "T99_x.csv").write_text("v\n0.5\n")
    (claim,) = load_claims(_claims_file(tmp_path, [_one()]))
    monkeypatch.chdir(tmp_path)
    assert build_ledger([claim]).iloc[0].verdict == "matches"  # root "." by default
    assert build_ledger([]).columns.tolist() == COLUMNS


#: The table the README section must show for ``_three_claims``: every row but "matches".
DISAGREEMENTS_TABLE = [
    "| id | stated | reproduced | verdict | reason |",
    "|---|---|---|---|---|",
    "| 9-02 | 0.70 | 0.5 | document error | off by 0.2, more than the printed digits allow |",
    "| 9-03 | 0.5 |  | missing source | no table results/tables/T98_*.csv |",
]


def _three_claims(tmp_path):
    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    (tables / "T99_x.csv").write_text("v\n0.5\n")
    claims = [
        _one(),
        _one(id="9-02", stated="0.70"),
        _one(id="9-03", sources=[{"method": "m", "table": "T98", "column": "v"}]),
    ]
    return _claims_file(tmp_path, claims)


def test_readme_section_counts_explains_and_lists_every_disagreement(tmp_path):
    df = build_ledger(load_claims(_three_claims(tmp_path)), tmp_path)
    assert df["verdict"].tolist() == ["matches", "document error", "missing source"]
    intro, table = readme_disagreements(df).split("\n\n")
    # the headline counts every verdict of the three claims, document errors first
    assert (
        "(`config/config.yaml`; 3 claims: 1 document errors, 0 where only our simulation "
        "differs, 0 document roundings, 1 matches, 0 ambiguous, 1 missing source)"
    ) in intro
    # each verdict a reader meets is explained, and the reader is pointed on
    for said in ('"Document error"', '"document rounding"', '"simulation differs"'):
        assert said in intro
    for pointer in ("`results/claims.md`", "`docs/START_HERE.md`", "-m evalsim.ledger readme"):
        assert pointer in intro
    assert table.splitlines() == DISAGREEMENTS_TABLE


README_TEMPLATE = (
    "# x\n<!-- BEGIN generated:gallery -->\nold gallery\n<!-- END generated:gallery -->\n"
    "text\n<!-- BEGIN generated:disagreements -->\nold\n<!-- END generated:disagreements -->\n"
)


def test_commands_with_their_default_paths(tmp_path, monkeypatch, capsys):
    """``build`` then ``readme`` with no options, in a folder laid out like the repository."""
    from evalsim.ledger import load_skipped, main, write_ledger
    from evalsim.products import report

    (tmp_path / "config").mkdir()
    _three_claims(tmp_path).rename(tmp_path / "config" / "claims.yaml")
    monkeypatch.chdir(tmp_path)
    assert main(["build"]) == 0
    assert capsys.readouterr().out == "   1  matches\n   1  document error\n   1  missing source\n"
    want = build_ledger(load_claims(tmp_path / "config" / "claims.yaml"), tmp_path)
    ref = tmp_path / "ref"
    write_ledger(
        want, ref / "c.csv", ref / "c.md", load_skipped(tmp_path / "config" / "claims.yaml")
    )
    assert (tmp_path / "results" / "claims.csv").read_text() == (ref / "c.csv").read_text()
    assert (tmp_path / "results" / "claims.md").read_text() == (ref / "c.md").read_text()
    # readme: both sections by default; the gallery is built for the README's folder
    seen = []

    def gallery(repo):
        seen.append(Path(repo))
        return f"figures of {repo}\n"

    monkeypatch.setattr(report, "gallery_markdown", gallery)
    (tmp_path / "README.md").write_text(README_TEMPLATE, encoding="utf-8")
    assert main(["readme", "--check"]) == 1
    assert main(["readme"]) == 0
    section = readme_disagreements(want)  # its text is checked above; here, where it goes
    assert section.endswith("\n".join(DISAGREEMENTS_TABLE))
    expected = replace_section(README_TEMPLATE, "disagreements", section)
    expected = replace_section(expected, "gallery", "figures of .")
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == expected
    assert seen[-1] == Path(".")
    assert main(["readme", "--check"]) == 0
    # --sections: one, then the other, with spaces after the comma
    readme = tmp_path / "sub" / "R.md"
    readme.parent.mkdir()
    readme.write_text(README_TEMPLATE, encoding="utf-8")
    assert main(["readme", "--readme", str(readme), "--sections", "gallery"]) == 0
    assert readme.read_text() == replace_section(
        README_TEMPLATE, "gallery", f"figures of {readme.parent}"
    )
    assert seen[-1] == readme.parent
    readme.write_text(README_TEMPLATE, encoding="utf-8")
    assert main(["readme", "--readme", str(readme), "--sections", "disagreements, gallery"]) == 0
    assert readme.read_text() == expected.replace("figures of .", f"figures of {readme.parent}")


def test_readme_check_names_the_stale_file(tmp_path, capsys):
    from evalsim.ledger import main

    df = build_ledger(load_claims(_three_claims(tmp_path)), tmp_path)
    df.to_csv(tmp_path / "c.csv", index=False)
    readme = tmp_path / "R.md"
    readme.write_text(README_TEMPLATE)
    args = ["readme", "--ledger", str(tmp_path / "c.csv"), "--readme", str(readme)]
    capsys.readouterr()
    assert main([*args, "--sections", "disagreements", "--check"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"{readme} is stale: run python -m evalsim.ledger readme\n"
    assert readme.read_text() == README_TEMPLATE  # --check writes nothing


def test_command_line_usage(capsys):
    from evalsim import ledger

    with pytest.raises(SystemExit) as exc:
        ledger.main([])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m evalsim.ledger [-h] {build,code,readme} ...\n")
    assert "the following arguments are required: cmd" in err
    with pytest.raises(SystemExit) as exc:
        ledger.main(["--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert " ".join(ledger.__doc__.split()) in out  # the module's description, in full


def _has_help(out: str, option: str) -> bool:
    """``option`` (and its metavar) is followed by a help text in argparse's ``--help``."""
    # on the same line after two spaces, or on the next line, indented to the help column
    pattern = rf"^ +{re.escape(option)}( [A-Z_]+)?(  +\S| *\n {{20,}}[^ -])"
    return re.search(pattern, out, flags=re.M) is not None


def test_every_command_and_option_has_a_help_text(capsys):
    from evalsim import ledger

    for argv, options in [
        ([], ["build", "readme"]),
        (["readme"], ["--check", "--sections"]),
    ]:
        with pytest.raises(SystemExit):
            ledger.main([*argv, "--help"])
        out = capsys.readouterr().out
        assert all(_has_help(out, o) for o in options), (options, out)


def test_an_unknown_rule_is_refused_when_judged():
    """A claim made without load_claims' check of the rule still fails, naming it."""
    from evalsim.ledger import Claim, judge_claim

    claim = Claim(
        id="9-08", doc="d", lines=(), quote="q", stated_text="1", stated=np.array([1.0]),
        decimals=(0,), rule="vibes", sources=({"table": "T99", "column": "v"},),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"^claim '9-08': unknown rule 'vibes'$"):
        judge_claim(claim, _tables(T99=pd.DataFrame({"v": [1.0]})))


# ------------------------------------------------------------- the command's other outputs
def _verdict_frame(counts: dict[str, int]) -> pd.DataFrame:
    rows = [
        {"id": f"{v[:3]}-{i}", "quote": "q", "stated": "1", "reproduced": "1", "verdict": v}
        for v, n in counts.items()
        for i in range(n)
    ]
    return pd.DataFrame(rows).assign(reason="r", doc="000", lines="", method="m")


def test_headline_counts_each_verdict_in_its_place():
    from evalsim.ledger.output import headline

    counts = {
        "document error": 1,
        "simulation differs": 2,
        "document rounding": 3,
        "matches": 4,
        "ambiguous": 5,
    }
    df = _verdict_frame(counts)
    assert headline(df) == (
        "15 claims: 1 document errors, 2 where only our simulation differs, "
        "3 document roundings, 4 matches, 5 ambiguous"
    )
    df = _verdict_frame({**counts, "missing source": 6})
    assert headline(df).endswith("5 ambiguous, 6 missing source")
    assert headline(df).startswith("21 claims: ")
    # A verdict that does not occur is counted as 0, not left out.
    assert headline(_verdict_frame({"ambiguous": 2})) == (
        "2 claims: 0 document errors, 0 where only our simulation differs, "
        "0 document roundings, 0 matches, 2 ambiguous"
    )


def test_ledger_html_page_has_its_title_note_and_rows(tmp_path):
    import json

    from evalsim.ledger.output import headline, write_ledger

    df = _verdict_frame({"matches": 2, "document error": 1}).assign(
        quote=["alpha quote", "beta quote", "gamma quote"]
    )
    html = ledger_html(df)
    assert "<title>Claims ledger</title>" in html and "<h1>Claims ledger</h1>" in html
    assert (
        f"<strong>Note.</strong> {headline(df)}. The verdicts, and the party each names: "
        "<code>docs/START_HERE.md</code>. <code>results/claims.csv</code> also holds each "
        "claim's lines in its document, method and source; <code>results/claims.md</code> "
        "groups the rows by document.</p>"
    ) in html
    assert f"evalsimTable: {json.dumps('claims')}," in html
    for quote in ("alpha quote", "beta quote", "gamma quote"):
        assert quote in html
    titled = df.copy()
    titled.attrs["title"] = "Ledger of four documents"
    assert "<h1>Ledger of four documents</h1>" in ledger_html(titled)
    assert "Claims ledger" not in ledger_html(titled)
    # write_ledger writes that page (and no page without html_path).
    paths = [tmp_path / n for n in ("c.csv", "c.md", "c.html")]
    write_ledger(df, *paths[:2], None, paths[2])
    assert paths[2].read_text(encoding="utf-8") == html
    write_ledger(df, tmp_path / "d.csv", tmp_path / "d.md")
    assert not (tmp_path / "d.html").exists()


def test_build_command_writes_the_html_page(tmp_path):
    from evalsim.ledger import main

    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    (tables / "T99_x.csv").write_text("v\n0.5\n")
    claims = _claims_file(tmp_path, [_one(quote="the one quote")])
    page = tmp_path / "page" / "claims.html"
    args = ["build", "--claims", str(claims), "--root", str(tmp_path), "--html", str(page)]
    assert main([*args, "--csv", str(tmp_path / "c.csv"), "--md", str(tmp_path / "c.md")]) == 0
    text = page.read_text(encoding="utf-8")
    assert "1 claims: 0 document errors" in text and "the one quote" in text


def test_sections_use_the_first_markers_when_the_text_quotes_them_again():
    begin, end = "<!-- BEGIN generated:s -->", "<!-- END generated:s -->"
    # A README whose later prose quotes the markers (e.g. a contributor's note).
    text = f"a\n{begin}\nold\n{end}\nmid {end} and {begin} again {end}\nz\n"
    assert section(text, "s") == "old"
    new = replace_section(text, "s", "body")
    assert new == f"a\n{begin}\nbody\n{end}\nmid {end} and {begin} again {end}\nz\n"


def _code_documents(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text(
        "Prose.\n\nfrom scipy.stats import beta\n\n"
        "def clopper_pearson(k, n, alpha=0.05):\n"
        "    lower = 0.0 if k == 0 else beta.ppf(alpha / 2, k, n - k + 1)\n"
        "    upper = 1.0 if k == n else beta.ppf(1 - alpha / 2, k + 1, n - k)\n"
        "    return float(lower), float(upper)\n\nMore prose.\n",
        encoding="utf-8",
    )
    (folder / "b.txt").write_text("Only prose here, no code at all.\n", encoding="utf-8")
    return folder


def test_code_command_runs_the_documents_and_prints_a_line_per_row(tmp_path, capsys):
    from evalsim.ledger import main

    docs = _code_documents(tmp_path / "docs")
    csv = tmp_path / "out" / "code.csv"
    assert main(["code", "--documents", str(docs), "--csv", str(csv)]) == 0
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert df["doc"].tolist() == ["a.txt", "b.txt"]
    assert df["function"].tolist() == ["clopper_pearson", ""]
    assert df["ran"].tolist() == ["ok", "no Python in the document"]
    assert df["right"].tolist() == ["True", ""]
    assert capsys.readouterr().out == (
        "a.txt  clopper_pearson  ran: ok  right: True\n"
        "b.txt  -  ran: no Python in the document  right: \n"
    )


def test_code_command_defaults_to_the_shared_documents_and_results(tmp_path, monkeypatch):
    from evalsim.ledger import main

    # Without --documents and $EVALSIM_DOCUMENTS: ../shared/seeds beside the repository.
    monkeypatch.delenv("EVALSIM_DOCUMENTS", raising=False)
    _code_documents(tmp_path / "shared" / "seeds")
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["code"]) == 0
    df = pd.read_csv(tmp_path / "repo" / "results" / "document_code.csv", dtype=str)
    assert df["doc"].tolist() == ["a.txt", "b.txt"]
