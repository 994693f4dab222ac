"""The workflow on the smoke config: a real run, bad-config refusal, determinism, resume."""

from __future__ import annotations

import hashlib
import re

import naive_fisher
import numpy as np
import pandas as pd
import pytest
from claim_tables import claim_tables
from conftest import copy_smoke, copy_workflow, snakemake
from scipy.stats import binom, fisher_exact

from evalsim.ledger import VERDICTS, load_claims, section
from evalsim.products.report import declared_products


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
def test_smoke_pipeline_runs_and_is_complete(smoke_run):
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    work = smoke_run.work
    dry = snakemake(work, "-n", "--configfile", "config/smoke.yaml")
    assert "Nothing to be done" in dry.stdout + dry.stderr
    tables = sorted((work / "results" / "tables").glob("*.csv"))
    assert len(tables) >= 25
    for csv in tables:
        assert csv.with_suffix(".md").is_file(), csv
    pngs = sorted((work / "figures").glob("*.png"))
    assert len(pngs) >= 7, pngs
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000, png
        assert png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-", png
    assert len(pd.read_csv(work / "results" / "claims.csv")) > 150


# Tables computed from the documents' premises only (no pools): their verdicts do not depend
# on the config, so the smoke run must give the full run's verdicts (the README snapshot).
EXACT_TABLES = {
    "T01", "T02", "T04", "T05", "T13", "T14", "T15", "T16", "T17", "T19", "T20", "T21", "T23",
    "T24", "T25", "T26", "T29", "F03",
}  # fmt: skip


def _readme_verdicts(repo) -> dict[str, str]:
    body = section((repo / "README.md").read_text(encoding="utf-8"), "disagreements")
    verdicts = "|".join(v for v in VERDICTS if v != "matches")
    rows = re.findall(rf"^\| (\d{{3}}-[\w.]+) \|.*?\| ({verdicts}) \|", body, flags=re.M)
    return dict(rows)


@pytest.mark.slow
def test_smoke_products_hold_the_right_values(smoke_run, repo):
    """Values, not existence: verdicts, T05's flags, resampled vs exact, a figure per stage."""
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    work = smoke_run.work
    ledger = pd.read_csv(work / "results" / "claims.csv").set_index("id")
    # 1. The exact-maths claims: the full run's verdicts (README snapshot; absent = matches).
    snapshot = _readme_verdicts(repo)
    exact = [
        c.id
        for c in load_claims(repo / "config" / "claims.yaml")
        if c.rule != "simulation" and claim_tables([c]) and claim_tables([c]) <= EXACT_TABLES
    ]
    assert len(exact) > 60
    got = {i: ledger.loc[i, "verdict"] for i in exact}
    want = {i: snapshot.get(i, "matches") for i in exact}
    assert got == want
    assert got["000-07"] == "matches"  # Wilson vs the library to round-off
    assert got["002-07"] == "matches"  # a Monte Carlo estimate of an exact rate, within 2 SE
    assert got["001-11"] == "document error"  # every premise stated: the exact binomial decides
    assert got["004-01"] == "document error"
    # 2. T05: every p-value rounds to the document's, the 441-table check is round-off.
    t05 = pd.read_csv(work / "results" / "tables" / "T05_fisher_checks.csv")
    assert t05["matches_document"].tolist() == [True, True, True]
    assert t05["max_abs_diff_441"].iloc[0] <= 1e-15
    p = t05.set_index("check")["pvalue"]
    assert p["14/20 vs 18/20: two-sided p"] == pytest.approx(
        fisher_exact([[14, 6], [18, 2]]).pvalue, rel=1e-10
    )
    # 3. Resampled vs exact, recomputed here: T09's drawn rate of >= 9/10 against SciPy.
    t09 = pd.read_csv(work / "results" / "tables" / "T09_nine_of_ten.csv")
    pools = pd.read_csv(work / "results" / "tables" / "T07_pools.csv").set_index("policy")
    for r in t09.itertuples():
        exact_p = binom.sf(8, 10, r.pool_rate)
        assert r.binomial == pytest.approx(exact_p, rel=1e-5)  # the CSV keeps 6 digits
        se = np.sqrt(exact_p * (1 - exact_p) / r.evaluations)
        assert abs(r.drawn - exact_p) <= 4 * se, (r.policy, r.drawn, exact_p)
        assert r.pool_rate == pytest.approx(pools.loc[r.policy, "rate"])
    t10 = pd.read_csv(work / "results" / "tables" / "T10_compare.csv")
    row = t10[t10["n"] == 10].iloc[0]
    assert row.fisher_power_exact == pytest.approx(
        naive_fisher.power(row.p_a, 10, row.p_b, 10, pvalue=naive_fisher.fisher_p_exact), rel=1e-5
    )
    # 4. At least one figure per stage, as a real PNG and PDF.
    figures = {}
    for prod in declared_products(work):
        if prod.path.endswith(".png"):
            figures.setdefault(prod.category, []).append(work / prod.path)
    assert {"exact", "simulate", "resample", "design", "peeking", "report"} <= set(figures)
    for stage, paths in figures.items():
        made = [f for f in paths if f.is_file() and f.read_bytes()[:4] == b"\x89PNG"]
        assert made, f"stage {stage}: none of {paths} was drawn"
        assert all(f.with_suffix(".pdf").is_file() for f in made), stage


@pytest.mark.slow
def test_same_config_same_bytes_whatever_cores(smoke_run_later, tmp_path):
    """One core and a different job order give byte-identical pools and tables.

    The one-core run goes first, beside the session's smoke run; the comparison waits for it."""
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
    smoke_run = smoke_run_later()
    assert smoke_run.result.returncode == 0
    for target in targets:
        assert _digest(work / target) == _digest(smoke_run.work / target), target


@pytest.mark.slow
def test_lost_product_reruns_only_its_job(smoke_run, tmp_path):
    """An interrupted or damaged run resumes: only what is missing (and downstream) reruns."""
    assert smoke_run.result.returncode == 0
    work = copy_smoke(smoke_run, tmp_path / "work")  # the shared run stays untouched
    lost = work / "results" / "tables" / "T03_prob_at_least_9_of_10.csv"
    lost.unlink()
    dry = snakemake(work, "-n", "--configfile", "config/smoke.yaml", "--quiet", "rules")
    out = dry.stdout + dry.stderr
    assert "exact_T03_prob_at_least_9_of_10" in out and "simulate_chunk" not in out, out[-2000:]
    res = snakemake(work, "--cores", "1", "--configfile", "config/smoke.yaml")
    assert res.returncode == 0 and lost.is_file()
