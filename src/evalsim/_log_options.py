"""How a trial log is read, beyond its format: the lab's own column names, exact duplicate
trials, counts tables and a file given twice in another format (issue 45, items 9, 17, 24).

:class:`LogOptions` is what the ``evalsim`` command's reading flags (``--columns``,
``--duplicates``, ``--pair-episodes``) ask of the readers; :func:`prepare_table` applies it to
one file's raw table (pandas), before :mod:`evalsim.trial_logs` tidies it.

Exact duplicates. A log "can tell its trials apart" when it has a ``condition`` column, or
another column (besides policy, success, task, seed and failure) with at least one distinct
value for every two rows (a trial index, a timestamp, an episode id; not a checkpoint or an
operator column, whose few values are shared by many trials). In such a log two rows equal
in every column are the same trial logged twice: they are refused, naming the rows, unless
``--duplicates once`` (each counted once) or ``--duplicates keep`` (they are distinct trials
the log cannot tell apart) is given. A log of policy and success only is not checked: its
equal rows are different trials.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evalsim._log_files import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, TrialLogError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMN_ROLES",
    "DUPLICATE_RULES",
    "LIKELY_CONDITION_WORDS",
    "LogOptions",
    "condition_hint",
    "parse_column_map",
    "prepare_table",
    "refuse_repeated_paths",
    "refuse_same_trials",
    "repeated_trials",
    "tells_trials_apart",
]

#: The columns ``--columns ROLE=COLUMN`` can map: the log's columns and a counts table's.
COLUMN_ROLES = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, "successes", "trials")

#: ``--duplicates``: what to do with rows equal in every column (of a log that can tell its
#: trials apart).
DUPLICATE_RULES = {
    "refuse": "refuse the log, naming the rows (default)",
    "once": "count each such trial once",
    "keep": "count every row (they are distinct trials the log cannot tell apart)",
}

#: Words in a column name that suggest it holds the initial condition (the pose, the scene).
LIKELY_CONDITION_WORDS = ("pose", "condition", "episode", "init", "scene")

#: Columns that say nothing about which trial a row is.
_NOT_IDENTIFYING = {"policy", "success", "task", "seed", "failure"}


@dataclass(frozen=True)
class LogOptions:
    """How the readers treat a log (the command's reading flags).

    Attributes
    ----------
    columns : tuple of (str, str)
        ``(role, column)``: the log's column (lower-case) that holds each role of
        :data:`COLUMN_ROLES` (``--columns condition=pose_id``).
    duplicates : str
        A key of :data:`DUPLICATE_RULES`.
    pair_episodes : bool
        Pair LeRobot ``per_task`` runs by episode index (valid only when every run used the
        same ``lerobot-eval --seed``).
    """

    columns: tuple[tuple[str, str], ...] = ()
    duplicates: str = "refuse"
    pair_episodes: bool = False

    def __post_init__(self):
        if self.duplicates not in DUPLICATE_RULES:
            raise TrialLogError(
                f"--duplicates {self.duplicates!r}: expected one of {', '.join(DUPLICATE_RULES)}"
            )

    @property
    def plain(self) -> bool:
        """Nothing beyond the default reading (the small-log reader may read the log)."""
        return not self.columns and not self.pair_episodes

    def flag_text(self) -> str:
        """``--columns a=b,...`` as given (for messages)."""
        return "--columns " + ",".join(f"{r}={c}" for r, c in self.columns)


def parse_column_map(text: str) -> tuple[tuple[str, str], ...]:
    """``"condition=pose_id,failure=failure_type"`` -> ``(("condition", "pose_id"), ...)``.

    Raises
    ------
    TrialLogError
        An item without ``=``, an unknown role, an empty column, or a role or column named
        twice.
    """
    pairs = []
    for item in str(text).split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise TrialLogError(
                f"--columns {text!r}: expected ROLE=COLUMN items separated by commas, got "
                f"{item.strip()!r}"
            )
        role, column = (t.strip().lower() for t in item.split("=", 1))
        if role not in COLUMN_ROLES:
            raise TrialLogError(
                f"--columns: unknown role {role!r} (roles: {', '.join(COLUMN_ROLES)})"
            )
        if not column:
            raise TrialLogError(f"--columns: {role}= needs a column name")
        pairs.append((role, column))
    roles = [r for r, _ in pairs]
    cols = [c for _, c in pairs]
    twice = sorted(
        {x for x in roles if roles.count(x) > 1} | {x for x in cols if cols.count(x) > 1}
    )
    if twice:
        raise TrialLogError(f"--columns names {', '.join(twice)} more than once")
    if not pairs:
        raise TrialLogError("--columns needs ROLE=COLUMN items, e.g. condition=pose_id")
    return tuple(pairs)


def condition_hint(columns, path) -> str | None:
    """A note when a log has no ``condition`` column but one whose name suggests it."""
    if "condition" in columns:
        return None
    likely = [
        c
        for c in columns
        if c not in COLUMN_ROLES and any(w in str(c) for w in LIKELY_CONDITION_WORDS)
    ]
    if not likely:
        return None
    return (
        f"note: {path}: no condition column, so its trials cannot be paired; {likely[0]!r} "
        f"looks like one: give --columns condition={likely[0]} if it names each trial's "
        "starting state"
    )


def _rename(df: pd.DataFrame, path, options: LogOptions) -> pd.DataFrame:
    if not options.columns:
        return df
    have = list(df.columns)
    renames = {}
    for role, column in options.columns:
        if column not in have and role in have:
            continue  # this file names the role itself (several files, several schemas)
        if column not in have:
            raise TrialLogError(
                f"{path}: {options.flag_text()}: no column {column!r} (columns found: "
                f"{', '.join(map(str, have))})"
            )
        if role in have and role != column:
            raise TrialLogError(
                f"{path}: {options.flag_text()}: the log already has a {role!r} column beside "
                f"{column!r}; which one is meant is ambiguous"
            )
        renames[column] = role
    return df.rename(columns=renames)


def _expand_counts(df: pd.DataFrame, path) -> pd.DataFrame:
    """A counts table (policy, optional task, successes, trials) as one row per trial."""
    import pandas as pd

    counts = {}
    for col in ("successes", "trials"):
        text = df[col].astype(str).str.strip()
        num = pd.to_numeric(text, errors="coerce")
        bad = num.isna() | (num < 0) | (num != np.floor(num))
        if col == "trials":
            bad |= num < 1
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise TrialLogError(
                f"{path}: {col} must be a whole number{' >= 1' if col == 'trials' else ''}; got "
                f"{text.iloc[i]!r} in data row {i + 1}"
            )
        counts[col] = num.to_numpy(dtype=np.int64)
    k, n = counts["successes"], counts["trials"]
    over = k > n
    if over.any():
        i = int(over.argmax())
        raise TrialLogError(f"{path}: successes {k[i]} > trials {n[i]} in data row {i + 1}")
    keep = [c for c in df.columns if c not in ("successes", "trials")]
    rows = np.repeat(np.arange(len(df)), n)
    out = df[keep].iloc[rows].reset_index(drop=True)
    # within each row's block of n trials, the first k succeed
    start = np.repeat(np.cumsum(n) - n, n)
    out["success"] = (np.arange(len(out)) - start) < np.repeat(k, n)
    return out


def _row_codes(df: pd.DataFrame):
    """One int64 per row, equal for rows equal in every column (each column factorized, the
    codes combined in mixed radix); None when the combined code would overflow."""
    import pandas as pd

    code = np.zeros(len(df), dtype=np.int64)
    size = 1
    for col in df.columns:
        k, uniques = pd.factorize(df[col], sort=False)  # a missing value is -1
        m = len(uniques) + 1
        if size * m >= 2**62:
            return None
        code = code * m + (k + 1)
        size *= m
    return code


def repeated_trials(df: pd.DataFrame):
    """(row, first row) pairs, 0-based, of rows equal in every column (as read) to an
    earlier row. Vectorised: the columns are factorized once (a 2,000,000-row log in under
    a second), and hashed when their combined code would overflow."""
    import pandas as pd

    code = _row_codes(df)
    if code is None:
        code = pd.util.hash_pandas_object(df, index=False).to_numpy()
        if pd.Series(code).duplicated().any():  # a hash collision must not refuse a log
            code = df.groupby(list(df.columns), sort=False, dropna=False).ngroup().to_numpy()
    codes = pd.Series(code)
    dup = codes.duplicated(keep="first").to_numpy()
    if not dup.any():
        return []
    first_row = {}
    for i in np.flatnonzero(codes.duplicated(keep=False).to_numpy()):
        first_row.setdefault(int(code[i]), int(i))
    return [(int(i), first_row[int(code[i])]) for i in np.flatnonzero(dup)]


def tells_trials_apart(columns: dict) -> bool:
    """Whether a log's rows name their trials (see the module's docstring).

    Parameters
    ----------
    columns : dict
        Column name -> its values (a sequence), after the ``--columns`` renames.
    """
    if "condition" in columns:
        return True
    for name, values in columns.items():
        if str(name) in _NOT_IDENTIFYING or not len(values):
            continue
        if hasattr(values, "nunique"):  # a pandas column
            distinct = int(values.astype(str).str.strip().nunique())
        else:
            distinct = len({str(v).strip() for v in values})
        if 2 * distinct >= len(values):
            return True
    return False


def _check_duplicates(df: pd.DataFrame, path, options: LogOptions) -> tuple[pd.DataFrame, list]:
    """Refuse, drop or keep exact duplicate rows of a log that can tell its trials apart."""
    if not tells_trials_apart({c: df[c] for c in df.columns}):
        return df, []
    repeats = repeated_trials(df)
    if not repeats:
        return df, []
    row, first = repeats[0]
    shown = ", ".join(f"{c}={str(df.iloc[row][c]).strip()}" for c in df.columns)
    if options.duplicates == "refuse":
        raise TrialLogError(
            f"{path}: data row {row + 1} repeats data row {first + 1} in every column ({shown})"
            f"; {len(repeats)} such row(s): a trial logged twice would be counted twice; remove "
            "them, or give --duplicates once (count each once) or --duplicates keep (they are "
            "distinct trials)"
        )
    rows = ", ".join(str(r + 1) for r, _ in repeats[:5]) + (" ..." if len(repeats) > 5 else "")
    if options.duplicates == "once":
        out = df.drop(index=df.index[[r for r, _ in repeats]]).reset_index(drop=True)
        return out, [
            f"note: {path}: {len(repeats)} row(s) equal in every column to an earlier row (data "
            f"rows {rows}) counted once (--duplicates once)"
        ]
    return df, [
        f"note: {path}: {len(repeats)} row(s) equal in every column to an earlier row (data "
        f"rows {rows}) counted as separate trials (--duplicates keep)"
    ]


def prepare_table(df: pd.DataFrame, path, options: LogOptions | None):
    """One file's raw table (lower-case column names) as the tidy reader expects it.

    Renames the lab's columns (``--columns``), expands a counts table, and refuses, drops
    or keeps exact duplicate rows (:data:`DUPLICATE_RULES`).

    Returns
    -------
    (DataFrame, list of str, bool)
        The table, the notes for the reader's warnings, and whether it was a counts table.
    """
    options = options or LogOptions()
    df = _rename(df, path, options)
    notes = []
    is_counts = "success" not in df.columns and {"successes", "trials"} <= set(df.columns)
    if is_counts:
        df = _expand_counts(df, path)
        notes.append(
            f"note: {path} is a counts table (successes and trials per row): its trials carry "
            "no condition ids, so every comparison of them is unpaired"
        )
    else:
        df, dup_notes = _check_duplicates(df, path, options)
        notes += dup_notes
    hint = condition_hint([str(c) for c in df.columns], path)
    if hint:
        notes.append(hint)
    return df, notes, is_counts


def refuse_repeated_paths(paths, content: bool = True) -> None:
    """Refuse a log given twice: the same file (after symlinks) or (``content``) the same
    bytes."""

    from evalsim._log_files import check_log_path, digest

    seen: dict[tuple, str] = {}
    for path in paths:
        check_log_path(path)  # a symlink loop or a missing file: its one line, before resolve()
        keys = [("path", str(Path(path).resolve()))]
        if content:
            keys.append(("content", digest(path)))
        for key in keys:
            if key[1] is None:
                continue
            if key in seen:
                same = "is the same file as" if key[0] == "path" else "has the same content as"
                raise TrialLogError(
                    f"{path}: {same} {seen[key]}; each log must be given once (its trials "
                    "would be counted twice)"
                )
            seen[key] = str(path)


def refuse_same_trials(frames) -> None:
    """Refuse two files holding the same trials row for row (a CSV and its Parquet copy).

    Parameters
    ----------
    frames : sequence of (path, DataFrame)
        Each file's tidy table, in the order given.
    """
    for j, (path_j, b) in enumerate(frames):
        for path_i, a in frames[:j]:
            if len(a) != len(b) or set(a.columns) != set(b.columns):
                continue
            cols = list(a.columns)
            if a[cols].reset_index(drop=True).equals(b[cols].reset_index(drop=True)):
                raise TrialLogError(
                    f"{path_j}: holds the same trials as {path_i}, row for row (a copy in "
                    "another format?); each log must be given once (its trials would be "
                    "counted twice)"
                )


def cross_file_duplicates(named_frames, options: LogOptions | None):
    """Exact duplicate trials across files: refused, counted once or kept, as within a file.

    Parameters
    ----------
    named_frames : sequence of (path, DataFrame)
        Each file's tidy table, with the raw columns it would otherwise drop still in it
        (their names in ``attrs["raw_columns"]``), in the order given.
    options : LogOptions or None
        Its ``duplicates`` rule (:data:`DUPLICATE_RULES`).

    Returns
    -------
    (list of DataFrame, list of str)
        The tables without their raw columns (and, with ``once``, without the repeated
        rows), and the notes.
    """
    import pandas as pd

    options = options or LogOptions()
    frames = [df for _, df in named_frames]
    notes: list[str] = []
    # only files that tell their own trials apart can repeat a trial of another such file
    telling = [i for i, df in enumerate(frames) if tells_trials_apart(_columns(df))]
    if len(telling) > 1:
        cols = list(dict.fromkeys(c for i in telling for c in frames[i].columns))
        table = pd.concat(
            [
                pd.DataFrame(
                    {
                        c: frames[i][c].astype(str).str.strip() if c in frames[i].columns else ""
                        for c in cols
                    }
                )
                for i in telling
            ],
            ignore_index=True,
        )
        sizes = [len(frames[i]) for i in telling]
        file_of = np.repeat(np.arange(len(telling)), sizes)
        start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        repeats = [(r, f) for r, f in repeated_trials(table) if file_of[r] != file_of[f]]
        if repeats:
            chosen = [named_frames[i] for i in telling]
            kept, notes = _cross_file_rule(chosen, repeats, file_of, start, options)
            for i, df in zip(telling, kept, strict=True):
                frames[i] = df
    out = []
    for df in frames:
        raw = [c for c in df.attrs.get("raw_columns", ()) if c in df.columns]
        out.append(df.drop(columns=raw) if raw else df)
    return out, notes


def _columns(df) -> dict:
    """A table's columns with its raw ones, for :func:`tells_trials_apart`."""
    return {c: df[c] for c in df.columns}


def _cross_file_rule(named_frames, repeats, file_of, start, options: LogOptions):
    """Apply ``options.duplicates`` to rows that repeat a row of another file."""
    paths = [str(p) for p, _ in named_frames]
    frames = [df for _, df in named_frames]
    r, f = repeats[0]
    fr, ff = int(file_of[r]), int(file_of[f])
    row = frames[fr].iloc[r - start[fr]]
    shown = ", ".join(f"{c}={str(row[c]).strip()}" for c in frames[fr].columns)
    if options.duplicates == "refuse":
        raise TrialLogError(
            f"{paths[fr]}: data row {r - start[fr] + 1} repeats data row {f - start[ff] + 1} of "
            f"{paths[ff]} in every column ({shown}); {len(repeats)} such row(s) across the "
            "files: a trial logged twice would be counted twice; remove them, or give "
            "--duplicates once (count each once) or --duplicates keep (they are distinct trials)"
        )
    word = "counted once" if options.duplicates == "once" else "counted as separate trials"
    note = (
        f"note: {len(repeats)} row(s) equal in every column to a row of another file "
        f"({paths[fr]}, data row {r - start[fr] + 1}, first) {word} (--duplicates "
        f"{options.duplicates})"
    )
    if options.duplicates == "once":
        drop: dict[int, list[int]] = {}
        for r, _ in repeats:
            drop.setdefault(int(file_of[r]), []).append(int(r - start[file_of[r]]))
        frames = [
            df.drop(index=df.index[drop[i]]).reset_index(drop=True) if i in drop else df
            for i, df in enumerate(frames)
        ]
    return frames, [note]
