"""The console's study: what the operator, mirror and review pages read and write.

:class:`ConsoleStudy` wraps a locked study folder (its protocol, lock, schedule and trial
store, :mod:`evalsim.study`) for the web app. It never imports the web framework, so the
command line, the benchmark and the tests use it directly. Every write is one event in the
store; every read derives the state from the events (:func:`evalsim.study.state.derive_state`),
so a server restarted after ``kill -9`` resumes at the next scheduled trial.

What leaves this module before the unblinding names arms by nothing: a trial shows its blind
code, position and block; a runner's output is passed through
:func:`evalsim.study.runners.redact_arms`; the study title too. :meth:`ConsoleStudy.state`
adds arm names only once the unblind event exists.

Events the console adds to the store's kinds (:data:`CONSOLE_EVENT_KINDS`):

- ``session``: an operator starts a session (``operator``, the checked rig ``checklist``);
- ``pause``: the session is paused or resumed (``paused``);
- ``run``: a runner ran a trial (:class:`evalsim.study.runners.RunResult` as a dict, and
  ``attempt``); a failed run is logged and the trial can be run again;
- ``review``: a blind second scorer's label of a trial (``success``, ``failure``, ``by``).

Outcomes are the store's ``outcome`` events, with the console's extras: ``by`` (the
operator), ``duration_s`` (Start to Stop), ``suggested`` (the runner's suggestion, stored
beside what the operator confirmed) and ``source: console``.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evalsim.study.errors import StudyError
from evalsim.study.runners import RunResult, TrialRequest, make_runner, redact_arms

__all__ = [
    "CONSOLE_EVENT_KINDS",
    "DEFAULT_CHECKLIST",
    "RUNS_DIR",
    "ConsoleError",
    "ConsoleStudy",
]

#: Event kinds the console writes besides outcomes and undos (see the module docstring);
#: each is in the store's registry, :data:`evalsim.study.store.EVENT_KINDS`.
CONSOLE_EVENT_KINDS = ("session", "pause", "run", "review")
#: Where runner artefacts go inside the study folder (the only files the console serves).
RUNS_DIR = "runs"
#: The rig checklist when the protocol gives none (``rig.checklist``).
DEFAULT_CHECKLIST = (
    "Grid sheet taped to the table, origin at the arm's base",
    "Object blocks on hand, labelled",
    "Camera recording the workspace",
    "Emergency stop within reach",
)
MAX_NOTE_CHARS = 2000
MAX_NAME_CHARS = 80
_CLIENT_ID = re.compile(r"^[A-Za-z0-9_\-]{8,80}$")


class ConsoleError(StudyError):
    """A request the console refuses; ``status`` is the HTTP status it maps to."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _client_id(value) -> str:
    if not isinstance(value, str) or not _CLIENT_ID.match(value):
        raise ConsoleError("id: a client-made id of 8-80 letters, digits, '-' or '_' is required")
    return value


def _text(value, name: str, limit: int, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ConsoleError(f"{name}: expected text")
    value = value.strip()
    if len(value) > limit:
        raise ConsoleError(f"{name}: at most {limit} characters")
    if required and not value:
        raise ConsoleError(f"{name}: required")
    return value


def _on_store_thread(method):
    """Run ``method`` on the study's one store thread.

    The store keeps one cached SQLite write connection, which SQLite ties to the thread that
    opened it; the web server calls from a pool of threads. Every store call of a
    :class:`ConsoleStudy` therefore runs on one thread of its own, which also serialises the
    console's writes. Runners run outside it, so a long run never blocks the pages.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if threading.current_thread() is self._store_thread:
            return method(self, *args, **kwargs)
        return self._store_pool.submit(method, self, *args, **kwargs).result()

    return wrapper


@dataclass(frozen=True)
class _Locked:
    protocol: object
    lock: dict
    schedule: list


class ConsoleStudy:
    """A locked study, as the console sees it.

    Parameters
    ----------
    study_dir : path
        The study folder (locked with ``evalsim study lock``).
    """

    def __init__(self, study_dir) -> None:
        from evalsim.study import open_study

        self.dir = Path(study_dir).resolve()
        self._store_thread = None
        self._store_pool = ThreadPoolExecutor(
            1, thread_name_prefix="evalsim-store", initializer=self._mark_store_thread
        )
        self.study = self._store_pool.submit(open_study, self.dir).result()
        self._locked = _Locked(self.study.protocol, self.study.lock, list(self.study.schedule))
        self.store = self.study.store
        self.by_trial = {t.trial: t for t in self.schedule}
        self._runners: dict[str, object] = {}
        self._runner_lock = threading.Lock()
        self.secrets = self._secrets()
        self._runs: dict | None = None
        self.positions = [
            {"name": n, "x_cm": x, "y_cm": y} for n, x, y in self.protocol.positions()
        ]

    def _mark_store_thread(self) -> None:
        self._store_thread = threading.current_thread()

    def close(self) -> None:
        """Close the store's connection and stop the store thread."""
        self._store_pool.submit(self.store.close).result()
        self._store_pool.shutdown()

    # ------------------------------------------------------------------ the locked study
    @property
    def protocol(self):
        return self._locked.protocol

    @property
    def schedule(self) -> list:
        return self._locked.schedule

    @property
    def lock_sha256(self) -> str:
        return self._locked.lock["study_sha256"]

    @property
    def failure_types(self) -> tuple[str, ...]:
        return tuple(self.protocol.failure_types)

    @property
    def checklist(self) -> tuple[str, ...]:
        rig = self.protocol.data.get("rig") or {}
        return tuple(rig.get("checklist") or DEFAULT_CHECKLIST)

    def _arm_spec(self, arm: str):
        for a in self.protocol.data["arms"]:
            if a["name"] == arm:
                return a.get("runner")
        return None

    def _secrets(self) -> list[str]:
        """Strings that would name an arm: the names and the words of each arm's runner
        that the other arms' runners lack (a checkpoint path, a sigma)."""
        out = list(self.protocol.arms)
        words = {}
        for a in self.protocol.data["arms"]:
            spec = a.get("runner")
            text = spec if isinstance(spec, str) else repr(sorted((spec or {}).items()))
            words[a["name"]] = set(re.findall(r"[A-Za-z0-9_./\-]{3,}", text))
        for arm, own in words.items():
            others = set().union(*(w for a, w in words.items() if a != arm)) if words else set()
            out.extend(sorted(own - others))
        return out

    def redact(self, text: str) -> str:
        """``text`` with what would name an arm replaced (see :data:`secrets`)."""
        return redact_arms(text or "", self.secrets)

    def has_runner(self, trial) -> bool:
        return bool(self._arm_spec(trial.arm))

    def runner_for(self, arm: str):
        """The arm's runner (built once), or None when the arm has none."""
        spec = self._arm_spec(arm)
        if not spec:
            return None
        with self._runner_lock:
            if arm not in self._runners:
                if isinstance(spec, str):
                    spec = {"kind": "command", "command": spec}
                spec = dict(spec)
                if spec.get("kind") == "mujoco":
                    spec.setdefault("seed", int(self._locked.lock["seed"]) % (1 << 32))
                self._runners[arm] = make_runner(spec, self.dir)
            return self._runners[arm]

    # ------------------------------------------------------------------ reads
    @_on_store_thread
    def events(self) -> list:
        return self.store.events()

    def derive(self, events=None):
        from evalsim.study.state import derive_state

        return derive_state(self.schedule, self.events() if events is None else events)

    def trial_view(self, t, state=None, blind: bool = True) -> dict:
        """What a page may show of one scheduled trial."""
        d = {
            "trial": t.trial,
            "index": t.index,
            "code": t.code,
            "position": t.position,
            "x_cm": t.x_cm,
            "y_cm": t.y_cm,
            "block": t.block,
            "condition": t.condition,
            "has_runner": self.has_runner(t),
        }
        if not blind:
            d["arm"] = t.arm
        if state is not None and t.trial in state.outcomes:
            o = state.outcomes[t.trial]
            d["outcome"] = {
                "success": o.success,
                "failure": o.failure,
                "note": o.note,
                "event": o.event.id,
                "by": o.event.payload.get("by"),
            }
        return d

    @_on_store_thread
    def state(self) -> dict:
        """The whole console state as JSON (what ``/api/state`` answers)."""
        events = self.events()
        st = self.derive(events)
        blind = st.unblinded is None
        session = pause = None
        runs: dict[str, dict] = {}
        last_outcome = None
        for ev in events:
            if ev.kind == "session":
                session = ev
            elif ev.kind == "pause":
                pause = ev
            elif ev.kind == "run" and ev.trial:
                runs[ev.trial] = ev.payload
        for o in reversed(st.ordered_outcomes()):
            last_outcome = o
            break
        nxt = st.next_trial
        current = self.trial_view(nxt, st, blind) if nxt is not None else None
        if current is not None and nxt.trial in runs:
            current["run"] = self._run_view(runs[nxt.trial])
        recent = [
            self.trial_view(o.trial, st, blind) | {"seq": o.event.seq}
            for o in st.ordered_outcomes()[-8:]
        ]
        return {
            "version": events[-1].seq if events else 0,
            "events": len(events),
            "total": len(self.schedule),
            "done": st.done,
            "current": current,
            "recent": recent[::-1],
            "last_outcome": None
            if last_outcome is None
            else {"event": last_outcome.event.id, "trial": last_outcome.trial.trial},
            "session": None
            if session is None
            else {"operator": session.payload.get("operator"), "id": session.id},
            "paused": bool(pause and pause.payload.get("paused")),
            "stopped": st.stop is not None,
            "stop_message": "stop: the pre-registered rule has decided" if st.stop else None,
            "unblinded": not blind,
            "deviations": len(st.out_of_order) + len(st.after_stop) + len(st.undone),
            "failure_types": list(self.failure_types),
            "checklist": list(self.checklist),
            "positions": self.positions,
            "title": self.redact(self.protocol.data.get("title", "")),
            "study_sha256": self.lock_sha256[:12],
        }

    def _run_view(self, payload: dict) -> dict:
        r = payload.get("result", {})
        return {
            "ok": r.get("ok"),
            "exit_code": r.get("exit_code"),
            "timed_out": r.get("timed_out"),
            "duration_s": r.get("duration_s"),
            "output_tail": self.redact(r.get("output_tail", "")),
            "suggested_outcome": r.get("suggested_outcome"),
            "suggested_failure": r.get("suggested_failure"),
            "attempt": payload.get("attempt"),
        }

    # ------------------------------------------------------------------ writes
    @_on_store_thread
    def _append(self, kind: str, payload: dict, event_id: str, **kw):
        from evalsim.study.errors import StudyError as _SE

        try:
            return self.store.append(kind, payload, event_id=event_id, **kw)
        except ConsoleError:
            raise
        except _SE as err:
            msg = str(err)
            status = 409 if "already stored with other content" in msg else 400
            raise ConsoleError(msg, status) from None

    @_on_store_thread
    def _last_runs(self) -> dict:
        """The last ``run`` event of each trial (read once, then kept up to date: runs are
        written only by this console)."""
        if self._runs is None:
            self._runs = {}
            for ev in self.events():
                if ev.kind == "run" and ev.trial:
                    self._runs[ev.trial] = ev
        return self._runs

    @_on_store_thread
    def _log_run(self, event_id: str, trial: str, payload: dict):
        ev, dup = self._append("run", payload, event_id, trial=trial)
        self._last_runs()[trial] = ev
        return ev, dup

    @_on_store_thread
    def start_session(self, event_id, operator, checklist) -> dict:
        eid = _client_id(event_id)
        name = _text(operator, "operator", MAX_NAME_CHARS, required=True)
        if not isinstance(checklist, list) or sorted(map(str, checklist)) != sorted(self.checklist):
            raise ConsoleError("checklist: every item of the rig checklist must be checked")
        ev, dup = self._append(
            "session", {"operator": name, "checklist": list(self.checklist)}, eid
        )
        return {"event": ev.id, "seq": ev.seq, "duplicate": dup}

    @_on_store_thread
    def set_pause(self, event_id, paused) -> dict:
        if not isinstance(paused, bool):
            raise ConsoleError("paused: expected true or false")
        ev, dup = self._append("pause", {"paused": paused}, _client_id(event_id))
        return {"event": ev.id, "seq": ev.seq, "duplicate": dup}

    def _trial(self, trial):
        if not isinstance(trial, str) or trial not in self.by_trial:
            raise ConsoleError(f"trial {trial!r} is not in the schedule", 404)
        return self.by_trial[trial]

    def run_trial(self, event_id, trial) -> dict:
        """Run the trial's arm on its runner and log a ``run`` event; the result, blind."""
        eid = _client_id(event_id)
        t = self._trial(trial)
        for ev in self.events():  # a retried Start runs the robot once
            if ev.id == eid:
                return {"event": ev.id, "duplicate": True, "run": self._run_view(ev.payload)}
        runner = self.runner_for(t.arm)
        if runner is None:
            raise ConsoleError(f"trial {t.trial}: its arm has no runner; run it by hand", 409)
        st = self.derive()
        if t.trial in st.outcomes:
            raise ConsoleError(f"trial {t.trial} already has an outcome; undo it first", 409)
        attempt = 1 + sum(1 for e in self.events() if e.kind == "run" and e.trial == t.trial)
        # named by the review key, not the trial id: the blind review shows these paths, and a
        # trial id leads to its blind code on the run sheet
        out_dir = self.dir / RUNS_DIR / self.review_key(t.trial) / f"attempt{attempt}"
        req = TrialRequest(t.trial, t.condition, t.x_cm, t.y_cm, t.block, out_dir, attempt)
        try:
            result = runner.run(req)
        except Exception as err:  # a crash of the runner is a runner failure, logged
            result = RunResult(runner.kind, False, None, False, 0.0, f"runner crashed: {err}")
        ev, dup = self._log_run(eid, t.trial, {"attempt": attempt, "result": result.to_dict()})
        return {"event": ev.id, "duplicate": dup, "run": self._run_view(ev.payload)}

    @_on_store_thread
    def record_outcome(
        self,
        event_id,
        trial,
        success,
        failure=None,
        note=None,
        duration_s=None,
        operator=None,
    ) -> dict:
        """Store an outcome once; a second outcome of the same trial is refused (409)."""
        eid = _client_id(event_id)
        t = self._trial(trial)
        if not isinstance(success, bool):
            raise ConsoleError("success: expected true or false")
        if success:
            failure = None
        elif failure is not None and failure not in self.failure_types:
            raise ConsoleError(
                f"failure: {failure!r} is not a failure type of the protocol "
                f"({', '.join(self.failure_types)})"
            )
        note = _text(note, "note", MAX_NOTE_CHARS) or None
        by = _text(operator, "operator", MAX_NAME_CHARS) or None
        if duration_s is not None and (
            isinstance(duration_s, bool)
            or not isinstance(duration_s, (int, float))
            or not 0 <= duration_s < 86400
        ):
            raise ConsoleError("duration_s: expected seconds in [0, 86400)")
        payload = {}
        if duration_s is not None:
            payload["duration_s"] = round(float(duration_s), 3)
        # a retry of a stored submission carries the same content (the same run's
        # suggestion): the store answers it as a duplicate
        run = self._last_runs().get(t.trial)
        if run is not None and run.payload.get("result", {}).get("ok"):
            r = run.payload["result"]
            payload["suggested"] = {
                "outcome": r.get("suggested_outcome"),
                "failure": r.get("suggested_failure"),
                "run": run.id,
            }

        extra = {k: payload.pop(k) for k in ("duration_s", "suggested") if k in payload}
        try:
            res = self.study.record(
                t.trial,
                success,
                failure,
                note,
                event_id=eid,
                by=by,
                source="console",
                extra=extra,
            )
        except StudyError as err:
            msg = str(err)
            status = 409 if ("already has an outcome" in msg or "other content" in msg) else 400
            raise ConsoleError(msg, status) from None
        return {
            "event": res.event.id,
            "seq": res.event.seq,
            "trial": t.trial,
            "duplicate": res.duplicate,
            "stopped": bool(res.decision and res.decision.get("status") == "stop"),
        }

    @_on_store_thread
    def undo_last(self, event_id, expected=None) -> dict:
        """Undo the last active outcome (an ``undo`` event pointing at it).

        ``expected`` (the outcome event the page saw as last) guards against two pages
        undoing twice: if another entry came since, the undo is refused.
        """
        eid = _client_id(event_id)
        events = self.events()
        for ev in events:
            if ev.id == eid and ev.kind == "undo":
                return {"event": ev.id, "cancels": ev.cancels, "duplicate": True}
        st = self.derive(events)
        last = st.ordered_outcomes()[-1] if st.outcomes else None
        if last is None:
            raise ConsoleError("nothing to undo", 409)
        if expected is not None and expected != last.event.id:
            raise ConsoleError("the last entry changed meanwhile; reload before undoing", 409)

        try:
            ev = self.study.undo(last.event.id, why="undo on the console", undo_id=eid)
        except StudyError as err:
            raise ConsoleError(str(err), 409) from None
        dup = False
        return {
            "event": ev.id,
            "cancels": last.event.id,
            "trial": last.trial.trial,
            "duplicate": dup,
        }

    # ------------------------------------------------------------------ review
    @_on_store_thread
    def review_items(self) -> list[dict]:
        """Every recorded trial in a shuffled order fixed by the lock, arm and code hidden.

        Each item has a review key (a hash of the trial id and the lock, so the key says
        nothing of the order or the arm), the position and block, the runner's output and
        artefacts, the notes, and the reviewer labels so far.
        """
        events = self.events()
        st = self.derive(events)
        runs: dict[str, list] = {}
        labels: dict[str, dict] = {}
        for ev in events:
            if ev.kind == "run" and ev.trial:
                runs.setdefault(ev.trial, []).append(ev.payload)
            elif ev.kind == "review" and ev.trial:
                labels[ev.trial] = ev.payload
        items = []
        for trial, o in st.outcomes.items():
            t = o.trial
            key = self.review_key(trial)
            last_run = runs.get(trial, [{}])[-1].get("result", {})
            items.append(
                {
                    "key": key,
                    "position": t.position,
                    "x_cm": t.x_cm,
                    "y_cm": t.y_cm,
                    "block": t.block,
                    "note": o.note,
                    "output": self.redact(last_run.get("output_tail", "")),
                    "artefacts": [a for a in last_run.get("artefacts", []) if self._servable(a)],
                    "label": None
                    if trial not in labels
                    else {
                        "success": labels[trial].get("success"),
                        "failure": labels[trial].get("failure"),
                        "by": labels[trial].get("by"),
                    },
                }
            )
        items.sort(key=lambda d: d["key"])
        return items

    def review_key(self, trial: str) -> str:
        return hashlib.sha256(f"review|{self.lock_sha256}|{trial}".encode()).hexdigest()[:10]

    def trial_for_review_key(self, key) -> str:
        for t in self.schedule:
            if self.review_key(t.trial) == key:
                return t.trial
        raise ConsoleError(f"review item {key!r} does not exist", 404)

    @_on_store_thread
    def record_review(self, event_id, key, success, failure=None, reviewer=None) -> dict:
        eid = _client_id(event_id)
        trial = self.trial_for_review_key(key)
        if not isinstance(success, bool):
            raise ConsoleError("success: expected true or false")
        if not success and failure is not None and failure not in self.failure_types:
            raise ConsoleError(f"failure: {failure!r} is not a failure type of the protocol")
        by = _text(reviewer, "reviewer", MAX_NAME_CHARS, required=True)
        payload = {"success": success, "failure": None if success else failure, "by": by}
        ev, dup = self._append("review", payload, eid, trial=trial)
        return {"event": ev.id, "duplicate": dup}

    # ------------------------------------------------------------------ artefacts
    def _servable(self, rel: str) -> bool:
        try:
            self.artefact_path(rel)
        except ConsoleError:
            return False
        return True

    def artefact_path(self, rel) -> Path:
        """The file ``rel`` names, if it lies inside the study's ``runs/`` folder.

        Refuses absolute paths, ``..``, symbolic links that lead out, and anything outside
        ``runs/`` (the lock and the store name the arms and are never served).
        """
        if not isinstance(rel, str) or not rel or "\x00" in rel or rel.startswith(("/", "\\")):
            raise ConsoleError("artefact: not a path inside the study folder", 404)
        root = (self.dir / RUNS_DIR).resolve()
        path = (self.dir / rel).resolve()
        try:
            path.relative_to(root)
        except ValueError:
            raise ConsoleError("artefact: not a path inside the study's runs folder", 404) from None
        if not path.is_file():
            raise ConsoleError("artefact: no such file", 404)
        return path
