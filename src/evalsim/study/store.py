"""The trial store: an append-only log of events in an embedded SQLite database.

The store is the one door to a study's trials: the command line, the console and the report
read and write events through :class:`EventStore`, never the database directly.

* One file, ``trials.sqlite`` in the study folder, in WAL mode with ``synchronous=FULL``: an
  event whose :meth:`EventStore.append` returned is on disk and survives ``kill -9``.
* One transaction per event (``BEGIN IMMEDIATE``: concurrent writers queue on SQLite's lock
  with a busy timeout, so none of their events is lost).
* Append-only: triggers refuse every ``UPDATE`` and ``DELETE`` of an event. An undo is an
  event of its own whose ``cancels`` names the event it cancels.
* Every event carries a client-made ``id``: appending the same id with the same content
  again returns the stored event (a double submission is recorded once); the same id with
  other content is refused.
* A read opens the file read-only (``mode=ro``) and never rewrites it; a missing store reads
  as no events. A file that is not a store of this program (another database, a truncated
  file) is refused in one line that names it.

References
----------
.. [1] SQLite, "Write-Ahead Logging", https://www.sqlite.org/wal.html
.. [2] SQLite, "Atomic Commit In SQLite", https://www.sqlite.org/atomiccommit.html
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalsim.study.errors import StudyError

__all__ = [
    "STORE_FILE",
    "APPLICATION_ID",
    "EVENT_KINDS",
    "Event",
    "EventStore",
    "new_event_id",
]

STORE_FILE = "trials.sqlite"
#: ``PRAGMA application_id`` of a trial store ("evST"): tells it from any other database.
APPLICATION_ID = 0x65765354
STORE_FORMAT_VERSION = 1
#: Seconds a writer waits for another writer's transaction before giving up.
BUSY_TIMEOUT_S = 30.0

#: The kinds of event: an outcome of a scheduled trial, an undo of an earlier event, the
#: unblinding, a sequential design's stop, an amendment of the study.
EVENT_KINDS = ("outcome", "undo", "unblind", "stop", "amended") + (
    # the console's (issue 42, evalsim.study.web.console): a session start, a pause, a
    # runner's run of a trial, a blind reviewer's label
    "session",
    "pause",
    "run",
    "review",
)

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    trial TEXT,
    cancels TEXT,
    payload TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the trial store is append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the trial store is append-only'); END;
CREATE TRIGGER meta_fixed_update BEFORE UPDATE ON meta
BEGIN SELECT RAISE(ABORT, 'the trial store is append-only'); END;
CREATE TRIGGER meta_fixed_delete BEFORE DELETE ON meta
BEGIN SELECT RAISE(ABORT, 'the trial store is append-only'); END;
"""


def utc_now() -> str:
    """The UTC time now, ISO 8601 with microseconds."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def new_event_id() -> str:
    """A fresh random event id (a UUID4 in hex)."""
    return uuid.uuid4().hex


def _digest(event_id: str, kind: str, trial, cancels, payload_json: str) -> str:
    text = json.dumps([event_id, kind, trial, cancels, payload_json], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Event:
    """One stored event.

    Attributes
    ----------
    seq : int
        Its place in the store (1, 2, ...; the order of commits).
    id : str
        The client-made id.
    kind : str
        One of :data:`EVENT_KINDS`.
    trial : str or None
        The scheduled trial an outcome is for.
    cancels : str or None
        The id of the event an undo cancels.
    payload : dict
        The rest (``success``, ``failure``, ``note``, ``by``, ...).
    recorded_at : str
        UTC time of the commit, ISO 8601.
    digest : str
        SHA-256 of (id, kind, trial, cancels, payload): a stored row either matches it or
        was never written.
    """

    seq: int
    id: str
    kind: str
    trial: str | None
    cancels: str | None
    payload: dict
    recorded_at: str
    digest: str

    def intact(self) -> bool:
        """True when the digest matches the content."""
        pj = json.dumps(self.payload, sort_keys=True, separators=(",", ":"))
        return self.digest == _digest(self.id, self.kind, self.trial, self.cancels, pj)

    def to_dict(self) -> dict:
        return {
            "seq": self.seq,
            "id": self.id,
            "kind": self.kind,
            "trial": self.trial,
            "cancels": self.cancels,
            "payload": self.payload,
            "recorded_at": self.recorded_at,
        }


def _row_event(row) -> Event:
    seq, eid, kind, trial, cancels, payload, at, digest = row
    return Event(int(seq), eid, kind, trial, cancels, json.loads(payload), at, digest)


_SELECT = "SELECT seq, id, kind, trial, cancels, payload, recorded_at, digest FROM events"


class EventStore:
    """The append-only event log of one study (see the module docstring).

    Parameters
    ----------
    path : path
        The database file (``<study>/trials.sqlite``).
    lock_sha256 : str
        The study's lock hash: a store made under another lock is refused.
    clock : callable, optional
        Returns the ``recorded_at`` text of a new event (default: the UTC time now). A
        pipeline that rebuilds a study from pools passes a fixed clock, so that its report
        is the same bytes on every run.
    create : bool
        Make the store when it does not exist (the lock does); otherwise a missing store is
        refused, so a deleted store is never silently replaced by an empty one.
    keep_open : bool
        Keep the write connection open between appends (a bulk writer: an importer, a
        console); by default each append opens and closes its own, so a command leaves no
        connection behind.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        lock_sha256: str,
        clock=None,
        keep_open: bool = False,
        create: bool = False,
    ):
        self.path = Path(path)
        self.create = create
        self.lock_sha256 = lock_sha256
        self.clock = clock or utc_now
        self.keep_open = keep_open
        self._writer: tuple[int, sqlite3.Connection] | None = None

    def close(self) -> None:
        """Close the cached write connection (appends reopen it)."""
        if self._writer is not None:
            pid, con = self._writer
            self._writer = None
            if pid == os.getpid():
                con.close()

    def _cached_writer(self) -> sqlite3.Connection:
        """The process's write connection, opened once (a forked child opens its own)."""
        if self._writer is None or self._writer[0] != os.getpid():
            self._writer = (os.getpid(), self._write_connection())
        return self._writer[1]

    # ------------------------------------------------------------------ connections
    def _fail(self, err: Exception) -> StudyError:
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        return StudyError(f"{self.path}: not a readable evalsim trial store ({msg})")

    def _check_file(self) -> None:
        if self.path.exists() and not self.path.is_file():
            raise StudyError(f"{self.path}: not a regular file; not a trial store")

    def _check_identity(self, con: sqlite3.Connection) -> None:
        try:
            app = con.execute("PRAGMA application_id").fetchone()[0]
            if app != APPLICATION_ID:
                raise StudyError(f"{self.path}: not an evalsim trial store (another database)")
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as e:
            raise self._fail(e) from None
        if meta.get("lock_sha256") != self.lock_sha256:
            raise StudyError(
                f"{self.path}: the trial store belongs to another lock "
                f"({str(meta.get('lock_sha256'))[:12]}, this study is {self.lock_sha256[:12]})"
            )

    def _missing(self) -> StudyError:
        return StudyError(
            f"{self.path}: the trial store is missing (the lock made it); restore it from a backup"
        )

    def _read_connection(self) -> sqlite3.Connection | None:
        """A read-only connection, or None when there is no store yet (``create``)."""
        self._check_file()
        if not self.path.exists():
            if self.create:
                return None
            raise self._missing()
        self._refuse_empty()
        uri = f"file:{self.path.resolve().as_posix()}?mode=ro"
        try:
            con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as e:
            raise self._fail(e) from None
        return self._identified(con)

    def _write_connection(self) -> sqlite3.Connection:
        """A connection for appending; creates the store on first use."""
        self._check_file()
        fresh = not self.path.exists()
        if fresh and not self.create:
            raise self._missing()
        if not fresh:
            self._refuse_empty()
        try:
            con = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
            con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if fresh:
                self._create(con)
            con.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as e:
            raise self._fail(e) from None
        return self._identified(con)

    def _refuse_empty(self) -> None:
        """Refuse a store file of zero bytes (a truncated copy), which SQLite would take as new."""
        if self.path.stat().st_size == 0:
            raise StudyError(f"{self.path}: empty file (truncated?); not a trial store")

    def _identified(self, con: sqlite3.Connection) -> sqlite3.Connection:
        """``con`` once it is known to be this study's store; closed before any refusal."""
        try:
            self._check_identity(con)
        except Exception:
            con.close()
            raise
        return con

    def _create(self, con: sqlite3.Connection) -> None:
        con.execute("BEGIN IMMEDIATE")
        try:
            tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:  # someone else created it meanwhile, or a foreign database
                con.execute("COMMIT")
                return
            con.execute("PRAGMA journal_mode = WAL")  # no-op inside a transaction
            for stmt in _DDL.split(";\n"):
                if stmt.strip():
                    con.execute(stmt)
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("format", "evalsim-study-store"),
                    ("version", str(STORE_FORMAT_VERSION)),
                    ("lock_sha256", self.lock_sha256),
                ],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("PRAGMA journal_mode = WAL")

    # ------------------------------------------------------------------ reads
    def exists(self) -> bool:
        return self.path.exists()

    def events(self) -> list[Event]:
        """Every event in commit order (none when a ``create`` store does not exist yet)."""
        con = self._read_connection()
        if con is None:
            return []
        try:
            rows = con.execute(_SELECT + " ORDER BY seq").fetchall()
        except sqlite3.DatabaseError as e:
            raise self._fail(e) from None
        finally:
            con.close()
        return [_row_event(r) for r in rows]

    def integrity(self) -> dict:
        """``PRAGMA integrity_check`` and the events whose digest does not match."""
        con = self._read_connection()
        if con is None:
            return {"integrity_check": "ok", "events": 0, "damaged": []}
        try:
            check = con.execute("PRAGMA integrity_check").fetchone()[0]
            rows = con.execute(_SELECT + " ORDER BY seq").fetchall()
        except sqlite3.DatabaseError as e:
            raise self._fail(e) from None
        finally:
            con.close()
        evs = [_row_event(r) for r in rows]
        return {
            "integrity_check": check,
            "events": len(evs),
            "damaged": [e.id for e in evs if not e.intact()],
        }

    # ------------------------------------------------------------------ writes
    def append(
        self,
        kind: str,
        payload: dict | None = None,
        *,
        event_id: str | None = None,
        trial: str | None = None,
        cancels: str | None = None,
        check: Callable[[list[Event]], None] | None = None,
    ) -> tuple[Event, bool]:
        """Append one event in its own transaction.

        Parameters
        ----------
        kind : str
            One of :data:`EVENT_KINDS`.
        payload : dict, optional
            JSON-ready content.
        event_id : str, optional
            The client-made id (default: a fresh UUID). Appending an id that is stored
            with the same content returns the stored event.
        trial, cancels : str, optional
        check : callable, optional
            Called with the events stored so far, inside the write transaction (no other
            writer can append meanwhile); raises :class:`StudyError` to refuse the event.

        Returns
        -------
        event : Event
        duplicate : bool
            True when the id was already stored with this content (nothing was written).
        """
        if kind not in EVENT_KINDS:
            raise StudyError(f"unknown event kind {kind!r} (kinds: {', '.join(EVENT_KINDS)})")
        eid = event_id or new_event_id()
        if not isinstance(eid, str) or not eid or len(eid) > 200:
            raise StudyError(f"event id must be a non-empty string, got {eid!r}")
        payload = dict(payload or {})
        pj = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        digest = _digest(eid, kind, trial, cancels, pj)
        con = self._cached_writer()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                row = con.execute(_SELECT + " WHERE id = ?", (eid,)).fetchone()
                if row is not None:
                    con.execute("ROLLBACK")
                    old = _row_event(row)
                    if old.digest == digest:
                        return old, True
                    raise StudyError(f"event id {eid!r} is already stored with other content")
                if check is not None:
                    rows = con.execute(_SELECT + " ORDER BY seq").fetchall()
                    check([_row_event(r) for r in rows])
                at = str(self.clock())
                cur = con.execute(
                    "INSERT INTO events (id, kind, trial, cancels, payload, recorded_at, digest)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (eid, kind, trial, cancels, pj, at, digest),
                )
                seq = int(cur.lastrowid)
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as e:
            self.close()
            raise self._fail(e) from None
        finally:
            if not self.keep_open:
                self.close()
        return Event(seq, eid, kind, trial, cancels, json.loads(pj), at, digest), False
