"""Start, lock and amend a study folder.

* :func:`init_study` writes the commented example ``study.yaml``.
* :func:`lock_study` freezes it: ``lock.json`` holds the canonical form and its SHA-256, the
  seed, the plan, the blind codes and the schedule; the grid sheet and the run sheet go to
  ``sheets/``; an empty trial store is created. The same seed gives the same bytes.
* :func:`read_lock` and :func:`verify_lock` check, before every command, that ``study.yaml``
  (and a sequential design file) still match the lock.
* :func:`amend_study` starts a new study folder from the edited file, linked to the old one;
  the old folder keeps its lock, gets its locked ``study.yaml`` back and records the
  amendment as an event.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path

from evalsim.study.errors import StudyError
from evalsim.study.files import write_new
from evalsim.study.protocol import (
    STUDY_FILE,
    Protocol,
    canonical_json,
    canonical_sha256,
    load_protocol,
    parse_protocol,
    read_study_file,
)

__all__ = [
    "LOCK_FILE",
    "LOCK_FORMAT",
    "LOCK_VERSION",
    "SHEETS_DIR",
    "init_study",
    "lock_study",
    "read_lock",
    "verify_lock",
    "amend_study",
]

LOCK_FILE = "lock.json"
LOCK_FORMAT = "evalsim-study-lock"
LOCK_VERSION = 1
SHEETS_DIR = "sheets"
#: Largest seed accepted (seeds are non-negative integers below 2**63).
MAX_SEED = (1 << 63) - 1


def init_study(folder: str | os.PathLike) -> Path:
    """Write the example ``study.yaml`` into ``folder`` (created if its parent exists).

    Raises
    ------
    StudyError
        The parent folder does not exist, ``folder`` is a file, or it already holds a
        ``study.yaml``.
    """
    from evalsim.study.example import EXAMPLE_STUDY

    d = Path(folder)
    if d.exists() and not d.is_dir():
        raise StudyError(f"{d}: exists and is not a folder")
    if not d.exists():
        if not d.absolute().parent.is_dir():
            raise StudyError(f"{d}: its parent folder does not exist")
        d.mkdir()
    path = d / STUDY_FILE
    if path.exists() or path.is_symlink():
        raise StudyError(f"{path}: already exists; not replaced")
    write_new(path, EXAMPLE_STUDY.encode("utf-8"))
    return path


def _check_seed(seed) -> int:
    if seed is None:
        return secrets.randbelow(1 << 32)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise StudyError(f"--seed must be an integer in [0, 2**63), got {seed!r}")
    return int(seed)


def _lock_document(protocol: Protocol, raw: bytes, seed: int, amends: dict | None) -> dict:
    import evalsim
    from evalsim.study.plan import plan_study
    from evalsim.study.schedule import make_schedule

    codes, trials = make_schedule(protocol, seed)
    return {
        "format": LOCK_FORMAT,
        "version": LOCK_VERSION,
        "title": protocol.data.get("title", ""),
        "study_sha256": canonical_sha256(protocol.data),
        "canonical": canonical_json(protocol.data),
        "study_text": raw.decode("utf-8"),
        "study_file_sha256": hashlib.sha256(raw).hexdigest(),
        "sequential_design": protocol.sequential_design,
        "sequential_design_sha256": protocol.sequential_sha256,
        "seed": seed,
        "evalsim_version": evalsim.__version__,
        "plan": plan_study(protocol),
        "blind_codes": codes,
        "schedule": [t.to_dict(blind=False) for t in trials],
        "amends": amends,
    }


def _dump(doc: dict) -> bytes:
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _write_lock(folder: Path, protocol: Protocol, seed: int, amends, sheets: bool) -> dict:
    from evalsim.study.store import STORE_FILE, EventStore

    raw = (folder / STUDY_FILE).read_bytes()
    doc = _lock_document(protocol, raw, seed, amends)
    lock_path = folder / LOCK_FILE
    if lock_path.exists() or lock_path.is_symlink():
        raise StudyError(
            f"{lock_path}: the study is already locked; change it with `evalsim study amend`"
        )
    if sheets:
        from evalsim.study.sheets import write_sheets

        doc["sheets"] = write_sheets(folder / SHEETS_DIR, doc)
    else:
        doc["sheets"] = {}
    write_new(lock_path, _dump(doc))
    store = EventStore(folder / STORE_FILE, doc["study_sha256"], create=True)
    store._write_connection().close()  # the empty store, so that writers never race to make it
    return doc


def lock_study(folder: str | os.PathLike, seed: int | None = None, sheets: bool = True) -> dict:
    """Freeze a study: lock file, schedule, blind codes, sheets and an empty trial store.

    Parameters
    ----------
    folder : path
    seed : int, optional
        The study seed (a fresh random one is drawn, and recorded, when not given).
    sheets : bool
        Draw the grid sheet and run sheet (PDF, PNG).

    Returns
    -------
    dict
        The lock document (as written to ``lock.json``).

    Raises
    ------
    StudyError
        Not a study folder, an invalid ``study.yaml``, or a study already locked.
    """
    d = Path(folder)
    if not d.is_dir():
        raise StudyError(f"{d}: not a study folder")
    if (d / LOCK_FILE).exists():
        raise StudyError(
            f"{d / LOCK_FILE}: the study is already locked; change it with `evalsim study amend`"
        )
    protocol = load_protocol(d)
    return _write_lock(d, protocol, _check_seed(seed), None, sheets)


def read_lock(folder: str | os.PathLike) -> dict:
    """The lock document of a locked study.

    Raises
    ------
    StudyError
        No lock (the study is not locked), or a lock file that is not one.
    """
    path = Path(folder) / LOCK_FILE
    if not Path(folder).is_dir():
        raise StudyError(f"{folder}: not a study folder")
    if not path.exists():
        raise StudyError(f"{path}: the study is not locked (run `evalsim study lock`)")
    if not path.is_file():
        raise StudyError(f"{path}: not a regular file")
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise StudyError(f"{path}: not a lock file (not JSON)") from None
    if not isinstance(doc, dict) or doc.get("format") != LOCK_FORMAT:
        raise StudyError(f"{path}: not an evalsim study lock")
    if doc.get("version") != LOCK_VERSION:
        raise StudyError(f"{path}: lock version {doc.get('version')!r} is not {LOCK_VERSION}")
    canon = doc.get("canonical", "")
    if hashlib.sha256(canon.encode("utf-8")).hexdigest() != doc.get("study_sha256"):
        raise StudyError(f"{path}: the lock's canonical form does not match its hash")
    return doc


def _same_bytes(path: Path, sha256: str | None) -> bool:
    """True when ``path`` is a regular file whose bytes hash to ``sha256``."""
    if sha256 is None or not path.is_file() or path.stat().st_size > (1 << 20):
        return False
    return hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def verify_lock(folder: str | os.PathLike, lock: dict | None = None) -> Protocol:
    """Check that ``study.yaml`` still matches the lock; return the locked protocol.

    Raises
    ------
    StudyError
        One line: the file changed since the lock (with both hashes), or a sequential design
        file changed.
    """
    d = Path(folder)
    lock = read_lock(d) if lock is None else lock
    path = d / STUDY_FILE
    locked = lock["study_sha256"]
    data = json.loads(lock["canonical"])
    if _same_bytes(path, lock.get("study_file_sha256")):
        # the very bytes that were locked: no need to parse and check them again
        seq = data["design"].get("sequential")
        if seq is None or _same_bytes(d / seq, lock.get("sequential_design_sha256")):
            return Protocol(
                data, lock.get("sequential_design"), lock.get("sequential_design_sha256")
            )
    raw = read_study_file(path)
    try:
        current = parse_protocol(raw, str(path), d)
    except StudyError as e:
        raise StudyError(
            f"{path}: changed since the lock ({locked[:12]}) and no longer valid; "
            f"restore it or run `evalsim study amend` ({e})"
        ) from None
    now = canonical_sha256(current.data)
    if now != locked:
        raise StudyError(
            f"{path}: changed since the lock (sha256 {now[:12]}, locked {locked[:12]}); "
            "restore it, or run `evalsim study amend DIR --why ...` to start a new study"
        )
    if current.sequential_sha256 != lock.get("sequential_design_sha256"):
        raise StudyError(
            f"{d / str(data['design']['sequential'])}: the sequential design file changed "
            "since the lock"
        )
    return Protocol(data, lock.get("sequential_design"), lock.get("sequential_design_sha256"))


def amend_study(
    folder: str | os.PathLike,
    why: str,
    new_folder: str | os.PathLike | None = None,
    seed: int | None = None,
    sheets: bool = True,
) -> tuple[Path, dict]:
    """Start a new study from the edited ``study.yaml`` of a locked study.

    The new folder gets the edited file (and a sequential design file it names) and its own
    lock, which records the old study's folder, hash and the reason. The old folder keeps
    its lock and trials, gets its locked ``study.yaml`` back and records an ``amended``
    event (so both reports state the amendment and its reason).

    Parameters
    ----------
    folder : path
        The locked study whose ``study.yaml`` was edited.
    why : str
        The reason (required, non-empty).
    new_folder : path, optional
        Default: ``<folder>-amend1`` (or the next free number).
    seed : int, optional
        Default: the old study's seed.

    Returns
    -------
    new_folder : Path
    lock : dict
        The new lock document.
    """
    from evalsim.study.store import STORE_FILE, EventStore

    d = Path(folder)
    old = read_lock(d)
    why = (why or "").strip()
    if not why:
        raise StudyError("--why: give the reason for the amendment")
    path = d / STUDY_FILE
    raw = read_study_file(path)
    protocol = parse_protocol(raw, str(path), d)
    new_sha = canonical_sha256(protocol.data)
    if new_sha == old["study_sha256"] and protocol.sequential_sha256 == old.get(
        "sequential_design_sha256"
    ):
        raise StudyError(f"{path}: matches the lock; edit it first, then amend")
    if new_folder is None:
        k = 1
        while Path(f"{d}-amend{k}").exists():
            k += 1
        new = Path(f"{d}-amend{k}")
    else:
        new = Path(new_folder)
    if new.exists():
        raise StudyError(f"{new}: already exists; give a new folder")
    if not new.absolute().parent.is_dir():
        raise StudyError(f"{new}: its parent folder does not exist")
    new.mkdir()
    write_new(new / STUDY_FILE, path.read_bytes())
    seq = protocol.data["design"]["sequential"]
    if seq:
        (new / seq).parent.mkdir(parents=True, exist_ok=True)
        write_new(new / seq, (d / seq).read_bytes())
    amends = {
        "folder": os.path.relpath(d.absolute(), new.absolute()),
        "study_sha256": old["study_sha256"],
        "why": why,
    }
    doc = _write_lock(
        new, protocol, old["seed"] if seed is None else _check_seed(seed), amends, sheets
    )
    store = EventStore(d / STORE_FILE, old["study_sha256"])
    store.append(
        "amended",
        {
            "why": why,
            "to": os.path.relpath(new.absolute(), d.absolute()),
            "study_sha256": doc["study_sha256"],
        },
        event_id=f"amended-{doc['study_sha256']}",
    )
    write_new(path, old["study_text"].encode("utf-8"), replace=True)
    return new, doc


def locked_protocol(folder: str | os.PathLike) -> tuple[Protocol, dict]:
    """The verified protocol and lock of a locked study (see :func:`verify_lock`)."""
    lock = read_lock(folder)
    return verify_lock(folder, lock), lock


# re-exported for the API note
__all__ += ["locked_protocol", "load_protocol"]
