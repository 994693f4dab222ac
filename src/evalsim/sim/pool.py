"""The pools on disk: the only Parquet I/O of the simulate stage.

One pyarrow schema (:data:`POOL_SCHEMA`), one writer with fixed options, rows sorted by
(task, policy, seed, trial) for the pools and (sigma_mm, trial) for the sigma sweep, and
file metadata holding the simulate config hash and the mujoco and evalsim versions (no
timestamps), so the same config gives the same bytes whatever the number of cores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor

import mujoco
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import evalsim
from evalsim.config import config_hash
from evalsim.io import atomic_path

POOL_SCHEMA = pa.schema(
    [
        pa.field("task", pa.string(), nullable=False),
        pa.field("policy", pa.string(), nullable=False),
        pa.field("sigma_mm", pa.float64(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("trial", pa.int64(), nullable=False),
        pa.field("cube_x_m", pa.float64(), nullable=False),
        pa.field("cube_y_m", pa.float64(), nullable=False),
        pa.field("cube_yaw_rad", pa.float64(), nullable=False),
        pa.field("bias_x_mm", pa.float64(), nullable=False),
        pa.field("bias_y_mm", pa.float64(), nullable=False),
        pa.field("aim_error_x_mm", pa.float64(), nullable=False),
        pa.field("aim_error_y_mm", pa.float64(), nullable=False),
        pa.field("success", pa.bool_(), nullable=False),
        pa.field("success_loose", pa.bool_(), nullable=False),
        pa.field("failure", pa.string(), nullable=False),
        pa.field("lift_height_m", pa.float64(), nullable=False),
        pa.field("max_lift_m", pa.float64(), nullable=False),
        pa.field("touched", pa.bool_(), nullable=False),
    ]
)
POOL_COLUMNS = tuple(POOL_SCHEMA.names)
# Pools: tasks and policies in config order, then seed and trial (see sort_pool).
POOL_SORT = ["task", "policy", "seed", "trial"]
SWEEP_SORT = ["sigma_mm", "trial"]

# Config sections that decide the pools' content.
SIM_SECTIONS = ("study_seed", "scene", "tasks", "policies", "simulation")


def sim_config_hash(config: dict) -> str:
    """Config hash of the sections that decide the pools (:data:`SIM_SECTIONS`), and of the
    ``simreal`` section for the real twins' pools (:mod:`evalsim.sim.twin`)."""
    sections = {k: config.get(k) for k in SIM_SECTIONS}
    if config.get("simreal") is not None:
        sections["simreal"] = config["simreal"]
    return config_hash(sections)


def pool_metadata(config: dict) -> dict[str, str]:
    """File metadata of every pool: config hash, mujoco and evalsim versions."""
    return {
        "evalsim.config_hash": sim_config_hash(config),
        "evalsim.mujoco_version": mujoco.__version__,
        "evalsim.evalsim_version": evalsim.__version__,
    }


def to_table(df: pd.DataFrame, metadata: dict[str, str] | None = None) -> pa.Table:
    """``df`` as a pyarrow table with :data:`POOL_SCHEMA` (columns checked and ordered)."""
    missing = [c for c in POOL_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"pool frame lacks column(s) {missing}; expected {list(POOL_COLUMNS)}")
    table = pa.Table.from_pandas(df[list(POOL_COLUMNS)], schema=POOL_SCHEMA, preserve_index=False)
    # drop pandas' metadata (it records the index and library versions), keep ours only
    meta = {k.encode(): v.encode() for k, v in (metadata or {}).items()}
    return table.replace_schema_metadata(meta)


def sort_pool(df: pd.DataFrame, config: dict, sort: Sequence[str] = POOL_SORT) -> pd.DataFrame:
    """Rows sorted by ``sort``; tasks and policies in config order (then by name)."""
    orders = {
        "task": [t["name"] for t in config.get("tasks", [])],
        "policy": [p["name"] for p in config.get("policies", [])],
    }

    def key(col: pd.Series) -> pd.Series:
        if col.name in orders:
            rank = {name: i for i, name in enumerate(orders[col.name])}
            extra = sorted(set(col) - set(rank))
            rank.update({name: len(rank) + i for i, name in enumerate(extra)})
            return col.map(rank)
        return col

    return df.sort_values(list(sort), key=key, kind="stable").reset_index(drop=True)


def write_pool(
    df: pd.DataFrame, path: str | os.PathLike, config: dict, sort: Sequence[str] = POOL_SORT
) -> None:
    """Write a pool atomically: sorted rows, fixed writer options, our metadata."""
    df = sort_pool(df, config, sort)
    table = to_table(df, pool_metadata(config))
    with atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            compression_level=3,
            use_dictionary=["task", "policy", "failure"],
            write_statistics=True,
            row_group_size=1 << 20,
            version="2.6",
            data_page_version="1.0",
        )


def read_pool(path: str | os.PathLike) -> pd.DataFrame:
    """Read a pool and check its schema."""
    table = pq.read_table(path)
    check_schema(table.schema)
    return table.to_pandas()


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def check_schema(schema: pa.Schema) -> None:
    """Raise ValueError if ``schema`` lacks a pool column or has a wrong type."""
    for field in POOL_SCHEMA:
        if field.name not in schema.names:
            raise ValueError(f"pool lacks column {field.name!r}")
        got = schema.field(field.name).type
        if got != field.type:
            raise ValueError(f"pool column {field.name!r} has type {got}, expected {field.type}")


def merge_pools(
    paths: Iterable[str | os.PathLike],
    out: str | os.PathLike,
    config: dict,
    sort: Sequence[str] = POOL_SORT,
) -> pd.DataFrame:
    """Concatenate pool files, sort, and write ``out``; return the merged frame."""
    frames = [read_pool(p) for p in paths]
    df = pd.concat(frames, ignore_index=True)
    dup = df.duplicated(list(sort))
    if dup.any():
        raise ValueError(f"merged pools hold {int(dup.sum())} duplicate trial rows")
    df = sort_pool(df, config, sort)
    write_pool(df, out, config, sort=sort)
    return df


def chunk_ranges(n_trials: int, trials_per_chunk: int) -> list[tuple[int, int]]:
    """Trial ranges ``[start, stop)`` of the chunks of ``n_trials`` trials."""
    if n_trials < 1 or trials_per_chunk < 1:
        raise ValueError(
            f"need n_trials >= 1 and trials_per_chunk >= 1, got {n_trials!r}, {trials_per_chunk!r}"
        )
    return [(s, min(s + trials_per_chunk, n_trials)) for s in range(0, n_trials, trials_per_chunk)]


def pool_jobs(config: dict) -> list[tuple[str, str, int, int, int]]:
    """Every chunk of the default pools: (task, policy, seed, start, stop)."""
    sim = config["simulation"]
    ranges = chunk_ranges(sim["trials_per_seed"], sim["trials_per_chunk"])
    return [
        (t["name"], p["name"], seed, a, b)
        for t in config["tasks"]
        for p in config["policies"]
        for seed in range(sim["n_seeds"])
        for a, b in ranges
    ]


def _run_job(args: tuple[dict, tuple[str, str, int, int, int]]) -> pd.DataFrame:
    from evalsim.sim.rollout import run_policy_trials

    config, (task, policy, seed, a, b) = args
    return run_policy_trials(config, task, policy, seed, a, b)


def simulate_pools(config: dict, processes: int = 1) -> pd.DataFrame:
    """All pools of ``config`` in one frame (sorted), using ``processes`` worker processes.

    The library path used by the benchmark and calibration; the workflow runs the same
    chunks as separate jobs.
    """
    jobs = [(config, j) for j in pool_jobs(config)]
    if processes <= 1:
        frames = [_run_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=processes) as ex:
            frames = list(ex.map(_run_job, jobs))
    return sort_pool(pd.concat(frames, ignore_index=True), config)
