"""Run Snakemake with one live progress line; the per-job blocks go to a log file.

    python tools/progress.py LOG -- snakemake --profile profiles/local --cores 8

Snakemake's own output (a block per job) is written to ``LOG``; the terminal shows one line,
rewritten in place, with the jobs done out of the total, the percentage, the elapsed time and
the rule of the last job that started::

    [ 23/69 jobs  33% | 0:01:42 elapsed | ~0:03:10 left | simulate_chunk ]

The time left is estimated from the rules' benchmark history where it exists (the mean
wall seconds per job in ``results/benchmarks/**/*.tsv`` of earlier runs, times the jobs
left, over the cores given with ``--cores``), else from the job counts (the elapsed time per
job done so far, times the jobs left); before either is known it is not shown.

When the output is not a terminal (CI, ``| tee``) a line is printed at each 10% instead. On
failure the last lines of the log are shown with its path. The exit code is Snakemake's;
Ctrl-C is passed on to Snakemake so that it cancels its jobs cleanly.

(snakemake-logger-plugin-rich 0.5.1 also runs with Snakemake 9.27.1, but draws a panel with
one bar per rule, 45 here, and percentages rather than counts; this wrapper needs nothing.)
"""

from __future__ import annotations

import csv
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

STEPS = re.compile(r"^(\d+) of (\d+) steps \((\d+)%\) done")
RULE = re.compile(r"^(?:local)?rule (\w+):")
TOTAL = re.compile(r"^total\s+(\d+)\s*$")  # the last row of the "Job stats" table


def format_elapsed(seconds: float) -> str:
    """``h:mm:ss`` of a non-negative number of seconds."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def history_seconds_per_job(bench_dir: Path) -> float | None:
    """Mean wall seconds (column ``s``) of the last row of each benchmark file under
    ``bench_dir`` (earlier runs' ``results/benchmarks``), or None when there is none."""
    seconds = []
    for path in sorted(Path(bench_dir).glob("**/*.tsv")):
        try:
            with path.open() as fh:
                rows = list(csv.DictReader(fh, delimiter="\t"))
            seconds.append(float(rows[-1]["s"]))
        except (OSError, KeyError, IndexError, ValueError):
            continue  # a file being written, or not a benchmark file
    return sum(seconds) / len(seconds) if seconds else None


def cores_of(cmd: list[str]) -> int:
    """The ``--cores N`` (or ``-c N``) of a Snakemake command line; 1 when absent or 'all'."""
    for flag in ("--cores", "-c", "--jobs", "-j"):
        if flag in cmd[:-1]:
            value = cmd[cmd.index(flag) + 1]
            return int(value) if value.isdigit() and int(value) > 0 else 1
    return 1


def estimate_left(
    done: int, total: int | None, elapsed_s: float, per_job_s: float | None, cores: int = 1
) -> float | None:
    """Seconds left: the history's seconds per job times the jobs left over ``cores``, else
    the elapsed time per job done times the jobs left; None before either is known."""
    if not total:
        return None
    left = max(total - done, 0)
    if per_job_s is not None:
        return left * per_job_s / max(cores, 1)
    if done == 0:
        return None
    return elapsed_s / done * left


def progress_line(
    done: int, total: int | None, elapsed_s: float, rule: str, left_s: float | None = None
) -> str:
    """The one status line: jobs done/total, percent, elapsed, time left, last rule started."""
    if total:
        head = f"{done:>{len(str(total))}}/{total} jobs {100 * done // total:3d}%"
    else:
        head = "planning the jobs"
    left = f" | ~{format_elapsed(left_s)} left" if left_s is not None else ""
    tail = f" | {rule}" if rule else ""
    return f"[ {head} | {format_elapsed(elapsed_s)} elapsed{left}{tail} ]"


class _State:
    done, total, rule, last_decile = 0, None, "", -1


def _read(proc: subprocess.Popen, log, state: _State) -> None:
    for line in proc.stdout:
        log.write(line)
        if m := STEPS.match(line):
            state.done, state.total = int(m.group(1)), int(m.group(2))
        elif m := RULE.match(line):
            state.rule = m.group(1)
        elif state.total is None and (m := TOTAL.match(line)):
            state.total = int(m.group(1))


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: progress.py LOG -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    log_path, cmd = Path(argv[0]), argv[2:]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    live = sys.stdout.isatty()
    t0 = time.monotonic()
    state = _State()
    per_job = history_seconds_per_job(Path("results") / "benchmarks")
    cores = cores_of(cmd)
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            start_new_session=True,  # Ctrl-C reaches Snakemake once, through the handler below
        )
        signal.signal(signal.SIGINT, lambda *_: proc.send_signal(signal.SIGINT))
        reader = threading.Thread(target=_read, args=(proc, log, state), daemon=True)
        reader.start()

        def show(final: bool = False) -> None:
            rule = "" if final else state.rule
            elapsed = time.monotonic() - t0
            left = (
                None if final else estimate_left(state.done, state.total, elapsed, per_job, cores)
            )
            status = progress_line(state.done, state.total, elapsed, rule, left)
            if live:
                print("\r\033[K" + status, end="\n" if final else "", flush=True)
            elif state.total and (decile := 10 * state.done // state.total) != state.last_decile:
                state.last_decile = decile
                print(status, flush=True)

        while reader.is_alive():
            show()
            reader.join(timeout=1.0)
        rc = proc.wait()
        show(final=True)
    if rc != 0:
        lines = log_path.read_text().splitlines()
        print("\n".join(lines[-25:]), file=sys.stderr)
        print(f"snakemake failed (exit {rc}); its full output: {log_path}", file=sys.stderr)
    else:
        print(f"done in {format_elapsed(time.monotonic() - t0)}; job log: {log_path}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
