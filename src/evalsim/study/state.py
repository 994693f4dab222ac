"""A study's state, derived from its schedule and its events (never stored).

Walking the events in commit order gives: the active outcome of each trial (an outcome not
cancelled by an undo), the undone entries, the trials recorded out of their scheduled order,
the sequential stop and the trials recorded after it, the unblinding and the amendments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalsim.study.schedule import ScheduledTrial
from evalsim.study.store import Event

__all__ = ["Outcome", "StudyState", "derive_state"]


@dataclass(frozen=True)
class Outcome:
    """The active outcome of one trial.

    Attributes
    ----------
    trial : ScheduledTrial
    success : bool
    failure : str or None
    note : str or None
    event : Event
        The outcome event.
    out_of_order : bool
        Recorded while an earlier scheduled trial was still open.
    after_stop : bool
        Recorded after the sequential design's stop (kept, never in the primary analysis).
    """

    trial: ScheduledTrial
    success: bool
    failure: str | None
    note: str | None
    event: Event
    out_of_order: bool
    after_stop: bool


@dataclass
class StudyState:
    """Progress and deviations of a study.

    Attributes
    ----------
    outcomes : dict of str to Outcome
        Active outcome per trial id.
    undone : list of (Event, Event)
        (cancelled event, undo event) pairs.
    out_of_order : list of Outcome
    after_stop : list of Outcome
    stop : Event or None
        The sequential design's stop.
    unblinded : Event or None
    amendments : list of Event
    """

    schedule: list
    outcomes: dict = field(default_factory=dict)
    undone: list = field(default_factory=list)
    out_of_order: list = field(default_factory=list)
    after_stop: list = field(default_factory=list)
    stop: Event | None = None
    unblinded: Event | None = None
    amendments: list = field(default_factory=list)
    events: list = field(default_factory=list)

    @property
    def done(self) -> int:
        return len(self.outcomes)

    @property
    def next_trial(self) -> ScheduledTrial | None:
        """The first scheduled trial without an outcome (None when all are done)."""
        for t in self.schedule:
            if t.trial not in self.outcomes:
                return t
        return None

    def skipped(self) -> list[ScheduledTrial]:
        """Open trials scheduled before the last recorded one."""
        if not self.outcomes:
            return []
        last = max(o.trial.index for o in self.outcomes.values())
        return [t for t in self.schedule[:last] if t.trial not in self.outcomes]

    def ordered_outcomes(self) -> list[Outcome]:
        """Active outcomes in the order they were recorded."""
        return sorted(self.outcomes.values(), key=lambda o: o.event.seq)


def derive_state(schedule: list[ScheduledTrial], events: list[Event]) -> StudyState:
    """The state of a study from its schedule and its events in commit order."""
    by_id = {t.trial: t for t in schedule}
    st = StudyState(schedule=list(schedule), events=list(events))
    closed = [False] * len(schedule)
    first_open = 0  # the smallest open index (len(schedule) when none is open)
    active: dict[str, tuple] = {}  # trial -> (event, out_of_order, after_stop)
    by_event: dict[str, Event] = {}
    for ev in events:
        by_event[ev.id] = ev
        if ev.kind == "outcome" and ev.trial in by_id:
            t = by_id[ev.trial]
            ooo = t.index != first_open
            closed[t.index] = True
            while first_open < len(closed) and closed[first_open]:
                first_open += 1
            active[ev.trial] = (ev, ooo, st.stop is not None)
        elif ev.kind == "undo" and ev.cancels in by_event:
            gone = by_event[ev.cancels]
            if gone.kind == "outcome" and gone.trial in active and active[gone.trial][0] is gone:
                del active[gone.trial]
                i = by_id[gone.trial].index
                closed[i] = False
                first_open = min(first_open, i)
                st.undone.append((gone, ev))
        elif ev.kind == "stop" and st.stop is None:
            st.stop = ev
        elif ev.kind == "unblind" and st.unblinded is None:
            st.unblinded = ev
        elif ev.kind == "amended":
            st.amendments.append(ev)
    for trial, (ev, ooo, after) in active.items():
        p = ev.payload
        o = Outcome(
            by_id[trial], bool(p["success"]), p.get("failure"), p.get("note"), ev, ooo, after
        )
        st.outcomes[trial] = o
        if ooo:
            st.out_of_order.append(o)
        if after:
            st.after_stop.append(o)
    st.out_of_order.sort(key=lambda o: o.event.seq)
    st.after_stop.sort(key=lambda o: o.event.seq)
    return st
