"""Stage 'studies': lesson 25's experiment as a locked study (S01), built from the pools.

Lesson 25 fixes 20 cube positions on a grid marked on the table, the same for every policy,
writes the success test before running, and reports k/n, Wilson 95% and the failure types,
comparing two policies with Fisher's exact test. :func:`build_lesson_study` does exactly
that with :mod:`evalsim.study`: the conditions are the pool's cube poses (trials 0..n-1 of
training seed 0 of the lesson's task, which every policy shares), the study is locked with
the configured seed, and each scheduled trial's outcome is read from the pool row of its
policy and pose -- never simulated again. The outcomes are recorded through the study's store
in the locked order, the study is unblinded, and its report is written.

A fixed clock dates the events, so the same config gives the same report bytes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the caller; the workflow imports S01_FILES cheaply
    import pandas as pd

__all__ = ["S01_FILES", "build_lesson_study", "lesson_study_yaml"]

#: The files of S01 under its folder (the report's stem is the product id).
S01_FILES = (
    "lock.json",
    "study.yaml",
    "S01_report.html",
    "S01_report.json",
    "S01_report.md",
    "sheets/grid_sheet.pdf",
    "sheets/grid_sheet.png",
    "sheets/run_sheet.pdf",
)
#: The date every S01 event carries (a fixed clock: the product is the same bytes each run).
FIXED_CLOCK = "2000-01-01T00:00:00+00:00"
_FAILURES = ("missed", "pushed", "dropped", "held_low")


def _poses(pools: pd.DataFrame, task: str, policies: list[str], n: int) -> pd.DataFrame:
    sub = pools[(pools["task"] == task) & (pools["seed"] == 0)]
    first = sub[sub["policy"] == policies[0]].sort_values("trial").head(n)
    if len(first) < n:
        raise ValueError(
            f"the pool of {task}/{policies[0]} seed 0 has {len(first)} trials, not {n}"
        )
    cols = ["trial", "cube_x_m", "cube_y_m", "cube_yaw_rad"]
    for other in policies[1:]:
        o = sub[sub["policy"] == other].sort_values("trial").head(n)
        if not o[cols].reset_index(drop=True).equals(first[cols].reset_index(drop=True)):
            raise ValueError(f"{task}: the pools of {policies[0]} and {other} differ in pose")
    return first[cols].reset_index(drop=True)


def lesson_study_yaml(poses: pd.DataFrame, task: str, policies: list[str], alpha: float) -> str:
    """The study file of S01: the pool's poses as named positions (cm), Fisher's test."""
    import yaml

    doc = {
        "version": 1,
        "title": f"Lesson 25 on the pools: {task}, {policies[0]} vs {policies[1]}",
        "question": {
            "primary": {"a": policies[0], "b": policies[1]},
            "alternative": "two-sided",
            "alpha": alpha,
        },
        "arms": [{"name": p} for p in policies],
        "conditions": {
            "positions": {
                "list": [
                    {
                        "name": f"P{int(r.trial) + 1:02d}",
                        "x_cm": round(float(r.cube_x_m) * 100, 2),
                        "y_cm": round(float(r.cube_y_m) * 100, 2),
                        "yaw_deg": round(float(r.cube_yaw_rad) * 180 / 3.141592653589793, 1),
                    }
                    for r in poses.itertuples()
                ]
            },
            "replicates": 1,
        },
        "rubric": {
            "success": (
                "The simulated pick lifts the cube and holds it up at the end of the roll-out "
                "(the pools' strict criterion, lesson 25)."
            ),
            "failure_types": list(_FAILURES),
        },
        "design": {"paired": False, "n": len(poses)},
        "analysis": {"primary": "fisher", "secondary": ["boschloo"]},
    }
    head = (
        "# S01: lesson 25's experiment as a locked study, written by the pipeline\n"
        "# (evalsim.products.studies) from the pools' cube poses.\n"
    )
    return head + yaml.safe_dump(doc, sort_keys=False)


def build_lesson_study(
    pools: pd.DataFrame,
    out_dir: str | os.PathLike,
    task: str,
    policies: list[str],
    n_pairs: int = 20,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict:
    """Build S01 into ``out_dir`` (replaced as a whole): lock, schedule, outcomes, report.

    Parameters
    ----------
    pools : pandas.DataFrame
        The SO-101 pools (``results/pools/pools.parquet``).
    out_dir : path
        The study folder to (re)build.
    task : str
        The lesson's task (the first configured).
    policies : list of str
        The two compared policies, A then B.
    n_pairs : int
        Positions, each run under both policies (the lesson's n = 20).
    seed : int
        The lock seed.
    alpha : float

    Returns
    -------
    dict
        The report document.
    """
    from evalsim.study import lock_study, open_study
    from evalsim.study.report import write_report

    if len(policies) != 2:
        raise ValueError(f"S01 compares two policies, got {policies!r}")
    poses = _poses(pools, task, policies, int(n_pairs))
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; the product is a normal folder
    try:
        (tmp / "study.yaml").write_text(
            lesson_study_yaml(poses, task, policies, alpha), encoding="utf-8"
        )
        lock_study(tmp, seed=int(seed))
        study = open_study(tmp, clock=lambda: FIXED_CLOCK)
        rows = pools[(pools["task"] == task) & (pools["seed"] == 0)].set_index(["policy", "trial"])
        for t in study.schedule:
            row = rows.loc[(t.arm, int(t.position[1:]) - 1)]
            ok = bool(row["success"])
            failure = None if ok or row["failure"] not in _FAILURES else str(row["failure"])
            study.record(t.trial, ok, failure=failure, event_id=f"pool-{t.trial}", by="pipeline")
        study.unblind("the pipeline (pool outcomes carry no operator)", event_id="unblind")
        study.store.close()
        _, doc = write_report(study, tmp, stem="S01_report")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return doc
