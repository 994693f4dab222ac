"""Issue 43: ``evalsim select plan``, ``evalsim select`` (the pick, its price, the
confirmation plan) and ``rank`` on a paired log (paired tests, ``--ordered``)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_run import run, run_json
from naive_selection import selection_by_enumeration

RATES = {"base": 0.6, "ck1": 0.55, "ck2": 0.7, "ck3": 0.8, "ck4": 0.75}


def _log(path, rates=RATES, n=24, seed=3, drop=None):
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n):
        for pol, p in rates.items():
            if drop == (pol, c):
                continue
            rows.append(
                {"task": "t", "policy": pol, "condition": f"c{c}", "success": int(rng.random() < p)}
            )
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    return _log(tmp_path_factory.mktemp("sel") / "sel.csv")


def test_select_plan_matches_the_library_and_brute_force(capsys):
    data = run_json(
        capsys, "select", "plan", "--k", 3, "--p-star", 0.8, "--delta", 0.2, "--pcs", 0.8
    )
    n = data["n"]
    # the PCS at n and n - 1 by enumeration: n is the first to reach 0.8
    at = selection_by_enumeration([0.8, 0.6, 0.6], n)[0][0]
    before = selection_by_enumeration([0.8, 0.6, 0.6], n - 1)[0][0]
    assert at >= 0.8 > before
    assert data["pcs"] == pytest.approx(at, abs=1e-12)
    assert data["total_trials"] == 3 * n and data["pcs_exact"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--k", 1, "--p-star", 0.8], "at least 2"),
        (["--k", 4, "--p-star", 0.8, "--delta", 0], "delta"),
        (["--k", 4, "--p-star", 0.8, "--delta", -0.05], "delta"),
        (["--k", 4, "--p-star", 0.8, "--pcs", 0.25], "1/K"),
        (["--k", 4, "--p-star", 0.05, "--delta", 0.1], "delta"),
    ],
)
def test_select_plan_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    rc, out, err = run(capsys, "select", "plan", *argv)
    assert rc == 2 and words in err and err.count("\n") == 1 and out == ""


def test_select_picks_prices_and_writes_a_confirmation_plan(tmp_path, log, capsys):
    plan_path = tmp_path / "confirm.yaml"
    data = run_json(capsys, "select", log, "--baseline", "base", "--plan-out", plan_path)
    df = pd.read_csv(log)
    rates = df[df.policy != "base"].groupby("policy")["success"].mean()
    assert data["chosen"] in set(rates[rates == rates.max()].index)
    assert data["paired"] and data["cochran_q"]["method"] == "exact permutation"
    # the plug-in curse is the exact bias at the observed rates (brute force, K = 4, n = 24
    # is too large to enumerate here: check against the library's own brute-force-tested
    # function at the same inputs instead of a copied number)
    from evalsim.stats.selection.fixed_n import selection_probabilities

    n = int(df[df.policy == "ck1"].shape[0])
    assert data["plugin_bias"] == pytest.approx(
        selection_probabilities(rates.sort_index().to_numpy(), n).bias, abs=1e-12
    )
    plan = yaml.safe_load(plan_path.read_text())
    assert plan["kind"] == "evalsim-confirmation-plan"
    assert plan["confirmation"]["arms"] == {"candidate": data["chosen"], "baseline": "base"}
    assert len(plan["confirmation"]["excluded_conditions"]) == n
    assert plan["confirmation"]["estimate_from"] == "confirmation trials only"
    assert "never enter" in plan["statement"]
    from evalsim.stats.selection.pick import check_fresh_conditions

    check_fresh_conditions(plan, ["t/f0", "t/f1"])  # fresh ids pass
    with pytest.raises(ValueError, match="fresh conditions"):
        check_fresh_conditions(plan, ["t/f0", "t/c3"])
    # n per arm reaches the stated exact Fisher power
    from evalsim.stats.two_sample.power import fisher_power

    c = plan["confirmation"]
    p0 = c["baseline_rate"]
    m = c["n_per_arm"]
    assert fisher_power(p0, m, p0 + c["gap"], m, c["alpha"]) >= c["power"]
    # rerunning replaces its own plan; someone else's file is left alone
    rc, _, err = run(capsys, "select", log, "--baseline", "base", "--plan-out", plan_path)
    assert rc == 0, err
    other = tmp_path / "notes.yaml"
    other.write_text("mine\n")
    rc, _, err = run(capsys, "select", log, "--baseline", "base", "--plan-out", other)
    assert rc == 2 and "--force" in err and other.read_text() == "mine\n"
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        rc, _, err = run(capsys, "select", log, "--baseline", "base", "--plan-out", fifo)
        assert rc == 2 and "not a regular file" in err


def test_select_tie_rules(tmp_path, capsys):
    rows = [
        {"policy": p, "condition": f"c{i}", "success": int(i < k)}
        for p, k in (("a", 3), ("b", 5), ("c", 5))
        for i in range(8)
    ]
    path = tmp_path / "tie.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    data = run_json(capsys, "select", path, "--tie", "no-pick")
    assert data["chosen"] is None and data["tied"] == ["b", "c"]
    picks = {run_json(capsys, "select", path, "--tie-seed", s)["chosen"] for s in range(12)}
    assert picks == {"b", "c"}  # the seed decides, both can win
    again = run_json(capsys, "select", path, "--tie-seed", 5)["chosen"]
    assert again == run_json(capsys, "select", path, "--tie-seed", 5)["chosen"]


def test_select_bad_logs_exit_2_without_an_unpaired_fallback(tmp_path, capsys):
    gap = _log(tmp_path / "gap.csv", drop=("ck2", 3))
    rc, out, err = run(capsys, "select", gap, "--baseline", "base")
    assert rc == 2 and "not shared" in err and err.count("\n") == 1
    rc, _, err = run(capsys, "select", gap, "--baseline", "base", "--unpaired")
    assert rc == 0, err
    one = _log(tmp_path / "one.csv", rates={"base": 0.5, "ck1": 0.6})
    rc, _, err = run(capsys, "select", one, "--baseline", "base")
    assert rc == 2 and "K = 1" in err
    rc, _, err = run(capsys, "select", one, "--checkpoints", "ck1,ghost")
    assert rc == 2 and "'ghost' has no trials" in err


def test_rank_uses_the_paired_test_of_compare_by_task(tmp_path, capsys):
    path = _log(tmp_path / "two.csv", rates={"ck1": 0.5, "ck3": 0.8}, n=40, seed=9)
    data = run_json(capsys, "rank", path, "--bootstrap-reps", 50)
    comp = run_json(capsys, "compare", path, "--a", "ck1", "--b", "ck3", "--by", "task")
    assert data["test"].startswith("exact stratified McNemar")
    assert comp["decided_by"].startswith("exact stratified McNemar")
    (q,) = data["pairs"]
    assert q["pvalue"] == pytest.approx(comp["stratified_mcnemar"]["pvalue"], rel=1e-12)
    # by hand: exact two-sided binomial test on the discordant pairs
    from scipy.stats import binomtest

    df = pd.read_csv(path).pivot(index="condition", columns="policy", values="success")
    b = int(((df.ck1 == 1) & (df.ck3 == 0)).sum())
    c = int(((df.ck1 == 0) & (df.ck3 == 1)).sum())
    assert q["pvalue"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    unpaired = run_json(capsys, "rank", path, "--bootstrap-reps", 50, "--unpaired")
    assert unpaired["test"] == "exact stratified test"
    gap = _log(tmp_path / "gap.csv", rates={"ck1": 0.5, "ck3": 0.8}, drop=("ck1", 0))
    rc, _, err = run(capsys, "rank", gap)
    assert rc == 2 and "not shared" in err and err.count("\n") == 1


def test_rank_ordered_ladder(tmp_path, capsys):
    rows = []
    for step, k in ((100, 4), (200, 14), (300, 19), (400, 19)):
        rows += [
            {"policy": f"s{step}", "step": step, "condition": f"c{i}", "success": int(i < k)}
            for i in range(20)
        ]
    path = tmp_path / "ladder.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    data = run_json(capsys, "rank", path, "--ordered", "step", "--bootstrap-reps", 50)
    lad = data["ladder"]
    assert lad["names"] == ["s100", "s200", "s300", "s400"] and lad["paired"]
    assert lad["trend_pvalue_increasing"] < 1e-6
    # s100 < s200 by 10 discordant pairs of 10: McNemar one-sided p = 2^-10 (x 6 Holm)
    assert ["s100", "s200"] == lad["later_better"][0][:2] or any(
        t[:2] == ["s100", "s200"] for t in lad["later_better"]
    )
    assert lad["plateau"] == "s200"  # s200 vs s300: 5 discordant pairs, not enough
    rc, _, err = run(capsys, "rank", path, "--ordered", "nosuch")
    assert rc == 2 and "nosuch" in err


def test_select_plan_json_is_the_library_plan(capsys):
    from evalsim.stats.selection.fixed_n import n_for_pcs

    data = run_json(capsys, "select", "plan", "--k", 4, "--p-star", 0.8, "--tie", "no-pick")
    assert data["n"] == n_for_pcs(4, 0.8, 0.1, 0.9, "no-pick").n
    assert data["tie_rule"] == "no-pick"


def test_select_plan_sequential_reports_the_certified_elimination(capsys):
    from naive_selection import elimination_by_enumeration

    from evalsim.stats.selection.elimination import elimination_design

    data = run_json(
        capsys,
        "select",
        "plan",
        "--k",
        2,
        "--p-star",
        0.8,
        "--delta",
        0.3,
        "--sequential",
        "--n-max",
        7,
        "--alpha",
        0.2,
    )
    el = data["elimination"]
    assert el["method"] == "exact dynamic programming" and el["certified_error"] <= 0.2
    rows = elimination_design(2, 0.2, 7, "paired").pair_design.rows
    want = elimination_by_enumeration(
        [0.8, 0.5], 7, rows["upper"].tolist(), rows["final_upper"].tolist()
    )
    assert el["p_single_correct"] == pytest.approx(want[0], abs=1e-12)
    assert el["expected_trials"] == pytest.approx(want[4], rel=1e-12)
