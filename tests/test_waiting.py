"""tests/waiting.py: polls for a state; a failure names the state (issue 26, item 2)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from waiting import wait_exit, wait_for


def test_wait_for_returns_the_condition_value():
    calls = []

    def ready():
        calls.append(1)
        return ["job 7"] if len(calls) >= 3 else []

    assert wait_for(ready, "job listed", limit_s=60, poll_s=0.0) == ["job 7"]
    assert len(calls) == 3


def test_a_timeout_names_the_state():
    with pytest.raises(AssertionError, match="timed out after 0 s waiting for the moon"):
        wait_for(lambda: False, "the moon", limit_s=0.0, poll_s=0.0)


def test_an_exited_process_names_the_state_and_shows_its_log(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("boom: the last words\n")
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(4)"])
    assert wait_exit(proc, "the child exiting", limit_s=600) == 4
    with pytest.raises(AssertionError, match=r"exited \(4\) while waiting for 3 chunks") as err:
        wait_for(lambda: False, "3 chunks", proc=proc, log=log)
    assert "boom: the last words" in str(err.value)
