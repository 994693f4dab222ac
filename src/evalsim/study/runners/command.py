"""The ``command`` runner: one command per arm, started on Start, in its own process group.

An arm's specification in ``study.yaml``::

    runner:
      kind: command
      command: >-
        lerobot-record --robot.type=so101_follower --policy.path=outputs/policy_b
        --dataset.repo_id=lab/eval_{trial} --dataset.root={out}/dataset
        --dataset.single_task="pick the cube at {x_cm},{y_cm} cm"
      timeout_s: 120

The template is split into words first (:func:`shlex.split`), then each word is formatted
with ``{trial}``, ``{condition}``, ``{x_cm}``, ``{y_cm}``, ``{block}``, ``{attempt}`` and
``{out}``, and the words are run without a shell: a value can never become shell syntax. The
process runs in a new session (its own process group), with stdout and stderr written to
``{out}/runner.log``. At the timeout the whole group gets SIGTERM, and SIGKILL after
``kill_grace_s`` more seconds. The exit code, the last ``tail_lines`` lines of the output and
the duration are returned. A non-zero exit or a timeout is a runner failure, not a policy
failure.

If the command writes ``{out}/outcome.json`` (``{"outcome": "success"|"failure",
"failure": "<type>"}``), that becomes the suggested outcome the operator confirms.

No LeRobot dependency: the command is whatever the lab runs at the robot.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from evalsim.study.runners import RunnerError, RunResult, TrialRequest, finished_run

__all__ = ["CommandRunner", "FIELDS", "render_command"]

#: The names a command template may use.
FIELDS = ("trial", "condition", "x_cm", "y_cm", "block", "attempt", "out")
LOG_NAME = "runner.log"
OUTCOME_NAME = "outcome.json"


def render_command(template: str, values: Mapping[str, object]) -> list[str]:
    """The argument vector of ``template`` with ``values`` filled in, word by word.

    Raises
    ------
    RunnerError
        The template does not split into words, or names a field not in :data:`FIELDS`.
    """
    try:
        words = shlex.split(template)
    except ValueError as err:
        raise RunnerError(f"runner (command): cannot split the command: {err}") from None
    if not words:
        raise RunnerError("runner (command): the command is empty")
    out = []
    for word in words:
        try:
            out.append(word.format(**{k: values[k] for k in FIELDS}))
        except KeyError as err:
            raise RunnerError(
                f"runner (command): unknown field {{{err.args[0]}}}; "
                f"allowed: {', '.join('{' + f + '}' for f in FIELDS)}"
            ) from None
        except (ValueError, IndexError) as err:
            raise RunnerError(f"runner (command): bad template word {word!r}: {err}") from None
    return out


def _tail(path: Path, lines: int, max_bytes: int = 64_000) -> str:
    """The last ``lines`` lines of a file (reads at most its last ``max_bytes``)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _read_outcome(path: Path) -> tuple[str | None, str | None]:
    """The suggestion a command left in ``outcome.json``, or (None, None)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(raw, dict) or raw.get("outcome") not in ("success", "failure"):
        return None, None
    failure = raw.get("failure")
    return raw["outcome"], (str(failure) if failure and raw["outcome"] == "failure" else None)


class CommandRunner:
    """Runs an arm's command for a trial (see the module docstring).

    Parameters
    ----------
    template : str
        The command template.
    study_dir : pathlib.Path
        The study folder: the working directory (unless ``cwd``) and the root of artefacts.
    timeout_s : float
        Wall seconds before SIGTERM to the process group.
    kill_grace_s : float
        Seconds between SIGTERM and SIGKILL.
    tail_lines : int
        Lines of output kept in the result.
    cwd : path, optional
        Working directory, relative to the study folder.
    """

    kind = "command"

    def __init__(
        self,
        template: str,
        study_dir: Path,
        timeout_s: float = 300.0,
        kill_grace_s: float = 5.0,
        tail_lines: int = 20,
        cwd: str | None = None,
    ) -> None:
        if not isinstance(template, str) or not template.strip():
            raise RunnerError("runner (command): 'command' must be a non-empty string")
        for name, v in (("timeout_s", timeout_s), ("kill_grace_s", kill_grace_s)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise RunnerError(f"runner (command): {name} must be > 0, got {v!r}")
        if isinstance(tail_lines, bool) or not isinstance(tail_lines, int) or tail_lines < 1:
            raise RunnerError(f"runner (command): tail_lines must be >= 1, got {tail_lines!r}")
        self.template = template
        self.study_dir = Path(study_dir)
        self.timeout_s = float(timeout_s)
        self.kill_grace_s = float(kill_grace_s)
        self.tail_lines = tail_lines
        self.cwd = self.study_dir / cwd if cwd else self.study_dir
        # a template error is the study author's, found when the study loads, not at Start
        render_command(template, dict.fromkeys(FIELDS, "0"))

    @classmethod
    def from_spec(cls, spec: Mapping, study_dir: Path) -> CommandRunner:
        """The runner of an arm's ``runner:`` mapping (``kind: command``)."""
        if "command" not in spec:
            raise RunnerError("runner (command): missing key 'command'")
        kw = {k: spec[k] for k in ("timeout_s", "kill_grace_s", "tail_lines", "cwd") if k in spec}
        return cls(spec["command"], study_dir, **kw)

    def argv(self, req: TrialRequest) -> list[str]:
        """The argument vector for ``req``."""
        values = {
            "trial": req.trial,
            "condition": req.condition,
            "x_cm": f"{req.x_cm:g}",
            "y_cm": f"{req.y_cm:g}",
            "block": req.block,
            "attempt": req.attempt,
            "out": str(req.out_dir),
        }
        return render_command(self.template, values)

    def run(self, req: TrialRequest) -> RunResult:
        """Run the command for ``req``; never raises for what the command does."""
        argv = self.argv(req)
        req.out_dir.mkdir(parents=True, exist_ok=True)
        log_path = req.out_dir / LOG_NAME
        outcome_path = req.out_dir / OUTCOME_NAME
        outcome_path.unlink(missing_ok=True)  # a rerun's suggestion is its own
        t0 = time.monotonic()
        timed_out = False
        with open(log_path, "wb") as log:
            try:
                proc = subprocess.Popen(
                    argv,
                    cwd=self.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: the timeout kills it all
                )
            except OSError as err:
                log.write(f"cannot start {argv[0]!r}: {err.strerror or err}\n".encode())
                log.flush()
                return self._result(False, None, False, t0, log_path)
            try:
                code = proc.wait(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                code = self._stop(proc)
            finally:
                self._reap_group(proc)
        ok = code == 0 and not timed_out
        return self._result(ok, code, timed_out, t0, log_path, outcome_path if ok else None)

    def _stop(self, proc: subprocess.Popen) -> int:
        """SIGTERM to the group, then SIGKILL after the grace period; the exit code."""
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            return proc.wait(timeout=self.kill_grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            return proc.wait()

    @staticmethod
    def _reap_group(proc: subprocess.Popen) -> None:
        """Kill what the command left running in its group (a background child)."""
        _signal_group(proc.pid, signal.SIGKILL)

    def _result(
        self,
        ok: bool,
        code: int | None,
        timed_out: bool,
        t0: float,
        log_path: Path,
        outcome_path: Path | None = None,
    ) -> RunResult:
        artefacts = [log_path]
        if outcome_path is not None and outcome_path.exists():
            artefacts.append(outcome_path)
        return finished_run(
            self.kind,
            t0,
            self.study_dir,
            artefacts,
            _tail(log_path, self.tail_lines),
            ok=ok,
            exit_code=code,
            timed_out=timed_out,
            suggested=_read_outcome(outcome_path) if outcome_path else (None, None),
        )


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
