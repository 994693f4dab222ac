"""``evalsim study`` from the command line: the subcommand registry, status --json with the
whole schedule, and bad input everywhere answered by one line naming the culprit, exit 2,
nothing written or replaced."""

from __future__ import annotations

import argparse
import json
import os

import pytest
from cli_run import run
from study_helpers import locked_example, study_copy

from evalsim.cli.study import STUDY_SUBCOMMANDS


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    return locked_example(tmp_path_factory, "cli", seed=6)


@pytest.fixture
def study(locked, tmp_path):
    return study_copy(locked, tmp_path)


def test_registry_lists_every_subcommand_once(capsys):
    names = [c.name for c in STUDY_SUBCOMMANDS]
    assert len(names) == len(set(names))
    for name in (
        "init",
        "plan",
        "lock",
        "amend",
        "record",
        "import",
        "status",
        "export",
        "unblind",
        "report",
    ):
        assert name in names
    rc, out, err = run(capsys, "study", "--help")
    assert rc == 0 and all(n in out for n in names)


def _subcommands(parser) -> dict:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def test_each_declared_subcommand_is_built_as_declared():
    # one loop over the declarations builds the parsers: in the declared order, each with its
    # handler, its positionals (the folder first) and --json last where declared
    from evalsim.cli import build_parser

    built = _subcommands(_subcommands(build_parser())["study"])
    assert list(built) == [c.name for c in STUDY_SUBCOMMANDS]
    for command in STUDY_SUBCOMMANDS:
        p = built[command.name]
        assert p.get_default("run") is command.run
        positional = [a.dest for a in p._actions if not a.option_strings]
        assert positional[0] == "dir" and len(positional) == 1 + sum(
            not flags[0].startswith("-") for flags, _ in command.arguments[1:]
        )
        assert (p._actions[-1].option_strings == ["--json"]) == command.json, command.name


def test_status_json_has_the_whole_schedule_blind(study, capsys):
    rc, out, err = run(capsys, "study", "record", study, "T001", "success", "--id", "x")
    assert rc == 0, err
    d = json.loads(run(capsys, "study", "status", study, "--json")[1])
    assert d["done"] == 1 and d["total"] == 40 and len(d["schedule"]) == 40
    first = d["schedule"][0]
    assert set(first) >= {"trial", "code", "condition", "block", "position", "done"}
    assert "arm" not in first and first["done"] is True
    assert d["next"]["trial"] == "T002" and "arm" not in d["next"]


@pytest.mark.parametrize(
    "argv, names",
    [
        (("record", "{d}", "T404", "success"), "T404"),
        (("record", "{d}", "T001", "maybe"), "maybe"),
        (("record", "{d}", "T001", "failure", "--failure", "gremlins"), "gremlins"),
        (("record", "{d}/nowhere", "T001", "success"), "nowhere"),
        (("undo", "{d}", "no-such-event"), "no-such-event"),
        (("undo", "{d}", "T003"), "T003 has no outcome"),
        (("export", "{d}", "--out", "{d}/log.xlsx"), "log.xlsx"),
        (("import", "{d}", "{d}/missing.csv"), "missing.csv"),
        (("report", "{d}", "--out-dir", "{d}/study.yaml"), "study.yaml"),
        (("amend", "{d}", "--why", "nothing"), "matches the lock"),
        (("unblind", "{d}", "--by", "  "), "--by"),
        (("lock", "{d}", "--seed", "-1"), "--seed"),
        (("init", "{d}"), "already exists"),
    ],
)
def test_bad_input_is_one_line_naming_it(study, capsys, argv, names):
    def files():  # SQLite's -wal and -shm companions come and go with connections
        return sorted(
            (p.name, p.read_bytes())
            for p in study.iterdir()
            if not p.name.endswith(("-wal", "-shm"))
        )

    before = files()
    rc, out, err = run(capsys, "study", *(a.format(d=study) for a in argv))
    assert rc == 2, (out, err)
    assert err.count("\n") == 1 and names in err, err
    assert "Traceback" not in err
    assert files() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_export_never_replaces_a_fifo(study, capsys):
    fifo = study / "log.csv"
    os.mkfifo(fifo)
    rc, out, err = run(capsys, "study", "export", study, "--out", fifo)
    assert rc == 2 and "not a regular file" in err
    assert fifo.is_fifo()


def test_undo_by_trial_id(study, capsys):
    assert run(capsys, "study", "record", study, "T001", "failure")[0] == 0
    rc, out, err = run(capsys, "study", "undo", study, "T001", "--why", "wrong video", "--json")
    assert rc == 0, err
    assert json.loads(out)["event"]["kind"] == "undo"
    assert run(capsys, "study", "record", study, "T001", "success")[0] == 0
    d = json.loads(run(capsys, "study", "status", study, "--json")[1])
    assert d["deviations"]["undone"][0]["why"] == "wrong video"


def test_report_before_any_trial_decides_nothing(study, capsys):
    rc, out, err = run(capsys, "study", "report", study, "--json")
    assert rc == 0, err
    text = json.loads(out)["headline"]["text"]
    assert "nothing is decided" in text and "equal" not in text.lower()
