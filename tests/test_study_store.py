"""The trial store: append-only, one event per client id, undo as an event, kill -9 at random
moments loses no acknowledged event and leaves no half-written one, concurrent writers are
serialised, foreign and truncated files are refused in one line, and reads never rewrite it."""

from __future__ import annotations

import hashlib
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_run import run
from study_helpers import locked_example, study_copy

from evalsim.study import EventStore, StudyError, open_study
from evalsim.study.store import STORE_FILE

SHA = "f" * 64


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    return locked_example(tmp_path_factory, "store", seed=4)


@pytest.fixture
def study(study_dir, tmp_path):
    """A fresh copy of the locked example (empty store) per test."""
    return open_study(study_copy(study_dir, tmp_path))


def test_append_only_at_the_database_level(tmp_path):
    store = EventStore(tmp_path / STORE_FILE, SHA, create=True)
    store.append("outcome", {"success": True}, event_id="e1", trial="T001")
    con = sqlite3.connect(tmp_path / STORE_FILE)
    for stmt in (
        "UPDATE events SET kind = 'x'",
        "DELETE FROM events",
        "UPDATE meta SET value = 'x'",
    ):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(stmt)
    con.close()
    assert [e.id for e in store.events()] == ["e1"]
    assert store.events()[0].intact()


def test_same_id_is_recorded_once_and_other_content_is_refused(study):
    r1 = study.record("T001", "success", event_id="client-1")
    r2 = study.record("T001", "success", event_id="client-1")
    assert not r1.duplicate and r2.duplicate and r2.event.seq == r1.event.seq
    with pytest.raises(StudyError, match="other content"):
        study.record("T001", "failure", event_id="client-1")
    assert len(study.events()) == 1


def test_second_outcome_needs_an_undo_which_points_at_the_first(study):
    first = study.record("T001", "failure", failure="dropped").event
    with pytest.raises(StudyError, match="already has an outcome"):
        study.record("T001", "success")
    undo = study.undo(first.id, why="scored the wrong video")
    assert undo.kind == "undo" and undo.cancels == first.id
    study.record("T001", "success")
    st = study.state()
    assert st.outcomes["T001"].success is True
    assert [(g.id, u.id) for g, u in st.undone] == [(first.id, undo.id)]
    with pytest.raises(StudyError, match="already undone"):
        study.undo(first.id)
    with pytest.raises(StudyError, match="not in the trial store"):
        study.undo("nope")
    kinds = [e.kind for e in study.events()]
    assert kinds == ["outcome", "undo", "outcome"]  # nothing rewritten, all kept


def test_unknown_trial_and_bad_failure_type_are_refused(study):
    with pytest.raises(StudyError, match="'T999' is not in the schedule"):
        study.record("T999", "success")
    with pytest.raises(StudyError, match="not in the rubric"):
        study.record("T001", "failure", failure="gremlins")
    with pytest.raises(StudyError, match="failure only"):
        study.record("T001", "success", failure="dropped")
    assert study.events() == []


def test_out_of_order_trial_is_recorded_as_a_deviation(study):
    r = study.record("T003", "success")
    assert r.out_of_order
    st = study.state()
    assert [o.trial.trial for o in st.out_of_order] == ["T003"]
    assert [t.trial for t in st.skipped()] == ["T001", "T002"]
    assert st.next_trial.trial == "T001"
    assert not study.record("T001", "success").out_of_order


def _child_writer(path, start: int, w: int) -> None:
    """In a forked child: append events forever, writing each id to ``w`` once acknowledged."""
    try:
        store = EventStore(path, SHA, keep_open=True)
        i = start
        while True:
            eid = f"k{i}"
            store.append("outcome", {"success": i % 2 == 0, "i": i}, event_id=eid, trial=f"K{i}")
            os.write(w, (eid + "\n").encode())
            i += 1
    finally:
        os._exit(0)


def _read_all(r: int) -> bytes:
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_kill_9_at_random_moments_100_times_loses_nothing(tmp_path):
    path = tmp_path / STORE_FILE
    store = EventStore(path, SHA, create=True)
    store.append("outcome", {"success": True}, event_id="k-first", trial="K")
    rng = np.random.default_rng(2026)
    acked: list[str] = []
    for kill in range(100):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(r)
            _child_writer(path, kill * 1_000_000, w)
        os.close(w)
        # once the writer has acknowledged its first event, kill it at a random moment of
        # the following appends (each some milliseconds: inside a transaction or between)
        ready, _, _ = select.select([r], [], [], 30.0)
        assert ready, "the writer acknowledged nothing in 30 s"
        first = os.read(r, 65536)
        time.sleep(float(rng.uniform(0.0, 0.015)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        acked += (first + _read_all(r)).decode().split()
        os.close(r)
    stored = {e.id for e in store.events()}
    assert set(acked) <= stored, "an acknowledged event was lost"
    check = store.integrity()
    assert check["integrity_check"] == "ok" and check["damaged"] == []
    assert len(acked) >= 100  # every writer acknowledged at least one event before its kill


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_concurrent_writers_are_serialised(tmp_path, study):
    path = tmp_path / STORE_FILE
    EventStore(path, SHA, create=True).append("outcome", {}, event_id="seed", trial="K")
    go_r, go_w = os.pipe()
    pids = []
    for who in range(2):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.read(go_r, 1)
                s = EventStore(path, SHA)
                for i in range(40):
                    s.append("outcome", {"who": who}, event_id=f"w{who}-{i}", trial=f"K{i}")
            finally:
                os._exit(0)
        pids.append(pid)
    os.write(go_w, b"xx")
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert len(EventStore(path, SHA).events()) == 81
    # two processes racing to record the same trial: exactly one outcome is kept
    go_r, go_w = os.pipe()
    pids = []
    for who in range(2):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                os.read(go_r, 1)
                s = open_study(study.folder)
                s.record("T001", "success", event_id=f"race-{who}")
                code = 0
            except StudyError:
                code = 3
            finally:
                os._exit(code)
        pids.append(pid)
    os.write(go_w, b"xx")
    codes = sorted(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids)
    assert codes == [0, 3]
    assert [e.trial for e in study.events()] == ["T001"]


def test_two_record_commands_at_once(study):
    """Two real ``evalsim study record`` processes started together both land."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    code = "import sys; from evalsim.cli import main; sys.exit(main(sys.argv[1:]))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, "study", "record", str(study.folder), t, "success"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for t in ("T001", "T002")
    ]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert sorted(e.trial for e in study.events()) == ["T001", "T002"]


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reads_never_rewrite_the_database(study, capsys):
    study.record("T001", "success")
    study.record("T002", "failure", failure="timeout")
    db = study.folder / STORE_FILE
    before = (_sha(db), db.stat().st_mtime_ns)
    for argv in (("status", study.folder, "--json"), ("export", study.folder)):
        rc, out, err = run(capsys, "study", *argv)
        assert rc == 0, err
    assert (_sha(db), db.stat().st_mtime_ns) == before


@pytest.mark.parametrize("kind", ["foreign", "truncated", "text", "empty", "missing"])
def test_foreign_or_truncated_database_is_named_in_one_line(study, capsys, kind):
    for i in range(1, 30):
        study.record(f"T{i:03d}", "success", note="x" * 200)
    study.store.close()  # the last connection checkpoints the WAL into the file
    db = study.folder / STORE_FILE
    if kind == "foreign":
        db.unlink()
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE cats (name TEXT)")
        con.commit()
        con.close()
    elif kind == "truncated":
        data = db.read_bytes()
        assert len(data) > 8192
        db.write_bytes(data[: len(data) // 2])
    elif kind == "text":
        db.write_text("trial,outcome\nT001,success\n")
    elif kind == "empty":
        db.write_bytes(b"")
    else:
        db.unlink()
    before = db.read_bytes() if db.exists() else None
    rc, out, err = run(capsys, "study", "status", study.folder)
    assert rc == 2 and err.count("\n") == 1 and str(db) in err, err
    rc, out, err = run(capsys, "study", "record", study.folder, "T030", "success")
    assert rc == 2 and str(db) in err
    assert (db.read_bytes() if db.exists() else None) == before


def _naive_out_of_order(n: int, events) -> set[str]:
    """Plain reference: an outcome is out of order when an earlier trial is open then."""
    open_ = set(range(n))
    active: dict[int, str] = {}
    flagged: dict[int, bool] = {}
    for kind, idx, eid in events:
        if kind == "outcome":
            flagged[idx] = idx != min(open_) if open_ else False
            open_.discard(idx)
            active[idx] = eid
        else:
            open_.add(idx)
            active.pop(idx)
            flagged.pop(idx)
    return {f"T{i + 1:03d}" for i, f in flagged.items() if f}


def test_out_of_order_flags_match_a_plain_reference_on_random_histories(study):
    from evalsim.study.state import derive_state
    from evalsim.study.store import Event

    sched = list(study.schedule[:12])
    rng = np.random.default_rng(3)
    for _ in range(200):
        events, plain, seq, active = [], [], 0, {}
        for _ in range(int(rng.integers(1, 20))):
            seq += 1
            idx = int(rng.integers(0, 12))
            if idx in active and rng.random() < 0.5:
                eid = f"u{seq}"
                events.append(
                    Event(seq, eid, "undo", sched[idx].trial, active.pop(idx), {}, "", "")
                )
                plain.append(("undo", idx, eid))
            elif idx not in active:
                eid = f"o{seq}"
                events.append(
                    Event(seq, eid, "outcome", sched[idx].trial, None, {"success": True}, "", "")
                )
                plain.append(("outcome", idx, eid))
                active[idx] = eid
        st = derive_state(sched, events)
        assert {o.trial.trial for o in st.out_of_order} == _naive_out_of_order(12, plain)
        assert set(st.outcomes) == {sched[i].trial for i in active}
