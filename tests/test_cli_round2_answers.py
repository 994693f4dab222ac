"""Issue 45 (the ``evalsim`` command, round 2), items 10, 13, 18-20, 24-26: answers that were
silently wrong or misleading, and the questions labs bring (counts, a stated rate, a CI gate).

Each test failed before its fix. Numbers are checked against SciPy / statsmodels (and the
plain-Python references of ``tests/naive_binom.py``), never against the command's own
intermediate values.
"""

from __future__ import annotations

import json
import re

import naive_binom
import numpy as np
import pytest
from cli_run import run, run_json
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint


def _write(path, header: str, rows) -> str:
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return str(path)


def _paired_log(tmp_path, outcomes, name="paired.csv") -> str:
    """A paired log: (A success, B success) per condition."""
    rows = []
    for i, (sa, sb) in enumerate(outcomes):
        rows += [("A", f"c{i}", sa), ("B", f"c{i}", sb)]
    return _write(tmp_path / name, "policy,condition,success", rows)


def _blocked_heating_log(tmp_path) -> str:
    """Two policies run in blocks (all of A, then all of B) on a servo whose success
    probability falls with the trial index: A looks far better than B."""
    rng = np.random.default_rng(3)
    rows, t = [], 0
    for pol in "AB":
        for _ in range(40):
            t += 1
            rows.append((pol, t, int(rng.random() < 0.95 - 0.9 * t / 80)))
    return _write(tmp_path / "heat.csv", "policy,trial,success", rows)


# --------------------------------------------------------------------------- item 10


def test_item10_compare_test_boschloo_on_paired_log_is_noted(tmp_path, capsys):
    log = _paired_log(tmp_path, [(1, 0)] * 8 + [(0, 1)] * 2 + [(1, 1)] * 10)
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--test", "boschloo")
    assert out["paired"] is True and out["test"] == "exact McNemar"
    notes = [n for n in out["notes"] if "--test boschloo" in n]
    assert len(notes) == 1, out["notes"]
    assert "--unpaired" in notes[0] and "McNemar" in notes[0]
    rc, text, _ = run(capsys, "compare", log, "--a", "A", "--b", "B", "--test", "boschloo")
    assert rc == 0 and "--test boschloo" in text
    # the default test (fisher) adds no such note
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B")
    assert not [n for n in out["notes"] if "--test" in n]


# --------------------------------------------------------------------------- item 13


def test_item13_verdict_is_qualified_when_independence_fails(tmp_path, capsys):
    log = _blocked_heating_log(tmp_path)
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--order", "trial")
    assert out["independence"]["interleaving"]["status"] == "blocked"
    assert out["qualified"] is True
    reasons = out["qualified_reasons"]
    assert any("all of A ran before B" in r for r in reasons), reasons
    assert any(r.startswith("A:") and "not independent" in r for r in reasons), reasons
    assert out["verdict"].startswith("qualified")
    rc, text, _ = run(capsys, "compare", log, "--a", "A", "--b", "B", "--order", "trial")
    verdict = [ln for ln in text.splitlines() if ln.startswith("verdict")]
    assert len(verdict) == 1 and verdict[0].startswith("verdict (qualified: ")
    # without --order nothing is known about the order: no qualification
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B")
    assert out["qualified"] is False and out["qualified_reasons"] == []


def test_item13_interleaved_independent_log_is_not_qualified(tmp_path, capsys):
    rows, t = [], 0
    for i in range(30):
        for pol in "AB":
            t += 1
            rows.append((pol, t, int((i * 7 + (pol == "B")) % 3 != 0)))
    log = _write(tmp_path / "ok.csv", "policy,trial,success", rows)
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--order", "trial")
    assert out["independence"]["interleaving"]["status"] == "interleaved"
    assert not any(g["dependent"] for g in out["independence"]["groups"])
    assert out["qualified"] is False and out["qualified_reasons"] == []


def test_item13_by_task_verdict_is_qualified_too(tmp_path, capsys):
    rng = np.random.default_rng(5)
    rows, t = [], 0
    for task in ("t1", "t2"):
        for pol in "AB":
            for _ in range(30):
                t += 1
                rows.append((pol, task, t, int(rng.random() < 0.95 - 0.9 * t / 120)))
    log = _write(tmp_path / "tasks.csv", "policy,task,trial,success", rows)
    out = run_json(
        capsys, "compare", log, "--a", "A", "--b", "B", "--by", "task", "--order", "trial",
        "--bootstrap-reps", "200",
    )  # fmt: skip
    assert out["qualified"] is True and out["qualified_reasons"]
    assert out["verdict"].startswith("qualified")


# --------------------------------------------------------------------------- item 20


def test_item20_half_width_printed_with_the_digit_that_shows_it_exceeds(tmp_path, capsys):
    # 40/84: Wilson half-width 10.44 points (statsmodels), above the +/-10 threshold
    lo, hi = proportion_confint(40, 84, alpha=0.05, method="wilson")
    half = 100 * (hi - lo) / 2
    assert 10.0 < half < 10.5
    log = _write(tmp_path / "log.csv", "policy,success", [("A", int(i < 40)) for i in range(84)])
    rc, text, err = run(capsys, "summarize", log)
    assert rc == 0, err
    flat = " ".join(text.split())
    m = re.search(r"\+/-([\d.]+) points, wider than the \+/-([\d.]+)", flat)
    assert m, flat
    shown, limit = float(m.group(1)), float(m.group(2))
    assert shown > limit  # as printed, the comparison holds
    assert shown == pytest.approx(half, abs=0.051)
    # the table's +/- column, too
    row = [ln for ln in text.splitlines() if ln.startswith("A ")][0]
    assert f"{half:.1f} pts !" in row


# --------------------------------------------------------------------------- item 24 (counts)


def test_item24_compare_counts_in_one_line(capsys):
    rc, text, err = run(capsys, "compare", "17/20", "14/20")
    assert rc == 0, err
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == 1, text
    p = stats.fisher_exact([[17, 3], [14, 6]]).pvalue
    assert f"p = {p:.3f}" in lines[0] and "unpaired" in lines[0]
    out = run_json(capsys, "compare", "17/20", "14/20")
    assert (out["k_a"], out["n_a"], out["k_b"], out["n_b"]) == (17, 20, 14, 20)
    assert out["paired"] is False and out["pvalue"] == pytest.approx(p, rel=1e-12)
    lo, hi = confint_proportions_2indep(14, 20, 17, 20, method="newcomb", compare="diff")
    assert out["diff_ci"] == pytest.approx([lo, hi], abs=1e-9)
    assert out["decision"] is None
    # a winner at these counts, with --a/--b naming the two
    out = run_json(capsys, "compare", "18/20", "6/20", "--a", "old", "--b", "new")
    assert (out["a"], out["b"], out["decision"]) == ("old", "new", "A")
    assert out["pvalue"] == pytest.approx(stats.fisher_exact([[18, 2], [6, 14]]).pvalue)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("compare", "21/20", "14/20"), "21 successes out of 20"),
        (("compare", "17/20"), "two counts"),
        (("compare", "17/20", "14/20", "15/20"), "two counts"),
        (("compare", "17/0", "14/20"), "at least one trial"),
        (("compare", "17/20", "14/20", "--by", "task"), "--by needs a trial log"),
    ],
)
def test_item24_bad_counts_one_line(capsys, argv, needle):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert needle in err


# --------------------------------------------------------------------------- item 25


@pytest.mark.parametrize(("k", "n", "rate"), [(45, 50, 0.8), (3, 20, 0.5), (50, 50, 0.9)])
def test_item25_interval_vs_stated_rate_matches_scipy_binomtest(capsys, k, n, rate):
    out = run_json(capsys, "interval", k, n, "--vs", rate)
    vs = out["vs"]
    assert vs["rate"] == rate
    for alternative in ("two-sided", "greater", "less"):
        ref = stats.binomtest(k, n, rate, alternative=alternative).pvalue
        assert vs["pvalue"][alternative] == pytest.approx(ref, rel=1e-9, abs=1e-300)
    # one-sided tails from the exact rational sums
    assert vs["pvalue"]["greater"] == pytest.approx(naive_binom.prob_at_least(k, n, rate), rel=1e-9)
    assert vs["pvalue"]["less"] == pytest.approx(naive_binom.binom_cdf(k, n, rate), rel=1e-9)
    assert "1e-7" in vs["two_sided_rule"]
    for method, (lo, hi) in out["intervals"].items():
        assert vs["in_interval"][method] == (lo <= rate <= hi)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert vs["in_interval"]["wilson"] == (lo <= rate <= hi)


def test_item25_interval_vs_text_states_rule_and_answers(capsys):
    rc, text, err = run(capsys, "interval", "45", "50", "--vs", "0.8")
    assert rc == 0, err
    ref = stats.binomtest(45, 50, 0.8)
    flat = " ".join(text.split())
    assert f"{ref.pvalue:.3f}" in flat
    assert "two-sided" in flat and "one-sided" in flat
    assert "0.8 lies inside" in flat or "80% lies inside" in flat
    rc, _, err = run(capsys, "interval", "45", "50", "--vs", "1.5")
    assert rc == 2 and err.count("\n") == 1


# --------------------------------------------------------------------------- item 26


@pytest.mark.parametrize(
    ("counts", "fail_on", "code"),
    [
        (("18/20", "6/20"), "worse", 1),  # B clearly worse
        (("18/20", "6/20"), "different", 1),
        (("6/20", "18/20"), "worse", 0),  # B better: not worse
        (("6/20", "18/20"), "different", 1),
        (("17/20", "14/20"), "worse", 0),  # no verdict
        (("17/20", "14/20"), "different", 0),
    ],
)
def test_item26_fail_on_exits_1_when_the_rule_fires(capsys, counts, fail_on, code):
    rc, text, err = run(capsys, "compare", *counts, "--fail-on", fail_on)
    assert rc == code, (text, err)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines[0].startswith("gate (stated before the data):"), text
    assert fail_on in lines[0]
    assert lines[-1].startswith("gate: " + ("FAIL" if code else "pass"))


def test_item26_fail_on_on_a_log_and_errors_stay_2(tmp_path, capsys):
    log = _paired_log(tmp_path, [(1, 0)] * 12 + [(1, 1)] * 8)
    rc, text, _ = run(capsys, "compare", log, "--a", "A", "--b", "B", "--fail-on", "worse")
    assert rc == 1
    assert text.index("gate (stated before the data)") < text.index("verdict:")
    rc, out, _ = run(capsys, "compare", log, "--a", "A", "--b", "B", "--fail-on", "worse", "--json")
    assert rc == 1 and json.loads(out)["gate"] == {"fail_on": "worse", "fired": True}
    rc, _, err = run(capsys, "compare", log, "--a", "A", "--b", "Z", "--fail-on", "worse")
    assert rc == 2 and err.count("\n") == 1


# --------------------------------------------------------------------------- item 18


def _seed_log(tmp_path, seeds: int) -> str:
    rng = np.random.default_rng(1)
    rows = []
    for pol, p in (("A", 0.56), ("B", 0.4), ("C", 0.7)):
        for task in ("t1", "t2", "t3"):
            for seed in range(seeds):
                rows += [(pol, task, seed, int(rng.random() < p)) for _ in range(12)]
    return _write(tmp_path / f"seeds{seeds}.csv", "policy,task,seed,success", rows)


def test_item18_rank_one_seed_says_there_is_no_seed_interval(tmp_path, capsys):
    log = _seed_log(tmp_path, 1)
    rc, text, err = run(capsys, "rank", log, "--bootstrap-reps", "200")
    assert rc == 0, err
    flat = " ".join(text.split())
    assert "one seed" in flat and "no seed-to-seed interval" in flat
    # no degenerate interval printed anywhere: [x, x]
    for lo, hi in re.findall(r"\[([-+\d.]+), ([-+\d.]+)\]", text):
        assert lo != hi, text
    out = run_json(capsys, "rank", log, "--bootstrap-reps", "200")
    assert all(row["iqm"] is None for row in out["ranking"])
    assert out["seeds_per_cell"] == 1
    # two seeds: the IQM and its interval are there
    out = run_json(capsys, "rank", _seed_log(tmp_path, 2), "--bootstrap-reps", "200")
    assert all(row["iqm"] is not None for row in out["ranking"]) and out["seeds_per_cell"] == 2


# --------------------------------------------------------------------------- item 19


def _tasks_log(tmp_path) -> str:
    rows = []
    for t, (pa, pb) in enumerate([(0.9, 0.8), (0.2, 0.3), (0.6, 0.5), (0.95, 0.9)]):
        for i in range(40):
            rows += [("A", f"t{t}", int(i < 40 * pa)), ("B", f"t{t}", int(i < 40 * pb))]
    return _write(tmp_path / "tasks.csv", "policy,task,success", rows)


def test_item19_by_task_says_which_interval_treats_tasks_fixed_or_sampled(tmp_path, capsys):
    log = _tasks_log(tmp_path)
    argv = ("compare", log, "--a", "A", "--b", "B", "--by", "task", "--bootstrap-reps", "300")
    rc, text, err = run(capsys, *argv)
    assert rc == 0, err
    flat = " ".join(text.split())
    assert "too narrow" not in flat
    assert "tasks fixed" in flat and "--tasks-as-sample" in flat
    out = run_json(capsys, *argv)
    assert out["tasks_as"] == "fixed"
    rc, text, err = run(capsys, *argv, "--tasks-as-sample")
    flat = " ".join(text.split())
    assert rc == 0 and "tasks as a sample" in flat and "too narrow" not in flat
    assert run_json(capsys, *argv, "--tasks-as-sample")["tasks_as"] == "sample"
    # the micro interval with the tasks fixed: the episodes as one sample, close to Wilson
    agg = out["aggregates"]["A"]
    lo, hi = proportion_confint(agg["k"], agg["n"], alpha=0.05, method="wilson")
    assert agg["naive_ci"][0] == pytest.approx(lo, abs=0.03)
    assert agg["naive_ci"][1] == pytest.approx(hi, abs=0.03)


def test_item19_rank_defaults_to_tasks_fixed(tmp_path, capsys):
    out = run_json(capsys, "rank", _tasks_log(tmp_path), "--bootstrap-reps", "100")
    assert out["tasks_as"] == "fixed"


def test_item26_fail_on_with_by_task(tmp_path, capsys):
    rows = []
    for task in ("t1", "t2"):
        for i in range(30):
            rows += [("A", task, int(i < 27)), ("B", task, int(i < 12))]
    log = _write(tmp_path / "tasks.csv", "policy,task,success", rows)
    argv = ("compare", log, "--a", "A", "--b", "B", "--by", "task", "--bootstrap-reps", "100")
    rc, text, _ = run(capsys, *argv, "--fail-on", "worse")
    assert rc == 1
    assert text.index("gate (stated before the data)") < text.index("verdict")
    assert text.rstrip().splitlines()[-1].startswith("gate: FAIL")
    rc, out, _ = run(capsys, *argv, "--fail-on", "worse", "--alternative", "greater", "--json")
    assert rc == 0 and json.loads(out)["gate"] == {"fail_on": "worse", "fired": False}


def test_item10_by_task_notes_that_test_is_not_used(tmp_path, capsys):
    rows = [(p, t, int(i % 3 != 0)) for t in ("t1", "t2") for p in "AB" for i in range(12)]
    log = _write(tmp_path / "tasks.csv", "policy,task,success", rows)
    argv = ("compare", log, "--a", "A", "--b", "B", "--by", "task", "--bootstrap-reps", "50")
    out = run_json(capsys, *argv, "--test", "boschloo")
    assert any("--test boschloo" in n for n in out["notes"]), out["notes"]
    assert not any("--test" in n for n in run_json(capsys, *argv)["notes"])
