"""Time the locked study's commands (issue 41), each in a fresh process, in one run.

Keys of ``--json``, each with its target (on this machine, idle):

- ``record_seconds``: one ``evalsim study record DIR TRIAL success`` call, interpreter
  start-up included, median of ``--runs`` processes on the example study; target <= 0.3.
- ``report_seconds_2000``: ``evalsim study report`` of a 2,000-trial study (1,000 conditions
  x 2 arms, every outcome recorded), whole process; target <= 3.
- ``lock_seconds_1000``: ``evalsim study lock`` of a 1,000-condition, 4-arm study (4,000
  scheduled trials), its plan, grid sheet (PDF, PNG) and run sheet (PDF) included, whole
  process; target <= 5.

Baselines measured in the same run: ``python_startup_seconds`` (a process that only imports
``evalsim.cli``, what every command pays) and the ratios ``record_vs_startup``. Each command
runs once first as a warm-up that loads the numba cache. ``load_average_1min`` is recorded
because on a shared machine wall time follows the load; ``*_cpu_seconds`` (user + system
time of the same process) follows it much less.

Usage: python benchmarks/bench_study.py [--json] [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import print_result

REPO = Path(__file__).resolve().parents[1]
_CLI = "import sys; from evalsim.cli import main; sys.exit(main(sys.argv[1:]))"

BIG_STUDY = """\
version: 1
title: bench
question: {{primary: {{a: a1, b: a2}}}}
arms: [{arms}]
conditions:
  positions: {{grid: {{rows: {rows}, columns: 50, spacing_cm: 2}}}}
  blocks: {{factors: {{session: [s1, s2, s3, s4]}}}}
rubric: {{success: "the cube is in the bin", failure_types: [missed, dropped]}}
design: {{paired: true, n: {n}}}
analysis: {{primary: mcnemar, secondary: [fisher]}}
plan: {{expected: {{a1: 0.5, a2: 0.6}}}}
"""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / ".cache" / "numba"))
    env.setdefault("MPLBACKEND", "Agg")
    return env


#: CPU seconds (user + system) of the last :func:`_run` process: on a loaded machine the
#: wall time follows the load, the CPU time much less.
LAST_CPU = [0.0]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(*argv: str) -> float:
    """Wall seconds of one ``evalsim`` process (its CPU seconds go to :data:`LAST_CPU`)."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", _CLI, *argv], env=_env(), capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    LAST_CPU[0] = _children_cpu() - c0
    if res.returncode != 0:
        raise SystemExit(f"evalsim {' '.join(argv)} failed: {res.stderr.strip()}")
    return wall


def _startup() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import evalsim.cli"], env=_env(), check=True)
    return time.perf_counter() - t0


def _big(folder: Path, arms: int, conditions: int) -> Path:
    folder.mkdir(parents=True)
    names = ", ".join(f"{{name: a{i + 1}}}" for i in range(arms))
    text = BIG_STUDY.format(arms=names, rows=conditions // 50, n=conditions)
    (folder / "study.yaml").write_text(text)
    return folder


def bench(runs: int, keep: Path | None) -> dict:
    base = Path(tempfile.mkdtemp(prefix="bench_study_", dir=keep))
    try:
        out: dict = {"load_average_1min": os.getloadavg()[0]}
        out["python_startup_seconds"] = statistics.median(_startup() for _ in range(runs))
        # record: the example study
        ex = base / "example"
        _run("study", "init", str(ex))
        _run("study", "lock", str(ex), "--seed", "1")
        _run("study", "record", str(ex), "T001", "success")  # warm-up
        times, cpus = [], []
        for i in range(runs):
            times.append(_run("study", "record", str(ex), f"T{i + 2:03d}", "success"))
            cpus.append(LAST_CPU[0])
        out["record_seconds"] = statistics.median(times)
        out["record_cpu_seconds"] = statistics.median(cpus)
        out["record_min_seconds"] = min(times)
        out["record_vs_startup"] = out["record_seconds"] / out["python_startup_seconds"]
        # lock: 1,000 conditions x 4 arms, sheets included
        warm = _big(base / "warm", 4, 100)
        _run("study", "lock", str(warm), "--seed", "1")
        big = _big(base / "lock1000", 4, 1000)
        out["lock_seconds_1000"] = _run("study", "lock", str(big), "--seed", "1")
        out["lock_cpu_seconds_1000"] = LAST_CPU[0]
        # report: 1,000 conditions x 2 arms, all 2,000 outcomes recorded through the store
        rep = _big(base / "report2000", 2, 1000)
        _run("study", "lock", str(rep), "--seed", "2", "--json")
        sys.path.insert(0, str(REPO / "src"))
        from evalsim.study import open_study

        study = open_study(rep)
        for t in study.schedule:  # the store's own door, without the per-record checks
            ok = (t.index * 7919) % 10 < (5 if t.arm == "a1" else 6)
            study.store.append(
                "outcome",
                {"success": bool(ok), "failure": None if ok else "missed", "note": None},
                trial=t.trial,
            )
        study.store.close()
        _run("study", "report", str(warm.parent / "example"))  # warm-up
        out["report_seconds_2000"] = _run("study", "report", str(rep))
        out["report_cpu_seconds_2000"] = LAST_CPU[0]
        out["targets"] = {
            "record_seconds": 0.3,
            "report_seconds_2000": 3.0,
            "lock_seconds_1000": 5.0,
        }
        return out
    finally:
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, default=None, help="keep the studies under DIR")
    args = ap.parse_args()
    print_result(bench(args.runs, args.keep), args.json, indent=1)


if __name__ == "__main__":
    main()
