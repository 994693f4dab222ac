"""The workflow on the smoke config: a real run in a scratch copy, plus bad-config refusal."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def _copy_workflow(repo: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config", "workflow"):
        src = repo / name
        if src.is_dir():
            shutil.copytree(src, dest / name)
        else:
            shutil.copy(src, dest / name)
    return dest


def _snakemake(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=1500)


def test_bad_config_fails_before_any_job(repo, tmp_path):
    work = _copy_workflow(repo, tmp_path)
    cfg = (work / "config" / "smoke.yaml").read_text()
    (work / "config" / "smoke.yaml").write_text(cfg.replace("sigma_mm: 9.0", "sigma_mm: -9.0"))
    res = _snakemake(work, "--cores", "1", "--configfile", "config/smoke.yaml")
    assert res.returncode != 0
    assert "policies[0].sigma_mm" in res.stderr + res.stdout
    assert not (work / "results").exists()


@pytest.mark.slow
@pytest.mark.xdist_group("pipeline")
def test_smoke_pipeline_runs_and_is_deterministic(repo, tmp_path):
    work = _copy_workflow(repo, tmp_path / "a")
    res = _snakemake(work, "--cores", "2", "--configfile", "config/smoke.yaml")
    assert res.returncode == 0, res.stderr[-4000:]
    dry = _snakemake(work, "-n", "--cores", "2", "--configfile", "config/smoke.yaml")
    assert "Nothing to be done" in dry.stdout + dry.stderr
