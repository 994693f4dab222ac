"""Issue 24, items 3-14 and 16: each test failed before its fix (one line, exit 2, no
traceback, no folder created, no silently wrong answer)."""

from __future__ import annotations

import json

import pytest
from cli_run import run, write_log

from evalsim import lesson
from evalsim.cli._common import _ci_pct, _p, _prob_pct, _pts


def _one_line_error(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def _log(tmp_path, name="log.csv", n=20, header="policy,success"):
    rows = [f"{'a' if i % 2 else 'b'},{i % 3 == 0:d}" for i in range(n)]
    path = tmp_path / name
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def _design(tmp_path, capsys, *extra, name="d.json"):
    out = tmp_path / name
    code, _, err = run(capsys, "sequential", "design", "--out", str(out), "--n-max", "100", *extra)
    assert code == 0, err
    return out


def test_item03_same_file_or_same_content_twice_is_refused(tmp_path, capsys):
    log = _log(tmp_path)
    err = _one_line_error(capsys, "compare", str(log), str(log), "--a", "a", "--b", "b")
    assert "same file" in err
    copy = tmp_path / "copy.csv"
    copy.write_bytes(log.read_bytes())
    err = _one_line_error(capsys, "summarize", str(log), str(copy))
    assert "same content" in err


def _paired_log(tmp_path, n, k_a, k_b):
    wins = {"A": k_a, "B": k_b}
    return write_log(
        tmp_path / "run.csv", {p: [i < k for i in range(n)] for p, k in wins.items()}, True
    )


def test_item04_sequential_check_interval_stays_within_100_points(tmp_path, capsys):
    design = _design(tmp_path, capsys)
    log = _paired_log(tmp_path, 12, 0, 12)  # B wins everything: the Wald end passes +100
    code, out, err = run(
        capsys, "sequential", "check", str(design), str(log), "--a", "A", "--b", "B", "--json"
    )
    assert code == 0, err
    lo, hi = json.loads(out)["interval_diff_b_minus_a"]
    assert -1.0 <= lo <= hi <= 1.0


def test_item05_trials_beyond_n_max_are_reported(tmp_path, capsys):
    design = _design(tmp_path, capsys)
    log = _paired_log(tmp_path, 180, 90, 95)
    code, out, err = run(
        capsys, "sequential", "check", str(design), str(log), "--a", "A", "--b", "B"
    )
    assert code == 0, err
    assert "80 trial(s) beyond the design's n_max = 100" in out


def test_item06_a_column_named_twice_is_refused(tmp_path, capsys):
    log = _log(tmp_path, header="policy,success,Success")
    err = _one_line_error(capsys, "summarize", str(log))
    assert "success more than once" in err


def test_item07_ignored_or_contradictory_sequential_flags_are_refused(tmp_path, capsys):
    out = str(tmp_path / "x.json")
    err = _one_line_error(capsys, "sequential", "design", "--out", out, "--rho", "2")
    assert "--rho" in err and "pocock" in err
    err = _one_line_error(capsys, "sequential", "design", "--out", out, "--d-max", "30")
    assert "--d-max" in err
    design = _design(tmp_path, capsys, "--kind", "paired", name="p.json")
    err = _one_line_error(
        capsys,
        "sequential",
        "oc",
        str(design),
        "--pa",
        ".5",
        "--pb",
        ".6",
        "--p10",
        ".1",
        "--p01",
        ".2",
    )
    assert "not both" in err
    assert not (tmp_path / "x.json").exists()


def test_item08_binary_device_and_oversized_logs_are_refused(tmp_path, capsys, monkeypatch):
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"policy,success\n" + b"\x00" * 4096)
    assert "NUL" in _one_line_error(capsys, "summarize", str(binary))
    link = tmp_path / "zero.csv"
    link.symlink_to("/dev/zero")
    assert "not a regular file" in _one_line_error(capsys, "summarize", str(link))
    sparse = tmp_path / "sparse.csv"
    with open(sparse, "wb") as fh:
        fh.write(b"policy,success\na,1\n")
        fh.truncate(2 * 2**30)  # 2 GiB, no blocks written
    err = _one_line_error(capsys, "summarize", str(sparse))
    assert "limit" in err and "MiB" in err


def test_item09_peek_large_n_is_bounded_and_plan_large_n_has_a_fast_path(capsys):
    assert "above the limit" in _one_line_error(capsys, "peek", "--n", "100000")
    code, out, err = run(capsys, "plan", "--p1", ".5", "--p2", ".7", "--n", "10000000", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["at_n_method"] == "normal approximation"
    assert data["power_at_n"] == pytest.approx(1.0)  # 20 points at 1e7 per arm


def test_item10_trials_needed_and_paired_n_max_are_bounded(tmp_path, capsys):
    with pytest.raises(ValueError, match="above the bound"):
        lesson.trials_needed(0.5, 1e-4)
    assert lesson.trials_needed(0.70, 0.05) == 320
    err = _one_line_error(
        capsys,
        "sequential",
        "design",
        "--kind",
        "paired",
        "--n-max",
        "1000000",
        "--out",
        str(tmp_path / "p.json"),
    )
    assert "paired limit" in err


def test_item11_design_out_existing_folder_is_one_line(tmp_path, capsys):
    err = _one_line_error(capsys, "sequential", "design", "--out", str(tmp_path))
    assert "is a folder" in err


def test_item12_no_command_creates_a_folder(tmp_path, capsys):
    design = _design(tmp_path, capsys)
    missing = tmp_path / "nonexistent"
    err = _one_line_error(capsys, "sequential", "sheet", str(design), "--out", str(missing / "x"))
    assert "does not exist" in err and not missing.exists()
    err = _one_line_error(capsys, "sequential", "design", "--out", str(missing / "d.json"))
    assert not missing.exists()


def test_item13_messages_agree(tmp_path, capsys):
    assert "must be >= 1, got -5" in _one_line_error(capsys, "peek", "--n", "-5")
    assert "must be >= 1, got 0" in _one_line_error(capsys, "peek", "--n", "0")
    bad = _log(tmp_path)
    bad.write_text("policy,success\na,maybe\n")
    assert "yes/no" in _one_line_error(capsys, "summarize", str(bad))
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "eval_info.json").write_text(json.dumps({"per_episode": []}))
    err = _one_line_error(capsys, "summarize", str(folder / "eval_info.json"))
    assert "no episodes" in err and "header" not in err


def test_item14_large_n_display_never_rounds_to_zero_or_certainty(tmp_path, capsys):
    assert _pts(0.0004) == "0.04 pts" and _pts(0.1) == "10 pts"
    assert _ci_pct(0.4999, 0.5001) == "[49.99, 50.01]"
    assert _p(0.0) == "< 1e-300" and _p(1e-5) == "1e-05"
    assert _prob_pct(0.99999) == "> 99.9%" and _prob_pct(0.5) == "50.0%"
    log = tmp_path / "one.csv"
    log.write_text("policy,success\n" + "a,1\na,0\n" * 2)
    code, out, _ = run(capsys, "summarize", str(log))
    # the line wraps where the log's path makes it long: compare with whitespace collapsed
    assert code == 0 and "4 trials, 1 policy (" in " ".join(out.split())


def test_item16_lerobot_task_names_are_used_when_the_file_has_them(tmp_path, capsys):
    folder = tmp_path / "act"
    folder.mkdir()
    tasks = [
        {"task_group": "so101", "task_id": i, "task": name, "metrics": {"successes": [1, 0, 1]}}
        for i, name in enumerate(["pick cube", "stack", "push", "open drawer"])
    ]
    path = folder / "eval_info.json"
    path.write_text(json.dumps({"per_task": tasks}))
    code, out, err = run(capsys, "summarize", str(path), "--json")
    assert code == 0, err
    got = {r["task"] for r in json.loads(out)["by_group"]}
    assert got == {"pick cube", "stack", "push", "open drawer"}
