"""A locked study: the protocol decided before the first trial, a blocked and blinded
schedule, an append-only trial store, and a report that follows the lock.

Modules: :mod:`~evalsim.study.protocol` (``study.yaml``, its schema, canonical form and
hash), :mod:`~evalsim.study.lock` (init, lock, amend), :mod:`~evalsim.study.schedule`
(blocks, balanced arm orders, blind codes), :mod:`~evalsim.study.sheets` (grid sheet and run
sheet), :mod:`~evalsim.study.store` (the SQLite event log), :mod:`~evalsim.study.folder`
(a locked study behind one object), :mod:`~evalsim.study.state` (progress and deviations),
:mod:`~evalsim.study.analysis` (the locked primary test) and :mod:`~evalsim.study.report`.

API in brief (the store is the one door: read and write trials only through these)::

    from evalsim.study import open_study, StudyError

    study = open_study("my_study")      # StudyError if not locked or study.yaml changed
    study.sha256                        # the lock hash (lock.json "study_sha256")
    study.schedule                      # tuple of ScheduledTrial, in run order:
    t = study.schedule[0]               #   t.trial ("T001"), t.code (blind code), t.arm,
                                        #   t.condition, t.position, t.x_cm, t.y_cm, t.block
    study.status()                      # the `status --json` dict: progress, next, deviations,
                                        #   the whole schedule (blind until unblinded)
    st = study.state()                  # StudyState: st.outcomes {trial: Outcome},
    st.next_trial                       #   st.undone, st.out_of_order, st.after_stop,
                                        #   st.stop, st.unblinded, st.amendments
    r = study.record("T001", "success", event_id="client-made-uuid")
    r.duplicate                         # True if that id was already stored (recorded once)
    r.decision                          # sequential designs: {"status": "continue"|"stop",..}
    study.record("T002", "failure", failure="dropped", note="...", event_id=...)
    study.undo(r.event.id, why="scored the wrong video")   # an undo event pointing at it
    study.events()                      # every Event (seq, id, kind, trial, cancels,
                                        #   payload, recorded_at), in commit order
    study.unblind(by="Ana")             # logged; outputs name arms by code until then
    study.label(arm, unblinded)         # the code before unblinding, the name after

    from evalsim.study.report import write_report, report_document
    paths, doc = write_report(study)    # report/report.{html,json,md}; doc = the JSON

    from evalsim.study import init_study, lock_study, verify_lock
    init_study("my_study"); lock_study("my_study", seed=7); verify_lock("my_study")

A refused request raises :class:`StudyError` (a ``ValueError``) whose message is one line
naming the key, trial or file.
"""

from __future__ import annotations

from evalsim.study.errors import StudyError
from evalsim.study.folder import OUTCOMES, RecordResult, Study, open_study
from evalsim.study.lock import (
    LOCK_FILE,
    amend_study,
    init_study,
    lock_study,
    read_lock,
    verify_lock,
)
from evalsim.study.protocol import STUDY_FILE, Protocol, load_protocol
from evalsim.study.schedule import ScheduledTrial, make_schedule
from evalsim.study.state import Outcome, StudyState
from evalsim.study.store import STORE_FILE, Event, EventStore, new_event_id

__all__ = [
    "LOCK_FILE",
    "OUTCOMES",
    "STORE_FILE",
    "STUDY_FILE",
    "Event",
    "EventStore",
    "Outcome",
    "Protocol",
    "RecordResult",
    "ScheduledTrial",
    "Study",
    "StudyError",
    "StudyState",
    "amend_study",
    "init_study",
    "load_protocol",
    "lock_study",
    "make_schedule",
    "new_event_id",
    "open_study",
    "read_lock",
    "verify_lock",
]
