"""Issue 45 (the evalsim command, round 2), items 1-8, 16, 21 and 22: writing files, reading
files, SimRealData's checks, ``sequential check`` and the misleading labels.

Each test failed before its fix. Special files are made in the test's own folder
(``os.mknod``, ``os.mkfifo``), never the machine's ``/dev`` nodes.
"""

from __future__ import annotations

import json
import os
import stat

import pytest
from cli_run import run, write_log

# --------------------------------------------------------------------------- helpers


def _one_line_error(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _log(tmp_path, name="log.csv", n=20):
    rows = [f"{'a' if i % 2 else 'b'},{int(i % 3 == 0)}" for i in range(n)]
    path = tmp_path / name
    path.write_text("policy,success\n" + "\n".join(rows) + "\n")
    return path


def _char_device(path):
    """A character device node in the test's folder (major 1, minor 3; never opened)."""
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    return path


def _is_char_device(path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


def _design(tmp_path, capsys, name="d.json", *extra):
    out = tmp_path / name
    code, _, err = run(capsys, "sequential", "design", "--out", out, "--n-max", "20", *extra)
    assert code == 0, err
    return out


# --------------------------------------------------------------------------- item 1


@pytest.fixture
def special(tmp_path):
    """One device node and one FIFO for each suffix a writer takes."""
    made = {}
    for suffix in (".json", ".png", ".pdf", ".svg"):
        made[("dev", suffix)] = _char_device(tmp_path / f"dev{suffix}")
        fifo = tmp_path / f"fifo{suffix}"
        os.mkfifo(fifo)
        made[("fifo", suffix)] = fifo
    return made


def _still_special(path) -> bool:
    mode = os.lstat(path).st_mode
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


@pytest.mark.parametrize("what", ["dev", "fifo"])
def test_item01_design_out_refuses_device_node_and_fifo(tmp_path, capsys, special, what):
    target = special[(what, ".json")]
    err = _one_line_error(capsys, "sequential", "design", "--out", target, "--n-max", "20")
    assert str(target) in err and "not a regular file" in err
    assert _still_special(target)
    err = _one_line_error(capsys, "sequential", "design", "--out", target, "--force")
    assert _still_special(target)


@pytest.mark.parametrize(
    "command",
    [
        ("summarize",),
        ("compare", "--a", "a", "--b", "b"),
        ("rank",),
    ],
)
def test_item01_plot_refuses_device_node_and_fifo(tmp_path, capsys, special, command):
    log = _log(tmp_path)
    if command[0] == "rank":  # rank needs two policies over tasks: any two-policy log will do
        pass
    for what in ("dev", "fifo"):
        for suffix in (".png", ".pdf"):
            target = special[(what, suffix)]
            err = _one_line_error(capsys, command[0], log, *command[1:], "--plot", target)
            assert str(target) in err and "not a regular file" in err
            assert _still_special(target)


def test_item01_sheet_refuses_device_node(tmp_path, capsys):
    design = _design(tmp_path, capsys)
    _char_device(tmp_path / "sheet.pdf")  # the PNG would be written first, then the device
    err = _one_line_error(capsys, "sequential", "sheet", design, "--out", tmp_path / "sheet")
    assert "sheet.pdf" in err and "not a regular file" in err
    assert _is_char_device(tmp_path / "sheet.pdf")
    assert not (tmp_path / "sheet.png").exists()  # nothing half-done


def test_item01_atomic_writer_never_replaces_a_special_file(tmp_path):
    from evalsim.io import write_text_atomic

    dev = _char_device(tmp_path / "x.txt")
    with pytest.raises(OSError):
        write_text_atomic(dev, "hello")
    assert _is_char_device(dev)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]  # no temp file left


# --------------------------------------------------------------------------- item 2


def test_item02_design_out_refuses_a_csv_suffix(tmp_path, capsys):
    mine = tmp_path / "mine.csv"
    mine.write_text("policy,success\nA,1\n")
    err = _one_line_error(capsys, "sequential", "design", "--out", mine, "--n-max", "20")
    assert "--out" in err and ".json" in err and "mine.csv" in err
    assert mine.read_text() == "policy,success\nA,1\n"


def test_item02_design_out_refuses_to_replace_another_file_without_force(tmp_path, capsys):
    other = tmp_path / "notes.json"
    other.write_text('{"my": "notes"}\n')
    err = _one_line_error(capsys, "sequential", "design", "--out", other, "--n-max", "20")
    assert "--force" in err and "notes.json" in err
    assert other.read_text() == '{"my": "notes"}\n'
    code, _, err = run(capsys, "sequential", "design", "--out", other, "--n-max", "20", "--force")
    assert code == 0, err
    assert json.loads(other.read_text())["format"] == "evalsim-sequential-design"


def test_item02_design_out_replaces_an_earlier_design(tmp_path, capsys):
    design = _design(tmp_path, capsys)
    code, _, err = run(capsys, "sequential", "design", "--out", design, "--n-max", "30")
    assert code == 0, err
    assert json.loads(design.read_text())["n_max"] == 30


def test_item02_plot_refuses_to_replace_a_file_that_is_not_a_figure(tmp_path, capsys):
    log = _log(tmp_path)
    notes = tmp_path / "notes.png"
    notes.write_text("not a picture\n")
    err = _one_line_error(capsys, "summarize", log, "--plot", notes)
    assert "--force" in err and "notes.png" in err
    assert notes.read_text() == "not a picture\n"
    code, _, err = run(capsys, "summarize", log, "--plot", notes, "--force")
    assert code == 0, err
    assert notes.read_bytes().startswith(b"\x89PNG")
    code, _, err = run(capsys, "summarize", log, "--plot", notes)  # its own figure: replaced
    assert code == 0, err


def test_item02_sheet_refuses_to_replace_a_file_that_is_not_a_figure(tmp_path, capsys):
    design = _design(tmp_path, capsys)
    (tmp_path / "s.pdf").write_text("my draft\n")
    err = _one_line_error(capsys, "sequential", "sheet", design, "--out", tmp_path / "s")
    assert "--force" in err and "s.pdf" in err
    assert (tmp_path / "s.pdf").read_text() == "my draft\n"


# --------------------------------------------------------------------------- item 3


def test_item03_plot_in_unwritable_folder_names_the_users_path_before_work(
    tmp_path, capsys, monkeypatch
):
    import evalsim.cli.rank as rank_cli

    def no_work(*a, **k):  # the check must come before any computation
        raise AssertionError("computed before checking --plot")

    monkeypatch.setattr(rank_cli, "_plot", no_work)
    log = _log(tmp_path)
    for command in (("summarize",), ("compare", "--a", "a", "--b", "b"), ("rank",)):
        err = _one_line_error(capsys, command[0], log, *command[1:], "--plot", "/proc/x.png")
        assert "'/proc/x.png'" in err or " /proc/x.png" in err
        assert ".x.png." not in err  # not the temporary file's name
    err = _one_line_error(capsys, "sequential", "design", "--out", "/proc/d.json", "--n-max", "20")
    assert "/proc/d.json" in err and ".d.json." not in err


# --------------------------------------------------------------------------- readers


def _read_both(path):
    """The log as the pandas reader and the small reader read it (policy, success) lists."""
    from evalsim.small_logs import read_small_logs
    from evalsim.trial_logs import read_trial_logs

    big = read_trial_logs([path])
    small = read_small_logs([path])
    assert small is not None, "the small reader left the log to pandas"
    got = [list(zip(t["policy"].tolist(), t["success"].tolist(), strict=True)) for t in (big,)]
    got.append(list(zip(small["policy"].tolist(), small["success"].tolist(), strict=True)))
    return got


# --------------------------------------------------------------------------- item 4


def test_item04_cr_only_line_ends_are_read(tmp_path, capsys):
    path = tmp_path / "mac.csv"
    path.write_bytes(b"policy,success\rA,1\rB,0\rA,0\r")
    want = [("A", True), ("B", False), ("A", False)]
    assert _read_both(path) == [want, want]
    code, out, err = run(capsys, "summarize", path, "--json")
    assert code == 0, err
    assert "Traceback" not in err


# --------------------------------------------------------------------------- item 5


def test_item05_symlink_loop_is_one_line(tmp_path, capsys):
    loop = tmp_path / "a.csv"
    os.symlink(loop, loop)
    for command in (("summarize",), ("compare", "--a", "a", "--b", "b"), ("rank",)):
        err = _one_line_error(capsys, command[0], loop, *command[1:])
        assert "a.csv" in err and "link" in err


# --------------------------------------------------------------------------- item 6


def test_item06_deeply_nested_eval_info_is_one_line(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    info = folder / "eval_info.json"
    info.write_text("[" * 100_000)
    err = _one_line_error(capsys, "summarize", info)
    assert "eval_info.json" in err and "nested" in err and "line 1" in err


# --------------------------------------------------------------------------- item 7


def test_item07_huge_csv_field_is_refused_on_both_readers(tmp_path, capsys):
    from evalsim.small_logs import read_small_logs
    from evalsim.trial_logs import TrialLogError, read_trial_logs

    path = tmp_path / "big.csv"
    path.write_text("policy,success\n" + "A" * 1_000_000 + ",1\nB,0\n")
    for command in (("summarize",), ("compare", "--a", "A", "--b", "B")):
        err = _one_line_error(capsys, command[0], path, *command[1:])
        assert "big.csv" in err and "row 1" in err and "policy" in err and "limit" in err
        assert len(err) < 400
    with pytest.raises(TrialLogError, match="limit"):
        read_trial_logs([path])
    assert read_small_logs([path]) is None  # left to the pandas reader, which words the error


def test_item07_huge_quoted_field_with_commas_is_refused(tmp_path):
    from evalsim.trial_logs import TrialLogError, read_trial_logs

    path = tmp_path / "quoted.csv"
    path.write_text('policy,success\n"' + "ab," * 400_000 + '",1\nB,0\n')
    with pytest.raises(TrialLogError, match=r"row 1.*policy.*limit"):
        read_trial_logs([path])


def test_item07_huge_parquet_and_json_fields_are_refused(tmp_path):
    import pandas as pd

    from evalsim.trial_logs import TrialLogError, read_trial_logs

    pq = tmp_path / "big.parquet"
    frame = {"policy": ["A", "B"], "success": [1, 0], "task": ["t", "x" * 2_000_000]}
    pd.DataFrame(frame).to_parquet(pq)
    with pytest.raises(TrialLogError, match=r"big.parquet.*row 2.*task.*limit"):
        read_trial_logs([pq])
    folder = tmp_path / "run"
    folder.mkdir()
    info = folder / "eval_info.json"
    task = {"task": "y" * 2_000_000, "metrics": {"successes": [True, False]}}
    info.write_text(json.dumps({"per_task": [task]}))
    with pytest.raises(TrialLogError, match=r"eval_info.json.*row 1.*task.*limit"):
        read_trial_logs([info])


# --------------------------------------------------------------------------- item 8


def test_item08_parquet_nullable_boolean_na_names_file_row_column(tmp_path, capsys):
    import pandas as pd

    pq = tmp_path / "nullable.parquet"
    pd.DataFrame(
        {"policy": ["A", "B", "A"], "success": pd.array([True, False, None], dtype="boolean")}
    ).to_parquet(pq)
    err = _one_line_error(capsys, "summarize", pq)
    assert "nullable.parquet" in err and "row 3" in err and "success" in err
    assert "NaN" not in err


def test_item08_unreadable_file_names_the_file(tmp_path, capsys):
    mem = tmp_path / "mem.csv"
    os.symlink("/proc/self/mem", mem)  # a regular /proc file whose read fails (EIO)
    err = _one_line_error(capsys, "summarize", mem)
    assert "mem.csv" in err


def test_item08_json_integer_of_5000_digits_names_file_line_column(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    info = folder / "eval_info.json"
    info.write_text('{"per_episode": [\n {"success": 1, "seed": ' + "7" * 5000 + "}\n]}\n")
    err = _one_line_error(capsys, "summarize", info)
    assert "eval_info.json" in err and "line 2" in err and "column" in err
    assert "4300" not in err and "sys.set_int_max_str_digits" not in err


@pytest.mark.parametrize(
    "body",
    [
        "A,1,extra\nB,0,x\n",  # every row one field too many: pandas took column 1 as the index
        "A,1,\nB,0,\n",  # a trailing delimiter
        "A,1\nB,0,extra\n",  # one ragged row
    ],
)
def test_item08_ragged_row_names_file_row_and_field_count(tmp_path, capsys, body):
    path = tmp_path / "ragged.csv"
    path.write_text("policy,success\n" + body)
    err = _one_line_error(capsys, "summarize", path)
    assert "ragged.csv" in err and "row" in err and "3 fields" in err and "2 columns" in err
    assert "'extra'" not in err and "empty" not in err


# --------------------------------------------------------------------------- item 16


@pytest.mark.parametrize(
    ("cells", "match"),
    [
        ((5, 2, 1, 2, 50, 10), r"k_sim must be in \[0, n_sim = 10\], got 50"),
        ((5, -2, 1, 2, 5, 100), r"n10 must be an integer in \[0, "),
        ((5, 2, 1, 2, -1, 100), r"k_sim must be an integer in \[0, "),
        ((5, 2.5, 1, 2, 5, 100), r"n10 must be an integer"),
        ((5, True, 1, 2, 5, 100), r"n10 must be an integer"),
        ((0, 0, 0, 0, 5, 100), r"at least one real trial"),
        ((5, 2, 1, 2, 5, 9), r"n_sim must be >= n = 10 real trials, got 9"),
        ((5, 2, 1, 2, 0, 0), r"n_sim must be an integer in \[1, "),
    ],
)
def test_item16_simreal_data_is_checked_in_its_constructor(cells, match):
    from evalsim.stats import simreal as sr

    with pytest.raises(ValueError, match=match):
        sr.SimRealData(*cells)


def test_item16_simreal_data_constructor_agrees_with_simreal_data():
    import numpy as np

    from evalsim.stats import simreal as sr

    real = [1] * 5 + [1] * 2 + [0] * 1 + [0] * 2
    twin = [1] * 5 + [0] * 2 + [1] * 1 + [0] * 2
    built = sr.simreal_data(real, twin, 60, 100)
    direct = sr.SimRealData(np.int64(5), 2, 1, 2, np.int32(60), 100)
    assert direct == built
    assert all(type(v) is int for v in vars(direct).values())
    r = sr.simreal_interval(direct, sr.METHODS[0])
    assert 0 <= r.lower <= r.upper <= 1


# --------------------------------------------------------------------------- item 21


def _unpaired_log(tmp_path, a_outcomes, b_outcomes, name="run.csv"):
    return write_log(tmp_path / name, {"A": a_outcomes, "B": b_outcomes})


def _check(capsys, design, log):
    code, out, err = run(capsys, "sequential", "check", design, log, "--a", "A", "--b", "B")
    assert code == 0, err
    code, js, err = run(
        capsys, "sequential", "check", design, log, "--a", "A", "--b", "B", "--json"
    )
    assert code == 0, err
    return " ".join(out.split()), json.loads(js)  # the text wraps at 100 columns


def test_item21_unreachable_stop_is_said_unpaired(tmp_path, capsys):
    design = _design(tmp_path, capsys, "d.json", "--spending", "obrien-fleming")
    # A wins all 15, B none: "B better" can no longer be reached by trial 20
    log = _unpaired_log(tmp_path, [1] * 15, [0] * 15)
    out, js = _check(capsys, design, log)
    assert js["status"] == "continue"
    assert js["stops_reachable"] == {"B better": False}
    assert "can no longer be reached" in out and "n_max = 20" in out
    # and at a reachable point it is said so, without that sentence
    log = _unpaired_log(tmp_path, [1, 0, 1, 0], [1, 1, 1, 0], name="early.csv")
    out, js = _check(capsys, design, log)
    assert js["stops_reachable"] == {"B better": True}
    assert "can no longer be reached" not in out


def test_item21_one_sided_design_says_it_never_declares_a_better(tmp_path, capsys):
    design = _design(tmp_path, capsys, "d.json")
    log = _unpaired_log(tmp_path, [1] * 5, [0] * 5)
    out, js = _check(capsys, design, log)
    assert "one-sided" in out and "never declares 'A better'" in out
    assert js["never_declares"] == ["A better"]
    two = _design(tmp_path, capsys, "two.json", "--alternative", "two-sided")
    log = _unpaired_log(tmp_path, [1, 0, 1, 0, 1], [1, 1, 0, 0, 1], name="even.csv")
    out, js = _check(capsys, two, log)
    assert js["status"] == "continue"
    assert "never declares" not in out and js["never_declares"] == []
    assert set(js["stops_reachable"]) == {"B better", "A better"}


def test_item21_unreachable_stop_is_said_paired(tmp_path, capsys):
    code, _, err = run(
        capsys, "sequential", "design", "--kind", "paired", "--out", tmp_path / "p.json",
        "--n-max", "20",
    )  # fmt: skip
    assert code == 0, err
    lines = ["policy,success,condition"]
    lines += [f"A,1,{i}" for i in range(18)] + [f"B,1,{i}" for i in range(18)]  # 18 ties
    log = tmp_path / "pairs.csv"
    log.write_text("\n".join(lines) + "\n")
    out, js = _check(capsys, tmp_path / "p.json", log)
    assert js["status"] == "continue"
    assert js["stops_reachable"] == {"B better": False}
    assert "can no longer be reached" in out and "earliest stop" not in out


def _all_experiments(n_max, kinds):
    """Every sequence of ``n_max`` outcomes from ``kinds`` (as an (E, n_max) index array)."""
    import numpy as np

    grids = np.meshgrid(*[np.arange(kinds)] * n_max, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


@pytest.mark.parametrize("alternative", ["two-sided", "one-sided"])
def test_item21_reachable_verdicts_are_those_of_some_continuation(alternative):
    """Brute force: every experiment of 6 trials per arm (4^6 outcome pairs), replayed by
    the design's boundaries; from each running state (n, k_A, k_B) the verdicts some
    continuation ends with are the reachable ones."""
    from evalsim.stats.sequential.designs import unpaired_family_design
    from evalsim.stats.sequential.io import _unpaired_reach, replay_unpaired

    n_max = 6
    design = unpaired_family_design("pocock", 0.2, n_max, alternative, "every")
    runs = _all_experiments(n_max, 4)
    a, b = runs % 2 == 1, runs // 2 == 1
    look, verdict = replay_unpaired(design, a, b)
    stop_n = design.look_sizes[look]
    words = {1: "B better", 2: "A better"}
    seen: dict[tuple, set] = {}
    for e in range(runs.shape[0]):
        for n in range(0, n_max):
            if stop_n[e] <= n:
                break
            key = (n, int(a[e, :n].sum()), int(b[e, :n].sum()))
            seen.setdefault(key, set()).add(words.get(int(verdict[e])))
    assert len(seen) > 20
    for (n, ka, kb), got in seen.items():
        reach = _unpaired_reach(design, n, ka, kb)
        assert {v for v, m in reach.items() if m is not None} == got - {None}, (n, ka, kb)


def test_item21_paired_reachable_verdicts_are_those_of_some_continuation():
    from evalsim.stats.sequential.io import _paired_reach, replay_paired
    from evalsim.stats.sequential.paired import paired_design

    n_max = 7
    design = paired_design(0.2, n_max, "two-sided", "pocock")
    runs = _all_experiments(n_max, 4)
    a, b = runs % 2 == 1, runs // 2 == 1
    stop, verdict = replay_paired(design, a, b)
    words = {1: "B better", 2: "A better"}
    seen: dict[tuple, set] = {}
    for e in range(runs.shape[0]):
        for t in range(0, n_max):
            if 0 < stop[e] <= t:
                break
            aa, bb = a[e, :t], b[e, :t]
            key = (t, int((aa ^ bb).sum()), int((bb & ~aa).sum()))
            seen.setdefault(key, set()).add(words.get(int(verdict[e])))
    assert len(seen) > 20
    for (t, d, b_only), got in seen.items():
        reach = _paired_reach(design, t, d, b_only)
        assert {v for v, x in reach.items() if x} == got - {None}, (t, d, b_only)


# --------------------------------------------------------------------------- item 22


def _two_policy_log(tmp_path, a_name, k_a, b_name, k_b, n=20):
    wins = {a_name: k_a, b_name: k_b}
    return write_log(tmp_path / "ab.csv", {p: [i < k for i in range(n)] for p, k in wins.items()})


def test_item22_role_labels_never_collide_with_policy_names(tmp_path, capsys):
    log = _two_policy_log(tmp_path, "A", 15, "B", 8)
    code, out, err = run(capsys, "compare", log, "--a", "B", "--b", "A")
    assert code == 0, err
    text = " ".join(out.split())
    assert "B (A)" not in text and "A (B)" not in text
    # the difference is policy A minus policy B (75% - 40%), and it reads so
    assert "Difference A - B" in text and "interval for A - B: [+" in text
    assert "+35.0" in text
    # without a collision the roles keep their letters
    log = _two_policy_log(tmp_path, "base", 8, "new", 15)
    code, out, err = run(capsys, "compare", log, "--a", "base", "--b", "new")
    assert code == 0, err
    assert "base (A)" in out and "Difference B - A" in out


def test_item22_test_boschloo_row_is_printed_once(tmp_path, capsys):
    from cli_run import blocks

    log = _two_policy_log(tmp_path, "base", 8, "new", 15)
    code, out, err = run(capsys, "compare", log, "--a", "base", "--b", "new", "--test", "boschloo")
    assert code == 0, err
    (rows,) = [r for title, r in blocks(out).items() if title.startswith("Tests of")]
    names = [r[0] for r in rows]
    assert len(names) == len(set(names)), names
    assert names[0] == "Boschloo's exact (unpaired)"


@pytest.mark.parametrize(
    ("p1", "p2", "shown"),
    [
        ("0.737", "0.877", "73.7% vs 87.7%"),
        ("0.7", "0.9", "70% vs 90%"),
        ("0.8125", "0.9", "81.25% vs 90%"),
    ],
)
def test_item22_plan_prints_the_rates_it_was_given(capsys, p1, p2, shown):
    code, out, err = run(capsys, "plan", "--p1", p1, "--p2", p2)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith(f"Detect {shown} ("), first


def test_item08_bad_utf8_names_file_line_and_column(tmp_path, capsys):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"policy,success\nA,1\ncaf\xe9,0\n")
    err = _one_line_error(capsys, "summarize", path)
    assert "latin1.csv" in err and "line 3" in err and "'policy'" in err and "UTF-8" in err
    folder = tmp_path / "run"
    folder.mkdir()
    info = folder / "eval_info.json"
    info.write_bytes(b'{"per_episode": [\n {"success": 1, "seed": "\xff"}]}\n')
    err = _one_line_error(capsys, "summarize", info)
    assert "eval_info.json" in err and "line 2" in err and "column" in err


@pytest.mark.parametrize("blocks", ["default", "tiny"])
def test_item07_field_limit_is_exact_at_the_boundary(tmp_path, monkeypatch, blocks):
    """10,000 characters are read, 10,001 refused, wherever the field falls across the
    scan's blocks (tiny blocks: 2 x 5,000 bytes quick, 7,001 bytes exact)."""
    import evalsim._log_files as lf
    from evalsim.small_logs import read_small_logs
    from evalsim.trial_logs import TrialLogError, read_trial_logs

    if blocks == "tiny":
        monkeypatch.setattr(lf, "_SCAN_CHUNKS", 2)
        monkeypatch.setattr(lf, "_SCAN_BYTES", 7001)
    limit = lf.MAX_FIELD_CHARS
    for pad in (0, 3, 4999, 5003):  # shifts the long field against the block edges
        ok = tmp_path / f"ok{pad}.csv"
        ok.write_text("policy,success,note\n" + f"B,0,{'n' * pad}\n" + "A" * limit + ",1,x\n")
        assert len(read_trial_logs([ok])) == 2
        assert len(read_small_logs([ok])) == 2
        bad = tmp_path / f"bad{pad}.csv"
        bad.write_text(
            "policy,success,note\n" + f"B,0,{'n' * pad}\n" + "A" * (limit + 1) + ",1,x\n"
        )
        with pytest.raises(TrialLogError, match=r"data row 2, column 'policy'.*limit"):
            read_trial_logs([bad])
        assert read_small_logs([bad]) is None
    # a field with no line end after it (the file's last bytes)
    tail = tmp_path / "tail.csv"
    tail.write_text("policy,success,note\nA,1," + "n" * (limit + 1))
    with pytest.raises(TrialLogError, match=r"data row 1, column 'note'.*limit"):
        read_trial_logs([tail])
