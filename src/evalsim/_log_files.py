"""The parts of reading a trial log that need no pandas: the error type, the column names,
the checks made before a file is read (:func:`sniff`), duplicate detection (:func:`digest`),
``PATH=NAME`` labels and the LeRobot task names.

:mod:`evalsim.trial_logs` (pandas, any size) and :mod:`evalsim.small_logs` (the standard
library and numpy, small logs) both build on them, so that the ``evalsim`` command can start
without loading pandas.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

__all__ = [
    "MAX_LOG_BYTES",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TrialLogError",
    "digest",
    "pairing_key",
    "reported_pc_success",
    "sniff",
    "split_label",
    "task_name",
]

REQUIRED_COLUMNS = ("policy", "success")
OPTIONAL_COLUMNS = ("task", "seed", "condition", "failure")

_TRUE = {"1", "1.0", "true", "t", "yes", "y"}
_FALSE = {"0", "0.0", "false", "f", "no", "n"}
_TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}

#: Largest trial log read (bytes): a 2,000,000-trial CSV is ~60 MB; anything past this limit
#: is refused before it is read rather than filling the memory.
MAX_LOG_BYTES = 1 << 30

#: Bytes sniffed at the start of a CSV/TSV/JSON log for NULs (a binary or sparse file).
_SNIFF_BYTES = 1 << 16


class TrialLogError(ValueError):
    """A trial log that cannot be read or does not have the expected shape."""


def split_label(spec: str) -> tuple[str, str | None]:
    """``"PATH=NAME"`` -> ``(PATH, NAME)``; a plain path (or one that exists with its "=")
    -> ``(path, None)``."""
    spec = str(spec)
    if "=" not in spec or Path(spec).exists():
        return spec, None
    path, name = spec.rsplit("=", 1)
    name = name.strip()
    if not path or not name:
        raise TrialLogError(f"{spec}: expected PATH=NAME with a non-empty path and name")
    return path, name


def digest(path) -> str | None:
    """SHA-256 of a regular file's bytes (streamed), None for anything else."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size > MAX_LOG_BYTES:
        return None
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sniff(path: Path, suffix: str) -> None:
    """Refuse what is not a plausible log before reading it: not a regular file (a device, a
    pipe), larger than :data:`MAX_LOG_BYTES`, NUL bytes in the first 64 KiB of a text log
    (binary or sparse), or a CSV/TSV header that names a column twice."""
    if not path.is_file():
        raise TrialLogError(f"{path}: not a regular file")
    size = path.stat().st_size
    if size > MAX_LOG_BYTES:
        raise TrialLogError(
            f"{path}: {size / 2**20:.0f} MiB is above the {MAX_LOG_BYTES / 2**20:.0f} MiB "
            "limit of a trial log"
        )
    if suffix in _PARQUET_SUFFIXES:
        return
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
    if b"\x00" in head:
        raise TrialLogError(f"{path}: binary data (NUL bytes) in a text log; not a CSV/TSV/JSON")
    if suffix in _TABLE_SUFFIXES:
        first = head.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace")
        names = [
            c.strip().lower()
            for c in next(csv.reader([first], delimiter=_TABLE_SUFFIXES[suffix]), [])
        ]
        twice = sorted({c for c in names if c and names.count(c) > 1})
        if twice:
            raise TrialLogError(
                f"{path}: the header names column(s) {', '.join(twice)} more than once "
                "(ignoring case); which one is meant is ambiguous"
            )


#: Keys of a LeRobot per_task entry (or its metrics) that hold the task's name, in order.
_TASK_NAME_KEYS = ("task", "task_name", "task_description", "description")


def task_name(task) -> str | None:
    """The task's name when the entry has one (else the caller uses task_group:task_id)."""
    if not isinstance(task, dict):
        return None
    for block in (task, task.get("metrics") if isinstance(task.get("metrics"), dict) else {}):
        for key in _TASK_NAME_KEYS:
            value = block.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def reported_pc_success(info: dict) -> float | None:
    """The overall ``pc_success`` an ``eval_info.json`` reports (aggregated or overall)."""
    for key in ("aggregated", "overall"):
        block = info.get(key)
        if isinstance(block, dict):
            value = block.get("pc_success")
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
    return None


def case_warnings(names) -> list[str]:
    """One warning per group of policy names that differ only in case (kept apart)."""
    by_fold: dict[str, list[str]] = {}
    for nm in sorted(names):
        by_fold.setdefault(nm.casefold(), []).append(nm)
    return [
        f"warning: policy names {', '.join(repr(g) for g in group)} differ only in "
        "case; they are treated as different policies"
        for group in by_fold.values()
        if len(group) > 1
    ]


def pairing_key(df) -> list[str]:
    """Columns that identify the starting state of a trial: task, seed (if present), condition.

    Two trials of different policies with equal values in all of these columns started from
    the same state. Returns an empty list when the log has no ``condition`` column.
    """
    if "condition" not in df.columns:
        return []
    return [c for c in ("task", "seed", "condition") if c in df.columns]
