"""The study through Snakemake's SLURM executor on a real one-node cluster (issue 12).

``tools/slurm_cluster.sh`` starts munged, slurmctld and slurmd on this machine; the fixture
stops them again whatever happens (finalizer). The fixture holds an exclusive lock
(:data:`LOCK`) from start to stop: one cluster user at a time on this machine (another xdist
worker, another checkout's test run, ``benchmarks/bench_scale.py``), so that a second
``start`` never fails against the first user's cluster, and no clean-up stops a cluster it
did not start. One test runs the smoke study's simulation with ``--profile profiles/slurm``: it
cancels a job and interrupts the run, resumes it, then builds a product and a sequential
design on the cluster, and compares each file byte for byte with the local ``--cores 2`` run
of the same config (the session's ``smoke_run``). One cluster run covers retry, resume and
identity with the fewest jobs (issue 26). It runs first in the session and waits for the
smoke run only to compare (``smoke_run_later``): the cluster run overlaps the smoke run.
It is skipped, with the reason, where no cluster can be started: not root, Slurm or munge
not installed (``make sysdeps`` installs them as root), or the executor plugin missing.

Run just this: ``make test-slurm`` (or ``pytest -m slurm``).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, SNAKEMAKE, copy_workflow, snakemake
from waiting import wait_exit, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.xdist_group("slurm")]

CLUSTER = REPO / "tools" / "slurm_cluster.sh"
# The pools only (12 chunk jobs of the smoke study): the sigma sweep's chunks run the same
# rule kind and script, so they would add cluster jobs without exercising anything new.
SIM_TARGETS = ["results/pools/pools.parquet"]
DOWNSTREAM_TARGETS = [
    "results/tables/T30_acceptance.csv",
    "results/sequential/designs/paired-pocock.json",
]
DAEMONS = ("slurmctld", "slurmd", "slurmstepd")
LOCK = Path(os.environ.get("EVALSIM_SLURM_DIR", "/var/tmp/evalsim-slurm") + ".lock")


def why_no_cluster() -> str | None:
    """Why no one-node cluster can be started here, or None."""
    if os.geteuid() != 0:
        return "a one-node SLURM cluster needs root (slurmd runs the jobs)"
    missing = [
        b for b in ("munged", "slurmctld", "slurmd", "sbatch", "squeue") if not shutil.which(b)
    ]
    if missing:
        return f"{', '.join(missing)} not installed: run `make sysdeps` as root (slurm-wlm, munge)"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -r requirements.txt)"
    return None


def _running(name: str) -> bool:
    return subprocess.run(["pgrep", "-x", name], capture_output=True).returncode == 0


def _cluster(cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(CLUSTER), cmd], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def slurm_cluster():
    reason = why_no_cluster()
    if reason:
        pytest.skip(reason)
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits while another user has the cluster
        started = _cluster("start")
        if started.returncode != 0:  # start stops what it started itself; nothing to stop here
            pytest.skip(f"no SLURM cluster could be started: {started.stderr.strip()[-500:]}")
        try:
            yield
        finally:
            stopped = _cluster("stop")
            assert stopped.returncode == 0, stopped.stderr
            # nothing left running: not a daemon, not a job step
            assert not [d for d in DAEMONS if _running(d)], "a Slurm daemon outlived 'stop'"


def slurm_workdir(dest: Path) -> Path:
    work = copy_workflow(dest)
    shutil.copytree(REPO / "profiles", work / "profiles")
    return work


def products(root: Path) -> dict[str, bytes]:
    """Every rule product of a run: results/ and figures/, without timings (benchmarks)."""
    out = {}
    for top in ("results", "figures"):
        for p in sorted((root / top).rglob("*")):
            rel = p.relative_to(root).as_posix()
            # report.html is built by `snakemake --report` (the smoke_report fixture), not a rule
            if (
                p.is_file()
                and not rel.startswith("results/benchmarks/")
                and rel != "results/report.html"
            ):
                out[rel] = p.read_bytes()
    return out


def _our_jobs(state: str) -> list[str]:
    out = subprocess.run(
        ["squeue", "-h", "-t", state, "-o", "%i"], capture_output=True, text=True, timeout=30
    ).stdout
    return out.split()


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted_simulation(work: Path, args: list[str], log_path: Path) -> None:
    """Start the simulation on the cluster, scancel its first running job (Snakemake must
    resubmit it), then SIGINT the run once 3 chunks are written (it cancels its jobs)."""
    chunks = work / "results" / "pools" / "chunks"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [SNAKEMAKE, *args],
            cwd=work,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # SIGINT at its default, so that Python turns it into KeyboardInterrupt and
            # Snakemake cancels its jobs: a suite started in the background (`make test &`)
            # inherits SIGINT ignored, which would let the run finish untouched
            preexec_fn=_sigint_default,
        )
        try:
            running = wait_for(
                lambda: _our_jobs("RUNNING"), "a SLURM job RUNNING", proc=proc, log=log_path
            )
            subprocess.run(["scancel", running[0]], check=True, timeout=30)
            wait_for(
                lambda: "Trying to restart job" in log_path.read_text(),
                "Snakemake resubmitting the cancelled job ('Trying to restart job' in its log)",
                proc=proc,
                log=log_path,
                poll_s=1.0,
            )
            wait_for(
                lambda: len(list(chunks.glob("*/*.parquet"))) >= 3,
                "3 chunk files written before the interrupt",
                proc=proc,
                log=log_path,
            )
            proc.send_signal(signal.SIGINT)
            wait_exit(proc, "Snakemake exiting after SIGINT (cancelling its jobs)", log=log_path)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=60)


def test_cancelled_and_interrupted_study_resumes_and_matches_local(
    smoke_run_later, slurm_cluster, tmp_path
):
    """One cluster run of the smoke study, the smallest that exercises retry and resume
    (issue 26): a scancelled job is retried, an interrupted run resumes with exactly the
    chunks it left, and the finished study is byte-identical to the local ``--cores 2`` run.

    The cluster runs first, beside the session's smoke run; the comparisons wait for it."""
    work = slurm_workdir(tmp_path / "work")
    study = ["--profile", "profiles/slurm", "--configfile", "config/smoke.yaml"]
    sim = [*SIM_TARGETS, *study]
    # one cluster job at a time in the run to be interrupted: chunks then finish one by one,
    # so the interrupt after the third leaves some to do however busy the machine is (with
    # the profile's 100 jobs in flight, a slow poll could see the last chunk land first)
    _interrupted_simulation(work, [*sim, "--jobs", "1"], tmp_path / "first.log")

    # what the interrupted run left to do: some chunks (not all of them: checked below
    # against the smoke run's count)
    todo = _chunks_to_run(work, "-n", *sim)
    assert todo

    # the second invocation resumes: it runs exactly the chunks left to do
    res = snakemake(work, *sim)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert _chunk_outputs(res.stdout + res.stderr) == todo

    # downstream jobs of two other kinds on the cluster too (a product builder reading the
    # pools, a sequential design), each file as the local run made it; the rest of the study
    # runs the same scripts locally in the smoke run (issue 26: the smallest cluster study)
    res = snakemake(work, *DOWNSTREAM_TARGETS, *study)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    logs = [p.as_posix() for p in (work / "logs" / "slurm").rglob("*.log")]
    assert any("simulate_chunk" in p for p in logs), logs[:5]  # chunks ran as cluster jobs
    assert any("sequential_design" in p for p in logs), logs[:5]  # so did a design
    assert any("simulate_T30_acceptance" in p for p in logs), logs[:5]  # and a product

    smoke_run = smoke_run_later()
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-3000:]
    n_chunks = len(list((smoke_run.work / "results" / "pools" / "chunks").glob("*/*.parquet")))
    assert len(todo) < n_chunks, sorted(todo)  # the interrupted run had done some
    for rel in [*SIM_TARGETS, *DOWNSTREAM_TARGETS]:
        assert (work / rel).read_bytes() == (smoke_run.work / rel).read_bytes(), rel
    leftover = set(products(work)) - set(products(smoke_run.work))
    assert leftover == set(), sorted(leftover)


def _chunk_outputs(text: str) -> set[str]:
    return set(re.findall(r"output: (results/pools/chunks/\S+?\.parquet)", text))


def _chunks_to_run(work: Path, *args: str) -> set[str]:
    res = snakemake(work, *args)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    return _chunk_outputs(res.stdout)
