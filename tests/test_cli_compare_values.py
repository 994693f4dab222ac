"""``evalsim compare``: every number, label and verdict against independent references
(issue 17).

References: ``scipy.stats`` (fisher_exact, boschloo_exact, binomtest), ``statsmodels``
(confint_proportions_2indep, proportion_confint), Tango's interval by plain bisection
(``tests/test_paired.py``), Newcombe's paired method 10 and the paired Wald interval written
out here, and exact power by brute force (``tests/naive_fisher.py``,
``tests/naive_design.py``) to bracket the MDE. The verdict sentences and the tables are
rebuilt from those numbers and compared whole. Options take non-default values (alpha 0.1,
one-sided alternatives) so that an option lost on the way shows.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import naive_design
import naive_fisher
import numpy as np
import pandas as pd
import pytest
from cli_run import blocks
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from test_cli_lab import run, run_json  # the CLI run helpers
from test_paired import _tango_reference

from evalsim.cli import build_parser, compare, compare_input, compare_result
from evalsim.small_logs import TrialTable


def bad(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert (rc, out) == (2, ""), err
    assert err.startswith("evalsim compare: error: ") and err.count("\n") == 1
    return err.removeprefix("evalsim compare: error: ").rstrip("\n")


def flat(text: str) -> str:
    return " ".join(text.split())


def write(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def arm(policy: str, k: int, n: int, **extra) -> list[dict]:
    return [{"policy": policy, "success": int(i < k), **extra} for i in range(n)]


def paired(outcomes: dict[tuple[int, int], int], a="base", b="new") -> list[dict]:
    """Rows of two policies on shared conditions: {(success A, success B): count}."""
    rows, i = [], 0
    for (sa, sb), count in outcomes.items():
        for _ in range(count):
            rows.append({"policy": a, "condition": f"c{i}", "success": sa})
            rows.append({"policy": b, "condition": f"c{i}", "success": sb})
            i += 1
    return rows


def p_text(x: float) -> str:  # the CLI's p format: 3 decimals, 2 significant digits below 1e-3
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def pts(lo: float, hi: float) -> str:
    return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"


def fisher_power(n: int, p1: float, p2: float, alpha: float) -> float:
    return naive_fisher.power(p1, n, p2, n, alpha=alpha, pvalue=naive_fisher.fisher_p_exact)


def assert_fisher_mde(mde: float, n: int, centre: float, alpha: float) -> None:
    """Power at the MDE reaches 80%; 0.001 below it, it does not."""
    assert fisher_power(n, centre - mde / 2, centre + mde / 2, alpha) >= 0.8
    assert fisher_power(n, centre - (mde - 1e-3) / 2, centre + (mde - 1e-3) / 2, alpha) < 0.8


def newcombe_paired(both: int, b_only: int, a_only: int, neither: int, conf: float):
    """Newcombe (1998) method 10 for p_B - p_A on paired data (B's margin first)."""
    n = both + b_only + a_only + neither
    k1, k2 = both + b_only, both + a_only
    p1, p2 = k1 / n, k2 / n
    l1, u1 = naive_design.wilson(k1, n, conf)
    l2, u2 = naive_design.wilson(k2, n, conf)
    margins = (both + b_only) * (a_only + neither) * (both + a_only) * (b_only + neither)
    ad_bc = both * neither - b_only * a_only
    phi = 0.0
    if margins and ad_bc > n / 2:
        phi = (ad_bc - n / 2) / math.sqrt(margins)
    elif margins and ad_bc < 0:
        phi = ad_bc / math.sqrt(margins)
    dl, du = p1 - l1, u1 - p1
    el, eu = p2 - l2, u2 - p2
    return (
        p1 - p2 - math.sqrt(max(dl * dl - 2 * phi * dl * eu + eu * eu, 0.0)),
        p1 - p2 + math.sqrt(max(el * el - 2 * phi * el * du + du * du, 0.0)),
    )


def wald_paired(b_only: int, a_only: int, n: int, conf: float):
    z = stats.norm.ppf(0.5 + conf / 2)
    d = (b_only - a_only) / n
    half = z * math.sqrt(((b_only + a_only) / n - d * d) / n)
    return d - half, d + half


# --------------------------------------------------------------------------- unpaired


def test_unpaired_two_sided_everything_against_references(tmp_path, capsys):
    path = write(tmp_path / "log.csv", arm("base", 4, 15) + arm("new", 13, 17))
    argv = ["compare", path, "--a", "base", "--b", "new", "--alpha", "0.1"]
    out = run_json(capsys, *argv)
    counts = {k: out[k] for k in ("k_a", "n_a", "k_b", "n_b", "k_a_all", "n_a_all", "k_b_all",
                                  "n_b_all")}  # fmt: skip
    assert counts == {"k_a": 4, "n_a": 15, "k_b": 13, "n_b": 17, "k_a_all": 4, "n_a_all": 15,
                      "k_b_all": 13, "n_b_all": 17}  # fmt: skip
    p = stats.fisher_exact([[13, 4], [4, 11]]).pvalue
    assert out["pvalue"] == pytest.approx(p, rel=1e-10)
    assert out["fisher_p"] == pytest.approx(p, rel=1e-10)
    bosch = stats.boschloo_exact([[4, 13], [11, 4]]).pvalue
    assert out["boschloo_p"] == pytest.approx(bosch, rel=1e-6)
    lo, hi = confint_proportions_2indep(13, 17, 4, 15, method="newcomb", alpha=0.1)
    assert out["diff_ci"] == pytest.approx([lo, hi], abs=1e-9) and lo > 0
    assert out["diff"] == pytest.approx(13 / 17 - 4 / 15)
    assert_fisher_mde(out["mde_80"], 15, 17 / 32, 0.1)  # smaller arm, pooled rate, alpha 0.1
    assert out["mde_rule"] == (
        "exact Fisher power at n = 15 per arm, alpha = 0.1, the two rates centred on 0.53"
    )
    fixed = {k: out[k] for k in ("a", "b", "alternative", "alpha", "test", "reject",
                                 "interval_agrees", "decision", "paired", "mcnemar_p",
                                 "mcnemar_midp", "discordant", "n_pairs", "diff_ci_method",
                                 "paired_intervals", "confidence", "notes")}  # fmt: skip
    assert fixed == {
        "a": "base", "b": "new", "alternative": "two-sided", "alpha": 0.1,
        "test": "Fisher's exact", "reject": True, "interval_agrees": True, "decision": "B",
        "paired": False, "mcnemar_p": None, "mcnemar_midp": None, "discordant": None,
        "n_pairs": None, "diff_ci_method": "newcombe", "paired_intervals": None,
        "confidence": 0.9, "notes": ["note: no condition column: unpaired analysis"],
    }  # fmt: skip
    rule = (
        "Fisher's exact test of 'A and B differ (two-sided)', reject when p < 0.1 (a p within "
        "1e-9 of alpha counts as equal); a winner is declared only when the Newcombe hybrid "
        "score (independent) interval for B - A (90%) agrees"
    )
    assert out["rule"] == rule
    verdict = (
        f"new beats base: 76% vs 27% at n = 15 (A) and 17 (B) (Fisher's exact p = "
        f"{p_text(p)}, two-sided < 0.1; Newcombe hybrid score (independent) 90% interval for "
        f"B - A: {pts(lo, hi)} points)"
    )
    assert out["verdict"] == verdict

    rc, text, err = run(capsys, *argv)
    assert rc == 0 and err == ""
    assert flat(text).startswith(f"decision rule (stated before the data): {rule} ")
    tables = blocks(text)
    assert tables["Success rates"] == [
        ["base (A)", "4/15", "26.7%"],
        ["new (B)", "13/17", "76.5%"],
    ]
    assert tables["Tests of 'A and B have the same success rate'"] == [
        ["Fisher's exact (unpaired)", p_text(p), "two-sided"],
        ["Boschloo's exact (unpaired)", p_text(bosch), "secondary; two-sided"],
    ]
    diff = 100 * (13 / 17 - 4 / 15)
    assert tables["Difference B - A (points, 90% interval)"] == [
        ["Newcombe hybrid score (independent): goes with the verdict", f"{diff:+.1f}",
         pts(lo, hi)],
    ]  # fmt: skip
    mde_line = f"MDE at 80% power: {100 * out['mde_80']:.1f} points ({out['mde_rule']})"
    assert mde_line in flat(text)
    assert "Only the first test decides; the rows marked secondary are for reference." in text
    assert flat(text).endswith(f"verdict: {verdict}")
    assert "all trials:" not in text and "Paired outcomes" not in text


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_unpaired_one_sided(tmp_path, capsys, alternative):
    path = write(tmp_path / "log.csv", arm("base", 10, 30) + arm("new", 20, 30))
    argv = ["compare", path, "--a", "base", "--b", "new", "--alternative", alternative]
    out = run_json(capsys, *argv)
    p = stats.fisher_exact([[20, 10], [10, 20]], alternative=alternative).pvalue
    two = stats.fisher_exact([[20, 10], [10, 20]]).pvalue
    assert out["pvalue"] == pytest.approx(p, rel=1e-10)
    assert out["fisher_p"] == pytest.approx(two, rel=1e-10)
    # the one-sided bound is the end of the 1 - 2 alpha = 90% two-sided interval
    lo, hi = confint_proportions_2indep(20, 30, 10, 30, method="newcomb", alpha=0.1)
    shown = [lo, 1.0] if alternative == "greater" else [-1.0, hi]
    assert out["diff_ci"] == pytest.approx(shown, abs=1e-9)
    assert (out["confidence"], out["alternative"]) == (0.95, alternative)
    if alternative == "greater":
        assert (out["reject"], out["interval_agrees"], out["decision"]) == (True, True, "B")
        assert out["verdict"] == (
            f"new beats base: 67% vs 33% at n = 30 per arm (Fisher's exact p = {p_text(p)}, "
            f"greater < 0.05; Newcombe hybrid score (independent) 95% one-sided bound: "
            f"B - A >= {100 * lo:+.1f} points)"
        )
        words, side, end = "B's rate is higher than A's (one-sided)", "one-sided, B > A", "lower"
    else:
        assert (out["reject"], out["interval_agrees"], out["decision"]) == (False, False, None)
        assert out["verdict"] == (
            f"new is not shown worse than base at n = 30 per arm (Fisher's exact p = "
            f"{p_text(p)}, less); at this n the smallest gap detectable with 80% power is about "
            f"{100 * out['mde_80']:.0f} points; the better-looking policy is new (67% vs 33%); "
            f"Newcombe hybrid score (independent) 95% one-sided bound: B - A <= "
            f"{100 * hi:+.1f} points"
        )
        words, side, end = "B's rate is lower than A's (one-sided)", "one-sided, B < A", "upper"
    assert out["rule"] == (
        f"Fisher's exact test of '{words}', reject when p < 0.05 (a p within 1e-9 of alpha "
        "counts as equal); a winner is declared only when the Newcombe hybrid score "
        "(independent) one-sided bound for B - A (95%) agrees"
    )
    rc, text, _ = run(capsys, *argv)
    tables = blocks(text)
    assert tables["Tests of 'A and B have the same success rate'"][:2] == [
        ["Fisher's exact (unpaired)", p_text(p), side],
        ["Fisher's exact", p_text(two), "secondary; two-sided"],
    ]
    title = (
        f"Difference B - A (points; 90% two-sided interval, its {end} end the 95% one-sided bound)"
    )
    assert tables[title] == [
        ["Newcombe hybrid score (independent): goes with the verdict", "+33.3", pts(lo, hi)]
    ]


def test_unpaired_a_wins_two_sided_and_less(tmp_path, capsys):
    path = write(tmp_path / "log.csv", arm("base", 27, 30) + arm("new", 12, 30))
    for alternative, want in (("two-sided", "two-sided"), ("less", "less")):
        out = run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--alternative",
                       alternative)  # fmt: skip
        p = stats.fisher_exact([[12, 18], [27, 3]], alternative=want).pvalue
        assert out["decision"] == "A"
        assert out["verdict"].startswith(
            f"base beats new: 90% vs 40% at n = 30 per arm (Fisher's exact p = {p_text(p)}, "
            f"{alternative} < 0.05; "
        )
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--alternative",
                   "greater")  # fmt: skip
    assert out["decision"] is None
    assert out["verdict"].startswith("new is not shown better than base at n = 30 per arm")
    assert "; the better-looking policy is base (90% vs 40%); " in out["verdict"]


def test_equal_rates_verdict(tmp_path, capsys):
    path = write(tmp_path / "log.csv", arm("base", 10, 20) + arm("new", 10, 20))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    lo, hi = confint_proportions_2indep(10, 20, 10, 20, method="newcomb")
    assert out["verdict"] == (
        "base and new are not detectably different at n = 20 per arm (Fisher's exact p = "
        f"1.000, two-sided); at this n the smallest gap detectable with 80% power is about "
        f"{100 * out['mde_80']:.0f} points; both policies score 50%; Newcombe hybrid score "
        f"(independent) 95% interval for B - A: {pts(lo, hi)} points"
    )
    assert out["decision"] is None and out["reject"] is False and out["alpha"] == 0.05


# --------------------------------------------------------------------------- paired


def test_paired_two_sided_everything_against_references(tmp_path, capsys):
    outcomes = {(1, 1): 20, (1, 0): 3, (0, 1): 12, (0, 0): 5}  # both, A only, B only, neither
    extra = arm("base", 5, 5, condition="x")  # five A trials on one unshared condition...
    for i, r in enumerate(extra):
        r["condition"] = f"x{i}"  # ...each its own
    rows = [dict(r, task="t", seed=1) for r in paired(outcomes) + extra]
    path = write(tmp_path / "log.csv", rows)
    argv = ["compare", path, "--a", "base", "--b", "new", "--alpha", "0.1"]
    out = run_json(capsys, *argv)
    assert (out["k_a"], out["n_a"], out["k_b"], out["n_b"]) == (23, 40, 32, 40)
    assert (out["k_a_all"], out["n_a_all"], out["k_b_all"], out["n_b_all"]) == (28, 45, 32, 40)
    assert (out["n_pairs"], out["discordant"]) == (40, {"a_only": 3, "b_only": 12})
    p = stats.binomtest(12, 15, 0.5).pvalue
    assert out["pvalue"] == pytest.approx(p, rel=1e-10)
    assert out["mcnemar_p"] == pytest.approx(p, rel=1e-10)
    assert out["mcnemar_midp"] == pytest.approx(naive_design.mcnemar(3, 12)[1], rel=1e-10)
    fisher = stats.fisher_exact([[28, 32], [17, 8]]).pvalue  # all trials, unpaired
    bosch = stats.boschloo_exact([[28, 32], [17, 8]]).pvalue
    assert out["fisher_p"] == pytest.approx(fisher, rel=1e-10)
    assert out["boschloo_p"] == pytest.approx(bosch, rel=1e-6)
    z = stats.norm.ppf(0.95)
    want = {
        "tango": _tango_reference(12, 3, 40, z),
        "newcombe": newcombe_paired(20, 12, 3, 5, 0.9),
        "wald": wald_paired(12, 3, 40, 0.9),
    }
    assert set(out["paired_intervals"]) == set(want)
    for method, iv in want.items():
        assert out["paired_intervals"][method] == pytest.approx(list(iv), abs=1e-9), method
    lo, hi = want["tango"]
    assert out["diff_ci"] == pytest.approx([lo, hi], abs=1e-9) and lo > 0
    assert (out["diff_ci_method"], out["test"], out["paired"]) == ("tango", "exact McNemar", True)
    assert out["notes"] == [
        "note: 5 trial(s) without a partner are left out of the test, the interval and the "
        "verdict (all three use the same paired trials)"
    ]
    # MDE: exact McNemar at 40 pairs, alpha 0.1, discordance 15/40
    d = out["mde_80"]
    assert naive_design.mcnemar_power(40, (0.375 + d) / 2, (0.375 - d) / 2, 0.1) >= 0.8
    assert naive_design.mcnemar_power(40, (0.375 + d - 1e-3) / 2, (0.375 - d + 1e-3) / 2, 0.1) < 0.8
    assert out["mde_rule"] == (
        "exact McNemar power at 40 pairs, alpha = 0.1 two-sided, at the observed discordance 0.38"
    )
    verdict = (
        f"new beats base: 80% vs 57% on 40 paired conditions (exact McNemar p = {p_text(p)}, "
        f"two-sided < 0.1; Tango score (paired) 90% interval for B - A: {pts(lo, hi)} points)"
    )
    assert out["verdict"] == verdict and out["decision"] == "B"

    rc, text, err = run(capsys, *argv)
    assert rc == 0 and err == ""
    tables = blocks(text)
    assert tables["Success rates on the paired conditions"] == [
        ["base (A)", "23/40", "57.5%"],
        ["new (B)", "32/40", "80.0%"],
    ]
    assert "all trials: A 28/45 (62.2%), B 32/40 (80.0%); not used for the verdict" in text
    assert tables["Tests of 'A and B have the same success rate'"] == [
        ["exact McNemar (paired)", p_text(p), "two-sided"],
        ["McNemar mid-p (paired)", p_text(out["mcnemar_midp"]), "secondary; two-sided"],
        ["Fisher's exact (unpaired)", p_text(fisher), "secondary; ignores pairing"],
        ["Boschloo's exact (unpaired)", p_text(bosch), "secondary; two-sided"],
    ]
    assert tables["Paired outcomes (same task/seed/condition)"] == [
        ["A succeeded", "20", "3"],
        ["A failed", "12", "5"],
    ]
    assert text.splitlines()[text.splitlines().index("Paired outcomes (same task/seed/condition)")
                              + 1].split() == ["B", "succeeded", "B", "failed"]  # fmt: skip
    est = f"{100 * (32 / 40 - 23 / 40):+.1f}"
    assert tables["Difference B - A (points, 90% interval)"] == [
        ["Tango score (paired): goes with the verdict", est, pts(*want["tango"])],
        ["Newcombe hybrid score (paired, method 10)", est, pts(*want["newcombe"])],
        ["Wald (paired), reference", est, pts(*want["wald"])],
    ]
    assert flat(text).endswith(f"verdict: {verdict}")
    assert flat(text).endswith(
        f"{out['notes'][0]} verdict: {verdict}"
    )  # the note is printed, after the MDE line
    assert f"MDE at 80% power: {100 * d:.1f} points ({out['mde_rule']})" in flat(text)


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_paired_one_sided(tmp_path, capsys, alternative):
    outcomes = {(1, 1): 10, (1, 0): 1, (0, 1): 8, (0, 0): 6}
    path = write(tmp_path / "log.csv", paired(outcomes))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--alternative",
                   alternative)  # fmt: skip
    assert out["pvalue"] == pytest.approx(
        stats.binomtest(8, 9, 0.5, alternative=alternative).pvalue, rel=1e-10
    )
    # one-sided at alpha 0.05: the bound is the end of the 90% two-sided Tango interval
    lo, hi = _tango_reference(8, 1, 25, stats.norm.ppf(0.95))
    assert out["diff_ci"] == pytest.approx([lo, 1.0] if alternative == "greater" else [-1.0, hi])
    assert out["paired_intervals"]["tango"] == pytest.approx([lo, hi], abs=1e-9)
    assert out["mcnemar_midp"] == pytest.approx(naive_design.mcnemar(1, 8)[1], rel=1e-10)
    if alternative == "greater":
        assert out["decision"] == "B"
        assert out["verdict"].endswith(
            f"Tango score (paired) 95% one-sided bound: B - A >= {100 * lo:+.1f} points)"
        )
    else:
        assert out["decision"] is None
        assert out["verdict"].startswith("new is not shown worse than base on 25 paired conditions")


def test_test_and_interval_disagree(tmp_path, capsys):
    outcomes = {(1, 1): 20, (1, 0): 2, (0, 1): 9, (0, 0): 9}
    out = run_json(capsys, "compare", write(tmp_path / "l.csv", paired(outcomes)), "--a",
                   "base", "--b", "new")  # fmt: skip
    p = stats.binomtest(2, 11, 0.5).pvalue
    lo, hi = _tango_reference(9, 2, 40, stats.norm.ppf(0.975))
    assert out["verdict"] == (
        f"no verdict: the better-looking policy is new (72% vs 55%) on 40 paired conditions, "
        f"but the test and its interval disagree at alpha = 0.05 (exact McNemar p = "
        f"{p_text(p)}, two-sided; Tango score (paired) 95% interval for B - A: {pts(lo, hi)} "
        f"points); treat the difference as not established"
    )


# --------------------------------------------------------------------------- pairing notes


def test_pairing_notes(tmp_path, capsys):
    rows = paired({(1, 0): 2, (0, 1): 2})
    # c1 run twice by base, with another outcome (an exact duplicate is refused: issue 45)
    dup = write(tmp_path / "dup.csv", [*rows, {"policy": "base", "condition": "c1", "success": 0}])
    out = run_json(capsys, "compare", dup, "--a", "base", "--b", "new")
    assert out["paired"] is False and (out["n_a"], out["k_a"]) == (5, 2)
    assert out["notes"] == [
        "note: policy A ran condition = c1 more than once: cannot pair, unpaired analysis"
    ]
    rows3 = [dict(r, task="t", seed=7) for r in rows]
    rows3.append({"policy": "new", "condition": "c3", "success": 0, "task": "t", "seed": 7})
    dup_b = write(tmp_path / "dup_b.csv", rows3)
    assert run_json(capsys, "compare", dup_b, "--a", "base", "--b", "new")["notes"] == [
        "note: policy B ran task/seed/condition = t/7/c3 more than once: cannot pair, "
        "unpaired analysis"
    ]
    apart = [dict(r, condition=r["condition"] + r["policy"]) for r in rows]
    out = run_json(capsys, "compare", write(tmp_path / "apart.csv", apart), "--a", "base", "--b",
                   "new")  # fmt: skip
    assert out["notes"] == ["note: the two policies share no condition ids: unpaired analysis"]
    out = run_json(capsys, "compare", write(tmp_path / "ok.csv", rows), "--a", "base", "--b",
                   "new", "--unpaired")  # fmt: skip
    assert out["notes"] == ["note: --unpaired given: unpaired analysis"]
    assert out["paired"] is False and out["test"] == "Fisher's exact"
    nocond = write(tmp_path / "nocond.csv", arm("new", 2, 4))
    cond = write(tmp_path / "cond.csv", [r for r in rows if r["policy"] == "base"])
    out = run_json(capsys, "compare", cond, nocond, "--a", "base", "--b", "new")
    assert out["paired"] is False
    assert out["notes"] == [
        f"note: {nocond} has no condition column, so its trials cannot be paired: unpaired "
        "analysis of all trials"
    ]
    nocond2 = write(tmp_path / "nocond2.csv", arm("new", 1, 2))
    out = run_json(capsys, "compare", cond, nocond, nocond2, "--a", "base", "--b", "new")
    assert out["notes"][0].startswith(f"note: {nocond}, {nocond2} has no condition column")
    # the same when it is A's file that has no condition column
    out = run_json(capsys, "compare", cond, nocond, "--a", "new", "--b", "base")
    assert out["paired"] is False and (out["n_a"], out["n_b"]) == (4, 4)
    assert out["notes"][0].startswith(f"note: {nocond} has no condition column")


def test_pairs_follow_the_condition_ids_not_the_row_order(tmp_path, capsys):
    # B's rows in reverse order: pairing must match condition ids, not positions.
    rows = paired({(1, 0): 3, (0, 1): 1, (1, 1): 2, (0, 0): 2})
    a_rows = [r for r in rows if r["policy"] == "base"]
    b_rows = [r for r in rows if r["policy"] == "new"][::-1]
    out = run_json(capsys, "compare", write(tmp_path / "l.csv", a_rows + b_rows), "--a", "base",
                   "--b", "new")  # fmt: skip
    assert out["discordant"] == {"a_only": 3, "b_only": 1} and out["n_pairs"] == 8
    assert out["test"] == "exact McNemar" and out["test_certificate"] is None  # none paired


def _assert_codes_match_keys(a: pd.DataFrame, b: pd.DataFrame, cols: list[str]) -> None:
    """The codes of a pandas log and of the same log as the small reader's table."""
    _assert_codes_match(a, b, cols, *compare_input.key_codes(a, b, cols))
    small = [  # the small reader's columns: str (object) arrays, success bool
        TrialTable(
            {"success": np.ones(len(df), bool)}
            | {c: df[c].astype(str).to_numpy(object) for c in cols}
        )
        for df in (a, b)
    ]
    _assert_codes_match(a, b, cols, *compare_input.key_codes(*small, cols))


def _assert_codes_match(a, b, cols, codes_a, codes_b) -> None:
    assert codes_a.dtype == codes_b.dtype == np.int64
    rows_a = {tuple(r): i for i, r in enumerate(a[cols].to_numpy().tolist())}
    assert len(rows_a) == len(a) == len(set(codes_a.tolist()))
    for j, row in enumerate(b[cols].to_numpy().tolist()):
        hits = np.flatnonzero(codes_a == codes_b[j]).tolist()
        assert hits == ([rows_a[tuple(row)]] if tuple(row) in rows_a else []), (j, row)


@pytest.mark.parametrize("columns", [6, 7])
def test_key_codes_are_equal_exactly_for_equal_keys(columns):
    # Columns of 1024 values: 6 columns give 2**60 combinations (int64 codes, beyond what
    # float64 holds exactly); 7 give 2**70, past 2**62, where the key tuples are numbered
    # instead (a wrapped code would match 16 in the first column with 0).
    cols = [f"k{i}" for i in range(columns)]
    a = pd.DataFrame({c: np.arange(1024) for c in cols})
    b = pd.DataFrame([[1023] * (columns - 1) + [1022], [16] + [0] * (columns - 1), [5] * columns],
                     columns=cols)  # fmt: skip
    _assert_codes_match_keys(a, b, cols)


def test_key_codes_past_2_to_the_62_with_two_valued_columns():
    rng = np.random.default_rng(17)
    cols = [f"k{i}" for i in range(70)]
    a = pd.DataFrame(rng.integers(0, 2, size=(6, 70)), columns=cols)
    b = a.iloc[[3, 0, 5]].copy()
    b.iloc[2, 0] = 1 - b.iloc[2, 0]  # differs from A's row 5 in the first column only
    _assert_codes_match_keys(a, pd.concat([b, a.iloc[[1]]], ignore_index=True), cols)


# --------------------------------------------------------------------------- the MDE rule


def test_mde_centre_moves_to_one_half_when_the_pooled_rate_leaves_no_room(tmp_path, capsys):
    # pooled rate 1/40: a gap of 80% power cannot fit around it; 0: no centre at all
    for k_a, alpha in ((1, "0.05"), (0, "0.1")):
        path = write(tmp_path / f"l{k_a}.csv", arm("base", k_a, 20) + arm("new", 0, 20))
        out = run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--alpha", alpha)
        assert out["mde_rule"] == (
            f"exact Fisher power at n = 20 per arm, alpha = {alpha}, the two rates centred on 0.50"
        )
        assert_fisher_mde(out["mde_80"], 20, 0.5, float(alpha))


def test_mde_none_when_no_gap_reaches_the_power(tmp_path, capsys):
    path = write(tmp_path / "l.csv", arm("base", 1, 2) + arm("new", 1, 2))
    argv = ["compare", path, "--a", "base", "--b", "new"]
    out = run_json(capsys, *argv)
    assert out["mde_80"] is None
    assert out["mde_rule"] == "no gap reaches 80% power at n = 2 per arm"
    lo, hi = confint_proportions_2indep(1, 2, 1, 2, method="newcomb")
    assert out["verdict"] == (
        "base and new are not detectably different at n = 2 per arm (Fisher's exact p = 1.000, "
        "two-sided); both policies score 50%; Newcombe hybrid score (independent) 95% interval "
        f"for B - A: {pts(lo, hi)} points"
    )
    rc, text, _ = run(capsys, *argv)
    assert "MDE at 80% power" not in text


def test_mde_normal_approximation_above_the_exact_limit(tmp_path, capsys, monkeypatch):
    # The limit (100000 per arm) is a speed cap; lowered here to reach the branch cheaply.
    monkeypatch.setattr(compare_result, "FISHER_MDE_EXACT_MAX_N", 10)
    za, zb = stats.norm.ppf(0.95), stats.norm.ppf(0.8)
    for k_a, k_b, n, centre in ((4, 6, 11, 10 / 22), (11, 11, 11, 0.5), (0, 0, 11, 0.5)):
        path = write(tmp_path / f"l{k_a}.csv", arm("base", k_a, n) + arm("new", k_b, n))
        out = run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--alpha", "0.1")
        assert out["mde_80"] == pytest.approx((za + zb) * math.sqrt(2 * centre * (1 - centre) / n))
        assert out["mde_rule"] == (
            f"normal approximation at n = 11 per arm (exact Fisher power is computed up to 10), "
            f"alpha = 0.1, rates centred on {centre:.2f}"
        )
    path = write(tmp_path / "at.csv", arm("base", 4, 10) + arm("new", 6, 10))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    assert out["mde_rule"].startswith("exact Fisher power at n = 10 per arm")


# --------------------------------------------------------------------------- Boschloo


def test_boschloo_has_no_size_limit(tmp_path, capsys):
    # evalsim.stats.two_sample.unconditional (certified supremum) at any n: SciPy agrees where it
    # runs
    path = write(tmp_path / "at.csv", arm("base", 300, 590) + arm("new", 8, 10))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    want = stats.boschloo_exact([[300, 8], [290, 2]]).pvalue
    assert out["boschloo_p"] == pytest.approx(want, rel=1e-6)
    path = write(tmp_path / "above.csv", arm("base", 300, 591) + arm("new", 8, 10))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    want = stats.boschloo_exact([[300, 8], [291, 2]]).pvalue
    assert out["boschloo_p"] == pytest.approx(want, rel=1e-6)


def test_boschloo_of_two_perfect_arms_is_one(tmp_path, capsys):
    # No evidence of a difference: p = 1 (compare maps a NaN from SciPy to 1).
    path = write(tmp_path / "l.csv", arm("base", 5, 5) + arm("new", 7, 7))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    assert out["boschloo_p"] == 1.0 and out["fisher_p"] == 1.0


# --------------------------------------------------------------------------- selection, errors


def test_task_selects_the_trials(tmp_path, capsys):
    rows = arm("base", 1, 4, task="t1") + arm("new", 4, 4, task="t1")
    rows += arm("base", 9, 10, task="t2") + arm("new", 2, 10, task="t2")
    path = write(tmp_path / "l.csv", rows)
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--task", "t2")
    assert (out["k_a"], out["n_a"], out["k_b"], out["n_b"]) == (9, 10, 2, 10)
    assert bad(capsys, "compare", path, "--a", "base", "--b", "new", "--task", "t3") == (
        "task 't3' not in the log (tasks: t1, t2)"
    )
    plain = write(tmp_path / "plain.csv", arm("base", 1, 3) + arm("new", 2, 3))
    assert bad(capsys, "compare", plain, "--a", "base", "--b", "new", "--task", "t1") == (
        "--task given but the log has no 'task' column"
    )


def test_bad_policies_and_alpha(tmp_path, capsys):
    path = write(tmp_path / "l.csv", arm("base", 1, 3) + arm("new", 2, 3))
    assert bad(capsys, "compare", path, "--a", "old", "--b", "new") == (
        "--a 'old' is not a policy in the log (policies: base, new)"
    )
    assert bad(capsys, "compare", path, "--a", "base", "--b", "nu") == (
        "--b 'nu' is not a policy in the log (policies: base, new)"
    )
    assert bad(capsys, "compare", path, "--a", "new", "--b", "new") == (
        "--a and --b name the same policy 'new'"
    )
    assert bad(capsys, "compare", path, "--a", "base", "--b", "new", "--alpha", "0.5",
               "--alternative", "less") == (
        "--alpha 0.5 is too large for a one-sided test (needs < 0.5)"
    )  # fmt: skip
    assert bad(capsys, "compare", path, "--a", "base", "--b", "new", "--plot", "x.txt") == (
        "--plot must end in .png or .pdf, got 'x.txt'"
    )
    assert bad(capsys, "compare", path, "--a", "base", "--b", "new", "--alternative", "more") == (
        "argument --alternative: invalid choice: 'more' (choose from 'two-sided', 'greater', "
        "'less') (see evalsim compare --help)"
    )
    assert bad(capsys, "compare", path, "--b", "new") == (
        "the following arguments are required: --a (see evalsim compare --help)"
    )
    assert bad(capsys, "compare", path, "--a", "new") == (
        "the following arguments are required: --b (see evalsim compare --help)"
    )
    # a two-sided test at alpha 0.5 is allowed
    assert (
        run_json(capsys, "compare", path, "--a", "base", "--b", "new", "--alpha", "0.5")[
            "confidence"
        ]
        == 0.5
    )


def test_plot_gets_the_wilson_intervals(tmp_path, capsys, monkeypatch):
    drawn = []
    monkeypatch.setattr(compare, "plot_rates", lambda *a: drawn.append(a))
    path = write(tmp_path / "l.csv", arm("base", 7, 20) + arm("new", 15, 20))
    target = tmp_path / "fig.png"
    rc, _, err = run(capsys, "compare", path, "--a", "base", "--b", "new", "--alpha", "0.1",
                     "--plot", target)  # fmt: skip
    assert rc == 0, err
    assert len(drawn) == 1
    rows, where, title, conf = drawn[0]
    assert (where, title, conf) == (str(target), "base vs new", 0.9)
    assert [r["label"] for r in rows] == ["base", "new"]
    for r, k in zip(rows, (7, 15), strict=True):
        lo, hi = proportion_confint(k, 20, alpha=0.1, method="wilson")
        assert (r["rate"], r["lower"], r["upper"]) == pytest.approx((k / 20, lo, hi), abs=1e-12)
    run(capsys, "compare", path, "--a", "base", "--b", "new")
    assert len(drawn) == 1  # no --plot, no figure


# ----------------------------------------------------------------- options reaching the log


def test_order_hook_reads_its_column_and_reports(tmp_path, capsys):
    rows = arm("base", 6, 10) + arm("new", 7, 10)
    for i, r in enumerate(rows):
        r["idx"] = i
    path = write(tmp_path / "l.csv", rows)
    argv = ["compare", path, "--a", "base", "--b", "new", "--order", "idx"]
    out = run_json(capsys, *argv)
    assert sorted(g["policy"] for g in out["independence"]["groups"]) == ["base", "new"]
    rc, text, _ = run(capsys, *argv)
    assert "Independence over trial order (--order idx;" in text


def test_by_task_goes_to_the_per_task_report(tmp_path, capsys):
    rows = arm("base", 3, 6, task="t1") + arm("new", 5, 6, task="t1")
    rows += arm("base", 2, 6, task="t2") + arm("new", 4, 6, task="t2")
    path = write(tmp_path / "l.csv", rows)
    argv = ["compare", path, "--a", "base", "--b", "new"]
    out = run_json(capsys, *argv, "--by", "task", "--bootstrap-reps", "50")
    assert [t["task"] for t in out["tasks"]] == ["t1", "t2"]
    assert "tasks" not in run_json(capsys, *argv)


def test_policy_name_for_a_single_lerobot_file(tmp_path, capsys):
    folder = tmp_path / "run1"
    folder.mkdir()
    eps = [{"success": bool(i % 2)} for i in range(4)]
    (folder / "eval_info.json").write_text(json.dumps({"per_episode": eps}))
    argv = ["compare", folder / "eval_info.json", "--a", "act", "--b", "bc"]
    assert bad(capsys, *argv, "--policy", "act") == (
        "--b 'bc' is not a policy in the log (policies: act)"
    )
    assert bad(capsys, *argv) == "--a 'act' is not a policy in the log (policies: run1)"


def test_reader_warnings_are_kept_as_notes(tmp_path, capsys):
    rows = arm("base", 2, 4) + arm("new", 3, 4) + arm("BASE", 1, 1)
    out = run_json(capsys, "compare", write(tmp_path / "l.csv", rows), "--a", "base", "--b", "new")
    assert len(out["notes"]) == 2 and "differ only in case" in out["notes"][0]
    assert out["notes"][1] == "note: no condition column: unpaired analysis"


def test_paired_without_discordant_pairs_falls_back_to_the_fisher_mde(tmp_path, capsys):
    path = write(tmp_path / "l.csv", paired({(1, 1): 5, (0, 0): 5}))
    argv = ["compare", path, "--a", "base", "--b", "new"]
    out = run_json(capsys, *argv)
    assert out["paired"] and out["discordant"] == {"a_only": 0, "b_only": 0}
    assert out["mde_rule"].startswith("exact Fisher power at n = 10 per arm, alpha = 0.05")
    assert_fisher_mde(out["mde_80"], 10, 0.5, 0.05)
    rc, text, _ = run(capsys, *argv)
    assert "all trials:" not in text  # every trial is paired


def test_usage_names_the_arguments(capsys):
    rc, out, _ = run(capsys, "compare", "--help")
    assert rc == 0
    # --a and --b are optional in the usage since `compare K/N K/N` (issue 45, item 24)
    assert "[--a X] [--b Y]" in flat(out) and "FILE [FILE ...]" in out


# ----------------------------------------------------------------------------- result object


def _result(path: Path, *options: str) -> compare_result.Comparison:
    args = build_parser().parse_args(["compare", str(path), "--a", "base", "--b", "new", *options])
    df, a, b = compare_input.select_trials(args)
    return compare_result.compare_trials(args, df, a, b)


@pytest.mark.parametrize(
    ("rows", "options"),
    [
        (arm("base", 11, 30) + arm("new", 21, 30), ()),
        (arm("base", 11, 30) + arm("new", 21, 30), ("--test", "barnard", "--alternative", "less")),
        (paired({(1, 1): 9, (1, 0): 2, (0, 1): 8, (0, 0): 6}), ("--alternative", "greater")),
    ],
)
def test_every_output_reads_the_one_frozen_result(tmp_path, capsys, rows, options):
    path = write(tmp_path / "l.csv", rows)
    c = _result(path, *options)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.fisher_p = 0.5  # type: ignore[misc]
    # the command prints the result's report, in every format
    for fmt in ("text", "markdown", "latex", "json"):
        rc, out, err = run(capsys, "compare", path, "--a", "base", "--b", "new", *options,
                           "--format", fmt)  # fmt: skip
        assert rc == 0, err
        assert out == compare._report(c).render(fmt)
    # a planted result shows in every output: the renderers read nothing else
    planted = dataclasses.replace(
        c,
        decision=dataclasses.replace(c.decision, a="zeta", b="omega", k_a=0),
        notes=("note: planted",),
    )
    rep = compare._report(planted)
    data = json.loads(rep.render("json"))
    assert (data["a"], data["b"], data["k_a"], data["notes"]) == (
        "zeta",
        "omega",
        0,
        ["note: planted"],
    )
    assert data["verdict"] == planted.verdict != c.verdict
    assert list(data) == list(json.loads(compare._report(c).render("json")))
    for fmt in ("text", "markdown", "latex"):
        out = flat(rep.render(fmt))
        assert "zeta (A)" in out and "omega (B)" in out and "note: planted" in out
        assert flat(planted.verdict) in out


def test_compare_functions_take_at_most_8_arguments():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(compare))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
            assert count <= 8, (node.name, count)


def _selected(path: Path, *options: str):
    args = build_parser().parse_args(["compare", str(path), "--a", "base", "--b", "new", *options])
    return compare_input.select_trials(args)


def test_small_log_is_read_without_pandas_unless_an_option_needs_its_column(tmp_path):
    # issue 24: a small log is answered by the small reader (no pandas); --order and a
    # --cluster column need pandas, and the column they name must reach the hooks
    rows = [{**r, "trial": i, "operator": f"o{i % 3}"} for i, r in enumerate(paired({(1, 0): 4}))]
    path = write(tmp_path / "l.csv", rows)
    df, a, b = _selected(path)
    assert isinstance(df, TrialTable)
    assert (len(a), len(b), int(a["success"].sum()), int(b["success"].sum())) == (4, 4, 4, 0)
    for options, column in (
        (("--order", "trial"), "trial"),
        (("--cluster", "operator"), "operator"),
    ):
        df, a, b = _selected(path, *options)
        assert isinstance(df, pd.DataFrame), options
        assert column in df.columns, options
        assert df[column].astype(str).tolist() == [str(r[column]) for r in rows], options
    df, _, _ = _selected(path, "--order", "trial", "--cluster", "operator")
    assert {"trial", "operator"} <= set(df.columns)


@pytest.mark.parametrize("options", [(), ("--order", "trial")], ids=["small reader", "pandas"])
def test_policy_option_names_a_table_without_a_policy_column_on_both_readers(
    tmp_path, capsys, options
):
    rows = [{"trial": i, "success": i % 2} for i in range(6)]
    path = write(tmp_path / "l.csv", rows)
    argv = ["compare", path, "--a", "act", "--b", "bc", *options]
    assert bad(capsys, *argv, "--policy", "act") == (
        "--b 'bc' is not a policy in the log (policies: act)"
    )
