"""The pandas-free reader of small logs (evalsim.small_logs) against the pandas reader
(evalsim.trial_logs): the same table on every log it takes, None on every log it leaves to
pandas; and the ``evalsim`` command's output the same on both paths."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalsim import small_logs
from evalsim.cli import main
from evalsim.small_logs import TrialTable, read_small_logs
from evalsim.trial_logs import TrialLogError, read_trial_logs


def assert_same_table(table: TrialTable, df) -> None:
    assert table.columns == list(df.columns)
    assert len(table) == len(df)
    for col in df.columns:
        want = df[col].to_numpy()
        got = table[col]
        assert got.dtype == want.dtype, col
        assert got.tolist() == want.tolist(), col
        assert all(type(a) is type(b) for a, b in zip(got.tolist(), want.tolist(), strict=True))
    assert table.attrs == df.attrs


CSV_LOGS = {
    "plain.csv": "policy,condition,success\nact,c0,1\nact,c1,0\nbc,c0,1\nbc,c1,1\n",
    "crlf_bom.csv": "\ufeffPolicy,Condition,Success\r\nact,c0,1\r\nbc,c0,0\r\n",
    "words.csv": "policy,success,task\nact, Yes ,pick\nact,no,pick\nbc,TRUE,place\nbc,f,place\n"
    "bc,y,place\nact,N,pick\nact,1.0,pick\nbc,0.0,place\n",
    "quoted.csv": 'policy,task,success\n"act","pick, then place",1\nbc,"pick, then place",0\n',
    "seeds.csv": "policy,seed,condition,success,failure\nact,0.0,c1,1,\nact,0,c2,0,drop\n"
    "bc,1,c1,0,none\nbc,1.00,c2,1,\n bc ,1,c3 ,0,slip\n",
    "tsv.tsv": "policy\ttask\tsuccess\nact\tpick\t1\nbc\tpick\t0\n",
    "two_seeds.csv": "policy,seed,condition,success\n"
    + "".join(
        f"{p},{s},c{i},{int((i + s) % 3 > 0)}\n"
        for p in ("act", "bc")
        for s in (0, 1)
        for i in range(6)
    ),
    "blank_lines.csv": "policy,success\n\nact,1\n\nbc,0\n",
    "extra_cols.csv": "run,policy,notes,success,seed\n1,act,ok,1,3\n2,bc,,0,3\n",
    "unicode.csv": "policy,task,success\nακτ,pick\u00e9,1\nbc,pick\u00e9,0\n",
    # left to pandas (None): errors, and forms the small reader does not take
    "bad_success.csv": "policy,success\nact,2\n",
    "empty_success.csv": "policy,success\nact,\n",
    "blank_policy.csv": "policy,success\n ,1\n",
    "blank_condition.csv": "policy,condition,success\nact,,1\n",
    "ragged.csv": "policy,success\nact,1,extra\n",
    "short_row.csv": "policy,task,success\nact,1\n",
    "no_rows.csv": "policy,success\n",
    "empty.csv": "",
    "missing_col.csv": "policy,outcome\nact,1\n",
    "escaped_quote.csv": 'policy,task,success\nact,"say ""hi""",1\n',
    "newline_in_field.csv": 'policy,task,success\nact,"two\nlines",1\n',
    "whitespace_line.csv": "policy,success\nact,1\n   \nbc,0\n",
    "unnamed.csv": "policy,success,\nact,1,\n",
    "dup_header.csv": "policy,success,Success\nact,1,1\n",
}

LEFT_TO_PANDAS = {
    "bad_success.csv",
    "empty_success.csv",
    "blank_policy.csv",
    "blank_condition.csv",
    "ragged.csv",
    "short_row.csv",
    "no_rows.csv",
    "empty.csv",
    "missing_col.csv",
    "escaped_quote.csv",
    "newline_in_field.csv",
    "whitespace_line.csv",
    "unnamed.csv",
    "dup_header.csv",
}

JSON_LOGS = {
    "episodes": {
        "per_episode": [{"success": True, "seed": 1}, {"success": False, "seed": 2}],
        "aggregated": {"pc_success": 50.0},
    },
    "episodes_int": {"per_episode": [{"success": 1}, {"success": 0}, {"success": 1}]},
    "episodes_mixed": {
        "per_episode": [{"success": True}, {"success": 0}, {"success": "yes"}, {"success": 1.0}]
    },
    "episodes_float_seed": {"per_episode": [{"success": 1.0, "seed": 3.0}]},
    "episodes_wrong_pc": {
        "per_episode": [{"success": True}, {"success": True}],
        "overall": {"pc_success": 10},
    },
    "tasks": {
        "per_task": [
            {"task_group": "so101", "task_id": 0, "metrics": {"successes": [True, False]}},
            {"task": " stack cubes ", "metrics": {"successes": [1, 1, 0]}},
            {"metrics": {"successes": []}},
        ]
    },
    # left to pandas
    "episodes_neg_zero": {"per_episode": [{"success": True}, {"success": -0.0}]},
    "episodes_two": {"per_episode": [{"success": 2}]},
    "episodes_null": {"per_episode": [{"success": None}]},
    "episodes_some_seeds": {"per_episode": [{"success": 1, "seed": 1}, {"success": 0}]},
    "episodes_empty": {"per_episode": []},
    "not_lerobot": {"episodes": []},
}

JSON_LEFT_TO_PANDAS = {
    "episodes_neg_zero",
    "episodes_two",
    "episodes_null",
    "episodes_some_seeds",
    "episodes_empty",
    "not_lerobot",
}


@pytest.fixture
def logs(tmp_path):
    paths = {}
    for name, text in CSV_LOGS.items():
        p = tmp_path / name
        p.write_bytes(text.encode("utf-8"))
        paths[name] = p
    for name, info in JSON_LOGS.items():
        folder = tmp_path / name
        folder.mkdir()
        p = folder / "eval_info.json"
        p.write_text(json.dumps(info))
        paths[name] = p
    return paths


def _pandas(specs, policy=None):
    try:
        return read_trial_logs(specs, policy=policy)
    except TrialLogError as err:
        return err


@pytest.mark.parametrize("name", sorted([*CSV_LOGS, *JSON_LOGS]))
def test_small_reader_reads_as_pandas_or_leaves_it(logs, name):
    specs = [str(logs[name])]
    table = read_small_logs(specs)
    df = _pandas(specs)
    if name in LEFT_TO_PANDAS or name in JSON_LEFT_TO_PANDAS:
        assert table is None
        return
    assert not isinstance(df, Exception), df
    assert table is not None
    assert_same_table(table, df)


def test_small_reader_several_files_labels_and_policy(logs, tmp_path):
    cases = [
        [str(logs["plain.csv"]), str(logs["seeds.csv"])],
        [str(logs["words.csv"]), str(logs["tasks"]), str(logs["episodes"])],
        [f"{logs['episodes']}=first", f"{logs['episodes_int']}=second"],
        [str(logs["extra_cols.csv"]), str(logs["tsv.tsv"])],
    ]
    for specs in cases:
        df = _pandas(specs)
        table = read_small_logs(specs)
        assert not isinstance(df, Exception), (specs, df)
        assert table is not None, specs
        assert_same_table(table, df)
    only_success = tmp_path / "only_success.csv"
    only_success.write_text("success,condition\n1,c0\n0,c1\n")
    assert_same_table(
        read_small_logs([str(only_success)], policy="act"),
        read_trial_logs([str(only_success)], policy="act"),
    )
    # errors the pandas reader words: the small reader steps aside
    same = [str(logs["plain.csv"]), str(logs["plain.csv"])]
    assert read_small_logs(same) is None and isinstance(_pandas(same), TrialLogError)
    assert read_small_logs([str(logs["plain.csv"])], policy="x") is None
    assert read_small_logs([str(logs["plain.csv"]), str(logs["tsv.tsv"])], policy="x") is None


def test_small_reader_leaves_large_and_parquet_logs_to_pandas(logs, tmp_path, monkeypatch):
    monkeypatch.setattr(small_logs, "SMALL_LOG_BYTES", 10)
    assert read_small_logs([str(logs["plain.csv"])]) is None
    monkeypatch.undo()
    df = read_trial_logs([str(logs["plain.csv"])])
    pq = tmp_path / "log.parquet"
    df.to_parquet(pq)
    assert read_small_logs([str(pq)]) is None
    assert read_small_logs([str(tmp_path / "missing.csv")]) is None
    assert read_small_logs([str(tmp_path)]) is None


def test_random_logs_read_the_same(tmp_path):
    rng = np.random.default_rng(24)
    words = {True: ["1", "true", "Yes", " y ", "T", "1.0"], False: ["0", "false", "NO", "n", "F"]}
    for i in range(30):
        n = int(rng.integers(1, 60))
        cols = ["policy", "success"]
        for extra in ("task", "seed", "condition", "failure", "notes"):
            if rng.random() < 0.5:
                cols.append(extra)
        rng.shuffle(cols)
        lines = [",".join(c.upper() if rng.random() < 0.3 else c for c in cols)]
        for j in range(n):
            ok = bool(rng.random() < 0.6)
            cell = {
                "policy": ["act", "bc", "Act", "diffusion"][int(rng.integers(4))],
                "success": words[ok][int(rng.integers(len(words[ok])))],
                "task": f"t{int(rng.integers(3))}",
                "seed": ["0", "1", "1.0", "2.00", "10"][int(rng.integers(5))],
                "condition": f"c{j}",
                "failure": ["", "none", "drop", "slip"][int(rng.integers(4))],
                "notes": "",
            }
            lines.append(",".join(cell[c] for c in cols))
        p = tmp_path / f"r{i}.csv"
        p.write_text("\n".join(lines) + "\n")
        table = read_small_logs([str(p)])
        assert table is not None
        assert_same_table(table, read_trial_logs([str(p)]))


def _run(argv, capsys, small: bool, monkeypatch):
    if not small:
        monkeypatch.setattr(small_logs, "SMALL_LOG_BYTES", -1)
    rc = main(argv)
    out, err = capsys.readouterr()
    monkeypatch.undo()
    return rc, out, err


COMMANDS = [
    ["summarize", "{plain.csv}"],
    ["summarize", "{seeds.csv}", "--format", "markdown"],
    ["summarize", "{words.csv}", "{tasks}", "{episodes}", "--json"],
    ["summarize", "{extra_cols.csv}", "--format", "latex"],
    ["summarize", "{episodes_wrong_pc}", "--max-half-width", "0.3"],
    ["summarize", "{unicode.csv}"],
    ["summarize", "{two_seeds.csv}"],
    ["compare", "{two_seeds.csv}", "--a", "act", "--b", "bc"],
    ["summarize", "{bad_success.csv}"],
    ["summarize", "{blank_condition.csv}"],
    ["summarize", "{ragged.csv}"],
    ["summarize", "{plain.csv}", "{plain.csv}"],
    ["compare", "{plain.csv}", "--a", "act", "--b", "bc"],
    ["compare", "{plain.csv}", "--a", "act", "--b", "bc", "--json"],
    ["compare", "{seeds.csv}", "--a", "act", "--b", "bc", "--alternative", "greater"],
    ["compare", "{words.csv}", "--a", "act", "--b", "bc", "--task", "pick"],
    ["compare", "{words.csv}", "--a", "act", "--b", "bc", "--task", "nope"],
    ["compare", "{words.csv}", "--a", "act", "--b", "nope"],
    ["compare", "{plain.csv}", "{words.csv}", "--a", "act", "--b", "bc", "--format", "markdown"],
    ["compare", "{plain.csv}", "--a", "act", "--b", "bc", "--unpaired", "--test", "boschloo"],
    ["compare", "{bad_success.csv}", "--a", "act", "--b", "bc"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a))
def test_command_output_same_on_both_paths(logs, argv, capsys, monkeypatch):
    argv = [str(logs[a[1:-1]]) if a.startswith("{") else a for a in argv]
    assert _run(argv, capsys, True, monkeypatch) == _run(argv, capsys, False, monkeypatch)


def test_random_logs_same_output_on_both_paths(tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(2024)
    for i in range(12):
        n = int(rng.integers(8, 80))
        with_task, with_seed = rng.random() < 0.5, rng.random() < 0.5
        lines = ["policy,condition,success" + (",task" if with_task else "")]
        lines[0] += ",seed,failure" if with_seed else ",failure"
        for pol in ("act", "bc", "diffusion"):
            for j in range(n):
                if rng.random() < 0.1:
                    continue  # an unpaired trial now and then
                row = [pol, f"c{j}", str(int(rng.random() < 0.6))]
                if with_task:
                    row.append(f"t{j % 3}")
                if with_seed:
                    row.append("0")
                row.append(["", "drop", "none"][int(rng.integers(3))])
                lines.append(",".join(row))
        p = tmp_path / f"log{i}.csv"
        p.write_text("\n".join(lines) + "\n")
        for argv in (
            ["summarize", str(p)],
            ["summarize", str(p), "--json"],
            ["compare", str(p), "--a", "act", "--b", "bc"],
            ["compare", str(p), "--a", "bc", "--b", "diffusion", "--json"],
        ):
            small = _run(argv, capsys, True, monkeypatch)
            assert small == _run(argv, capsys, False, monkeypatch), argv
            assert small[0] == 0, small
