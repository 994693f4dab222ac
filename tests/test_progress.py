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
