"""A locked study folder: its protocol, schedule and trial store behind one object.

:func:`open_study` checks the lock (``study.yaml`` unchanged) and returns a :class:`Study`,
whose methods are the only way the command line, the console and the report touch the
trial store: :meth:`Study.record`, :meth:`Study.undo`, :meth:`Study.unblind`,
:meth:`Study.events`, :meth:`Study.state`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from evalsim.study.errors import StudyError
from evalsim.study.lock import locked_protocol
from evalsim.study.protocol import Protocol
from evalsim.study.schedule import ScheduledTrial
from evalsim.study.state import StudyState, derive_state
from evalsim.study.store import STORE_FILE, Event, EventStore

__all__ = ["Study", "RecordResult", "open_study", "OUTCOMES"]

#: The outcome words ``record`` takes.
OUTCOMES = {"success": True, "failure": False}
#: Longest note kept with an outcome (characters).
MAX_NOTE = 2000


@dataclass(frozen=True)
class RecordResult:
    """What :meth:`Study.record` did.

    Attributes
    ----------
    event : Event
    duplicate : bool
        The event id was already stored with this content (recorded once).
    out_of_order : bool
        The trial was not the next one scheduled (a deviation).
    after_stop : bool
        Recorded after the sequential stop (kept, not in the primary analysis).
    decision : dict or None
        For a sequential design, its decision after this outcome (``status`` continue or
        stop, ``verdict``, ``certified_type1``, ``at``).
    """

    event: Event
    duplicate: bool
    out_of_order: bool
    after_stop: bool
    decision: dict | None = None


class Study:
    """A locked study (use :func:`open_study`).

    Attributes
    ----------
    folder : Path
    protocol : Protocol
        The locked protocol.
    lock : dict
        The lock document (``lock.json``).
    schedule : tuple of ScheduledTrial
    store : EventStore
    """

    def __init__(self, folder: Path, protocol: Protocol, lock: dict, clock=None):
        self.folder = folder
        self.protocol = protocol
        self.lock = lock
        self.schedule = tuple(ScheduledTrial(**t) for t in lock["schedule"])
        self.by_trial = {t.trial: t for t in self.schedule}
        self.store = EventStore(folder / STORE_FILE, lock["study_sha256"], clock=clock)

    @property
    def sha256(self) -> str:
        return self.lock["study_sha256"]

    @property
    def codes(self) -> dict[str, str]:
        """``{arm: blind code}``."""
        return dict(self.lock["blind_codes"])

    def events(self) -> list[Event]:
        """Every event in commit order."""
        return self.store.events()

    def state(self, events: list[Event] | None = None) -> StudyState:
        """Progress and deviations (:func:`evalsim.study.state.derive_state`)."""
        return derive_state(list(self.schedule), self.events() if events is None else events)

    def status(self, events: list[Event] | None = None) -> dict:
        """Progress, the next trial and the deviations (``evalsim study status --json``).

        Returns
        -------
        dict
            ``study_sha256``, ``done``, ``total``, ``blocks`` (done and scheduled per
            block), ``unblinded``, ``next`` (trial, code, position, coordinates, block; the
            arm once unblinded), ``stop``, ``deviations`` (undone, out_of_order, skipped,
            after_stop, amendments) and ``schedule`` (every trial, blind until unblinded,
            with ``done``).
        """
        study = self
        events = study.events() if events is None else events
        st = study.state(events)
        blind = st.unblinded is None
        nxt = st.next_trial
        total = len(study.schedule)
        dev = {
            "undone": [
                {"event": g.id, "trial": g.trial, "undo": u.id, "why": u.payload.get("why")}
                for g, u in st.undone
            ],
            "out_of_order": [o.trial.trial for o in st.out_of_order],
            "skipped": [t.trial for t in st.skipped()],
            "after_stop": [o.trial.trial for o in st.after_stop],
            "amendments": [e.payload for e in st.amendments],
        }
        blocks: dict[str, dict] = {}
        for t in study.schedule:
            b = blocks.setdefault(t.block, {"done": 0, "total": 0})
            b["total"] += 1
            b["done"] += t.trial in st.outcomes
        return {
            "study_sha256": study.sha256,
            "done": st.done,
            "total": total,
            "blocks": blocks,
            "unblinded": not blind,
            "next": None
            if nxt is None
            else {
                "trial": nxt.trial,
                "code": nxt.code,
                "position": nxt.position,
                "x_cm": nxt.x_cm,
                "y_cm": nxt.y_cm,
                "block": nxt.block,
                **({} if blind else {"arm": nxt.arm}),
            },
            "stop": None if st.stop is None else st.stop.payload,
            "deviations": dev,
            "schedule": [
                {**t.to_dict(blind=blind), "done": t.trial in st.outcomes} for t in study.schedule
            ],
        }

    def is_unblinded(self, events: list[Event] | None = None) -> bool:
        evs = self.events() if events is None else events
        return any(e.kind == "unblind" for e in evs)

    def label(self, arm: str, unblinded: bool) -> str:
        """The arm's name once unblinded, its blind code before."""
        return arm if unblinded else self.codes[arm]

    def trial(self, trial_id: str) -> ScheduledTrial:
        """The scheduled trial ``trial_id``; refuses one not in the schedule."""
        t = self.by_trial.get(str(trial_id).strip())
        if t is None:
            first, last = self.schedule[0].trial, self.schedule[-1].trial
            raise StudyError(f"trial {trial_id!r} is not in the schedule ({first} ... {last})")
        return t

    # ------------------------------------------------------------------ writes
    def record(
        self,
        trial_id: str,
        outcome,
        failure: str | None = None,
        note: str | None = None,
        event_id: str | None = None,
        by: str | None = None,
        source: str | None = None,
        extra: dict | None = None,
    ) -> RecordResult:
        """Append the outcome of a scheduled trial.

        Parameters
        ----------
        trial_id : str
            A trial of the schedule.
        outcome : {"success", "failure"} or bool
        failure : str, optional
            One of the rubric's failure types (only with a failure).
        note : str, optional
        event_id : str, optional
            A client-made id: the same submission twice is recorded once.
        by, source : str, optional
            Who recorded it, and from where (``cli``, ``import:<file>``, ``console``).
        extra : dict, optional
            More payload keys kept with the outcome (the console's ``duration_s`` and the
            runner's ``suggested`` outcome); they never replace the keys above.

        Raises
        ------
        StudyError
            A trial not in the schedule, an outcome word or failure type not allowed, or a
            second outcome for a trial without an undo.
        """
        t = self.trial(trial_id)
        if isinstance(outcome, str):
            word = outcome.strip().lower()
            if word not in OUTCOMES:
                raise StudyError(
                    f"trial {t.trial}: outcome must be success or failure, got {outcome!r}"
                )
            success = OUTCOMES[word]
        elif isinstance(outcome, bool):
            success = outcome
        else:
            raise StudyError(f"trial {t.trial}: outcome must be success or failure")
        types = self.protocol.failure_types
        if failure is not None and failure != "":
            if success:
                raise StudyError(f"trial {t.trial}: a failure type goes with a failure only")
            if failure not in types:
                allowed = ", ".join(types) or "none declared in the rubric"
                raise StudyError(
                    f"trial {t.trial}: failure type {failure!r} is not in the rubric ({allowed})"
                )
        else:
            failure = None
        if note is not None and len(note) > MAX_NOTE:
            raise StudyError(f"trial {t.trial}: note longer than {MAX_NOTE} characters")
        payload = {"success": success, "failure": failure, "note": note or None}
        if by:
            payload["by"] = by
        if source:
            payload["source"] = source
        for key, value in (extra or {}).items():
            payload.setdefault(key, value)

        def check(events: list[Event]) -> None:
            st = derive_state(list(self.schedule), events)
            held = st.outcomes.get(t.trial)
            if held is not None:
                raise StudyError(
                    f"trial {t.trial} already has an outcome (event {held.event.id}); undo it first"
                )

        ev, dup = self.store.append(
            "outcome", payload, event_id=event_id, trial=t.trial, check=check
        )
        st = self.state()
        o = st.outcomes.get(t.trial)
        ooo = bool(o and o.out_of_order)
        after = bool(o and o.after_stop)
        decision = None
        if self.protocol.sequential_design is not None and not dup:
            decision = self._sequential_step(st)
        return RecordResult(ev, dup, ooo, after, decision)

    def _sequential_step(self, st: StudyState) -> dict:
        """The design's decision on the outcomes so far; records the stop once."""
        from evalsim.study.analysis import sequential_decision

        decision = sequential_decision(self, st)
        if decision["status"] == "stop" and st.stop is None:
            try:
                self.store.append("stop", decision, event_id=f"stop-{self.sha256[:16]}")
            except StudyError:  # another recorder stored the stop first: it stands
                pass
        return decision

    def undo(
        self,
        event_id: str,
        why: str | None = None,
        undo_id: str | None = None,
        by: str | None = None,
    ) -> Event:
        """Cancel an outcome event by appending an undo that points at it.

        Raises
        ------
        StudyError
            No such event, not an outcome, or already undone.
        """

        def check(events: list[Event]) -> None:
            target = next((e for e in events if e.id == event_id), None)
            if target is None:
                raise StudyError(f"event {event_id!r} is not in the trial store")
            if target.kind != "outcome":
                raise StudyError(f"event {event_id!r} is a {target.kind}; only outcomes undo")
            if any(e.kind == "undo" and e.cancels == event_id for e in events):
                raise StudyError(f"event {event_id!r} is already undone")

        payload = {"why": why or None}
        if by:
            payload["by"] = by
        trial = next((e.trial for e in self.events() if e.id == event_id), None)
        ev, _ = self.store.append(
            "undo", payload, event_id=undo_id, trial=trial, cancels=event_id, check=check
        )
        return ev

    def unblind(self, by: str, event_id: str | None = None) -> tuple[Event, bool]:
        """Record the unblinding by ``by``; outputs name the arms from then on.

        Returns
        -------
        event : Event
        first : bool
            False when the study was already unblinded (nothing new is written).
        """
        by = (by or "").strip()
        if not by:
            raise StudyError("--by: name who unblinds the study")
        prior = next((e for e in self.events() if e.kind == "unblind"), None)
        if prior is not None:
            return prior, False
        ev, _ = self.store.append("unblind", {"by": by}, event_id=event_id)
        return ev, True


def open_study(folder: str | os.PathLike, clock=None) -> Study:
    """Open a locked study folder, refusing one whose ``study.yaml`` changed since the lock.

    ``clock`` (optional) dates new events (see :class:`~evalsim.study.store.EventStore`).

    Raises
    ------
    StudyError
        Not a study folder, not locked, or changed since the lock (one line).
    """
    d = Path(folder)
    protocol, lock = locked_protocol(d)
    return Study(d, protocol, lock, clock=clock)
