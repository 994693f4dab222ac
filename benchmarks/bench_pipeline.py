"""Benchmark of the two commands' costs: the whole study, and the venvs (issue 26, item 7).

- ``reproduce_wall_seconds`` / ``reproduce_cpu_seconds``: the study (``snakemake --profile
  profiles/local --cores N`` on ``--configfile``, default ``config/config.yaml``) in a clean
  copy of the tracked files, from an empty ``results/``; CPU is user + system time of
  Snakemake and all its jobs (``RUSAGE_CHILDREN``).
- ``stage_cpu_seconds``: CPU seconds per stage (``results/benchmarks/<stage>/``, column
  ``cpu_time`` of each rule's benchmark file, last row) and ``stage_jobs``; rules without a
  ``benchmark:`` are in ``unbenchmarked_cpu_seconds`` (total minus the stages).
- ``venv_seconds_runtime_only`` / ``venv_seconds_with_dev``: a fresh venv with
  ``pip install -r requirements.txt`` (``make reproduce``) against ``-r requirements-dev.txt``
  (``make test``), from the pip cache as it is (warm after one install); ``--skip-venv``
  leaves them out. ``venv_dev_over_runtime_ratio`` is their ratio in this run.

Run: ``python benchmarks/bench_pipeline.py [--json] [--configfile config/smoke.yaml]
[--cores 2] [--skip-venv]``. The default config costs several CPU-minutes: on a shared
machine run it when the machine is otherwise idle.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _common import print_result

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from tracked_copy import copy_tracked  # noqa: E402  (tools/ is not a package)

BIN = Path(sys.executable).parent


def stage_cpu(bench_dir: Path) -> tuple[dict[str, float], dict[str, int]]:
    """CPU seconds and job counts per stage from the rules' benchmark files."""
    cpu: dict[str, float] = defaultdict(float)
    jobs: dict[str, int] = defaultdict(int)
    for path in sorted(bench_dir.glob("*/*.tsv")):
        with path.open() as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if rows:
            cpu[path.parent.name] += float(rows[-1]["cpu_time"])
            jobs[path.parent.name] += 1
    return {k: round(v, 1) for k, v in sorted(cpu.items())}, dict(sorted(jobs.items()))


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def reproduce(work: Path, configfile: str, cores: int) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(work / ".cache" / "numba"), MPLBACKEND="Agg")
    env["PYTHONPATH"] = str(work / "src")
    cmd = [str(BIN / "snakemake"), "--profile", "profiles/local", "--cores", str(cores)]
    cmd += ["--configfile", configfile]
    cpu0, t0 = _children_cpu(), time.monotonic()
    res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    if res.returncode != 0:
        sys.exit(f"bench_pipeline: snakemake failed:\n{(res.stdout + res.stderr)[-3000:]}")
    stages, jobs = stage_cpu(work / "results" / "benchmarks")
    return {
        "reproduce_wall_seconds": round(wall, 1),
        "reproduce_cpu_seconds": round(cpu, 1),
        "stage_cpu_seconds": stages,
        "stage_jobs": jobs,
        "unbenchmarked_cpu_seconds": round(cpu - sum(stages.values()), 1),
    }


def venv_seconds(tmp: Path, requirements: Path) -> float:
    venv = tmp / f"venv-{requirements.stem}"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r", str(requirements)],
        check=True,
    )
    seconds = time.monotonic() - t0
    shutil.rmtree(venv)
    return round(seconds, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--configfile", default="config/config.yaml")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--skip-venv", action="store_true", help="do not time the venvs")
    args = ap.parse_args()
    out: dict = {"configfile": args.configfile, "cores": args.cores}
    with tempfile.TemporaryDirectory(prefix="bench_pipeline_") as tmp:
        work = copy_tracked(ROOT, Path(tmp) / "work")
        out.update(reproduce(work, args.configfile, args.cores))
        if not args.skip_venv:
            runtime = venv_seconds(Path(tmp), ROOT / "requirements.txt")
            dev = venv_seconds(Path(tmp), ROOT / "requirements-dev.txt")
            out.update(
                venv_seconds_runtime_only=runtime,
                venv_seconds_with_dev=dev,
                venv_dev_over_runtime_ratio=round(dev / runtime, 2),
            )
    print_result(out, args.json, indent=2)


if __name__ == "__main__":
    main()
