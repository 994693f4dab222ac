"""The workflow on the smoke config: a real run, bad-config refusal, determinism, resume."""

from __future__ import annotations

import hashlib

import pytest
from conftest import copy_workflow, snakemake


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bad_config_fails_before_any_job(tmp_path):
    work = copy_workflow(tmp_path)
    cfg = (work / "config" / "smoke.yaml").read_text()
    (work / "config" / "smoke.yaml").write_text(cfg.replace("sigma_mm: 9.0", "sigma_mm: -9.0"))
    res = snakemake(work, "--cores", "1", "--configfile", "config/smoke.yaml")
    assert res.returncode != 0
    out = res.stderr + res.stdout
    assert "policies[0].sigma_mm" in out and "out of range" in out
    assert not (work / "results").exists()


def test_unknown_key_lists_allowed_keys(tmp_path):
    work = copy_workflow(tmp_path)
    cfg = (work / "config" / "smoke.yaml").read_text()
    (work / "config" / "smoke.yaml").write_text(cfg + "\ntrials: 5\n")
    res = snakemake(work, "-n", "--configfile", "config/smoke.yaml")
    assert res.returncode != 0
    assert "unknown key(s) 'trials'" in res.stderr + res.stdout
    assert "allowed keys:" in res.stderr + res.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("pipeline")
def test_smoke_pipeline_runs_and_is_complete(smoke_run):
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    work = smoke_run.work
    dry = snakemake(work, "-n", "--configfile", "config/smoke.yaml")
    assert "Nothing to be done" in dry.stdout + dry.stderr
    tables = sorted((work / "results" / "tables").glob("*.csv"))
    assert len(tables) >= 25
    for csv in tables:
        assert csv.with_suffix(".md").is_file(), csv
    for png in (work / "figures").glob("*.png"):
        assert png.with_suffix(".pdf").is_file(), png
    assert (work / "results" / "claims.csv").is_file()


@pytest.mark.slow
@pytest.mark.xdist_group("pipeline")
def test_same_config_same_bytes_whatever_cores(smoke_run, tmp_path):
    """One core and a different job order give byte-identical pools and tables."""
    assert smoke_run.result.returncode == 0
    targets = [
        "results/pools/pools.parquet",
        "results/tables/T07_pools.csv",
        "results/tables/T10_compare.csv",
        "results/tables/T22_two_spreads.csv",
        "results/tables/T27_paired_contingency.csv",
    ]
    work = copy_workflow(tmp_path / "one_core")
    res = snakemake(work, *targets, "--cores", "1", "--configfile", "config/smoke.yaml")
    assert res.returncode == 0, res.stderr[-4000:]
    for target in targets:
        assert _digest(work / target) == _digest(smoke_run.work / target), target


@pytest.mark.slow
@pytest.mark.xdist_group("pipeline")
def test_lost_product_reruns_only_its_job(smoke_run):
    """An interrupted or damaged run resumes: only what is missing (and downstream) reruns."""
    assert smoke_run.result.returncode == 0
    work = smoke_run.work
    lost = work / "results" / "tables" / "T03_prob_at_least_9_of_10.csv"
    lost.unlink()
    dry = snakemake(work, "-n", "--configfile", "config/smoke.yaml", "--quiet", "rules")
    out = dry.stdout + dry.stderr
    assert "exact_t03" in out and "simulate_chunk" not in out, out[-2000:]
    res = snakemake(work, "--cores", "1", "--configfile", "config/smoke.yaml")
    assert res.returncode == 0 and lost.is_file()
