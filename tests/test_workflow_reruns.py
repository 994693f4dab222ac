"""Reruns after edits and crashes (issue 16, items 1 and 8).

- Adding a policy and a sweep sigma to a finished run reruns only the new simulation chunks
  and what depends on them: every simulation job's params hold only what changes its output.
- A run killed with SIGKILL mid-simulation leaves a lock; the next run (local profile, as
  ``make reproduce``) refuses with Snakemake's lock message; ``--unlock`` then a run with
  ``--rerun-incomplete`` finishes it, and the products are byte-identical to an
  uninterrupted run. (Without ``--rerun-incomplete`` Snakemake would first stop at the
  killed jobs' incomplete outputs; the local profile sets it.)
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import SNAKEMAKE, copy_smoke, copy_workflow, snakemake
from waiting import wait_for

from evalsim.config import load_config
from evalsim.sim.jobs import chunk_config, pools_config, sigma_label, sweep_config


def test_job_configs_hold_only_what_changes_the_output(repo):
    cfg = load_config(repo / "config" / "smoke.yaml")
    a = chunk_config(cfg, "cube25", "A")
    assert [t["name"] for t in a["tasks"]] == ["cube25"]
    assert a["policies"] == [p for p in cfg["policies"] if p["name"] == "A"]
    assert set(a["simulation"]) == set(cfg["simulation"]) - {
        "n_seeds",
        "trials_per_seed",
        "trials_per_chunk",
        "sweep",
        "document",
    }
    more = copy.deepcopy(cfg)
    more["policies"].append({"name": "C", "sigma_mm": 15.0})
    more["tasks"].append({**cfg["tasks"][0], "name": "cube35"})
    more["simulation"]["sweep"]["sigma_mm"].append(15.0)
    more["simulation"]["n_seeds"] += 2
    assert chunk_config(more, "cube25", "A") == a
    assert sweep_config(more) == sweep_config(cfg)
    assert pools_config(more) != pools_config(cfg)
    tau = copy.deepcopy(cfg)
    tau["simulation"]["tau_mm"] += 0.5
    assert chunk_config(tau, "cube25", "A") != a
    with pytest.raises(ValueError, match="unknown policy 'Z'; configured: A, B"):
        chunk_config(cfg, "cube25", "Z")
    assert [sigma_label(s) for s in (0, 9.0, 2.5, 30)] == ["0", "9", "2.5", "30"]


def dry_run_jobs(work: Path, *args: str) -> list[tuple[str, str]]:
    """(rule, first output) of every job a dry run of ``args`` lists."""
    res = snakemake(work, "-n", *args)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    jobs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:$)", res.stdout, flags=re.MULTILINE)[1:]:
        rule = re.match(r"(?:local)?rule (\w+):", block).group(1)
        out = re.search(r"^    output: ([^,\s]+)", block, flags=re.MULTILINE)
        jobs.append((rule, out.group(1) if out else ""))
    return jobs


def chunk_keys(jobs, rule: str, pattern: str) -> set[tuple[str, ...]]:
    return {re.search(pattern, out).groups() for r, out in jobs if r == rule}


def with_policy_c_and_sigma(work: Path, sigma_mm: float) -> str:
    """Write config/smoke_plus.yaml: smoke + policy C (sigma_mm) + sigma_mm in the sweep."""
    cfg = yaml.safe_load((work / "config" / "smoke.yaml").read_text())
    assert "C" not in [p["name"] for p in cfg["policies"]]
    assert sigma_mm not in cfg["simulation"]["sweep"]["sigma_mm"]
    cfg["policies"].append({"name": "C", "sigma_mm": sigma_mm})
    cfg["simulation"]["sweep"]["sigma_mm"].append(sigma_mm)
    (work / "config" / "smoke_plus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return "config/smoke_plus.yaml"


def _smoke_copy(smoke_run, tmp_path: Path) -> tuple[Path, dict]:
    """A private copy of the (successful) smoke run, mtimes kept, and its config."""
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-3000:]
    work = copy_smoke(smoke_run, tmp_path / "work")
    return work, yaml.safe_load((work / "config" / "smoke.yaml").read_text())


@pytest.mark.slow
def test_adding_policy_and_sigma_reruns_only_new_chunks(smoke_run, tmp_path):
    work, smoke = _smoke_copy(smoke_run, tmp_path)
    tasks = [t["name"] for t in smoke["tasks"]]
    seeds = range(smoke["simulation"]["n_seeds"])
    n_chunks = -(-smoke["simulation"]["trials_per_seed"] // smoke["simulation"]["trials_per_chunk"])

    assert dry_run_jobs(work, "--configfile", "config/smoke.yaml") == []  # the run is complete
    plus = dry_run_jobs(work, "--configfile", with_policy_c_and_sigma(work, 15.0))

    chunk_re = r"chunks/(\w+)/(\w+)_seed(\d+)_chunk(\d+)\.parquet"
    assert chunk_keys(plus, "simulate_chunk", chunk_re) == {
        (t, "C", str(s), str(c)) for t in tasks for s in seeds for c in range(n_chunks)
    }
    assert chunk_keys(plus, "simulate_sweep_chunk", r"sigma([\d.]+)\.parquet$") == {("15",)}
    assert chunk_keys(plus, "simulate_merge_seed", r"pools/(\w+)/(\w+)_seed(\d+)\.parquet") == {
        (t, "C", str(s)) for t in tasks for s in seeds
    }
    # the new policy's real twins (simreal.policies empty = every policy), of every gap, and
    # each gap's merged twin pool; no other policy's twins
    twin_re = r"twins/chunks/(\w+)/(\w+)/(\w+)_seed(\d+)_chunk(\d+)\.parquet"
    cfg = load_config(work / "config" / "smoke.yaml")
    gaps = [g["name"] for g in cfg["simreal"]["gaps"]]
    assert chunk_keys(plus, "simreal_twin_chunk", twin_re) == {
        (g, tasks[0], "C", str(s), str(c))
        for g in gaps
        for s in cfg["simreal"]["seeds"]
        for c in range(n_chunks)
    }
    assert chunk_keys(plus, "simreal_merge_twins", r"twins/(\w+)\.parquet$") == {(g,) for g in gaps}
    # Everything else that would run depends on the pools or the sweep: the same rules a
    # forced rerun of the two merges would run on the unchanged config.
    downstream = dry_run_jobs(
        work,
        "--configfile",
        "config/smoke.yaml",
        "--forcerun",
        "simulate_merge_pools",
        "simulate_merge_sweep",
    )
    new_sim = {"simulate_chunk", "simulate_sweep_chunk", "simulate_merge_seed"}
    new_sim |= {"simreal_twin_chunk", "simreal_merge_twins"}
    rest = {r for r, _ in plus} - new_sim
    assert rest <= {r for r, _ in downstream}, rest - {r for r, _ in downstream}
    assert not any(r.startswith(("exact_", "fisher_")) for r in rest), sorted(rest)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


@pytest.mark.slow
def test_kill9_mid_simulation_then_unlock_and_rerun_incomplete(smoke_run_later, repo, tmp_path):
    # its runs go first, beside the session's smoke run; the comparisons wait for it
    work = copy_workflow(tmp_path / "work")
    shutil.copytree(repo / "profiles", work / "profiles")
    # one task's pools: enough chunks to kill some mid-run, a third of the simulation (issue 26)
    cfg = yaml.safe_load((work / "config" / "smoke.yaml").read_text())
    task = cfg["tasks"][0]["name"]
    targets = [
        f"results/pools/{task}/{p['name']}_seed{s}.parquet"
        for p in cfg["policies"]
        for s in range(cfg["simulation"]["n_seeds"])
    ]
    # as `make reproduce` runs it: the local profile (which sets rerun-incomplete)
    args = [*targets, "--profile", "profiles/local", "--cores", "2"]
    args += ["--configfile", "config/smoke.yaml"]
    log = (tmp_path / "first.log").open("w")
    # its own session: SIGKILL to the group takes Snakemake and its running jobs at once,
    # as a power cut or the OOM killer would
    proc = subprocess.Popen(
        [SNAKEMAKE, *args], cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    chunks = work / "results" / "pools" / "chunks"
    try:
        # kill once some chunks are written and others are still running
        wait_for(
            lambda: len(list(chunks.glob("*/*.parquet"))) >= 2,
            "2 chunk files written before the kill",
            proc=proc,
            poll_s=0.2,
        )
    finally:
        _kill_group(proc)
        log.close()
    done_before = len(list(chunks.glob("*/*.parquet")))

    refused = snakemake(work, *args)
    assert refused.returncode != 0
    assert "Directory cannot be locked" in refused.stdout + refused.stderr
    unlocked = snakemake(work, "--unlock", "--configfile", "config/smoke.yaml")
    assert unlocked.returncode == 0, unlocked.stderr[-3000:]
    resumed = snakemake(work, *args, "--rerun-incomplete")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    # the resumed run did not redo the chunks that were finished before the kill
    n_chunk_jobs = len(re.findall(r"^rule simulate_chunk:", resumed.stdout + resumed.stderr, re.M))
    n_total = len(list(chunks.glob("*/*.parquet")))
    assert n_chunk_jobs <= n_total - done_before + 2  # + the (at most 2) killed mid-write
    smoke_run = smoke_run_later()
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-3000:]
    assert n_total < len(list((smoke_run.work / "results" / "pools" / "chunks").rglob("*.parquet")))
    for rel in targets:
        assert (work / rel).read_bytes() == (smoke_run.work / rel).read_bytes(), rel


def _reversed_keys(obj):
    """``obj`` with every dict's keys in reverse order (same values): a reordered config."""
    if isinstance(obj, dict):
        return {k: _reversed_keys(obj[k]) for k in reversed(list(obj))}
    if isinstance(obj, list):
        return [_reversed_keys(v) for v in obj]
    return obj


def test_job_params_do_not_depend_on_the_config_key_order(repo):
    # Snakemake compares params by repr, and a dict's repr follows its key order (issue 26).
    cfg = load_config(repo / "config" / "config.yaml")
    rev = _reversed_keys(cfg)
    assert list(rev) != list(cfg)  # the reordering is real
    task, policy = cfg["tasks"][0]["name"], cfg["policies"][0]["name"]
    assert repr(chunk_config(rev, task, policy)) == repr(chunk_config(cfg, task, policy))
    assert repr(pools_config(rev)) == repr(pools_config(cfg))
    assert repr(sweep_config(rev)) == repr(sweep_config(cfg))
    assert repr(sweep_config(rev, merged=True)) == repr(sweep_config(cfg, merged=True))
    # the values are unchanged
    assert chunk_config(rev, task, policy) == chunk_config(cfg, task, policy)


@pytest.mark.slow
def test_sorted_key_config_reruns_nothing(smoke_run, tmp_path):
    work, smoke = _smoke_copy(smoke_run, tmp_path)
    (work / "config" / "sorted.yaml").write_text(yaml.safe_dump(smoke, sort_keys=True))
    jobs = dry_run_jobs(work, "--configfile", "config/sorted.yaml")
    # the simulation: no chunk, sweep chunk or merge reruns (the 27 + 12 chunks)
    sim = {"simulate_chunk", "simulate_sweep_chunk", "simulate_merge_seed"}
    sim |= {"simulate_merge_pools", "simulate_merge_sweep"}
    assert not [j for j in jobs if j[0] in sim], jobs
    # and nothing else either: every rule's params are built from the canonical config
    # (workflow/rules/common.smk), so the tables, designs and figures stay done too
    assert not jobs, jobs


@pytest.mark.slow
def test_changing_one_simreal_gap_reruns_only_its_twins(smoke_run, tmp_path):
    # issue 27, item 3: the twin pools are ordinary pools; a gap's chunks carry only that gap
    work, smoke = _smoke_copy(smoke_run, tmp_path)
    cfg = load_config(work / "config" / "smoke.yaml")
    edited = copy.deepcopy(smoke)
    gaps = copy.deepcopy(cfg["simreal"]["gaps"])
    assert [g["name"] for g in gaps] == ["small", "large"]
    gaps[1]["pad_friction"] = 0.2
    edited.setdefault("simreal", {})["gaps"] = gaps
    (work / "config" / "gap.yaml").write_text(yaml.safe_dump(edited, sort_keys=False))
    jobs = dry_run_jobs(work, "--configfile", "config/gap.yaml")
    chunks = chunk_keys(jobs, "simreal_twin_chunk", r"twins/chunks/(\w+)/(\w+)/(\w+)_seed(\d+)")
    task = cfg["tasks"][0]["name"]
    assert chunks == {("large", task, p, "0") for p in ("A", "B")}
    assert {r for r, _ in jobs} <= {
        "simreal_twin_chunk",
        "simreal_merge_twins",
        "simreal_T37_simreal_twins",
        "simreal_F11_simreal_coverage",
        "all",
    }, sorted({r for r, _ in jobs})
    merged = [out for r, out in jobs if r == "simreal_merge_twins"]
    assert merged == ["results/pools/twins/large.parquet"]
