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

Every problem raises :class:`TrialLogError`, whose message is one line that names the file,
and the row or column at fault.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

__all__ = [
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TrialLogError",
    "parse_success",
    "pairing_key",
    "read_trial_log",
    "read_trial_logs",
]

REQUIRED_COLUMNS = ("policy", "success")
OPTIONAL_COLUMNS = ("task", "seed", "condition", "failure")

_TRUE = {"1", "1.0", "true", "t", "yes", "y"}
_FALSE = {"0", "0.0", "false", "f", "no", "n"}
_TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}


class TrialLogError(ValueError):
    """A trial log that cannot be read or does not have the expected shape."""


def read_trial_logs(paths, policy: str | None = None, extra_columns=()) -> pd.DataFrame:
    """Read several logs (see :func:`read_trial_log`) and stack them in the order given."""
    paths = list(paths)
    if policy is not None and len(paths) > 1:
        raise TrialLogError("--policy names the policy of a single file; give one file per call")
    frames = [read_trial_log(p, policy=policy, extra_columns=extra_columns) for p in paths]
    if len(frames) == 1:
        return frames[0]
    return pd.concat(frames, ignore_index=True)


def read_trial_log(
    path: str | os.PathLike, policy: str | None = None, extra_columns=()
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
    if suffix == ".json":
        df = _read_lerobot_json(path, policy)
    elif suffix in _TABLE_SUFFIXES or suffix in _PARQUET_SUFFIXES:
        df = _read_table(path, suffix)
        df.columns = [str(c).strip().lower() for c in df.columns]
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
    return _tidy(df, path, tuple(extra_columns))


def _read_table(path: Path, suffix: str) -> pd.DataFrame:
    try:
        if suffix in _PARQUET_SUFFIXES:
            return pd.read_parquet(path)
        # dtype=str keeps "1"/"true"/"07" exactly as written; parse_success decides.
        # utf-8-sig: spreadsheet exports often start with a byte-order mark.
        return pd.read_csv(
            path,
            sep=_TABLE_SUFFIXES[suffix],
            dtype=str,
            keep_default_na=False,
            encoding="utf-8-sig",
        )
    except pd.errors.EmptyDataError:
        raise TrialLogError(f"{path}: file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as err:
        kind = "Parquet" if suffix in _PARQUET_SUFFIXES else "CSV"
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TrialLogError(f"{path}: unreadable {kind} file ({msg})") from None
    except Exception as err:  # pyarrow raises its own types for a corrupt file
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise TrialLogError(f"{path}: unreadable file ({msg})") from None


def _read_lerobot_json(path: Path, policy: str | None) -> pd.DataFrame:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TrialLogError(f"{path}: unreadable JSON ({err})") from None
    name = policy if policy is not None else (path.resolve().parent.name or path.stem)
    if isinstance(info, dict) and isinstance(info.get("per_episode"), list):
        rows = []
        for i, episode in enumerate(info["per_episode"]):
            if not isinstance(episode, dict) or "success" not in episode:
                raise TrialLogError(f"{path}: per_episode[{i}] has no 'success'")
            row = {"policy": name, "success": episode["success"]}
            if episode.get("seed") is not None:
                row["condition"] = str(episode["seed"])
            rows.append(row)
        return pd.DataFrame(rows, columns=None if rows else ["policy", "success"])
    if isinstance(info, dict) and isinstance(info.get("per_task"), list):
        rows = []
        for j, task in enumerate(info["per_task"]):
            try:
                successes = task["metrics"]["successes"]
            except (KeyError, TypeError):
                raise TrialLogError(f"{path}: per_task[{j}] has no metrics.successes") from None
            label = ":".join(
                str(task[key]) for key in ("task_group", "task_id") if task.get(key) is not None
            )
            for s in successes:
                rows.append({"policy": name, "task": label or str(j), "success": s})
        return pd.DataFrame(rows, columns=None if rows else ["policy", "success"])
    raise TrialLogError(
        f"{path}: not a LeRobot eval_info file (expected a 'per_episode' or 'per_task' list)"
    )


def parse_success(values: pd.Series, path: str | os.PathLike = "") -> pd.Series:
    """Map 0/1, true/false (any case), yes/no to bool; anything else raises.

    The error names the first bad value and its row (1-based data row; in a CSV with a
    header this is line ``row + 1``).
    """
    prefix = f"{path}: " if str(path) else ""
    if pd.api.types.is_bool_dtype(values):
        return values.astype(bool)
    out = []
    for i, v in enumerate(values.tolist()):
        if isinstance(v, bool):
            out.append(v)
            continue
        if v is None or (isinstance(v, float) and v != v):
            raise TrialLogError(f"{prefix}success is empty in data row {i + 1}")
        if isinstance(v, int | float) and v in (0, 1):
            out.append(bool(v))
            continue
        text = str(v).strip().lower()
        if text in _TRUE:
            out.append(True)
        elif text in _FALSE:
            out.append(False)
        elif text == "":
            raise TrialLogError(f"{prefix}success is empty in data row {i + 1}")
        else:
            raise TrialLogError(
                f"{prefix}success must be 0/1 or true/false; got {v!r} in data row {i + 1}"
            )
    return pd.Series(out, index=values.index, dtype=bool, name=values.name)


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
        out[col] = text.where(filled, "")
    return out


def pairing_key(df: pd.DataFrame) -> list[str]:
    """Columns that identify the starting state of a trial: task, seed (if present), condition.

    Two trials of different policies with equal values in all of these columns started from
    the same state. Returns an empty list when the log has no ``condition`` column.
    """
    if "condition" not in df.columns:
        return []
    return [c for c in ("task", "seed", "condition") if c in df.columns]
