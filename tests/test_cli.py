"""The evalsim command: outputs against SciPy/statsmodels and brute force; every bad input.

The CLI is run in-process through ``evalsim.cli.main(argv)`` (stdout/stderr captured by
pytest), plus real subprocess calls of ``.venv/bin/evalsim``. Independent references:
``scipy.stats`` (fisher_exact, boschloo_exact, binomtest), ``statsmodels`` (proportion_confint,
confint_proportions_2indep), and plain-Python enumerations written here (exact McNemar power,
the false-win rate of peeking at every trial).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_run import run, run_json
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from evalsim.stats.proportion.intervals import REGISTRY

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "trials.csv"


def write_log(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def trials(policy: str, k: int, n: int, **extra) -> list[dict]:
    return [{"policy": policy, "success": int(i < k), **extra} for i in range(n)]


# --------------------------------------------------------------------------- interval

# The command prints every method of the registry; those statsmodels has are checked against it
# here, the others against their plain-Python reference in tests/test_intervals.py.
SM_METHOD = {m: e.statsmodels for m, e in REGISTRY.items() if e.statsmodels}


@pytest.mark.parametrize("k,n", [(14, 20), (0, 10), (45, 45), (3, 7)])
def test_interval_json_matches_statsmodels(capsys, k, n):
    out = run_json(capsys, "interval", k, n, "--confidence", "0.9")
    assert set(out) == {"k", "n", "rate", "intervals"}
    assert (out["k"], out["n"], out["rate"]) == (k, n, k / n)
    assert set(out["intervals"]) == set(REGISTRY)
    assert {"wald", "wilson", "clopper_pearson"} <= set(SM_METHOD)
    for method, sm in SM_METHOD.items():
        lo, hi = proportion_confint(k, n, alpha=0.1, method=sm)
        assert out["intervals"][method] == pytest.approx([lo, hi], abs=1e-9), method


def test_interval_table_is_aligned(capsys):
    rc, out, err = run(capsys, "interval", 14, 20)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("method"))
    table = lines[head : head + 2 + len(REGISTRY)]
    first_column = len(table[1].split()[0])  # the dashes under "method"
    assert [t[:first_column].strip() for t in table[2:]] == [e.label for e in REGISTRY.values()]
    assert lines[head + 2 + len(REGISTRY)] == ""  # the table ends after the last method
    # Numbers right-aligned: every row ends at the same column.
    assert len({len(t) for t in table}) == 1
    assert "0.4810  0.8545" in out  # Wilson 14/20, statsmodels proportion_confint


# --------------------------------------------------------------------------- summarize


def test_summarize_counts_intervals_and_warning_rule(tmp_path, capsys):
    rows = trials("small", 14, 20, task="t1", seed=0) + trials("big", 300, 400, task="t1", seed=0)
    for i, r in enumerate(rows):
        if not r["success"]:
            r["failure"] = "missed" if i % 2 else "dropped"
        else:
            r["failure"] = "none"
    path = write_log(tmp_path / "log.csv", rows)
    out = run_json(capsys, "summarize", path)
    by = {r["policy"]: r for r in out["by_policy"]}
    assert (by["small"]["k"], by["small"]["n"]) == (14, 20)
    assert (by["big"]["k"], by["big"]["n"]) == (300, 400)
    for r in by.values():
        w = proportion_confint(r["k"], r["n"], method="wilson")
        cp = proportion_confint(r["k"], r["n"], method="beta")
        assert r["wilson"] == pytest.approx(list(w), abs=1e-9)
        assert r["clopper_pearson"] == pytest.approx(list(cp), abs=1e-9)
    # Rule: warn when the Wilson half-width exceeds 0.10. n = 20 at 70%: +/-0.19; n = 400: +/-0.04.
    assert by["small"]["imprecise"] and not by["big"]["imprecise"]
    assert any(w.startswith("warning: small:") for w in out["warnings"])
    assert not any(w.startswith("warning: big:") for w in out["warnings"])
    assert out["group_keys"] == ["policy", "task", "seed"]
    assert out["failures"]["small"] == {"dropped": 3, "missed": 3}
    assert sum(out["failures"]["big"].values()) == 100

    rc, text, err = run(capsys, "summarize", path)
    assert rc == 0 and err == ""
    assert "By policy x task x seed" in text and "Failure breakdown" in text
    assert "warning: small: n = 20" in text


def test_summarize_all_fail_and_all_succeed(tmp_path, capsys):
    path = write_log(tmp_path / "log.csv", trials("A", 0, 3) + trials("B", 2, 2))
    out = run_json(capsys, "summarize", path)
    by = {r["policy"]: r for r in out["by_policy"]}
    assert by["A"]["wilson"] == pytest.approx(list(proportion_confint(0, 3, method="wilson")))
    assert by["A"]["wilson"][0] == 0.0 and by["B"]["wilson"][1] == 1.0
    assert any(w.startswith("note: A: 0/3 has a one-sided interval") for w in out["warnings"])
    assert any(w.startswith("note: B: 2/2 has a one-sided interval") for w in out["warnings"])


def test_summarize_sorts_seeds_as_numbers_and_labels_missing_modes(tmp_path, capsys):
    rows = []
    for seed in (10, 2, 1):
        rows += trials("A", 1, 3, seed=seed, failure="none")
    path = write_log(tmp_path / "log.csv", rows)
    out = run_json(capsys, "summarize", path)
    assert [r["seed"] for r in out["by_group"]] == ["1", "2", "10"]
    assert out["failures"] == {"A": {"(unlabelled)": 6}}


def test_summarize_parquet_equals_csv(tmp_path, capsys):
    rows = trials("A", 7, 12, seed=1) + trials("B", 2, 9, seed=2)
    csv = write_log(tmp_path / "log.csv", rows)
    pq = tmp_path / "log.parquet"
    df = pd.DataFrame(rows)
    df["success"] = df["success"].astype(bool)  # Parquet keeps a real bool column
    df.to_parquet(pq)
    a, b = run_json(capsys, "summarize", csv), run_json(capsys, "summarize", pq)
    assert a["by_policy"] == b["by_policy"] and a["by_group"] == b["by_group"]


def test_csv_with_byte_order_mark(tmp_path, capsys):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffPolicy,Success\r\nA,1\r\nA,0\r\n".encode())
    assert run_json(capsys, "summarize", path)["by_policy"][0]["n"] == 2


@pytest.mark.parametrize("true,false", [("true", "false"), ("TRUE", "False"), ("yes", "no")])
def test_success_spellings(tmp_path, capsys, true, false):
    path = tmp_path / "log.csv"
    path.write_text(f"policy,success\nA,{true}\nA,{false}\nA,{true}\n")
    out = run_json(capsys, "summarize", path)
    assert (out["by_policy"][0]["k"], out["by_policy"][0]["n"]) == (2, 3)


def test_lerobot_eval_info_single_and_multi_task(tmp_path, capsys):
    run_dir = tmp_path / "2025-01-01_act_pusht"
    run_dir.mkdir()
    single = {
        "per_episode": [
            {"episode_ix": i, "sum_reward": 1.0, "max_reward": 1.0, "success": i % 3 != 0,
             "seed": 1000 + i}
            for i in range(9)
        ],
        "aggregated": {"pc_success": 66.7},
    }  # fmt: skip
    (run_dir / "eval_info.json").write_text(json.dumps(single))
    out = run_json(capsys, "summarize", run_dir / "eval_info.json")
    assert len(out["by_policy"]) == 1
    row = out["by_policy"][0]
    assert (row["policy"], row["k"], row["n"]) == ("2025-01-01_act_pusht", 6, 9)

    multi = {
        "per_task": [
            {"task_group": "libero_10", "task_id": 0, "metrics": {"successes": [1, 1, 0]}},
            {"task_group": "libero_10", "task_id": 1, "metrics": {"successes": [0, 0, 0, 1]}},
        ],
        "overall": {},
    }
    path = tmp_path / "multi.json"
    path.write_text(json.dumps(multi))
    out = run_json(capsys, "summarize", path, "--policy", "smolvla")
    assert out["by_policy"][0]["policy"] == "smolvla"
    assert [(r["task"], r["k"], r["n"]) for r in out["by_group"]] == [
        ("libero_10:0", 2, 3),
        ("libero_10:1", 1, 4),
    ]


def test_lerobot_seeds_pair_two_runs(tmp_path, capsys):
    """Two lerobot-eval runs with the same env seeds compare as pairs."""
    for name, wins in (("act", [1, 1, 1, 0, 1, 1]), ("diffusion", [0, 1, 0, 0, 0, 1])):
        d = tmp_path / name
        d.mkdir()
        eps = [{"success": bool(s), "seed": 100 + i} for i, s in enumerate(wins)]
        (d / "eval_info.json").write_text(json.dumps({"per_episode": eps}))
    out = run_json(
        capsys, "compare", tmp_path / "act" / "eval_info.json",
        tmp_path / "diffusion" / "eval_info.json", "--a", "act", "--b", "diffusion",
    )  # fmt: skip
    assert out["paired"] and out["discordant"] == {"a_only": 3, "b_only": 0}
    assert out["mcnemar_p"] == pytest.approx(stats.binomtest(3, 3, 0.5).pvalue)


# --------------------------------------------------------------------------- compare

COMPARE_KEYS = {
    "n_a", "k_a", "n_b", "k_b", "fisher_p", "paired", "mcnemar_p", "diff_ci", "mde_80", "verdict"
}  # fmt: skip


def test_compare_unpaired_against_scipy_and_statsmodels(tmp_path, capsys):
    path = write_log(tmp_path / "log.csv", trials("act", 31, 45) + trials("bc", 26, 45))
    out = run_json(capsys, "compare", path, "--a", "act", "--b", "bc")
    assert COMPARE_KEYS <= set(out)
    assert (out["k_a"], out["n_a"], out["k_b"], out["n_b"]) == (31, 45, 26, 45)
    assert out["paired"] is False and out["mcnemar_p"] is None
    table = [[31, 26], [14, 19]]
    assert out["fisher_p"] == pytest.approx(stats.fisher_exact(table).pvalue, rel=1e-10)
    assert out["boschloo_p"] == pytest.approx(stats.boschloo_exact(table).pvalue, rel=1e-6)
    lo, hi = confint_proportions_2indep(26, 45, 31, 45, method="newcomb", compare="diff")
    assert out["diff_ci"] == pytest.approx([lo, hi], abs=1e-9)  # B - A
    # Document 001: "effects below about 29 points are invisible" at n = 45 (normal, pbar 0.5);
    # the exact-Fisher MDE here (rates centred on the pooled 0.63) is in the same range.
    assert 0.25 < out["mde_80"] < 0.36
    assert out["verdict"].startswith("act and bc are not detectably different at n = 45 per arm")
    assert out["test"] == "Fisher's exact" and out["diff_ci_method"] == "newcombe"
    assert f"about {100 * out['mde_80']:.0f} points" in out["verdict"]


def test_compare_detects_a_large_gap(tmp_path, capsys):
    path = write_log(tmp_path / "log.csv", trials("A", 10, 40) + trials("B", 34, 40))
    out = run_json(capsys, "compare", path, "--a", "A", "--b", "B")
    assert out["fisher_p"] < 1e-6
    assert out["verdict"].startswith("B beats A: 85% vs 25%")
    lo, hi = confint_proportions_2indep(34, 40, 10, 40, method="newcomb", compare="diff")
    assert out["diff_ci"] == pytest.approx([lo, hi], abs=1e-9) and lo > 0


def _paired_rows(outcomes: list[tuple[int, int]]) -> list[dict]:
    rows = []
    for i, (a, b) in enumerate(outcomes):
        rows.append({"policy": "A", "condition": f"c{i}", "success": a})
        rows.append({"policy": "B", "condition": f"c{i}", "success": b})
    return rows


def test_compare_paired_mcnemar(tmp_path, capsys):
    outcomes = [(1, 1)] * 20 + [(1, 0)] * 2 + [(0, 1)] * 9 + [(0, 0)] * 9
    path = write_log(tmp_path / "log.csv", _paired_rows(outcomes))
    out = run_json(capsys, "compare", path, "--a", "A", "--b", "B")
    assert out["paired"] is True and out["n_pairs"] == 40
    assert out["discordant"] == {"a_only": 2, "b_only": 9}
    assert out["mcnemar_p"] == pytest.approx(stats.binomtest(2, 11, 0.5).pvalue, rel=1e-10)
    # mid-p: 2 * (P(X <= 2) - P(X = 2) / 2), X ~ Binomial(11, 1/2)
    midp = 2 * (stats.binom.cdf(2, 11, 0.5) - 0.5 * stats.binom.pmf(2, 11, 0.5))
    assert out["mcnemar_midp"] == pytest.approx(midp, rel=1e-10)
    assert out["fisher_p"] == pytest.approx(stats.fisher_exact([[22, 29], [18, 11]]).pvalue)
    assert "exact McNemar p = " in out["verdict"]
    # McNemar p = 0.065 does not reject, while the Tango interval [+1.4, +33.9] excludes 0:
    # the rule declares no winner and says that the two disagree.
    assert out["verdict"].startswith("no verdict: the better-looking policy is B (72% vs 55%)")
    assert out["decision"] is None and out["reject"] is False and out["interval_agrees"] is True
    rc, text, _ = run(capsys, "compare", path, "--a", "A", "--b", "B")
    assert "A succeeded           20         2" in text
    # --unpaired ignores the condition ids
    out = run_json(capsys, "compare", path, "--a", "A", "--b", "B", "--unpaired")
    assert out["paired"] is False and out["mcnemar_p"] is None


def test_compare_repeated_condition_is_not_paired(tmp_path, capsys):
    rows = _paired_rows([(1, 0), (0, 1), (1, 1)])
    # c0 run twice by A, with another outcome (an exact duplicate row is refused: issue 45)
    rows.append({"policy": "A", "condition": "c0", "success": 0})
    path = write_log(tmp_path / "log.csv", rows)
    rc, text, err = run(capsys, "compare", path, "--a", "A", "--b", "B")
    assert rc == 0 and err == ""
    assert "more than once: cannot pair" in text
    assert run_json(capsys, "compare", path, "--a", "A", "--b", "B")["paired"] is False


def test_compare_example_log_is_paired(capsys):
    out = run_json(capsys, "compare", EXAMPLE, "--a", "act", "--b", "bc")
    assert out["paired"] and out["n_pairs"] == 45 and (out["n_a"], out["n_b"]) == (45, 45)


# --------------------------------------------------------------------------- plan


@functools.cache
def _mcnemar_rejects(d: int, alpha: float) -> np.ndarray:
    """b = 0..d where the exact McNemar test (SciPy binomtest of b out of d at 1/2) rejects."""
    return np.array([stats.binomtest(b, d, 0.5).pvalue < alpha for b in range(d + 1)])


def naive_mcnemar_power(n: int, p10: float, p01: float, alpha: float) -> float:
    """Exact power of the exact McNemar test by enumeration over (discordant d, A-only b)."""
    psi = p10 + p01
    total = 0.0
    for d in range(1, n + 1):
        b = np.arange(d + 1)[_mcnemar_rejects(d, alpha)]
        total += stats.binom.pmf(d, n, psi) * stats.binom.pmf(b, d, p10 / psi).sum()
    return float(total)


def test_plan_paired_against_connor_and_enumeration(capsys):
    out = run_json(
        capsys, "plan", "--p1", "0.5", "--p2", "0.7", "--paired", "--discordance", "0.3",
        "--minutes-per-trial", "3", "--n", "30",
    )  # fmt: skip
    assert {"n_per_arm_exact", "n_per_arm_normal", "hours", "mde", "power_at_n"} <= set(out)
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    connor = (za * math.sqrt(0.3) + zb * math.sqrt(0.3 - 0.04)) ** 2 / 0.04  # Connor (1987)
    assert out["n_per_arm_normal"] == math.ceil(connor)
    p10, p01 = 0.05, 0.25  # p10 - p01 = p1 - p2, p10 + p01 = discordance
    n = out["n_per_arm_exact"]
    assert (
        naive_mcnemar_power(n, p10, p01, 0.05) >= 0.8 > naive_mcnemar_power(n - 1, p10, p01, 0.05)
    )
    assert out["hours"] == pytest.approx(2 * n * 3 / 60)
    assert out["power_at_n"] == pytest.approx(naive_mcnemar_power(30, p10, p01, 0.05), rel=1e-9)
    d = out["mde"]  # power at the MDE reaches 0.8, just below it does not
    assert naive_mcnemar_power(30, (0.3 + d) / 2, (0.3 - d) / 2, 0.05) >= 0.8
    assert naive_mcnemar_power(30, (0.3 + d - 2e-3) / 2, (0.3 - d + 2e-3) / 2, 0.05) < 0.8


def test_plan_unpaired(capsys):
    out = run_json(capsys, "plan", "--p1", "0.5", "--p2", "0.7", "--n", "45")
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    fleiss = (za * math.sqrt(2 * 0.6 * 0.4) + zb * math.sqrt(0.25 + 0.21)) ** 2 / 0.04
    assert out["n_per_arm_normal"] == math.ceil(fleiss) == 93
    assert out["hours"] is None  # no --minutes-per-trial
    # Exact MDE at n = 45, rates centred on 0.6; document 001's normal figure is 29 points.
    assert 0.28 < out["mde"] < 0.34


def test_plan_unpaired_exact_against_enumeration(capsys):
    # A wide gap keeps the brute-force Fisher enumeration small (n ~ 12 per arm).
    out = run_json(
        capsys, "plan", "--p1", "0.2", "--p2", "0.8", "--n", "9", "--minutes-per-trial", "4"
    )
    n, first = out["n_per_arm_exact"], out["n_per_arm_exact_first"]
    assert first <= n
    assert naive_fisher_power(first, 0.2, 0.8, 0.05) >= 0.8
    assert naive_fisher_power(first - 1, 0.2, 0.8, 0.05) < 0.8
    assert all(naive_fisher_power(m, 0.2, 0.8, 0.05) >= 0.8 for m in range(n, n + 5))
    assert out["power_at_n"] == pytest.approx(naive_fisher_power(9, 0.2, 0.8, 0.05), rel=1e-9)
    assert out["hours"] == pytest.approx(2 * n * 4 / 60)


def naive_fisher_power(n: int, p1: float, p2: float, alpha: float) -> float:
    """Exact power of two-sided Fisher (p < alpha) at n per arm by enumerating all tables."""
    total = 0.0
    for k1 in range(n + 1):
        for k2 in range(n + 1):
            if stats.fisher_exact([[k1, n - k1], [k2, n - k2]]).pvalue < alpha:
                total += stats.binom.pmf(k1, n, p1) * stats.binom.pmf(k2, n, p2)
    return total


# --------------------------------------------------------------------------- peek


def naive_false_win_rate(n: int, p: float, alpha: float) -> tuple[float, float]:
    """Look after every pair of trials; stop at the first Fisher p < alpha. Brute force over
    all 4^n outcome paths. Returns (P(stop at some look), P(reject at n alone))."""

    @functools.cache
    def rejects(ka: int, kb: int, m: int) -> bool:
        return stats.fisher_exact([[ka, m - ka], [kb, m - kb]]).pvalue < alpha

    peeked = fixed = 0.0
    for path in itertools.product(((0, 0), (0, 1), (1, 0), (1, 1)), repeat=n):
        prob = math.prod(p ** (a + b) * (1 - p) ** (2 - a - b) for a, b in path)
        ka = kb = 0
        stopped = False
        for m, (a, b) in enumerate(path, start=1):
            ka, kb = ka + a, kb + b
            stopped = stopped or rejects(ka, kb, m)
        peeked += prob * stopped
        fixed += prob * rejects(ka, kb, n)
    return peeked, fixed


def test_peek_against_brute_force(capsys):
    # alpha = 0.15: no Fisher p-value at n <= 6 per arm lies within 1e-6 of it (at alpha = 0.1
    # the table 0/3 vs 3/3 has p = 1/10 exactly, and rounding decides p < alpha).
    out = run_json(capsys, "peek", "--n", "6", "--p", "0.5", "--alpha", "0.15")
    assert {"false_win_rate_exact", "false_win_rate_fixed"} <= set(out)
    peeked, fixed = naive_false_win_rate(6, 0.5, 0.15)
    assert out["false_win_rate_exact"] == pytest.approx(peeked, rel=1e-9)
    assert out["false_win_rate_fixed"] == pytest.approx(fixed, rel=1e-9)
    assert out["look_sizes"] == [1, 2, 3, 4, 5, 6]


def test_peek_looks_k_and_list(capsys):
    k3 = run_json(capsys, "peek", "--n", "40", "--looks", "3")
    assert k3["look_sizes"] == [14, 27, 40]
    listed = run_json(capsys, "peek", "--n", "40", "--looks", "14,27,40")
    assert listed["false_win_rate_exact"] == k3["false_win_rate_exact"]
    once = run_json(capsys, "peek", "--n", "40", "--looks", "1")
    assert once["false_win_rate_exact"] == once["false_win_rate_fixed"]
    assert k3["false_win_rate_fixed"] == once["false_win_rate_fixed"]
    assert once["false_win_rate_exact"] < k3["false_win_rate_exact"]


# --------------------------------------------------------------------------- bad input


def assert_bad_input(rc: int, out: str, err: str, *needles: str) -> None:
    assert rc == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)  # exactly one line
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.fixture
def good_log(tmp_path) -> Path:
    return write_log(tmp_path / "log.csv", trials("A", 5, 10) + trials("B", 7, 10))


def test_bad_missing_file(tmp_path, capsys):
    assert_bad_input(*run(capsys, "summarize", tmp_path / "nope.csv"), "no such file")
    missing = tmp_path / "nope.parquet"
    assert_bad_input(*run(capsys, "compare", missing, "--a", "A", "--b", "B"), "no such file")


@pytest.mark.parametrize(
    "name,content,needle",
    [
        ("log.xlsx", "policy,success\nA,1\n", "unreadable format '.xlsx'"),
        ("log.parquet", "this is not parquet", "unreadable"),
        ("eval_info.json", "{not json", "unreadable JSON"),
        ("eval_info.json", '{"aggregated": {}}', "not a LeRobot eval_info file"),
        ("log.csv", "", "file is empty"),
        ("log.csv", 'policy,success\n"A,1\n', "unreadable CSV"),
    ],
)
def test_bad_unreadable_format(tmp_path, capsys, name, content, needle):
    path = tmp_path / name
    path.write_text(content)
    assert_bad_input(*run(capsys, "summarize", path), needle)


def test_bad_missing_columns(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("agent,outcome\nA,1\n")
    assert_bad_input(
        *run(capsys, "summarize", path), "missing column(s) policy, success", "agent, outcome"
    )
    path.write_text("policy,task\nA,t\n")
    assert_bad_input(*run(capsys, "summarize", path), "missing column(s) success")


@pytest.mark.parametrize("value", ["2", "maybe", "0.5", "-1"])
def test_bad_non_binary_success(tmp_path, capsys, value):
    path = tmp_path / "log.csv"
    path.write_text(f"policy,success\nA,1\nA,{value}\nA,0\n")
    assert_bad_input(*run(capsys, "summarize", path), f"got '{value}' in data row 2")


def test_bad_empty_success_and_policy(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("policy,success\nA,1\nA,\n")
    assert_bad_input(*run(capsys, "summarize", path), "success is empty in data row 2")
    path.write_text("policy,success\nA,1\n,0\n")
    assert_bad_input(*run(capsys, "summarize", path), "policy is empty in data row 2")


def test_bad_non_binary_success_parquet(tmp_path, capsys):
    path = tmp_path / "log.parquet"
    pd.DataFrame({"policy": ["A", "A"], "success": [1, 3]}).to_parquet(path)
    assert_bad_input(*run(capsys, "summarize", path), "got 3 in data row 2")


def test_bad_policy_absent(good_log, capsys):
    assert_bad_input(
        *run(capsys, "compare", good_log, "--a", "A", "--b", "C"),
        "--b 'C' is not a policy in the log (policies: A, B)",
    )
    assert_bad_input(*run(capsys, "compare", good_log, "--a", "Z", "--b", "B"), "--a 'Z'")
    assert_bad_input(*run(capsys, "compare", good_log, "--a", "A", "--b", "A"), "same policy")


def test_bad_policy_name_for_several_files(good_log, capsys):
    argv = ("summarize", good_log, good_log, "--policy", "X")
    assert_bad_input(*run(capsys, *argv), "single file")


def test_bad_task_absent(tmp_path, capsys):
    path = write_log(
        tmp_path / "log.csv", trials("A", 1, 2, task="t") + trials("B", 1, 2, task="t")
    )
    assert_bad_input(
        *run(capsys, "compare", path, "--a", "A", "--b", "B", "--task", "u"), "task 'u' not in"
    )


def test_bad_k_greater_than_n(capsys):
    assert_bad_input(*run(capsys, "interval", 21, 20), "k must be <= n, got k = 21 > n = 20")
    assert_bad_input(*run(capsys, "interval", -1, 20), "argument k")
    assert_bad_input(*run(capsys, "interval", 0, 0), "argument n: must be >= 1")


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["plan", "--p1", "1.5", "--p2", "0.7"], "argument --p1: probability must be in [0, 1]"),
        (["plan", "--p1", "0.5", "--p2", "-0.1"], "argument --p2"),
        (["plan", "--p1", "0.5", "--p2", "abc"], "expected a probability"),
        (["peek", "--n", "20", "--p", "1.01"], "argument --p: probability must be in [0, 1]"),
        (["plan", "--p1", "0.5", "--p2", "0.7", "--alpha", "1.2"], "argument --alpha"),
        (["interval", "3", "10", "--confidence", "95"], "argument --confidence"),
        (["plan", "--p1", "0.5", "--p2", "0.7", "--paired", "--discordance", "1.3"],
         "argument --discordance"),
    ],
)  # fmt: skip
def test_bad_probability(capsys, argv, needle):
    assert_bad_input(*run(capsys, *argv), needle)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["plan", "--p1", "0.5", "--p2", "0.5"], "must differ"),
        (["plan", "--p1", "0.5", "--p2", "0.7", "--paired"], "--paired needs --discordance"),
        (["plan", "--p1", "0.5", "--p2", "0.7", "--discordance", "0.3"], "only with --paired"),
        (["plan", "--p1", "0.5", "--p2", "0.7", "--paired", "--discordance", "0.1"],
         "--discordance must be in (0.2, 0.8]"),
        (["plan", "--p1", "0", "--p2", "0.7"], "strictly between 0 and 1"),
        (["peek", "--n", "10", "--looks", "11"], "looks must be an int in 1..n=10"),
        (["peek", "--n", "10", "--looks", "3,2"], "argument --looks"),
        (["peek", "--n", "10", "--looks", "sometimes"], "argument --looks"),
    ],
)  # fmt: skip
def test_bad_plan_and_peek_options(capsys, argv, needle):
    assert_bad_input(*run(capsys, *argv), needle)


@pytest.mark.parametrize(
    "argv,needle",
    [
        ([], "the following arguments are required: COMMAND"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["compare", "x.csv", "--b", "B"], "the following arguments are required: --a"),
        (["interval", "3"], "the following arguments are required: n"),
        (["interval", "3", "x"], "argument n: expected a whole number, got 'x'"),
        (["summarize", "x.csv", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments_exit_2_on_one_line(capsys, argv, needle):
    assert_bad_input(*run(capsys, *argv), needle)


def test_help_exits_0(capsys):
    rc, out, _ = run(capsys, "compare", "--help")
    assert rc == 0 and "--a X" in out


# --------------------------------------------------------------------------- the installed command

EVALSIM = Path(sys.executable).parent / "evalsim"


@pytest.mark.skipif(not EVALSIM.exists(), reason="console script not installed (pip install -e .)")
def test_console_script_subprocess(tmp_path):
    ok = subprocess.run(
        [str(EVALSIM), "summarize", str(EXAMPLE), "--json"], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    assert {r["policy"] for r in json.loads(ok.stdout)["by_policy"]} == {"act", "bc"}
    bad = subprocess.run(
        [str(EVALSIM), "compare", str(tmp_path / "missing.csv"), "--a", "act", "--b", "bc"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "no such file" in bad.stderr
    assert "Traceback" not in bad.stderr


# --------------------------------------------------------------------------- the example


def test_example_log_is_what_its_script_writes():
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import make_example_log
    finally:
        sys.path.pop(0)
    expected = make_example_log.make_log()
    shipped = pd.read_csv(EXAMPLE)
    pd.testing.assert_frame_equal(shipped, expected, check_dtype=False)
    assert set(shipped.columns) == {"policy", "success", "task", "seed", "condition", "failure"}


def readme_commands() -> list[list[str]]:
    """The ``$ evalsim ...`` lines of the guide's walkthrough and of the README's example."""
    lines = []
    for page, heading in (
        ("docs/guide/cli.md", "# The evalsim command\n"),
        ("README.md", "## The evalsim command\n"),
    ):
        text = (REPO / page).read_text(encoding="utf-8")
        assert heading in text, (page, heading)
        lines += text.split(heading, 1)[1].splitlines()
    return [shlex.split(line[2:]) for line in lines if line.startswith("$ evalsim ")]


def test_readme_walkthrough_runs(capsys, monkeypatch):
    cmds = readme_commands()
    assert {c[1] for c in cmds} >= {"summarize", "compare", "plan", "peek"}
    monkeypatch.chdir(REPO)
    for argv in cmds:
        rc, out, err = run(capsys, *argv[1:])
        assert rc == 0, (argv, err)
        assert out.strip()


def test_reading_keeps_optional_columns():
    from evalsim.trial_logs import read_trial_log

    df = read_trial_log(EXAMPLE)
    assert df["success"].dtype == np.bool_
    assert list(df.columns) == ["policy", "success", "task", "seed", "condition", "failure"]
    assert df["seed"].tolist()[:2] == ["0", "0"]
