"""The evalsim command at lab grade: decision rules, paired intervals, stacked logs, output
formats. References: SciPy (binomtest, fisher_exact) and Tango's interval by plain bisection
(tests/test_paired.py); counts are written out by hand here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from cli_run import run, run_json
from scipy import stats


def bad(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == "" and "Traceback" not in err and err.count("\n") == 1, err
    return err


def paired_log(path: Path, outcomes, extra=()) -> Path:
    rows = []
    for i, (a, b) in enumerate(outcomes):
        rows.append({"policy": "A", "condition": f"c{i}", "success": a})
        rows.append({"policy": "B", "condition": f"c{i}", "success": b})
    rows.extend(extra)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# ----------------------------------------------------------------------- the two verdict bugs
def test_bug1_winner_is_declared_with_the_paired_interval(tmp_path, capsys):
    # 60 both succeed, 7 only B, 0 only A, 33 both fail: exact McNemar p = 1/64.
    outcomes = [(1, 1)] * 60 + [(0, 1)] * 7 + [(0, 0)] * 33
    path = paired_log(tmp_path / "log.csv", outcomes)
    out = run_json(capsys, "compare", path, "--a", "A", "--b", "B")
    assert out["pvalue"] == pytest.approx(stats.binomtest(7, 7, 0.5).pvalue, rel=1e-12)
    assert out["diff_ci_method"] == "tango" and out["decision"] == "B"
    lo, hi = out["diff_ci"]
    assert 0 < lo < 0.07 < hi  # B - A = 7 points; the interval excludes 0
    # The unpaired Newcombe interval of the old verdict held 0 ("between -6 and 20").
    assert out["paired_intervals"]["newcombe"][0] > 0
    assert out["verdict"].startswith("B beats A: 67% vs 60% on 100 paired conditions")
    assert f"[{100 * lo:+.1f}, {100 * hi:+.1f}]" in out["verdict"]


def test_bug2_verdict_test_and_interval_use_the_same_trials(tmp_path, capsys):
    # B wins 8-0 on 20 pairs; 100 extra A successes on conditions B never ran.
    outcomes = [(1, 1)] * 6 + [(0, 1)] * 8 + [(0, 0)] * 6
    extra = [{"policy": "A", "condition": f"x{i}", "success": 1} for i in range(100)]
    path = paired_log(tmp_path / "log.csv", outcomes, extra)
    out = run_json(capsys, "compare", path, "--a", "A", "--b", "B")
    assert (out["k_a"], out["n_a"], out["k_b"], out["n_b"]) == (6, 20, 14, 20)
    assert (out["k_a_all"], out["n_a_all"]) == (106, 120)
    assert out["decision"] == "B"
    assert out["verdict"].startswith("B beats A: 70% vs 30% on 20 paired conditions")
    assert out["diff"] == pytest.approx(0.4) and out["diff_ci"][0] > 0
    assert any("100 trial(s) without a partner" in n for n in out["notes"])


def test_test_and_interval_disagreeing_gives_no_verdict(tmp_path, capsys):
    outcomes = [(1, 1)] * 20 + [(1, 0)] * 2 + [(0, 1)] * 9 + [(0, 0)] * 9
    out = run_json(capsys, "compare", paired_log(tmp_path / "l.csv", outcomes), "--a", "A",
                   "--b", "B")  # fmt: skip
    assert out["reject"] is False and out["interval_agrees"] is True
    assert out["decision"] is None and out["verdict"].startswith("no verdict")


# ----------------------------------------------------------------------- stated alternatives
@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_paired_and_unpaired(tmp_path, capsys, alternative):
    outcomes = [(1, 1)] * 10 + [(0, 1)] * 6 + [(1, 0)] * 1 + [(0, 0)] * 3
    path = paired_log(tmp_path / "log.csv", outcomes)
    out = run_json(capsys, "compare", path, "--a", "A", "--b", "B", "--alternative", alternative)
    want = stats.binomtest(6, 7, 0.5, alternative=alternative).pvalue
    assert out["pvalue"] == pytest.approx(want, rel=1e-12)
    assert out["alternative"] == alternative
    un = run_json(capsys, "compare", path, "--a", "A", "--b", "B", "--alternative", alternative,
                  "--unpaired")  # fmt: skip
    table = [[16, 20 - 16], [11, 20 - 11]]  # B first
    want = stats.fisher_exact(table, alternative=alternative).pvalue
    assert un["pvalue"] == pytest.approx(want, rel=1e-10)
    if alternative == "less":
        assert out["decision"] is None and "B is not shown worse than A" in out["verdict"]
        assert out["diff_ci"][0] == -1.0


def test_rule_and_secondary_labels_in_text(tmp_path, capsys):
    outcomes = [(1, 1)] * 10 + [(0, 1)] * 6 + [(1, 0)] * 1 + [(0, 0)] * 3
    rc, text, _ = run(capsys, "compare", paired_log(tmp_path / "l.csv", outcomes), "--a", "A",
                      "--b", "B", "--alpha", "0.1")  # fmt: skip
    assert rc == 0
    assert text.startswith("decision rule (stated before the data): exact McNemar test")
    assert "reject when p < 0.1" in " ".join(text.split())
    assert "McNemar mid-p (paired)" in text and "secondary" in text


# ----------------------------------------------------------------------- output formats
def test_latex_markdown_json_formats(tmp_path, capsys):
    path = paired_log(tmp_path / "log.csv", [(1, 1)] * 5 + [(0, 1)] * 3 + [(0, 0)] * 2)
    rc, tex, _ = run(capsys, "compare", path, "--a", "A", "--b", "B", "--format", "latex")
    assert rc == 0
    for token in ("\\begin{tabular}", "\\toprule", "\\midrule", "\\bottomrule", "\\end{tabular}"):
        assert token in tex
    assert "A (A) & 5/10 & 50.0\\% \\\\" in tex
    rc, md, _ = run(capsys, "summarize", path, "--format", "markdown")
    assert "| policy | k/n |" in md and "|:---|---:|" in md
    rc, js, _ = run(capsys, "summarize", path, "--format", "json")
    assert json.loads(js)["n_trials"] == 20
    assert "disagree" in bad(capsys, "summarize", path, "--json", "--format", "latex")


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF")])
def test_plot_files(tmp_path, capsys, suffix, magic):
    path = paired_log(tmp_path / "log.csv", [(1, 1)] * 5 + [(0, 1)] * 3 + [(0, 0)] * 2)
    for cmd in (["summarize", path], ["compare", path, "--a", "A", "--b", "B"]):
        target = tmp_path / f"{cmd[0]}{suffix}"
        rc, _, err = run(capsys, *cmd, "--plot", target)
        assert rc == 0, err
        assert target.read_bytes()[:4] == magic
    assert ".png or .pdf" in bad(capsys, "summarize", path, "--plot", tmp_path / "x.svg")


def test_summarize_by_condition(tmp_path, capsys):
    outcomes = [(1, 0), (0, 0), (1, 1)]
    path = paired_log(tmp_path / "log.csv", outcomes)
    out = run_json(capsys, "summarize", path, "--by", "condition")
    assert out["by"]["column"] == "condition"
    cells = {r["value"]: r["policies"] for r in out["by"]["rows"]}
    assert cells["c0"] == {"A": {"k": 1, "n": 1}, "B": {"k": 0, "n": 1}}
    assert cells["c1"]["A"]["k"] == 0 and cells["c2"]["B"]["k"] == 1
    rc, text, _ = run(capsys, "summarize", path, "--by", "condition")
    assert "c1         0/1 x  0/1 x" in text
    assert "'nope' is not a column" in bad(capsys, "summarize", path, "--by", "nope")


# ----------------------------------------------------------------------- stacked logs
def _eval_info(folder: Path, wins, pc=None) -> Path:
    folder.mkdir(parents=True)
    info = {"per_episode": [{"success": bool(w), "seed": 100 + i} for i, w in enumerate(wins)]}
    if pc is not None:
        info["aggregated"] = {"pc_success": pc}
    (folder / "eval_info.json").write_text(json.dumps(info))
    return folder / "eval_info.json"


def test_two_eval_folders_need_labels(tmp_path, capsys):
    f1 = _eval_info(tmp_path / "run1" / "eval", [1, 1, 0, 1])
    f2 = _eval_info(tmp_path / "run2" / "eval", [0, 1, 0, 0])
    assert "PATH=NAME" in bad(capsys, "summarize", f1, f2)
    out = run_json(capsys, "compare", f"{f1}=act", f"{f2}=diffusion", "--a", "act", "--b",
                   "diffusion")  # fmt: skip
    assert out["paired"] and (out["k_a"], out["k_b"]) == (3, 1)


def test_csv_and_json_stack_without_false_warnings(tmp_path, capsys):
    csv = tmp_path / "log.csv"
    pd.DataFrame(
        [{"policy": "bc", "condition": str(100 + i), "success": s, "failure": f}
         for i, (s, f) in enumerate([(1, "none"), (0, "pushed"), (1, "none"), (0, "missed")])]
    ).to_csv(csv, index=False)  # fmt: skip
    js = _eval_info(tmp_path / "act", [1, 1, 1, 0])
    out = run_json(capsys, "summarize", csv, js)
    assert not any("failure mode" in w for w in out["warnings"])
    cmp = run_json(capsys, "compare", csv, js, "--a", "act", "--b", "bc")
    assert cmp["paired"] and cmp["n_pairs"] == 4


def test_file_without_conditions_makes_it_unpaired(tmp_path, capsys):
    csv = tmp_path / "nocond.csv"
    pd.DataFrame([{"policy": "bc", "success": s} for s in (1, 0, 1)]).to_csv(csv, index=False)
    js = _eval_info(tmp_path / "act", [1, 1, 0])
    out = run_json(capsys, "compare", csv, js, "--a", "act", "--b", "bc")
    assert out["paired"] is False
    assert any("nocond.csv has no condition column" in n for n in out["notes"])


def test_pc_success_case_and_blank_conditions(tmp_path, capsys):
    js = _eval_info(tmp_path / "act", [1, 1, 0, 0], pc=75.0)
    out = run_json(capsys, "summarize", js)
    assert any("pc_success = 75 but its 4 episodes give 50.0" in w for w in out["warnings"])
    csv = tmp_path / "case.csv"
    pd.DataFrame(
        [{"policy": p, "success": 1} for p in ("ACT", "act", "bc")]
    ).to_csv(csv, index=False)  # fmt: skip
    out = run_json(capsys, "summarize", csv)
    assert any("'ACT', 'act' differ only in case" in w for w in out["warnings"])
    blank = tmp_path / "blank.csv"
    blank.write_text("policy,condition,success\nA,c0,1\nA,,0\n")
    assert "condition is blank in data row 2" in bad(capsys, "summarize", blank)


# ----------------------------------------------------------------------- peek --paired
def test_peek_paired_equals_the_library(capsys):
    from evalsim.stats.sequential.peeking import sequential_mcnemar_probability

    out = run_json(capsys, "peek", "--n", "60", "--paired", "--discordance", "0.3")
    lib = sequential_mcnemar_probability(60, 0.15, 0.15, 0.05, "every")
    assert out["false_win_rate_exact"] == lib.false_win_rate
    assert out["false_win_rate_fixed"] == lib.fixed_rate
    assert "--discordance" in bad(capsys, "peek", "--n", "10", "--paired")
    assert "only with --paired" in bad(capsys, "peek", "--n", "10", "--discordance", "0.2")


# ------------------------------------------- walkthrough (docs/guide/cli.md), README example
def test_readme_walkthrough_is_a_real_run():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from readme_walkthrough import GUIDE, README, SECTIONS, run_command, walkthrough_blocks

    guide = walkthrough_blocks(GUIDE.read_text(encoding="utf-8"), SECTIONS[GUIDE])
    readme = walkthrough_blocks(README.read_text(encoding="utf-8"), SECTIONS[README])
    assert len(guide) >= 8
    assert len(readme) >= 1
    for command, printed in guide + readme:
        assert printed == run_command(command), command
