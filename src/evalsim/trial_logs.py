"""Read a lab's own trial logs into one tidy table: one row per trial.

Accepted formats (chosen by file suffix):

``.csv`` / ``.tsv``
    One row per trial; a header row naming the columns.
``.parquet`` / ``.pq``
    The same columns (the evalsim pools are readable directly).
``.json``
    LeRobot evaluation output (``eval_info.json`` written by ``lerobot-eval``), either the
    single-task form ``{"per_episode": [{"success": ..., "seed": ...}, ...], ...}`` or the
    multi-task form ``{"per_task": [{"task_group", "task_id", "metrics": {"successes": [...]}}],
    ...}``. The file does not name the policy, so the policy is the name of the folder holding
    the file (``lerobot-eval`` writes one folder per run) unless ``policy=`` is given.

Columns of the result: ``policy`` (str) and ``success`` (bool) always; ``task`` (str),
``seed`` (str), ``condition`` (str) and ``failure`` (str) when the log has them. ``seed`` is the
training seed of the policy, ``condition`` the id of the initial condition (the cube pose, the
scene reset) -- two trials of different policies with the same ``condition`` (and the same
``task`` and ``seed``) started from the same state and can be analysed as a pair. For a
LeRobot log the episode's environment seed is its initial condition, so it becomes
``condition``.

Several files stack into one table (:func:`read_trial_logs`). A file may be given as
``PATH=NAME``: NAME is then the policy of every trial in it (a LeRobot folder, or a table
without a ``policy`` column). Two LeRobot files whose folders have the same name (two runs both
called ``eval``) are an error unless labelled, so that they do not silently merge. Columns that
some files lack are filled with "" for their rows (no false warnings downstream); the files
and the columns each contributed are in ``df.attrs["sources"]``, and warnings about the data
(``pc_success`` in an ``eval_info.json`` that disagrees with its episodes, policy names that
differ only in case) in ``df.attrs["warnings"]``.

Every problem raises :class:`TrialLogError`, whose message is one line that names the file,
and the row or column at fault. A blank ``condition`` id is an error (it would pair trials
that did not start from the same state).
"""

from __future__ import annotations

import csv
import os
import re
import warnings as _warnings
from pathlib import Path

import numpy as np
import pandas as pd

from evalsim._lerobot import both_forms_note, per_task_trials
from evalsim._log_files import (
    _FALSE,
    _PARQUET_SUFFIXES,
    _TABLE_SUFFIXES,
    _TRUE,
    MAX_FIELD_CHARS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    TrialLogError,
    case_warnings,
    field_too_long,
    load_json_log,
    pairing_key,
    split_label,
)
from evalsim._log_files import reported_pc_success as _reported_pc_success
from evalsim._log_files import sniff as _sniff
from evalsim._log_options import (
    LogOptions,
    cross_file_duplicates,
    prepare_table,
    refuse_repeated_paths,
    refuse_same_trials,
)

__all__ = [
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TrialLogError",
    "parse_success",
    "pairing_key",
    "read_trial_log",
    "read_trial_logs",
    "split_label",
]


def read_trial_logs(
    paths, policy: str | None = None, extra_columns=(), options: LogOptions | None = None
) -> pd.DataFrame:
    """Read several logs (see :func:`read_trial_log`) and stack them in the order given.

    Each entry may be ``PATH=NAME`` (NAME is the policy of that file). ``policy`` (the
    older ``--policy`` option) names the policy of a single file. The result carries
    ``attrs["sources"]`` (one dict per file: path, label, rows, columns) and
    ``attrs["warnings"]`` (one line each). ``extra_columns``, ``options``: see
    :func:`read_trial_log`. Two files holding the same trials row for row (a CSV and its
    Parquet copy) are refused, as a file given twice is.
    """
    specs = [split_label(p) for p in paths]
    if policy is not None and len(specs) > 1:
        raise TrialLogError("--policy names the policy of a single file; give one file per call")
    frames, sources, warnings = [], [], []
    folder_names: dict[str, str] = {}
    refuse_repeated_paths([path for path, _ in specs])
    task_groups: dict[str, str] = {}
    for path, label in specs:
        name = label if label is not None else policy
        df = read_trial_log(
            path,
            policy=name,
            extra_columns=extra_columns,
            options=options,
            keep_raw_columns=len(specs) > 1,  # for the duplicates across files, then dropped
        )
        task_groups.update(df.attrs.get("task_groups", {}))
        warnings.extend(df.attrs.get("warnings", []))
        if Path(path).suffix.lower() == ".json" and name is None:
            folder = str(df["policy"].iloc[0])
            if folder in folder_names and folder_names[folder] != str(Path(path).resolve()):
                raise TrialLogError(
                    f"{path}: its folder name {folder!r} is also the policy of "
                    f"{folder_names[folder]}; label the files as PATH=NAME so that two runs "
                    "do not merge"
                )
            folder_names[folder] = str(Path(path).resolve())
        raw = set(df.attrs.get("raw_columns", ()))
        sources.append(
            {
                "path": str(path),
                "label": label,
                "rows": len(df),
                "columns": [c for c in df.columns if c not in raw],
            }
        )
        frames.append(df)
    named = [(path, df) for (path, _), df in zip(specs, frames, strict=True)]
    refuse_same_trials(
        [(p, df.drop(columns=list(df.attrs.get("raw_columns", ())))) for p, df in named]
    )
    frames, cross_notes = cross_file_duplicates(named, options)
    warnings += cross_notes
    for src, df in zip(sources, frames, strict=True):
        src["rows"] = len(df)
    counts_table = any(df.attrs.get("counts_table") for df in frames)
    if len(frames) == 1:
        out = frames[0]
    else:
        out = pd.concat(frames, ignore_index=True)
        for col in OPTIONAL_COLUMNS:
            if col in out.columns:
                out[col] = out[col].fillna("").astype(str)
    warnings += case_warnings(str(v) for v in out["policy"].unique())
    out.attrs = {"sources": sources, "warnings": warnings}
    if task_groups:
        out.attrs["task_groups"] = task_groups
    if counts_table:
        out.attrs["counts_table"] = True
    return out


def read_trial_log(
    path: str | os.PathLike,
    policy: str | None = None,
    extra_columns=(),
    options: LogOptions | None = None,
    keep_raw_columns: bool = False,
) -> pd.DataFrame:
    """Read one trial log and return the tidy, validated table.

    Parameters
    ----------
    path : str or PathLike
        A ``.csv``, ``.tsv``, ``.parquet``/``.pq`` or LeRobot ``.json`` file.
    policy : str, optional
        Policy name for a LeRobot JSON file (default: the name of its folder). For tables,
        if the file has no ``policy`` column, every row gets this name; otherwise it is an
        error to give it.
    extra_columns : sequence of str
        Further columns (lower-case names) to keep as read, e.g. the trial order of
        ``--order``; a table without one of them is an error.
    options : LogOptions, optional
        The lab's column names, the rule for exact duplicate rows, LeRobot pairing by
        episode index (:class:`evalsim._log_options.LogOptions`); a counts table
        (successes, trials) is read as one row per trial.
    keep_raw_columns : bool
        Also keep a table's other columns, as read (their names in ``attrs["raw_columns"]``),
        for the duplicate check across files of :func:`read_trial_logs`.

    Raises
    ------
    TrialLogError
        Missing file, unreadable format, missing columns, a success value that is not
        binary, an empty policy name, or no rows.
    """
    path = Path(path)
    if not path.exists():
        raise TrialLogError(f"{path}: no such file")
    if path.is_dir():
        raise TrialLogError(f"{path}: is a folder, not a trial log file")
    suffix = path.suffix.lower()
    if suffix == ".json" or suffix in _TABLE_SUFFIXES or suffix in _PARQUET_SUFFIXES:
        _sniff(path, suffix)
    notes, is_counts = [], False
    if suffix == ".json":
        df = _read_lerobot_json(path, policy, options)
    elif suffix in _TABLE_SUFFIXES or suffix in _PARQUET_SUFFIXES:
        df = _read_table(path, suffix)
        df.columns = [str(c).strip().lower() for c in df.columns]
        df, notes, is_counts = prepare_table(df, path, options)
        missing = [c for c in extra_columns if c not in df.columns]
        if missing:
            have = ", ".join(map(str, df.columns)) or "none"
            raise TrialLogError(f"{path}: no column {', '.join(missing)} (columns found: {have})")
        if "policy" not in df.columns and policy is not None:
            df["policy"] = policy
        elif policy is not None:
            raise TrialLogError(f"{path}: has a 'policy' column; --policy applies only without one")
    else:
        raise TrialLogError(
            f"{path}: unreadable format {suffix or '(no suffix)'!r}; "
            "expected .csv, .tsv, .parquet, .pq or a LeRobot eval_info .json"
        )
    if suffix == ".json" and extra_columns:
        raise TrialLogError(
            f"{path}: a LeRobot JSON log has no column {', '.join(extra_columns)}; "
            "its episodes are in file order"
        )
    json_attrs = dict(df.attrs) if suffix == ".json" else {}
    known = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, *extra_columns)
    raw = [str(c) for c in df.columns if str(c) not in known] if keep_raw_columns else []
    if suffix == ".json":
        raw = []
    _check_field_sizes(df, path)
    out = _tidy(df, path, (*extra_columns, *raw))
    out.attrs["warnings"] = notes + json_attrs.get("notes", []) + out.attrs["warnings"]
    if is_counts:
        out.attrs["counts_table"] = True
    if raw:
        out.attrs["raw_columns"] = raw
    if json_attrs.get("task_groups"):
        out.attrs["task_groups"] = json_attrs["task_groups"]
    return out


def _check_field_sizes(df: pd.DataFrame, path: Path) -> None:
    """Refuse a text field longer than :data:`evalsim._log_files.MAX_FIELD_CHARS` characters
    (a quoted CSV field, a Parquet string, a JSON task name), naming its row and column."""
    for col in df.columns:
        values = df[col]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue
        lengths = values.map(lambda v: len(v) if isinstance(v, str) else 0).to_numpy()
        if lengths.size and int(lengths.max()) > MAX_FIELD_CHARS:
            i = int(lengths.argmax())
            raise field_too_long(path, i + 1, str(col), int(lengths[i]))


def _read_table(path: Path, suffix: str) -> pd.DataFrame:
    try:
        if suffix in _PARQUET_SUFFIXES:
            return pd.read_parquet(path)
        # dtype=str keeps "1"/"true"/"07" exactly as written; parse_success decides.
        # utf-8-sig: spreadsheet exports often start with a byte-order mark.
        # index_col=False: a row with a field too many is an error, never a shift of the
        # columns (pandas otherwise takes column 1 as the index; issue 45, item 8).
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always", pd.errors.ParserWarning)
            df = pd.read_csv(
                path,
                sep=_TABLE_SUFFIXES[suffix],
                dtype=str,
                keep_default_na=False,
                encoding="utf-8-sig",
                index_col=False,
            )
        if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
            _refuse_ragged(path, _TABLE_SUFFIXES[suffix])
        return df
    except TrialLogError:
        raise
    except pd.errors.EmptyDataError:
        raise TrialLogError(f"{path}: file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as err:
        if suffix in _TABLE_SUFFIXES and _PANDAS_RAGGED.search(str(err)):
            _refuse_ragged(path, _TABLE_SUFFIXES[suffix])
        if suffix in _TABLE_SUFFIXES and isinstance(err, UnicodeDecodeError):
            _refuse_undecodable(path, _TABLE_SUFFIXES[suffix])
        kind = "Parquet" if suffix in _PARQUET_SUFFIXES else "CSV"
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TrialLogError(f"{path}: unreadable {kind} file ({msg})") from None
    except Exception as err:  # pyarrow raises its own types for a corrupt file
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TrialLogError(f"{path}: unreadable file ({msg})") from None


_PANDAS_RAGGED = re.compile(r"Expected \d+ fields in line \d+, saw \d+")


def _refuse_undecodable(path: Path, delimiter: str) -> None:
    """Raise the one-line error of the first line that is not UTF-8: its line, its column
    (by the delimiters before the bad byte) and the byte."""
    with open(path, "rb") as fh:
        header = fh.readline()
        names = header.decode("utf-8-sig", errors="replace").strip().split(delimiter)
        fh.seek(0)
        for line_no, line in enumerate(fh, start=1):
            try:
                line.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError as err:
                col = line[: err.start].count(delimiter.encode())
                name = names[col].strip().lower() if col < len(names) else f"field {col + 1}"
                row = f"data row {line_no - 1}, " if line_no > 1 else "header, "
                raise TrialLogError(
                    f"{path}: line {line_no} ({row}column {name!r}): byte "
                    f"{line[err.start]:#04x} is not UTF-8 text; save the file as UTF-8"
                ) from None
    raise TrialLogError(f"{path}: not UTF-8 text; save the file as UTF-8")


def _refuse_ragged(path: Path, delimiter: str) -> None:
    """Raise the one-line error of the first row whose field count is not the header's:
    its data row, its line, its field count and the header's column count."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        header = next(reader, [])
        row = 0
        for fields in reader:
            if not fields:
                continue  # a blank line: pandas skips it
            row += 1
            if len(fields) != len(header):
                where = (
                    f"field {len(header) + 1} has no column"
                    if len(fields) > len(header)
                    else f"column {header[len(fields)].strip()!r} has no field"
                )
                raise TrialLogError(
                    f"{path}: data row {row} (line {reader.line_num}) has {len(fields)} "
                    f"fields but the header names {len(header)} columns "
                    f"({', '.join(h.strip() for h in header)}): {where}"
                )
    raise TrialLogError(f"{path}: rows with more fields than the header has columns")


def _read_lerobot_json(path: Path, policy: str | None, options=None) -> pd.DataFrame:
    info = load_json_log(path)
    name = policy if policy is not None else (path.resolve().parent.name or path.stem)
    if isinstance(info, dict) and isinstance(info.get("per_task"), list):
        pair = bool(options is not None and options.pair_episodes)
        cols, notes, groups = per_task_trials(info, path, name, pair_episodes=pair)
        if isinstance(info.get("per_episode"), list):
            notes.insert(0, both_forms_note(info, path, cols))
        if not cols["success"]:
            raise TrialLogError(f"{path}: no episodes (every per_task successes list is empty)")
        df = pd.DataFrame(cols)
        df.attrs["pc_success"] = _reported_pc_success(info)
        df.attrs["notes"] = notes
        df.attrs["task_groups"] = groups
        return df
    if isinstance(info, dict) and isinstance(info.get("per_episode"), list):
        rows = []
        for i, episode in enumerate(info["per_episode"]):
            if not isinstance(episode, dict) or "success" not in episode:
                raise TrialLogError(f"{path}: per_episode[{i}] has no 'success'")
            row = {"policy": name, "success": episode["success"]}
            if episode.get("seed") is not None:
                row["condition"] = str(episode["seed"])
            rows.append(row)
        if not rows:
            raise TrialLogError(f"{path}: no episodes (per_episode is empty)")
        df = pd.DataFrame(rows)
        df.attrs["pc_success"] = _reported_pc_success(info)
        return df
    raise TrialLogError(
        f"{path}: not a LeRobot eval_info file (expected a 'per_episode' or 'per_task' list)"
    )


def parse_success(values: pd.Series, path: str | os.PathLike = "") -> pd.Series:
    """Map 0/1, true/false, yes/no (any case; also t/f, y/n) to bool; anything else raises.

    The error names the first bad value and its row (1-based data row; in a CSV with a
    header this is line ``row + 1``).
    """
    prefix = f"{path}: " if str(path) else ""
    missing = values.isna().to_numpy()
    if missing.any():  # a nullable boolean or number with NA (Parquet), a JSON null
        raise TrialLogError(f"{prefix}success is empty in data row {int(missing.argmax()) + 1}")
    if pd.api.types.is_bool_dtype(values):
        return values.astype(bool)
    if pd.api.types.is_numeric_dtype(values):
        arr = values.to_numpy()
        ok = (arr == 0) | (arr == 1)
        if ok.all():
            return pd.Series(arr == 1, index=values.index, dtype=bool, name=values.name)
    raw = values.astype(str)
    is_one = (raw == "1").to_numpy()
    if (is_one | (raw == "0").to_numpy()).all():  # the common case, without normalising
        return pd.Series(is_one, index=values.index, dtype=bool, name=values.name)
    text = raw.str.strip().str.lower()
    true = text.isin(_TRUE).to_numpy()
    false = text.isin(_FALSE).to_numpy()
    bad = ~(true | false)
    if bad.any():
        i = int(bad.argmax())
        v = values.iloc[i]
        v = v.item() if isinstance(v, np.generic) else v
        if v is None or (isinstance(v, float) and v != v) or str(v).strip() == "":
            raise TrialLogError(f"{prefix}success is empty in data row {i + 1}")
        raise TrialLogError(
            f"{prefix}success must be 0/1, true/false or yes/no; got {v!r} in data row {i + 1}"
        )
    return pd.Series(true, index=values.index, dtype=bool, name=values.name)


def _tidy(df: pd.DataFrame, path: Path, extra_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        have = ", ".join(map(str, df.columns)) or "none"
        raise TrialLogError(
            f"{path}: missing column(s) {', '.join(missing)} (columns found: {have})"
        )
    if len(df) == 0:
        raise TrialLogError(f"{path}: no trials (the log has a header but no rows)")
    keep = [c for c in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS) if c in df.columns]
    keep += [c for c in extra_columns if c not in keep]  # kept as read (e.g. --order)
    out = df[keep].copy().reset_index(drop=True)
    out["success"] = parse_success(out["success"], path)
    warnings = []
    reported = df.attrs.get("pc_success")
    if reported is not None:
        measured = 100.0 * float(out["success"].mean())
        if abs(measured - reported) > 0.05:
            warnings.append(
                f"warning: {path}: pc_success = {reported:g} but its {len(out)} episodes give "
                f"{measured:.1f}; the episodes are used"
            )
    for col in ("policy", *[c for c in OPTIONAL_COLUMNS if c in out.columns]):
        filled = out[col].notna()
        text = out[col].astype(str).str.strip()
        if col == "policy":
            empty = ~filled | (text == "")
            if empty.any():
                raise TrialLogError(
                    f"{path}: policy is empty in data row {int(empty.to_numpy().argmax()) + 1}"
                )
        elif col == "seed":
            # 0, 0.0 and "0" are the same seed whatever the file format made of them.
            text = text.str.replace(r"^(-?\d+)\.0+$", r"\1", regex=True)
        elif col == "condition":
            blank = ~filled | (text == "")
            if blank.any():
                raise TrialLogError(
                    f"{path}: condition is blank in data row {int(blank.to_numpy().argmax()) + 1}"
                    " (a blank id would pair trials that did not start from the same state)"
                )
        out[col] = text.where(filled, "")
    out.attrs = {"warnings": warnings}
    return out
