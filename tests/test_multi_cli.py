"""``evalsim compare --by task`` and ``evalsim rank``, run in-process through ``main``.

Expected numbers come from SciPy / statsmodels / plain arithmetic on the same counts,
never from the command's own helpers.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd
import pytest
from cli_run import run
from scipy.stats import binomtest, fisher_exact
from statsmodels.stats.multitest import multipletests

from evalsim.cli import build_parser
from evalsim.stats.multi.tasks import CORRECTIONS

# Three tasks x two policies; on task "pour" the trials are paired by condition.
CELLS = {
    ("pick", "base"): (12, 20),
    ("pick", "new"): (17, 20),
    ("place", "base"): (30, 50),
    ("place", "new"): (38, 50),
    ("pour", "base"): (5, 10),
    ("pour", "new"): (9, 10),
}


def write_log(path, cells=CELLS, with_condition=False):
    rows = []
    for (task, policy), (k, n) in cells.items():
        for i in range(n):
            row = {"task": task, "policy": policy, "success": int(i < k)}
            if with_condition:
                row["condition"] = f"c{i}"
            rows.append(row)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_compare_by_task_per_task_fisher_and_pooled(tmp_path, capsys):
    log = write_log(tmp_path / "log.csv")
    rc, out, err = run(
        capsys, "compare", log, "--a", "base", "--b", "new", "--by", "task", "--json"
    )
    assert rc == 0, err
    data = json.loads(out)
    tasks = {t["task"]: t for t in data["tasks"]}
    assert set(tasks) == {"pick", "place", "pour"}
    raw = []
    for name, t in tasks.items():
        ka, na = CELLS[(name, "base")]
        kb, nb = CELLS[(name, "new")]
        want = fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue
        assert t["test"] == "fisher"
        assert t["pvalue"] == pytest.approx(want, rel=1e-9)
        raw.append((t["pvalue"], t["p_holm"]))
    # Holm by hand
    ps = sorted(p for p, _ in raw)
    holm = [min(1, max((3 - i) * ps[i] for i in range(j + 1))) for j in range(3)]
    assert sorted(h for _, h in raw) == pytest.approx(holm, rel=1e-12)
    agg = data["aggregates"]
    assert agg["new"]["micro"] == pytest.approx((17 + 38 + 9) / 80)
    assert agg["base"]["macro"] == pytest.approx((12 / 20 + 30 / 50 + 5 / 10) / 3)
    ex = data["exact_stratified"]
    assert ex["statistic"] == 17 + 38 + 9 and 0 < ex["pvalue"] < 1
    assert (
        ex["odds_ratio"] > 1 and ex["odds_ratio_ci"][0] < ex["odds_ratio"] < ex["odds_ratio_ci"][1]
    )


def test_compare_by_task_has_one_column_per_correction(tmp_path, capsys):
    # the JSON keys p_<id>, the table's headers and the --by help follow the registry, and
    # each column is statsmodels' multipletests with the registry's name
    log = write_log(tmp_path / "log.csv")
    argv = ("compare", log, "--a", "base", "--b", "new", "--by", "task")
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    tasks = json.loads(out)["tasks"]
    raw = [t["pvalue"] for t in tasks]
    for m, c in CORRECTIONS.items():
        want = multipletests(raw, method=c.statsmodels)[1]
        assert [t[f"p_{m}"] for t in tasks] == pytest.approx(want, rel=1e-12)
    keys = list(tasks[0])
    assert keys[keys.index("pvalue") + 1 :] == [f"p_{m}" for m in CORRECTIONS]
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    header = next(line for line in out.splitlines() if line.startswith("task "))
    assert header.split()[-len(CORRECTIONS) - 1 :] == [
        "p",
        *(c.short for c in CORRECTIONS.values()),
    ]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    by = next(a for a in sub.choices["compare"]._actions if a.dest == "by")
    assert "/".join(c.short for c in CORRECTIONS.values()) + "-adjusted p" in by.help


def test_compare_by_task_text_uses_mcnemar_when_paired(tmp_path, capsys):
    log = write_log(tmp_path / "log.csv", with_condition=True)
    rc, out, err = run(capsys, "compare", log, "--a", "base", "--b", "new", "--by", "task")
    assert rc == 0, err
    # pour: base succeeds on c0..c4, new on c0..c8 -> A only 0, B only 4
    line = next(x for x in out.splitlines() if x.startswith("pour"))
    assert "McNemar 0:4" in line
    assert f"{binomtest(0, 4).pvalue:.3f}" in line
    assert "exact stratified" in out and "Breslow-Day" in out and "verdict:" in out


def test_compare_by_task_bad_inputs_one_line_exit_2(tmp_path, capsys):
    cells = dict(CELLS)
    del cells[("place", "new")]
    log = write_log(tmp_path / "gap.csv", cells)
    rc, out, err = run(capsys, "compare", log, "--a", "base", "--b", "new", "--by", "task")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1
    assert "policy 'new' has no trials in task 'place'" in err
    full = write_log(tmp_path / "log.csv")
    rc, _, err = run(capsys, "compare", full, "--a", "base", "--b", "nope", "--by", "task")
    assert rc == 2 and "'nope' is not a policy" in err
    rc, _, err = run(
        capsys, "compare", full, "--a", "base", "--b", "new", "--by", "task", "--task", "pick"
    )
    assert rc == 2 and "do not go together" in err
    notask = tmp_path / "notask.csv"
    pd.DataFrame({"policy": ["a", "b"], "success": [1, 0]}).to_csv(notask, index=False)
    rc, _, err = run(capsys, "compare", notask, "--a", "a", "--b", "b", "--by", "task")
    assert rc == 2 and "no task column" in err and err.count("\n") == 1


def lerobot_multitask(path, successes_by_task):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "per_task": [
                    {"task_group": "libero_spatial", "task_id": i, "metrics": {"successes": s}}
                    for i, s in enumerate(successes_by_task)
                ]
            }
        )
    )
    return path


def test_lerobot_files_of_several_tasks_at_once(tmp_path, capsys):
    a = lerobot_multitask(tmp_path / "act" / "eval_info.json", [[1, 0, 1, 1], [0, 0, 1, 0]])
    b = lerobot_multitask(tmp_path / "pi0" / "eval_info.json", [[1, 1, 1, 1], [1, 0, 1, 1]])
    rc, out, err = run(
        capsys, "compare", a, b, "--a", "act", "--b", "pi0", "--by", "task", "--json"
    )
    assert rc == 0, err
    data = json.loads(out)
    assert [t["task"] for t in data["tasks"]] == ["libero_spatial:0", "libero_spatial:1"]
    assert data["tasks"][1]["k_a"] == 1 and data["tasks"][1]["k_b"] == 3
    # single-task LeRobot files at TASK/POLICY/eval_info.json
    for task in ("drawer", "cup"):
        for pol, succ in (("act", [1, 0, 0, 1]), ("pi0", [1, 1, 1, 0])):
            p = tmp_path / "runs" / task / pol / "eval_info.json"
            p.parent.mkdir(parents=True)
            p.write_text(
                json.dumps({"per_episode": [{"success": s, "seed": i} for i, s in enumerate(succ)]})
            )
    files = sorted((tmp_path / "runs").glob("*/*/eval_info.json"))
    rc, out, err = run(capsys, "rank", *files, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["tasks"] == ["cup", "drawer"]
    assert [r["policy"] for r in data["ranking"]] == ["pi0", "act"]


def test_rank_letters_plot_and_errors(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = []
    for task, base in (("t1", 0.5), ("t2", 0.7)):
        for pol, d in (("p1", 0.0), ("p2", 0.02), ("p3", 0.45)):
            for seed in range(3):
                for _ in range(60):
                    rows.append(
                        {
                            "task": task,
                            "policy": pol,
                            "seed": seed,
                            "success": int(rng.random() < min(base + d, 0.99)),
                        }
                    )
    log = tmp_path / "three.csv"
    pd.DataFrame(rows).to_csv(log, index=False)
    png = tmp_path / "rank.png"
    rc, out, err = run(capsys, "rank", log, "--plot", png, "--bootstrap-reps", 300)
    assert rc == 0, err
    lines = {x.split()[1]: x for x in out.splitlines() if x.strip()[:1].isdigit()}
    assert lines["p3"].split()[2] == "a"  # best, on its own letter
    assert lines["p1"].split()[2] == lines["p2"].split()[2] == "b"
    assert "IQM" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    rc, out, err = run(capsys, "rank", log, "--json", "--bootstrap-reps", 300)
    data = json.loads(out)
    p12 = next(p for p in data["pairs"] if {p["first"], p["second"]} == {"p1", "p2"})
    assert not p12["differ"] and 0 <= p12["pvalue_holm"] <= 1
    assert math.isfinite(data["ranking"][0]["iqm"])
    # errors: one policy, a policy missing on a task, a bad plot suffix
    one = tmp_path / "one.csv"
    pd.DataFrame({"task": ["t"], "policy": ["x"], "success": [1]}).to_csv(one, index=False)
    rc, _, err = run(capsys, "rank", one)
    assert rc == 2 and "at least 2 policies" in err and err.count("\n") == 1
    df = pd.DataFrame(rows)
    gap = tmp_path / "gap.csv"
    df[~((df.task == "t2") & (df.policy == "p1"))].to_csv(gap, index=False)
    rc, _, err = run(capsys, "rank", gap)
    assert rc == 2 and "policy 'p1' has no trials in task 't2'" in err
    rc, _, err = run(capsys, "rank", log, "--plot", tmp_path / "x.gif")
    assert rc == 2 and "--plot must end in" in err
