"""The parts of reading a trial log that need no pandas: the error type, the column names,
the checks made before a file is read (:func:`sniff`), duplicate detection (:func:`digest`),
``PATH=NAME`` labels and the LeRobot task names.

:mod:`evalsim.trial_logs` (pandas, any size) and :mod:`evalsim.small_logs` (the standard
library and numpy, small logs) both build on them, so that the ``evalsim`` command can start
without loading pandas.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np

__all__ = [
    "MAX_FIELD_CHARS",
    "MAX_JSON_DEPTH",
    "MAX_LOG_BYTES",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TrialLogError",
    "check_log_path",
    "digest",
    "load_json_log",
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

#: Longest field of a trial log (characters; bytes in a CSV/TSV before it is parsed): a policy
#: name, a task, a condition id or a failure note is far shorter. A longer field is refused
#: before the log is parsed (issue 45, item 7: a 10 MB name took minutes on the way through).
MAX_FIELD_CHARS = 10_000

#: Nesting depth an error message points at when an ``eval_info.json`` is too deep for Python's
#: JSON reader (LeRobot's is 4 levels deep), and the most digits of a JSON integer (a 64-bit
#: seed has 20; Python's own limit is 4,300).
MAX_JSON_DEPTH = 100
_MAX_JSON_DIGITS = 100

#: Bytes per block of the exact field-size scan, and blocks of MAX_FIELD_CHARS // 2 bytes per
#: read of the quick one (4 MB).
_SCAN_BYTES = 1 << 22
_SCAN_CHUNKS = 800


class TrialLogError(ValueError):
    """A trial log that cannot be read or does not have the expected shape."""


def split_label(spec: str) -> tuple[str, str | None]:
    """``"PATH=NAME"`` -> ``(PATH, NAME)``; a plain path (or one that exists with its "=")
    -> ``(path, None)``."""
    spec = str(spec)
    if "=" not in spec or Path(spec).exists() or os.path.islink(spec):
        check_log_path(spec)
        return spec, None
    path, name = spec.rsplit("=", 1)
    name = name.strip()
    if not path or not name:
        raise TrialLogError(f"{spec}: expected PATH=NAME with a non-empty path and name")
    check_log_path(path)
    return path, name


def digest(path) -> str | None:
    """SHA-256 of a regular file's bytes (streamed), None for anything else."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size > MAX_LOG_BYTES:
        return None
    h = hashlib.sha256()
    try:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as err:
        raise TrialLogError(f"{path}: cannot read the file ({err.strerror or err})") from None
    return h.hexdigest()


def check_log_path(path) -> None:
    """Refuse a path whose status cannot be read: a symbolic link loop, a name too long, a
    folder without permission (a missing file is left to the reader's "no such file")."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise TrialLogError(
                f"{path}: a symbolic link loop (the link leads back to itself); not a file"
            ) from None
        raise TrialLogError(f"{path}: cannot read the file ({err.strerror or err})") from None


def sniff(path: Path, suffix: str) -> None:
    """Refuse what is not a plausible log before reading it: not a regular file (a device, a
    pipe), larger than :data:`MAX_LOG_BYTES`, NUL bytes in the first 64 KiB of a text log
    (binary or sparse), or a CSV/TSV header that names a column twice."""
    check_log_path(path)
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
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as err:
        raise TrialLogError(f"{path}: cannot read the file ({err.strerror or err})") from None
    if b"\x00" in head:
        raise TrialLogError(f"{path}: binary data (NUL bytes) in a text log; not a CSV/TSV/JSON")
    if suffix in _TABLE_SUFFIXES:
        # the header ends at the first line end: \n, \r\n or a lone \r (Excel's "CSV
        # (Macintosh)")
        first = re.split(rb"\r\n?|\n", head, maxsplit=1)[0].decode("utf-8-sig", errors="replace")
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
        _scan_field_sizes(path, _TABLE_SUFFIXES[suffix], names)


def field_too_long(path, row: int, column: str, length: int | None = None) -> TrialLogError:
    """The one-line error of a field above :data:`MAX_FIELD_CHARS` (``row`` 1-based data row)."""
    size = f"of {length} characters " if length is not None else ""
    return TrialLogError(
        f"{path}: data row {row}, column {column!r}: a field {size}above the limit of "
        f"{MAX_FIELD_CHARS} characters of a trial log; not read"
    )


def _scan_field_sizes(path: Path, delimiter: str, names: list[str]) -> None:
    """Refuse a CSV/TSV with a run of more than :data:`MAX_FIELD_CHARS` bytes between
    delimiters and line ends, before it is parsed.

    A run that long contains a whole block of ``MAX_FIELD_CHARS // 2`` bytes aligned on the
    file's offsets, so a pass of numpy comparisons over the blocks (a few ms per 4 MB) finds
    every candidate; only a file with one is scanned exactly (:func:`_exact_field_scan`). A
    quoted field that holds delimiters is seen in pieces here; the reader checks the parsed
    fields too (:func:`evalsim.trial_logs.read_trial_log`).
    """
    sep = delimiter.encode()[0]
    chunk = MAX_FIELD_CHARS // 2
    with open(path, "rb") as fh:
        while block := fh.read(chunk * _SCAN_CHUNKS):
            data = np.frombuffer(block, dtype=np.uint8)
            stop = (data == sep) | (data == 10) | (data == 13)
            pad = -len(stop) % chunk  # the end of the file: padding stops end no field early
            if pad:
                stop = np.concatenate([stop, np.ones(pad, dtype=bool)])
            if not stop.reshape(-1, chunk).any(axis=1).all():
                _exact_field_scan(path, sep, delimiter, names)
                return


def _exact_field_scan(path: Path, sep: int, delimiter: str, names: list[str]) -> None:
    """The longest run between stops, block by block with the run carried over; refuse the
    first one above :data:`MAX_FIELD_CHARS` (:func:`_refuse_long_field`)."""
    run = 0  # bytes since the last stop, carried over from the previous block
    offset = 0
    with open(path, "rb") as fh:
        while block := fh.read(_SCAN_BYTES):
            data = np.frombuffer(block, dtype=np.uint8)
            at = np.flatnonzero((data == sep) | (data == 10) | (data == 13))
            if at.size == 0:
                run += len(block)
                longest, where = run, len(block)
            else:
                gaps = np.diff(at, prepend=-1) - 1
                gaps[0] += run
                i = int(np.argmax(gaps))
                longest, where = int(gaps[i]), int(at[i])
                if len(block) - 1 - int(at[-1]) > MAX_FIELD_CHARS:
                    longest, where = len(block) - 1 - int(at[-1]), len(block)
                run = len(block) - 1 - int(at[-1])
            if longest > MAX_FIELD_CHARS:
                _refuse_long_field(path, delimiter, names, offset + where)
            offset += len(block)


def _refuse_long_field(path: Path, delimiter: str, names: list[str], end: int) -> None:
    """Raise :func:`field_too_long` for the field that ends at byte ``end`` of the file."""
    with open(path, "rb") as fh:
        before = fh.read(end)
    lines = re.split(rb"\r\n?|\n", before)
    row = len(lines) - 1  # the header is line 1, data row r is line r + 1
    col = lines[-1].count(delimiter.encode())
    name = names[col] if col < len(names) else f"field {col + 1}"
    raise field_too_long(path, row, name)


def load_json_log(path: Path):
    """An ``eval_info.json``'s content, or a one-line :class:`TrialLogError` that names the
    file, the line and the column: bad JSON, nesting too deep for Python's reader (the
    message points at the first bracket past :data:`MAX_JSON_DEPTH`), an integer of more than
    100 digits (issue 45, items 6 and 8)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        data = path.read_bytes()[: err.start]
        line, column = data.count(b"\n") + 1, err.start - (data.rfind(b"\n") + 1) + 1
        raise TrialLogError(
            f"{path}: line {line}, column {column}: a byte that is not UTF-8 text; not JSON"
        ) from None
    except OSError as err:
        raise TrialLogError(f"{path}: cannot read the file ({err.strerror or err})") from None

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > _MAX_JSON_DIGITS:
            line, column = _line_column(text, text.find(digits))
            raise TrialLogError(
                f"{path}: line {line}, column {column}: an integer of "
                f"{len(digits.lstrip('-'))} digits (more than {_MAX_JSON_DIGITS}) is no "
                "outcome, seed or count"
            )
        return int(digits)

    try:
        return json.loads(text, parse_int=parse_int)
    except RecursionError:  # only then is the nesting located (a pass over the text)
        line, column = _too_deep(text) or (1, 1)
        raise TrialLogError(
            f"{path}: line {line}, column {column}: JSON nested more than {MAX_JSON_DEPTH} "
            "levels deep; not an eval_info file"
        ) from None
    except json.JSONDecodeError as err:
        raise TrialLogError(
            f"{path}: line {err.lineno}, column {err.colno}: unreadable JSON ({err.msg})"
        ) from None


def _line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of character ``pos`` of ``text``."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(text: str) -> tuple[int, int] | None:
    """(line, column) where the JSON text's nesting first passes :data:`MAX_JSON_DEPTH`, or
    None (strings skipped; brackets counted, whether or not the JSON is valid)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return None
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return _line_column(text, m.start())
        elif tok in "]}":
            depth -= 1
    return None


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
