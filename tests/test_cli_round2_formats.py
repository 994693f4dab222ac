"""Issue 45 (the ``evalsim`` command, round 2), items 9, 11, 12, 17, 23 and 24 (counts
tables): what the readers take in, and what they refuse or count once.

Each test failed before its fix. Numbers are checked against SciPy / statsmodels, never
against the command's own intermediate values.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from cli_run import run, run_json
from scipy import stats
from statsmodels.stats.proportion import proportion_confint


def _write(path, header: str, rows) -> str:
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return str(path)


def _one_line_error(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (out, err)
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


#: 45 pairs: 9 A-only, 2 B-only, 20 both, 14 neither (exact McNemar p of 9 vs 2 = 0.065)
_OUTCOMES = [(1, 0)] * 9 + [(0, 1)] * 2 + [(1, 1)] * 20 + [(0, 0)] * 14


def _paired_rows(outcomes=_OUTCOMES, task="pick"):
    rows = []
    for i, (sa, sb) in enumerate(outcomes):
        rows += [("A", task, f"p{i}", sa), ("B", task, f"p{i}", sb)]
    return rows


def _paired_log(tmp_path, rows, name="log.csv", header="policy,task,condition,success") -> str:
    return _write(tmp_path / name, header, rows)


def _mcnemar(outcomes=_OUTCOMES) -> float:
    a_only = sum(1 for sa, sb in outcomes if sa and not sb)
    b_only = sum(1 for sa, sb in outcomes if sb and not sa)
    return stats.binomtest(b_only, a_only + b_only, 0.5).pvalue


#: Every subcommand that reads a trial log, as (argv before the files, argv after them).
def _subcommands(tmp_path, capsys):
    rc, _, err = run(capsys, "sequential", "design", "--out", tmp_path / "d.json", "--n-max", "60")
    assert rc == 0, err
    return {
        "summarize": (["summarize"], []),
        "compare": (["compare"], ["--a", "A", "--b", "B"]),
        "compare --by task": (
            ["compare"],
            ["--a", "A", "--b", "B", "--by", "task", "--bootstrap-reps", "50"],
        ),
        "rank": (["rank"], ["--bootstrap-reps", "50"]),
        "sequential check": (
            ["sequential", "check", tmp_path / "d.json"],
            ["--a", "A", "--b", "B"],
        ),
    }


SUBCOMMANDS = ["summarize", "compare", "compare --by task", "rank", "sequential check"]


# --------------------------------------------------------------------------- item 9


def test_item09_rank_refuses_same_file_twice(tmp_path, capsys):
    log = _paired_log(tmp_path, _paired_rows())
    err = _one_line_error(capsys, "rank", log, log)
    assert "same file" in err


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_item09_csv_with_its_own_parquet_copy_is_refused(tmp_path, capsys, sub):
    csv = _write(
        tmp_path / "log.csv", "policy,task,success", [r[:2] + r[3:] for r in _paired_rows()]
    )
    pq = tmp_path / "log.parquet"
    pd.read_csv(csv).to_parquet(pq)
    before, after = _subcommands(tmp_path, capsys)[sub]
    err = _one_line_error(capsys, *before, csv, pq, *after)
    assert "log.parquet" in err and "same trials" in err


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_item09_exact_duplicate_rows_are_refused_in_every_subcommand(tmp_path, capsys, sub):
    rows = _paired_rows()
    log = _paired_log(tmp_path, rows + rows)  # every row twice
    before, after = _subcommands(tmp_path, capsys)[sub]
    err = _one_line_error(capsys, *before, log, *after)
    assert "data row 91" in err and "data row 1 " in err and "--duplicates" in err
    # counted once under the stated flag: the analysis of the 45 pairs
    rc, text, err = run(capsys, *before, log, *after, "--duplicates", "once")
    assert rc == 0, err
    assert "counted once (--duplicates once)" in " ".join(text.split())


def test_item09_rows_all_twice_counted_once_gives_the_paired_analysis(tmp_path, capsys):
    rows = _paired_rows()
    log = _paired_log(tmp_path, rows + rows)
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--duplicates", "once")
    assert out["paired"] is True and out["n_pairs"] == 45
    assert out["pvalue"] == pytest.approx(_mcnemar(), rel=1e-12)
    assert any("90 row(s)" in n and "counted once" in n for n in out["notes"]), out["notes"]


def test_item09_one_duplicated_row_is_named_not_silently_unpaired(tmp_path, capsys):
    rows = _paired_rows()
    log = _paired_log(tmp_path, [*rows, rows[10]])
    err = _one_line_error(capsys, "compare", log, "--a", "A", "--b", "B")
    assert "data row 91 repeats data row 11" in err
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--duplicates", "once")
    assert out["paired"] is True and out["n_pairs"] == 45
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--duplicates", "keep")
    assert out["paired"] is False and any("--duplicates keep" in n for n in out["notes"])


def test_item09_logs_that_cannot_tell_trials_apart_are_not_checked(tmp_path, capsys):
    # policy and success only: equal rows are different trials, as always
    log = _write(tmp_path / "plain.csv", "policy,success", [("A", 1)] * 5 + [("B", 0)] * 5)
    out = run_json(capsys, "summarize", log)
    assert [r["n"] for r in out["by_policy"]] == [5, 5]


# --------------------------------------------------------------------------- item 11


def _eval_info(path, info) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info))
    return str(path)


def test_item11_eval_info_with_per_episode_and_per_task_says_which(tmp_path, capsys):
    per_task = [
        {"task_group": "g", "task_id": 0, "metrics": {"successes": [True, False, True]}},
        {"task_group": "g", "task_id": 1, "metrics": {"successes": [True, True]}},
    ]
    per_episode = [{"success": s} for s in (True, False, True, True, True)]
    both = _eval_info(
        tmp_path / "pol" / "eval_info.json", {"per_task": per_task, "per_episode": per_episode}
    )
    out = run_json(capsys, "summarize", both)
    assert out["by_policy"][0]["k"] == 4 and out["by_policy"][0]["n"] == 5
    assert {r["task"] for r in out["by_group"]} == {"g:0", "g:1"}  # per_task was read
    assert any("per_task" in w and "per_episode" in w for w in out["warnings"]), out["warnings"]
    bad = _eval_info(
        tmp_path / "bad" / "eval_info.json",
        {"per_task": per_task, "per_episode": per_episode[:3]},
    )
    err = _one_line_error(capsys, "summarize", bad)
    assert "per_episode" in err and "per_task" in err


# --------------------------------------------------------------------------- item 12


def _dated_log(tmp_path, stamp, name):
    """A drifting session: A's success falls over 28 days, one trial per day and policy."""
    rows = []
    for day in range(1, 29):
        rows.append(("A", stamp(day), int(day <= 14 or day % 5 == 0)))
        rows.append(("B", stamp(day), int(day % 3 != 0)))
    return _write(tmp_path / name, "policy,when,success", rows)


def test_item12_day_first_dates_are_detected_over_the_whole_column(tmp_path, capsys):
    iso = _dated_log(tmp_path, lambda d: f"2026-02-{d:02d}T09:00", "iso.csv")
    eu = _dated_log(tmp_path, lambda d: f"{d:02d}/02/2026 09:00", "eu.csv")
    ref = run_json(capsys, "summarize", iso, "--order", "when")["independence"]["groups"]
    got = run_json(capsys, "summarize", eu, "--order", "when")["independence"]["groups"]
    assert ref[0]["dependent"] is True  # the drift is there
    assert [g["trend"]["pvalue"] for g in got] == [g["trend"]["pvalue"] for g in ref]
    assert [g["dependent"] for g in got] == [g["dependent"] for g in ref]


def test_item12_ambiguous_dates_are_refused_or_read_with_dayfirst(tmp_path, capsys):
    iso = _dated_log(tmp_path, lambda d: f"2026-{1 + (d - 1) % 12:02d}-{1 + (d - 1) // 12:02d}",
                     "iso.csv")  # fmt: skip
    amb = _dated_log(tmp_path, lambda d: f"{1 + (d - 1) // 12:02d}/{1 + (d - 1) % 12:02d}/2026",
                     "amb.csv")  # fmt: skip
    err = _one_line_error(capsys, "summarize", amb, "--order", "when")
    assert "--dayfirst" in err and "ambiguous" in err
    ref = run_json(capsys, "summarize", iso, "--order", "when")["independence"]["groups"]
    got = run_json(capsys, "summarize", amb, "--order", "when", "--dayfirst")
    got = got["independence"]["groups"]
    assert [g["trend"]["pvalue"] for g in got] == [g["trend"]["pvalue"] for g in ref]
    mixed = _write(
        tmp_path / "mixed.csv",
        "policy,when,success",
        [
            ("A", "13/02/2026", 1),
            ("A", "02/14/2026", 0),
            ("A", "01/02/2026", 1),
            ("A", "03/03/2026", 0),
        ],
    )
    err = _one_line_error(capsys, "summarize", mixed, "--order", "when")
    assert "13/02/2026" in err and "02/14/2026" in err


# --------------------------------------------------------------------------- item 17


def _lab_log(tmp_path, name="lab.csv"):
    rows = []
    for i, (sa, sb) in enumerate(_OUTCOMES):
        rows.append(("A", "pick", f"pose{i}", sa, "" if sa else "slip"))
        rows.append(("B", "pick", f"pose{i}", sb, "" if sb else "drop"))
    return _write(tmp_path / name, "policy,task,pose_id,success,failure_type", rows)


def test_item17_column_mapping_pairs_and_keeps_failures(tmp_path, capsys):
    log = _lab_log(tmp_path)
    cols = "condition=pose_id,failure=failure_type"
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B", "--columns", cols)
    assert out["paired"] is True and out["n_pairs"] == 45
    assert out["pvalue"] == pytest.approx(_mcnemar(), rel=1e-12)
    out = run_json(capsys, "summarize", log, "--columns", cols)
    assert out["failures"] == {"A": {"slip": 14 + 2}, "B": {"drop": 14 + 9}}


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_item17_columns_accepted_by_every_subcommand(tmp_path, capsys, sub):
    log = _lab_log(tmp_path)
    before, after = _subcommands(tmp_path, capsys)[sub]
    rc, _, err = run(capsys, *before, log, *after, "--columns", "condition=pose_id")
    assert rc == 0, err
    err = _one_line_error(capsys, *before, log, *after, "--columns", "condition=nope")
    assert "nope" in err and "pose_id" in err


def test_item17_hint_when_a_likely_condition_column_exists(tmp_path, capsys):
    log = _lab_log(tmp_path)
    out = run_json(capsys, "compare", log, "--a", "A", "--b", "B")
    assert out["paired"] is False
    assert any("--columns condition=pose_id" in n for n in out["notes"]), out["notes"]
    err = _one_line_error(capsys, "summarize", log, "--columns", "condition")
    assert "ROLE=COLUMN" in err


# --------------------------------------------------------------------------- item 23


def _wilson_pct(k, n):
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return [100 * lo, 100 * hi]


def _lerobot_today(successes_by_task, ci_override=None, group_override=None, seed_base=0):
    """eval_info.json as lerobot-eval writes it since PR #4628."""
    per_task, groups = [], {}
    for (group, tid), succ in successes_by_task.items():
        k, n = sum(succ), len(succ)
        block = {
            "n_episodes": n,
            "n_success": k,
            "pc_success": 100 * k / n if n else float("nan"),
            "pc_success_ci95": _wilson_pct(k, n) if n else [float("nan")] * 2,
        }
        if ci_override and (group, tid) in ci_override:
            block["pc_success_ci95"] = ci_override[(group, tid)]
        per_task.append(
            {"task_group": group, "task_id": tid, "metrics": {"successes": succ}, **block}
        )
        g = groups.setdefault(group, {"n_episodes": 0, "n_success": 0})
        g["n_episodes"] += n
        g["n_success"] += k
    for g in groups.values():
        g["pc_success"] = 100 * g["n_success"] / g["n_episodes"] if g["n_episodes"] else None
    if group_override:
        groups.update(group_override)
    k = sum(g["n_success"] for g in groups.values())
    n = sum(g["n_episodes"] for g in groups.values())
    overall = {"n_episodes": n, "n_success": k, "pc_success": 100 * k / n if n else float("nan")}
    return {"per_task": per_task, "per_group": groups, "overall": overall}


_SUITE = {
    ("libero_spatial", 0): [True] * 7 + [False] * 3,
    ("libero_spatial", 1): [True] * 4 + [False] * 6,
    ("libero_object", 0): [True] * 9 + [False],
    ("libero_object", 1): [],
}


def test_item23_lerobot_today_is_read_and_checked(tmp_path, capsys):
    path = _eval_info(tmp_path / "smolvla" / "eval_info.json", _lerobot_today(_SUITE))
    out = run_json(capsys, "summarize", path)
    assert (out["by_policy"][0]["k"], out["by_policy"][0]["n"]) == (20, 30)
    warnings = out["warnings"]
    assert any("libero_object:1" in w and "no episodes" in w for w in warnings), warnings
    assert not any("pc_success_ci95" in w for w in warnings), warnings
    groups = {g["group"]: (g["k"], g["n"]) for g in out["task_groups"]}
    assert groups == {"libero_spatial": (11, 20), "libero_object": (9, 10)}


def test_item23_ci95_and_group_disagreements_are_said(tmp_path, capsys):
    info = _lerobot_today(
        _SUITE,
        ci_override={("libero_spatial", 1): [20.0, 70.0]},
        group_override={"libero_object": {"n_episodes": 12, "n_success": 9, "pc_success": 75.0}},
    )
    path = _eval_info(tmp_path / "smolvla" / "eval_info.json", info)
    warnings = run_json(capsys, "summarize", path)["warnings"]
    lo, hi = _wilson_pct(4, 10)
    ci = [w for w in warnings if "pc_success_ci95" in w]
    assert len(ci) == 1 and "libero_spatial:1" in ci[0] and f"[{lo:.1f}, {hi:.1f}]" in ci[0]
    assert any("per_group" in w and "libero_object" in w for w in warnings), warnings


def test_item23_empty_suite_bare_nan_is_one_line(tmp_path, capsys):
    path = tmp_path / "empty" / "eval_info.json"
    path.parent.mkdir()
    path.write_text(
        '{"per_task": [{"task_group": "g", "task_id": 0, "metrics": {"successes": []}, '
        '"pc_success": NaN}], "per_group": {"g": {"pc_success": NaN}}, '
        '"overall": {"n_episodes": 0, "pc_success": NaN}}'
    )
    err = _one_line_error(capsys, "summarize", str(path))
    assert "no episodes" in err


def test_item23_pair_by_episode_index_only_behind_the_flag(tmp_path, capsys):
    rng = np.random.default_rng(11)
    base = {key: list(rng.random(15) < 0.5) for key in (("g", 0), ("g", 1))}
    new = {key: [bool(s or rng.random() < 0.4) for s in v] for key, v in base.items()}
    base = {k: [bool(x) for x in v] for k, v in base.items()}
    a = _eval_info(tmp_path / "base" / "eval_info.json", _lerobot_today(base))
    b = _eval_info(tmp_path / "new" / "eval_info.json", _lerobot_today(new))
    out = run_json(capsys, "compare", a, b, "--a", "base", "--b", "new")
    assert out["paired"] is False
    out = run_json(capsys, "compare", a, b, "--a", "base", "--b", "new", "--pair-episodes")
    assert out["paired"] is True and out["n_pairs"] == 30
    pairs = [(x, y) for key in base for x, y in zip(base[key], new[key], strict=True)]
    assert out["pvalue"] == pytest.approx(_mcnemar(pairs), rel=1e-12)
    assert any("same lerobot-eval --seed" in n for n in out["notes"]), out["notes"]
    rc, text, _ = run(capsys, "compare", "--help")
    assert "--pair-episodes" in text and "same" in " ".join(text.split())


# --------------------------------------------------------------------------- item 24 (tables)


def _counts_table(tmp_path, with_task=True):
    if with_task:
        rows = [("A", "t1", 17, 20), ("A", "t2", 12, 20), ("B", "t1", 14, 20), ("B", "t2", 5, 20)]
        return _write(tmp_path / "counts.csv", "policy,task,successes,trials", rows)
    rows = [("A", 17, 20), ("B", 14, 20)]
    return _write(tmp_path / "counts.csv", "policy,successes,trials", rows)


def test_item24_counts_table_in_summarize(tmp_path, capsys):
    out = run_json(capsys, "summarize", _counts_table(tmp_path))
    got = {r["policy"]: (r["k"], r["n"]) for r in out["by_policy"]}
    assert got == {"A": (29, 40), "B": (19, 40)}
    a = out["by_policy"][0]
    lo, hi = proportion_confint(29, 40, alpha=0.05, method="wilson")
    assert a["wilson"] == pytest.approx([lo, hi], abs=1e-12)


def test_item24_counts_table_in_compare_is_unpaired_and_says_so(tmp_path, capsys):
    out = run_json(capsys, "compare", _counts_table(tmp_path, False), "--a", "A", "--b", "B")
    assert out["paired"] is False
    assert out["pvalue"] == pytest.approx(stats.fisher_exact([[17, 3], [14, 6]]).pvalue)
    assert any("counts table" in n and "unpaired" in n for n in out["notes"]), out["notes"]


def test_item24_counts_table_in_rank(tmp_path, capsys):
    out = run_json(capsys, "rank", _counts_table(tmp_path), "--bootstrap-reps", "50")
    got = {r["policy"]: (r["k"], r["n"]) for r in out["ranking"]}
    assert got == {"A": (29, 40), "B": (19, 40)}
    assert out["tasks"] == ["t1", "t2"]


def test_item24_bad_counts_table_one_line(tmp_path, capsys):
    bad = _write(tmp_path / "bad.csv", "policy,successes,trials", [("A", 21, 20)])
    err = _one_line_error(capsys, "summarize", bad)
    assert "data row 1" in err and "successes" in err


def _simreal_logs(tmp_path, real_rows, header="policy,condition,success"):
    rng = np.random.default_rng(7)
    real = _write(tmp_path / "real.csv", header, real_rows)
    sim_rows = [("pi", f"c{i}", int(rng.random() < 0.8)) for i in range(20)]
    sim_rows += [("pi", f"s{j}", int(rng.random() < 0.8)) for j in range(400)]
    sim = _write(tmp_path / "sim.csv", "policy,condition,success", sim_rows)
    return real, sim


def test_item09_item17_simreal_reads_with_the_same_flags(tmp_path, capsys):
    rows = [("pi", f"c{i}", int(i % 4 != 0)) for i in range(20)]
    real, sim = _simreal_logs(tmp_path, [*rows, rows[3]])
    err = _one_line_error(capsys, "simreal", real, sim)
    assert "data row 21 repeats data row 4" in err
    rc, _, err = run(capsys, "simreal", real, sim, "--duplicates", "once")
    assert rc == 0, err
    real, sim = _simreal_logs(tmp_path, rows, header="policy,pose_id,success")
    rc, _, err = run(capsys, "simreal", real, sim, "--columns", "condition=pose_id")
    assert rc == 0, err


def test_item09_a_trial_repeated_in_another_file_is_refused(tmp_path, capsys):
    one = [("A", t, t % 2) for t in range(1, 21)] + [("B", t, t % 3 == 0) for t in range(21, 41)]
    two = [("A", t, t % 2) for t in range(41, 61)] + [("B", t, t % 3 == 0) for t in range(61, 81)]
    s1 = _write(tmp_path / "s1.csv", "policy,trial,success", [(p, t, int(s)) for p, t, s in one])
    rows2 = [(p, t, int(s)) for p, t, s in two] + [("A", 7, 1)]  # trial 7 again
    s2 = _write(tmp_path / "s2.csv", "policy,trial,success", rows2)
    err = _one_line_error(capsys, "summarize", s1, s2)
    assert "s2.csv: data row 41 repeats data row 7 of" in err and "s1.csv" in err
    out = run_json(capsys, "summarize", s1, s2, "--duplicates", "once")
    assert sum(r["n"] for r in out["by_policy"]) == 80
    out = run_json(capsys, "summarize", s1, s2, "--duplicates", "keep")
    assert sum(r["n"] for r in out["by_policy"]) == 81
    # distinct trials in two files: no complaint, and the trial column is not kept
    s3 = _write(tmp_path / "s3.csv", "policy,trial,success", [(p, t, int(s)) for p, t, s in two])
    out = run_json(capsys, "compare", s1, s3, "--a", "A", "--b", "B")
    assert (out["n_a"], out["n_b"]) == (40, 40)
