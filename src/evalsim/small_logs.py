"""Read a small, well-formed trial log without pandas (the ``evalsim`` command's fast path).

:func:`read_small_logs` reads the same files as :func:`evalsim.trial_logs.read_trial_logs`
-- CSV/TSV with a header, LeRobot ``eval_info.json`` in both forms, ``PATH=NAME`` labels --
with the standard library's :mod:`csv` and :mod:`json` and numpy, into a :class:`TrialTable`
holding the same columns and values as the pandas reader's table (same column order, the
same stripped text, the same successes, the same ``attrs``).

It reads only what it is sure to read as pandas would; for anything else it returns None
and the caller uses the pandas reader, which also words every error. So a log it does not
take is: larger than :data:`SMALL_LOG_BYTES` in all, Parquet, a CSV/TSV row with more or
fewer fields than the header, a blank or whitespace-only line, a quote or a line break inside
a field, a header cell that is empty, or any problem the pandas reader reports (a missing
column, a bad success value, a blank policy or condition, no rows, an unreadable file).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np

from evalsim._lerobot import empty_task_note
from evalsim._log_files import (
    _FALSE,
    _TABLE_SUFFIXES,
    _TRUE,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    TrialLogError,
    case_warnings,
    digest,
    load_json_log,
    reported_pc_success,
    sniff,
    split_label,
    task_name,
)
from evalsim._log_options import condition_hint, tells_trials_apart

__all__ = ["SMALL_LOG_BYTES", "TrialTable", "read_small_logs"]

#: Logs up to this many bytes in all are read without pandas (about 100,000 CSV rows; the
#: standard library reads them faster than pandas is imported).
SMALL_LOG_BYTES = 2 << 20

_SEED_FLOAT = re.compile(r"^(-?\d+)\.0+$")

#: Counts a LeRobot eval_info reports since lerobot PR #4628 (checked by evalsim._lerobot).
_COUNT_KEYS = {"n_episodes", "n_success", "pc_success_ci95"}


class _NotSmall(Exception):
    """This log is left to the pandas reader."""


class TrialTable:
    """Columns of a trial log as numpy arrays: ``success`` bool, the others str (object).

    The subset of a DataFrame the command's small path uses: ``columns``, ``len``,
    ``table[name]`` (the column's array), ``table[mask]`` (the rows where a bool array is
    true, ``attrs`` kept) and ``attrs``.
    """

    def __init__(self, columns: dict[str, np.ndarray], attrs: dict | None = None):
        self._data = columns
        self.columns = list(columns)
        self.attrs = dict(attrs or {})

    def __len__(self) -> int:
        return len(self._data["success"])

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._data[key]
        return TrialTable({c: v[key] for c, v in self._data.items()}, self.attrs)


def read_small_logs(paths, policy: str | None = None, options=None) -> TrialTable | None:
    """The logs as :func:`evalsim.trial_logs.read_trial_logs` would read them (without
    ``extra_columns``), or None when they are not small, well-formed CSV/TSV/JSON logs.

    Also None (the pandas reader then words or applies it) with reading ``options`` beyond
    the default (:attr:`evalsim._log_options.LogOptions.plain`), for exact duplicate rows,
    two files with the same trials, and LeRobot files with reported counts or groups.
    """
    if options is not None and not options.plain:
        return None
    try:
        return _read_small_logs(paths, policy)
    except (_NotSmall, TrialLogError, OSError, UnicodeDecodeError, ValueError, csv.Error):
        return None


def _read_small_logs(paths, policy: str | None) -> TrialTable:
    specs = [split_label(p) for p in paths]
    if policy is not None and len(specs) > 1:
        raise _NotSmall
    total = 0
    for path, _ in specs:
        p = Path(path)
        if not p.is_file() or p.suffix.lower() not in (".json", *_TABLE_SUFFIXES):
            raise _NotSmall
        total += p.stat().st_size
    if total > SMALL_LOG_BYTES:
        raise _NotSmall
    tables, sources, warnings = [], [], []
    folder_names: dict[str, str] = {}
    task_groups: dict[str, str] = {}
    seen: set[tuple] = set()
    everything: list[dict] = []  # every column of every file, as text: duplicates across files
    for path, label in specs:
        for key in (("path", str(Path(path).resolve())), ("content", digest(path))):
            if key in seen:
                raise _NotSmall  # the pandas reader words the error
            seen.add(key)
        name = label if label is not None else policy
        cols, table_warnings, groups, others = _read_one(Path(path), name)
        everything.append({**{c: [str(v) for v in a.tolist()] for c, a in cols.items()}, **others})
        warnings.extend(table_warnings)
        task_groups.update(groups)
        if Path(path).suffix.lower() == ".json" and name is None:
            folder = cols["policy"][0]
            if folder in folder_names and folder_names[folder] != str(Path(path).resolve()):
                raise _NotSmall
            folder_names[folder] = str(Path(path).resolve())
        sources.append(
            {
                "path": str(path),
                "label": label,
                "rows": len(cols["success"]),
                "columns": list(cols),
            }
        )
        tables.append(cols)
    _refuse_same_trials(tables)
    _refuse_repeats_across_files(everything)
    if len(tables) == 1:
        columns = tables[0]
    else:  # pandas.concat: columns in order of first appearance, missing ones blank
        names = list(dict.fromkeys(c for t in tables for c in t))
        columns = {}
        for c in names:
            if c != "success" and not all(c in t for t in tables):
                if c not in OPTIONAL_COLUMNS:
                    raise _NotSmall
            parts = [
                t[c] if c in t else np.full(len(t["success"]), "", dtype=object) for t in tables
            ]
            columns[c] = np.concatenate(parts)
    warnings += case_warnings(set(columns["policy"].tolist()))
    attrs = {"sources": sources, "warnings": warnings}
    if task_groups:
        attrs["task_groups"] = task_groups
    return TrialTable(columns, attrs)


def _refuse_repeats_across_files(files: list[dict[str, list]]) -> None:
    """A row equal in every column to a row of another file (in logs that tell trials
    apart): left to the pandas reader, which names it or applies ``--duplicates``."""
    files = [f for f in files if tells_trials_apart(f)]  # files that tell trials apart
    if len(files) < 2:
        return
    names = list(dict.fromkeys(c for f in files for c in f))
    earlier: set[tuple] = set()
    for f in files:
        n = len(f["success"])
        rows = set(zip(*(f.get(c, [""] * n) for c in names), strict=True))
        if rows & earlier:
            raise _NotSmall
        earlier |= rows


def _refuse_same_trials(tables: list[dict[str, np.ndarray]]) -> None:
    """Two files with the same trials row for row: left to the pandas reader's message."""
    for j, b in enumerate(tables):
        for a in tables[:j]:
            if set(a) == set(b) and all(np.array_equal(a[c], b[c]) for c in a):
                raise _NotSmall


def _read_one(path: Path, policy: str | None) -> tuple[dict, list[str], dict, dict]:
    """One file's tidy columns (as :func:`evalsim.trial_logs.read_trial_log`), warnings,
    LeRobot task groups (task -> group) and its other columns (stripped text)."""
    suffix = path.suffix.lower()
    sniff(path, suffix)
    notes, groups = [], {}
    if suffix == ".json":
        raw, pc_success, notes, groups = _read_json(path, policy)
    else:
        raw, pc_success = _read_table(path, _TABLE_SUFFIXES[suffix], policy), None
        if tells_trials_apart(raw):  # exact duplicates?
            rows = list(zip(*(raw[c] for c in raw), strict=True))
            if len(set(rows)) != len(rows):
                raise _NotSmall  # the pandas reader names them (or applies --duplicates)
        hint = condition_hint(list(raw), path)
        if hint:
            notes.append(hint)
    cols, warnings = _tidy(raw, path, pc_success)
    others = {c: [str(v).strip() for v in raw[c]] for c in raw if c not in cols}
    return cols, notes + warnings, groups, others


def _read_table(path: Path, delimiter: str, policy: str | None) -> dict[str, list]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.reader(fh, delimiter=delimiter, strict=True))
    if not rows:
        raise _NotSmall
    header = rows[0]
    width = len(header)
    if not header or any(h == "" for h in header):
        raise _NotSmall  # pandas names an empty header cell "Unnamed: i"
    body = []
    for row in rows[1:]:
        if not row:
            continue  # a blank line: pandas skips it
        if len(row) != width or (width == 1 and not row[0].strip()):
            raise _NotSmall
        body.append(row)
    for row in rows:
        for cell in row:
            if '"' in cell or "\n" in cell or "\r" in cell:
                raise _NotSmall
    names = [h.strip().lower() for h in header]
    cols = {name: [r[i] for r in body] for i, name in enumerate(names)}
    if policy is not None:
        if "policy" in cols:
            raise _NotSmall
        cols["policy"] = [policy] * len(body)
    return cols


def _read_json(path: Path, policy: str | None) -> tuple[dict[str, list], float | None, list, dict]:
    info = load_json_log(path)
    name = policy if policy is not None else (path.resolve().parent.name or path.stem)
    notes: list[str] = []
    groups: dict[str, str] = {}
    cols: dict[str, list]
    if isinstance(info, dict) and "per_task" in info and "per_episode" in info:
        raise _NotSmall  # both forms: the pandas reader says which it reads
    if isinstance(info, dict) and isinstance(info.get("per_episode"), list):
        episodes = info["per_episode"]
        if not episodes or not all(isinstance(e, dict) and "success" in e for e in episodes):
            raise _NotSmall
        seeds = [e.get("seed") for e in episodes]
        cols = {"policy": [name] * len(episodes), "success": [e["success"] for e in episodes]}
        if any(s is not None for s in seeds):
            if any(s is None for s in seeds):
                raise _NotSmall  # pandas: a blank condition
            cols["condition"] = [str(s) for s in seeds]
    elif isinstance(info, dict) and isinstance(info.get("per_task"), list):
        overall = info.get("overall")
        if "per_group" in info or (isinstance(overall, dict) and set(overall) & _COUNT_KEYS):
            raise _NotSmall  # counts to check (evalsim._lerobot), left to the pandas reader
        tasks, successes = [], []
        for j, task in enumerate(info["per_task"]):
            try:
                values = task["metrics"]["successes"]
            except (KeyError, TypeError):
                raise _NotSmall from None
            metrics = task["metrics"] if isinstance(task["metrics"], dict) else {}
            if not isinstance(values, list) or (set(task) | set(metrics)) & _COUNT_KEYS:
                raise _NotSmall  # reported counts are checked by the pandas reader
            label = task_name(task) or ":".join(
                str(task[key]) for key in ("task_group", "task_id") if task.get(key) is not None
            )
            tasks += [label or str(j)] * len(values)
            if task.get("task_group") is not None:
                groups[label or str(j)] = str(task["task_group"])
            if not values:
                notes.append(empty_task_note(path, label or str(j)))
            successes += values
        if not successes:
            raise _NotSmall
        cols = {"policy": [name] * len(successes), "task": tasks, "success": successes}
    else:
        raise _NotSmall
    return cols, reported_pc_success(info), notes, groups


def _success(values: list) -> np.ndarray:
    """0/1, true/false, yes/no (any case; also t/f, y/n) as :func:`evalsim.trial_logs.
    parse_success` reads the column pandas makes of them: all bool, all numbers (0 or 1),
    or else each value's text; anything else is not small."""
    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        if not all(v == 0 or v == 1 for v in values):
            raise _NotSmall
        return np.array([v == 1 for v in values], dtype=bool)
    out = np.empty(len(values), dtype=bool)
    for i, v in enumerate(values):
        if not isinstance(v, str | int | float):  # None, lists: pandas words the error
            raise _NotSmall
        text = str(v).strip().lower()
        if text in _TRUE:
            out[i] = True
        elif text in _FALSE:
            out[i] = False
        else:
            raise _NotSmall
    return out


def _tidy(
    raw: dict[str, list], path: Path, pc_success: float | None
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The checks and clean-up of :func:`evalsim.trial_logs._tidy`, on lists."""
    if any(c not in raw for c in REQUIRED_COLUMNS) or not raw["success"]:
        raise _NotSmall
    keep = [c for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if c in raw]
    out: dict[str, np.ndarray] = {}
    for col in keep:
        if col == "success":
            out[col] = _success(raw[col])
            continue
        text = [str(v).strip() for v in raw[col]]
        if col in ("policy", "condition") and any(t == "" for t in text):
            raise _NotSmall  # the pandas reader names the row
        if col == "seed":  # 0, 0.0 and "0" are the same seed
            text = [_SEED_FLOAT.sub(r"\1", t) for t in text]
        out[col] = np.array(text, dtype=object)
    warnings = []
    if pc_success is not None:
        success = out["success"]
        measured = 100.0 * float(int(success.sum()) / len(success))
        if abs(measured - pc_success) > 0.05:
            warnings.append(
                f"warning: {path}: pc_success = {pc_success:g} but its {len(success)} episodes "
                f"give {measured:.1f}; the episodes are used"
            )
    return out, warnings
