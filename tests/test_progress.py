"""tools/progress.py: the one progress line of `make reproduce` (issue 16, item 5)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import progress  # noqa: E402

FAKE = """
import sys
print("Job stats:\\njob    count\\n-----  -----\\nrule_a     2\\ntotal      3\\n")
print("rule rule_a:\\n    output: a.txt")
print("1 of 3 steps (33%) done")
print("localrule all:\\n    input: a.txt")
print("3 of 3 steps (100%) done")
sys.exit(int(sys.argv[1]))
"""


def test_progress_line_counts_percent_and_elapsed():
    assert progress.format_elapsed(3725.9) == "1:02:05"
    assert progress.progress_line(7, 69, 61.0, "simulate_chunk") == (
        "[  7/69 jobs  10% | 0:01:01 elapsed | simulate_chunk ]"
    )
    assert progress.progress_line(0, None, 2.0, "") == "[ planning the jobs | 0:00:02 elapsed ]"


def _run(tmp_path, code: int) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(REPO / "tools" / "progress.py"), str(tmp_path / "logs" / "x.log")]
    return subprocess.run(
        [*cmd, "--", sys.executable, "-c", FAKE, str(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_jobs_go_to_the_log_and_the_terminal_gets_progress(tmp_path):
    res = _run(tmp_path, 0)
    assert res.returncode == 0
    log = (tmp_path / "logs" / "x.log").read_text()
    assert "rule rule_a:\n    output: a.txt" in log  # the per-job blocks, in full
    assert "output: a.txt" not in res.stdout  # ... not on the terminal
    assert "[ 3/3 jobs 100% |" in res.stdout
    assert "job log:" in res.stdout


def test_failure_keeps_the_exit_code_and_shows_the_log_tail(tmp_path):
    res = _run(tmp_path, 3)
    assert res.returncode == 3
    assert "snakemake failed (exit 3)" in res.stderr
    assert "3 of 3 steps (100%) done" in res.stderr


def _bench(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["s\th:m:s\tmax_rss\tcpu_time"] + [f"{s}\t0:00:00\t1.0\t{s}" for s in rows]
    path.write_text("\n".join(lines) + "\n")


def test_time_left_from_the_benchmark_history(tmp_path):
    bench = tmp_path / "results" / "benchmarks"
    _bench(bench / "simulate" / "a.tsv", [99.0, 10.0])  # a rerun: the last row counts
    _bench(bench / "design" / "b.tsv", [20.0])
    _bench(bench / "design" / "c.tsv", [6.0])
    (bench / "design" / "broken.tsv").write_text("not a benchmark\n")
    per_job = progress.history_seconds_per_job(bench)
    assert per_job == (10.0 + 20.0 + 6.0) / 3
    # 30 jobs left on 2 cores at 12 s a job
    assert progress.estimate_left(10, 40, 5.0, per_job, cores=2) == 30 * 12.0 / 2
    assert progress.history_seconds_per_job(tmp_path / "nothing") is None
    assert progress.progress_line(10, 40, 5.0, "x", 180.0) == (
        "[ 10/40 jobs  25% | 0:00:05 elapsed | ~0:03:00 left | x ]"
    )


def test_time_left_from_job_counts_without_history():
    # 6 of 24 jobs took 90 s: 15 s a job, 18 jobs left
    assert progress.estimate_left(6, 24, 90.0, None) == 18 * 15.0
    assert progress.estimate_left(0, 24, 3.0, None) is None  # nothing done yet: unknown
    assert progress.estimate_left(0, None, 3.0, 5.0) is None  # still planning
    assert progress.estimate_left(24, 24, 90.0, None) == 0.0


def test_cores_come_from_the_command_line():
    assert progress.cores_of(["snakemake", "--profile", "p", "--cores", "2"]) == 2
    assert progress.cores_of(["snakemake", "-c", "4"]) == 4
    assert progress.cores_of(["snakemake", "--cores", "all"]) == 1
    assert progress.cores_of(["snakemake"]) == 1
