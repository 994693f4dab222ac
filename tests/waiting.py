"""Waits that poll for a state, with limits generous under load (issue 26, item 2).

A fixed sleep or ``proc.wait(timeout=...)`` passes only when the machine is idle enough. These
helpers poll instead, and a failure names the state waited for, how long, and (when given) the
tail of the process's log.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

#: Generous: on a 2-core machine shared with two CPU-bound processes a smoke job takes minutes.
GENEROUS_S = 900.0


def _tail(log: Path | None) -> str:
    if log is None or not Path(log).exists():
        return ""
    return "\n" + Path(log).read_text()[-3000:]


def wait_for(
    condition: Callable[[], object],
    state: str,
    limit_s: float = GENEROUS_S,
    proc: subprocess.Popen | None = None,
    log: Path | None = None,
    poll_s: float = 0.5,
):
    """Poll ``condition()`` until it is truthy and return its value.

    Fails (AssertionError) naming ``state`` when ``limit_s`` seconds pass first, or when
    ``proc`` (the process expected to bring the state about) has exited before it.
    """
    deadline = time.monotonic() + limit_s
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(
                f"the process exited ({proc.returncode}) while waiting for {state}" + _tail(log)
            )
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {limit_s:.0f} s waiting for {state}" + _tail(log)
            )
        time.sleep(poll_s)


def wait_exit(
    proc: subprocess.Popen, state: str, limit_s: float = GENEROUS_S, log: Path | None = None
) -> int:
    """Poll until ``proc`` exits and return its exit code; a timeout names ``state``."""
    wait_for(lambda: proc.poll() is not None, state, limit_s, log=log)
    return proc.returncode
