"""Benchmark of scale-out: the simulation stage locally at 1 and 2 cores and through SLURM.

A mid-size study (4 sigmas x 4 seeds x 1 task x 300 trials, in chunks of
``--trials-per-chunk`` trials: 300, the default config's, gives 16 simulation jobs) runs
three times from a clean copy of the workflow, target ``results/pools/pools.parquet``:

- ``snakemake --cores 1`` and ``--cores 2`` (the local profile);
- ``snakemake --profile profiles/slurm`` on the one-node cluster of ``tools/slurm_cluster.sh``
  (started and stopped here; skipped with a reason where none can start).

Figures (ratios against baselines measured in the same run):

- ``local_speedup_2_cores`` = wall(1 core) / wall(2 cores) (target >= 1.7);
- ``slurm_vs_local_wall_ratio`` = wall(SLURM, 2 CPUs) / wall(local, 2 cores) (target <= 1.5);
- ``slurm_overhead_seconds_per_job`` = (wall(SLURM) - wall(local 2)) x 2 / cluster jobs: the
  slot-seconds each cluster job costs beyond a local job (sbatch, start of the job's own
  Snakemake, status polling);
- ``trials_per_core_second`` = trials / wall(1 core), jobs' start-up included;
- ``large_*``: config/large.yaml's simulation from these figures: its core-hours and its
  expected wall time on N nodes of ``--cores-per-node`` cores.

All three products must be byte-identical (checked; ``products_identical``).

Run: ``python benchmarks/bench_scale.py [--json] [--skip-slurm] [--cores-per-node 32]
[--trials-per-chunk 300]``.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from _common import print_result

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
CLUSTER = REPO / "tools" / "slurm_cluster.sh"
LOCK = Path(os.environ.get("EVALSIM_SLURM_DIR", "/var/tmp/evalsim-slurm") + ".lock")
TARGET = "results/pools/pools.parquet"
MID = {
    "tasks": [{"name": "cube30", "cube_size_m": 0.030, "cube_mass_kg": 0.050}],
    "policies": [
        {"name": n, "sigma_mm": s} for n, s in [("A", 9.0), ("B", 6.0), ("C", 3.0), ("D", 12.0)]
    ],
    "simulation": {"n_seeds": 4, "trials_per_seed": 300, "trials_per_chunk": 300},
}
NODES = (1, 2, 4, 8, 16)


def workdir(root: Path, name: str, trials_per_chunk: int) -> Path:
    work = root / name
    work.mkdir()
    for item in ("Snakefile", "config", "workflow", "profiles"):
        src = REPO / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / item)
    mid = {**MID, "simulation": {**MID["simulation"], "trials_per_chunk": trials_per_chunk}}
    (work / "config" / "mid.yaml").write_text(yaml.safe_dump(mid, sort_keys=False))
    return work


def run(work: Path, *args: str) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(
        [SNAKEMAKE, TARGET, *args, "--configfile", "config/mid.yaml"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"snakemake {' '.join(args)} failed:\n{res.stderr[-3000:]}")
    return wall


def cluster_jobs(work: Path) -> int:
    return len(list((work / "results" / "pools" / "chunks").rglob("*.parquet")))


def large_study(config_path: Path) -> dict:
    """Trials and simulation jobs of an overlay config (merged over config/config.yaml)."""
    from snakemake.utils import update_config

    from evalsim.config import check_config

    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    update_config(cfg, yaml.safe_load(config_path.read_text()))  # as --configfile does
    cfg = check_config(cfg)
    sim = cfg["simulation"]
    per_seed = -(-sim["trials_per_seed"] // sim["trials_per_chunk"])
    n_chunks = len(cfg["tasks"]) * len(cfg["policies"]) * sim["n_seeds"] * per_seed
    trials = len(cfg["tasks"]) * len(cfg["policies"]) * sim["n_seeds"] * sim["trials_per_seed"]
    return {"trials": trials, "chunk_jobs": n_chunks}


def slurm_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if not all(shutil.which(b) for b in ("slurmctld", "slurmd", "munged", "sbatch")):
        return "slurm-wlm/munge not installed (make sysdeps)"
    return None


def bench(skip_slurm: bool, cores_per_node: int, trials_per_chunk: int) -> dict:
    out: dict = {
        "config": f"4 sigmas x 4 seeds x 1 task x 300 trials, chunks of {trials_per_chunk}"
    }
    large = large_study(REPO / "config" / "large.yaml")  # before the runs: fail fast
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        root = Path(tmp)
        w1, w2 = (workdir(root, n, trials_per_chunk) for n in ("local1", "local2"))
        wall1 = run(w1, "--profile", "profiles/local", "--cores", "1")
        print(f"local, 1 core: {wall1:.1f} s", file=sys.stderr, flush=True)
        wall2 = run(w2, "--profile", "profiles/local", "--cores", "2")
        print(f"local, 2 cores: {wall2:.1f} s", file=sys.stderr, flush=True)
        n_jobs = cluster_jobs(w2)
        trials = MID["simulation"]["n_seeds"] * len(MID["policies"]) * 300
        out.update(
            simulation_jobs=n_jobs,
            trials=trials,
            local_wall_seconds_1_core=round(wall1, 1),
            local_wall_seconds_2_cores=round(wall2, 1),
            local_speedup_2_cores=round(wall1 / wall2, 3),
            trials_per_core_second=round(trials / wall1, 2),
        )
        same = (w1 / TARGET).read_bytes() == (w2 / TARGET).read_bytes()
        reason = "--skip-slurm" if skip_slurm else slurm_skip_reason()
        overhead = None
        if reason is None:
            ws = workdir(root, "slurm", trials_per_chunk)
            lock = LOCK.open("w")  # the tests' lock: one cluster user at a time
            fcntl.flock(lock, fcntl.LOCK_EX)
            started = subprocess.run(
                ["bash", str(CLUSTER), "start"], capture_output=True, text=True
            )
            try:
                if started.returncode != 0:
                    reason = f"no cluster: {started.stderr.strip()[-300:]}"
                else:
                    walls = run(ws, "--profile", "profiles/slurm")
                    print(f"slurm: {walls:.1f} s", file=sys.stderr, flush=True)
                    overhead = (walls - wall2) * 2 / n_jobs
                    same = same and (ws / TARGET).read_bytes() == (w2 / TARGET).read_bytes()
                    out.update(
                        slurm_wall_seconds=round(walls, 1),
                        slurm_vs_local_wall_ratio=round(walls / wall2, 3),
                        slurm_overhead_seconds_per_job=round(overhead, 2),
                    )
            finally:
                if started.returncode == 0:  # never stop a cluster this run did not start
                    subprocess.run(["bash", str(CLUSTER), "stop"], capture_output=True, text=True)
                lock.close()
        if reason:
            out["slurm_skipped"] = reason
        out["products_identical"] = same

    sim_core_s = large["trials"] / out["trials_per_core_second"]
    per_job_s = sim_core_s / large["chunk_jobs"] + (overhead or 0.0)
    out.update(
        large_trials=large["trials"],
        large_simulation_jobs=large["chunk_jobs"],
        large_core_hours=round(sim_core_s / 3600, 2),
        large_cores_per_node=cores_per_node,
        large_wall_minutes_on_n_nodes={
            # jobs run in waves of N x cores; a wave lasts one job (work + SLURM overhead)
            n: round(-(-large["chunk_jobs"] // (n * cores_per_node)) * per_job_s / 60, 1)
            for n in NODES
        },
        load_average_1min=round(os.getloadavg()[0], 2),
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--skip-slurm", action="store_true", help="only the local runs")
    ap.add_argument("--cores-per-node", type=int, default=32, help="for the large_* estimate")
    ap.add_argument(
        "--trials-per-chunk", type=int, default=300, help="trials per simulation job (default 300)"
    )
    args = ap.parse_args()
    out = bench(args.skip_slurm, args.cores_per_node, args.trials_per_chunk)
    print_result(out, args.json, "{k:36s} {v}", indent=2)


if __name__ == "__main__":
    main()
