"""Shared fixtures. Tests are fast; none needs the full pipeline.

The one pipeline run (the smoke config, in a scratch copy of the workflow) is a session
fixture: tests that use it carry ``@pytest.mark.xdist_group("pipeline")`` so that under
``pytest -n 2 --dist loadgroup`` they share one worker and one run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")

os.environ.setdefault("MPLBACKEND", "Agg")
# The documents stay outside the repository; the pipeline runs of the tests (smoke copies in
# tmp folders, SLURM jobs) find them through $EVALSIM_DOCUMENTS, as a checkout finds them beside it.
DOCUMENTS = REPO.parent / "shared" / "seeds"
if DOCUMENTS.is_dir():
    os.environ.setdefault("EVALSIM_DOCUMENTS", str(DOCUMENTS))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def copy_workflow(dest: Path) -> Path:
    """Copy what the workflow needs (not results) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config", "workflow"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    return dest


def snakemake(cwd: Path, *args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@dataclass(frozen=True)
class SmokeRun:
    work: Path
    result: subprocess.CompletedProcess


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> SmokeRun:
    """The whole workflow on config/smoke.yaml, run once per test session."""
    work = copy_workflow(tmp_path_factory.mktemp("smoke") / "work")
    res = snakemake(work, "--cores", "2", "--configfile", "config/smoke.yaml")
    return SmokeRun(work, res)


@pytest.fixture(scope="session")
def smoke_report(smoke_run) -> Path:
    """``results/report.html`` of the smoke run (``snakemake --report``), built once.

    With the workflow profile (``profiles/default``: the landing page's metadata), as
    ``snakemake --report`` in a checkout reads it."""
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    shutil.copytree(
        REPO / "profiles" / "default", smoke_run.work / "profiles" / "default", dirs_exist_ok=True
    )
    report = smoke_run.work / "results" / "report.html"
    res = snakemake(
        smoke_run.work, "--configfile", "config/smoke.yaml", "--report", str(report), timeout=600
    )
    assert res.returncode == 0, res.stderr[-4000:]
    return report
