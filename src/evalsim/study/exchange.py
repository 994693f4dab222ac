"""Trials in and out of a study: the paper run sheet typed into a CSV, and the trial log.

* :func:`import_outcomes` reads a CSV of outcomes typed from paper run sheets (columns
  ``trial`` and ``outcome``, optionally ``failure``, ``note``, and ``code`` / ``position``
  which must then match the schedule), checks every row before writing any, and records
  each as an outcome event whose id is derived from the file's content and the row, so
  importing the same file twice records it once.
* :func:`export_rows` gives the trial log -- one row per active outcome -- in the columns
  every other ``evalsim`` command reads (``policy``, ``success``, ``condition``, ``task``,
  ``failure``), plus the study's own (trial, block, position, order, deviation flags).
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from evalsim.study.errors import StudyError

__all__ = ["EXPORT_COLUMNS", "IMPORT_MAX_BYTES", "export_rows", "import_outcomes"]

#: Columns of the exported trial log, in order.
EXPORT_COLUMNS = (
    "policy",
    "success",
    "condition",
    "task",
    "failure",
    "trial",
    "block",
    "position",
    "x_cm",
    "y_cm",
    "order",
    "recorded_at",
    "out_of_order",
    "after_stop",
    "primary",
    "note",
    "event",
)
IMPORT_MAX_BYTES = 16 << 20
_OUTCOME_WORDS = {
    "success": True,
    "s": True,
    "1": True,
    "yes": True,
    "y": True,
    "failure": False,
    "f": False,
    "0": False,
    "no": False,
    "n": False,
}


def export_rows(study, unblinded: bool | None = None) -> list[dict]:
    """The trial log of a study, one dict per active outcome, in the order recorded.

    ``policy`` is the arm's blind code until the study is unblinded; ``primary`` is 0 for a
    trial recorded after a sequential stop (kept, never in the primary analysis).
    """
    events = study.events()
    st = study.state(events)
    if unblinded is None:
        unblinded = st.unblinded is not None
    task = study.protocol.data.get("title") or "study"
    rows = []
    for i, o in enumerate(st.ordered_outcomes(), start=1):
        t = o.trial
        rows.append(
            {
                "policy": study.label(t.arm, unblinded),
                "success": int(o.success),
                "condition": t.condition,
                "task": task,
                "failure": o.failure or "",
                "trial": t.trial,
                "block": t.block,
                "position": t.position,
                "x_cm": t.x_cm,
                "y_cm": t.y_cm,
                "order": i,
                "recorded_at": o.event.recorded_at,
                "out_of_order": int(o.out_of_order),
                "after_stop": int(o.after_stop),
                "primary": int(not o.after_stop),
                "note": o.note or "",
                "event": o.event.id,
            }
        )
    return rows


def rows_csv(rows: list[dict]) -> str:
    """The rows as CSV text (header :data:`EXPORT_COLUMNS`)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _read_csv(path: Path) -> tuple[list[str], list[dict], str]:
    if not path.exists():
        raise StudyError(f"{path}: no such file")
    if not path.is_file():
        raise StudyError(f"{path}: not a regular file")
    if path.stat().st_size > IMPORT_MAX_BYTES:
        raise StudyError(f"{path}: larger than {IMPORT_MAX_BYTES} bytes; not a run-sheet CSV")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise StudyError(f"{path}: not UTF-8 text") from None
    if "\x00" in text:
        raise StudyError(f"{path}: holds NUL bytes; not a CSV file")
    try:
        reader = csv.DictReader(io.StringIO(text))
        header = [h.strip().lower() for h in (reader.fieldnames or [])]
        rows = []
        for r in reader:
            if None in r:
                raise StudyError(f"{path}: line {reader.line_num}: more cells than columns")
            rows.append({k.strip().lower(): (v or "").strip() for k, v in r.items()})
    except csv.Error as e:
        raise StudyError(f"{path}: not a CSV file ({e})") from None
    return header, rows, hashlib.sha256(raw).hexdigest()


def import_outcomes(study, path, by: str | None = None) -> dict:
    """Record the outcomes of a CSV typed from paper run sheets.

    Every row is checked before any is written: the trial must be in the schedule and
    appear once in the file, the outcome must be success or failure (also S/F, 1/0), the
    failure type one of the rubric's, and a ``code`` or ``position`` column must match the
    schedule. A trial that already holds an outcome from elsewhere is refused.

    Returns
    -------
    dict
        ``recorded`` (new events), ``already`` (rows of this file recorded before),
        ``out_of_order`` (trial ids recorded out of their scheduled order).
    """
    p = Path(path)
    header, rows, sha = _read_csv(p)
    for col in ("trial", "outcome"):
        if col not in header:
            raise StudyError(f"{p}: missing column {col!r} (columns: {', '.join(header)})")
    if not rows:
        raise StudyError(f"{p}: no rows")
    seen: dict[str, int] = {}
    plan = []
    types = study.protocol.failure_types
    for line, r in enumerate(rows, start=2):
        where = f"{p}: line {line}"
        tid = r["trial"]
        t = study.by_trial.get(tid)
        if t is None:
            raise StudyError(f"{where}: trial {tid!r} is not in the schedule")
        if tid in seen:
            raise StudyError(f"{where}: trial {tid} appears twice (also line {seen[tid]})")
        seen[tid] = line
        word = r["outcome"].lower()
        if word not in _OUTCOME_WORDS:
            raise StudyError(
                f"{where}: trial {tid}: outcome {r['outcome']!r} is not success or failure"
            )
        success = _OUTCOME_WORDS[word]
        failure = r.get("failure") or None
        if failure is not None:
            if success:
                raise StudyError(f"{where}: trial {tid}: a failure type goes with a failure")
            if failure not in types:
                raise StudyError(
                    f"{where}: trial {tid}: failure type {failure!r} is not in the rubric "
                    f"({', '.join(types) or 'none declared'})"
                )
        for col, want in (("code", t.code), ("position", t.position)):
            got = r.get(col)
            if got and got != want:
                raise StudyError(
                    f"{where}: trial {tid}: {col} {got!r} does not match the schedule ({want!r})"
                )
        plan.append((tid, success, failure, r.get("note") or None, f"import-{sha[:20]}-{tid}"))
    st = study.state()
    for tid, *_rest, eid in plan:
        held = st.outcomes.get(tid)
        if held is not None and held.event.id != eid:
            raise StudyError(
                f"{p}: line {seen[tid]}: trial {tid} already has an outcome "
                f"(event {held.event.id}); undo it first"
            )
    recorded, already, ooo = 0, 0, []
    for tid, success, failure, note, eid in plan:
        r = study.record(
            tid,
            success,
            failure=failure,
            note=note,
            event_id=eid,
            by=by,
            source=f"import:{p.name}",
        )
        if r.duplicate:
            already += 1
        else:
            recorded += 1
            if r.out_of_order:
                ooo.append(tid)
    return {
        "file": str(p),
        "rows": len(plan),
        "recorded": recorded,
        "already": already,
        "out_of_order": ooo,
    }
