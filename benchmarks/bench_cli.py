"""Time the ``evalsim`` command on large inputs, each in a fresh process, in one run.

Keys of ``--json`` (issue 15), each with its target:

- ``compare_5m_rows_seconds``: ``evalsim compare`` on a 5,000,000-row CSV log (two policies
  x 2,500,000 paired conditions), wall seconds of the whole command; target <= 15, with
  ``compare_5m_rows_peak_mb`` <= 2048.
- ``plan_n100000_seconds``: ``evalsim plan --p1 0.7 --p2 0.8 --n 100000`` (exact power and
  exact MDE at 100,000 per arm); target <= 10, ``plan_n100000_peak_mb`` <= 1024.
- ``peek_n2000_seconds``: ``evalsim peek --n 2000`` (a look after every trial pair, exact);
  target <= 10, ``peek_n2000_peak_mb`` <= 1024.
- ``fisher_pvalue_n1e6_seconds`` and ``scipy_fisher_pvalue_n1e6_seconds``: one two-sided
  Fisher p-value at n1 = n2 = 10^6 (700,000 vs 701,000 successes), evalsim's public function
  and ``scipy.stats.fisher_exact``, best of ``--repeat``; ``fisher_vs_scipy_speedup`` is
  their ratio (target > 1).
- ``compare_by_task_2m_rows_seconds``: ``evalsim compare --by task`` on a 2,000,004-row
  4-task paired log (issue 24); target <= 20, with ``compare_by_task_2m_rows_peak_mb`` <=
  1536 (:func:`bench_compare_by_task_2m`).

Issue 24 adds, on a 1,000-row paired log of three policies (``--cases small``):

- ``summarize_small_seconds`` (target <= 1.0), ``compare_small_seconds`` (<= 1.5) and
  ``rank_small_seconds`` (<= 3), with ``*_process_seconds`` the whole process (interpreter
  start included);

and on a 2,000,004-row log (``--cases 2m``) ``summarize_2m_rows_*`` and ``compare_2m_rows_*``
with their ``*_peak_mb`` (target <= 1536).

Each command runs in its own ``python`` process after a warm-up run that loads the numba
cache; ``*_cpu_seconds`` is that process's CPU time and ``*_peak_mb`` its peak resident set
(``VmHWM``). ``load_average_1min`` is recorded because on a shared machine wall time
follows the load while CPU time does not. The small cases run ``--runs`` times (default 3),
each in a fresh process: ``*_seconds`` and the other keys are the run of median wall time,
``*_min_seconds`` the fastest.

``numba_floor_small_seconds`` (no target; diagnostic) is the same measure for a process
that only calls one cached evalsim kernel (``binom_cdf``): numba's import and the loading of
its registries on the first cached call (numba.np.linalg brings scipy.linalg), which every
command that runs a numba kernel pays, ``compare`` included (its exact McNemar, Fisher and
Boschloo p-values are kernels). ``compare_small_seconds`` minus it is what ``compare`` itself
adds. ``dont_write_bytecode`` records ``PYTHONDONTWRITEBYTECODE``: with it set and no
``__pycache__`` in the source tree (a fresh clone), every process compiles evalsim's modules
from source, some 0.05 s of ``compare``'s start that an installed package does not pay.

Usage: python benchmarks/bench_cli.py [--json] [--repeat 5] [--runs 3] [--keep DIR]
[--cases small,2m,5m,fisher]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import best_of, print_result

# Peak memory is the process's VmHWM (reset at exec; ru_maxrss would carry over the resident
# set of the benchmark process that forked it), ru_maxrss where /proc is missing.
_TIMED = """
import resource, sys, time
t0, c0 = time.perf_counter(), time.process_time()
@WORK@
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
try:
    with open("/proc/self/status") as fh:
        peak = next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:")) / 1024
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("BENCH", rc, wall, cpu, peak, file=sys.stderr)
"""


_RUNNER = _TIMED.replace("@WORK@", "from evalsim.cli import main\nrc = main(sys.argv[1:])")
# The numba floor: one call of a cached kernel, timed as a command is.
_FLOOR = _TIMED.replace(
    "@WORK@",
    "from evalsim.stats.proportion.binomial import binom_cdf\nbinom_cdf(3, 10, 0.5)\nrc = 0",
)


def run_cli(*argv: str, runner: str = _RUNNER) -> dict:
    """Run ``evalsim argv`` in a fresh interpreter; wall, CPU seconds and peak MB."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", runner, *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    process = time.perf_counter() - t0
    line = [s for s in proc.stderr.splitlines() if s.startswith("BENCH ")]
    if proc.returncode != 0 or not line:
        raise RuntimeError(f"evalsim {' '.join(argv)} failed: {proc.stderr.strip()[-500:]}")
    _, rc, wall, cpu, peak = line[-1].split()
    if rc != "0":
        raise RuntimeError(f"evalsim {' '.join(argv)} exited {rc}: {proc.stderr[-500:]}")
    return {
        "seconds": float(wall),
        "process_seconds": process,
        "cpu_seconds": float(cpu),
        "peak_mb": float(peak),
    }


def run_median(argv: list[str], runs: int, runner: str = _RUNNER) -> dict:
    """:func:`run_cli` ``runs`` times (fresh processes): the run of median wall time, with
    ``min_seconds`` the fastest run's."""
    results = sorted(
        (run_cli(*argv, runner=runner) for _ in range(runs)), key=lambda r: r["seconds"]
    )
    return {**results[(len(results) - 1) // 2], "min_seconds": results[0]["seconds"]}


def write_5m_log(path: Path, n_conditions: int = 2_500_000) -> None:
    """A paired CSV log: policies act (0.70) and bc (0.69) on the same conditions, seeded."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(20261130)
    cond = pa.array([f"c{i}" for i in range(n_conditions)])
    tables = []
    for policy, rate in (("act", 0.70), ("bc", 0.69)):
        success = (rng.random(n_conditions) < rate).astype(np.int8)
        tables.append(
            pa.table(
                {
                    "policy": pa.array([policy] * n_conditions),
                    "task": pa.array(["pick_cube"] * n_conditions),
                    "seed": pa.array(["0"] * n_conditions),
                    "condition": cond,
                    "success": pa.array(success),
                }
            )
        )
    pacsv.write_csv(pa.concat_tables(tables), path)


def write_small_log(path: Path, n_conditions: int = 334) -> None:
    """A 1,002-row paired CSV log: act, bc and diffusion on the same conditions, seeded."""
    rng = np.random.default_rng(20261201)
    lines = ["policy,condition,success"]
    for policy, rate in (("act", 0.70), ("bc", 0.60), ("diffusion", 0.75)):
        ok = rng.random(n_conditions) < rate
        lines += [f"{policy},c{i},{int(v)}" for i, v in enumerate(ok)]
    path.write_text("\n".join(lines) + "\n")


def _record(out: dict, key: str, res: dict) -> None:
    for name, value in res.items():
        out[f"{key}_{name}"] = value


def run(
    repeat: int, keep: str | None, cases=("small", "2m", "5m", "fisher"), runs: int = 3
) -> dict:
    from scipy.stats import fisher_exact

    from evalsim.stats.two_sample.fisher import fisher_pvalue

    out: dict = {
        "load_average_1min": os.getloadavg()[0],
        "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
    }
    if "fisher" in cases:  # one p-value at n = 10^6
        k1, n1, k2, n2 = 700_000, 1_000_000, 701_000, 1_000_000
        fisher_pvalue(3, 10, 7, 10)  # JIT cache load
        ours = best_of(lambda: fisher_pvalue(k1, n1, k2, n2), repeat)
        scipy = best_of(lambda: fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]), repeat)
        out["fisher_pvalue_n1e6_seconds"] = ours
        out["scipy_fisher_pvalue_n1e6_seconds"] = scipy
        out["fisher_vs_scipy_speedup"] = scipy / ours
        out["fisher_pvalue_n1e6"] = fisher_pvalue(k1, n1, k2, n2)
        out["scipy_fisher_pvalue_n1e6"] = float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(keep) if keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        small = folder / "small.csv"
        write_small_log(small)
        # warm-ups: fill / load the numba cache for every kernel the commands use
        run_cli("summarize", str(small))
        run_cli("compare", str(small), "--a", "act", "--b", "bc")
        run_cli("rank", str(small))
        run_cli("plan", "--p1", "0.7", "--p2", "0.8", "--n", "2000")
        run_cli("peek", "--n", "20")
        cases_argv = {}
        if "small" in cases:
            small_cases = {
                "summarize_small": ["summarize", str(small)],
                "compare_small": ["compare", str(small), "--a", "act", "--b", "bc"],
                "rank_small": ["rank", str(small)],
            }
            for key, argv in small_cases.items():
                _record(out, key, run_median(argv, runs))
            _record(out, "numba_floor_small", run_median([], runs, runner=_FLOOR))
        if "2m" in cases:
            log2 = folder / "log_2m.csv"
            if not log2.exists():
                write_5m_log(log2, n_conditions=1_000_002)
            cases_argv["summarize_2m_rows"] = ["summarize", str(log2)]
            cases_argv["compare_2m_rows"] = ["compare", str(log2), "--a", "act", "--b", "bc"]
        if "5m" in cases:
            log = folder / "log_5m.csv"
            if not log.exists():
                write_5m_log(log)
            cases_argv["compare_5m_rows"] = ["compare", str(log), "--a", "act", "--b", "bc"]
            cases_argv["plan_n100000"] = ["plan", "--p1", "0.7", "--p2", "0.8", "--n", "100000"]
            cases_argv["peek_n2000"] = ["peek", "--n", "2000"]
        for key, argv in cases_argv.items():
            _record(out, key, run_cli(*argv))
        if "2m" in cases:
            out.update(bench_compare_by_task_2m(folder))
    return out


def write_by_task_2m_log(path: Path, n_conditions: int = 250_000) -> None:
    """A paired 4-task CSV log of 2,000,004 rows: act and bc on 250,000 shared conditions
    per task (rates differing by a few points per task), and a third policy with one trial
    per task (4 rows, filtered out by --a/--b), seeded."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(20261201)
    rates = [(0.70, 0.69), (0.50, 0.55), (0.90, 0.88), (0.30, 0.33)]
    tables = []
    for t, pair in enumerate(rates):
        cond = pa.array([f"c{i}" for i in range(n_conditions)])
        for policy, rate in zip(("act", "bc"), pair, strict=True):
            success = (rng.random(n_conditions) < rate).astype(np.int8)
            tables.append(
                pa.table(
                    {
                        "policy": pa.array([policy] * n_conditions),
                        "task": pa.array([f"task{t}"] * n_conditions),
                        "seed": pa.array(["0"] * n_conditions),
                        "condition": cond,
                        "success": pa.array(success),
                    }
                )
            )
    extra = {
        "policy": pa.array(["diffusion"] * 4),
        "task": pa.array([f"task{t}" for t in range(4)]),
        "seed": pa.array(["0"] * 4),
        "condition": pa.array(["c0"] * 4),
        "success": pa.array(np.ones(4, dtype=np.int8)),
    }
    tables.append(pa.table(extra))
    pacsv.write_csv(pa.concat_tables(tables), path)


def bench_compare_by_task_2m(folder: Path) -> dict:
    """``compare_by_task_2m_rows_seconds`` (target <= 20) and ``_peak_mb`` (<= 1536):
    ``evalsim compare --by task`` on the 2,000,004-row log, in a fresh process after a
    warm-up on a small multi-task log (numba cache loaded)."""
    log = folder / "log_by_task_2m.csv"
    if not log.exists():
        write_by_task_2m_log(log)
    small = folder / "small_by_task.csv"
    small.write_text(
        "policy,task,condition,success\n"
        + "".join(
            f"{p},t{t},c{i},{int((i + t + (p == 'bc')) % 3 != 0)}\n"
            for p in ("act", "bc")
            for t in range(2)
            for i in range(6)
        )
    )
    run_cli("compare", str(small), "--a", "act", "--b", "bc", "--by", "task")
    res = run_cli("compare", str(log), "--a", "act", "--b", "bc", "--by", "task")
    return {
        "compare_by_task_2m_rows_seconds": res["seconds"],
        "compare_by_task_2m_rows_cpu_seconds": res["cpu_seconds"],
        "compare_by_task_2m_rows_peak_mb": res["peak_mb"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=5, help="repeats of the p-value timing")
    parser.add_argument(
        "--runs", type=int, default=3, help="fresh processes per small case (median reported)"
    )
    parser.add_argument("--keep", help="folder to keep (and reuse) the 5M-row log in")
    parser.add_argument(
        "--cases", default="small,2m,5m,fisher", help="comma-separated: small, 2m, 5m, fisher"
    )
    args = parser.parse_args()
    cases = tuple(c.strip() for c in args.cases.split(","))
    result = run(args.repeat, args.keep, cases, runs=args.runs)
    print_result(result, args.json, "{k:40s} {v:.6g}")


if __name__ == "__main__":
    main()
