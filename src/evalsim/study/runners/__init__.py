"""Runners: what runs a trial's policy on Start, so the operator never sees which arm it is.

A study arm may name a runner (``runner:`` in ``study.yaml``). When the operator presses
Start on the console, the console asks the arm's runner to run the trial; the runner knows
the arm, the console and the operator only the blind code. Each runner returns a
:class:`RunResult`: how the run went (exit code, the tail of its output, its duration) and,
where the runner can tell, a suggested outcome and failure type that the operator confirms.

The registry :data:`RUNNERS` holds one :class:`RunnerInfo` per kind:

- ``command`` (:mod:`evalsim.study.runners.command`): a shell-free command template with
  ``{trial}``, ``{condition}``, ``{x_cm}``, ``{y_cm}`` and ``{out}``, for a real robot
  (``lerobot-record`` or ``lerobot-rollout``, an openpi client, a lab script);
- ``mujoco`` (:mod:`evalsim.study.runners.mujoco`): the study's SO-101 arm in MuJoCo, with the
  arm's aim noise sigma, at the trial's position: the demo robot.

A run that could not run the policy (a non-zero exit, a timeout, a crash) is a runner
failure (``RunResult.ok`` is False), never a policy failure: the trial can be run again.

References
----------
.. [1] fieldtrial 0.3.0 (PyPI), the peer whose runners switch the policy; this package
   shares its idea, not its code.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evalsim._registry import by_id

__all__ = [
    "RUNNERS",
    "RunResult",
    "RunnerError",
    "RunnerInfo",
    "TrialRequest",
    "artefact_path",
    "finished_run",
    "make_runner",
    "redact_arms",
]


class RunnerError(ValueError):
    """A runner specification that cannot work (unknown kind, bad template, missing key)."""


@dataclass(frozen=True)
class TrialRequest:
    """One scheduled trial, as a runner sees it.

    Attributes
    ----------
    trial : str
        The trial id of the schedule.
    condition : str
        The condition (start position) id.
    x_cm, y_cm : float
        The start position on the grid (cm, the robot's base frame for the MuJoCo runner).
    block : str
        The blocking level (object instance).
    out_dir : pathlib.Path
        A folder inside the study folder for the run's artefacts (created by the caller).
    attempt : int
        1 for the first run of the trial, 2 after one rerun, ...
    """

    trial: str
    condition: str
    x_cm: float
    y_cm: float
    block: str
    out_dir: Path
    attempt: int = 1


@dataclass(frozen=True)
class RunResult:
    """What one run of a runner produced.

    Attributes
    ----------
    runner : str
        The runner kind (a key of :data:`RUNNERS`).
    ok : bool
        The runner ran the policy to its end. False is a runner failure ("runner failed"),
        which is not a policy failure and lets the trial be run again.
    exit_code : int or None
        The command's exit status (negative: killed by that signal); None for in-process runners.
    timed_out : bool
        The run was stopped at its timeout (SIGTERM, then SIGKILL).
    duration_s : float
        Wall time of the run (s).
    output_tail : str
        The last lines of its output (what the review page shows, arm names redacted).
    suggested_outcome : str or None
        "success" or "failure" when the runner can tell (the MuJoCo runner, or a command that
        writes ``{out}/outcome.json``); the operator confirms it.
    suggested_failure : str or None
        The failure type it suggests for a failure.
    artefacts : tuple of str
        Files the run wrote, relative to the study folder.
    details : dict
        Runner-specific physical record (no arm name, no sigma).
    """

    runner: str
    ok: bool
    exit_code: int | None
    timed_out: bool
    duration_s: float
    output_tail: str
    suggested_outcome: str | None = None
    suggested_failure: str | None = None
    artefacts: tuple[str, ...] = ()
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict (what the store's runner event holds)."""
        d = asdict(self)
        d["artefacts"] = list(self.artefacts)
        return d


def artefact_path(path: Path, study_dir: Path) -> str:
    """A run's file as :attr:`RunResult.artefacts` records it: relative to the study folder,
    or as given when it lies outside it."""
    try:
        return str(Path(path).resolve().relative_to(Path(study_dir).resolve()))
    except ValueError:
        return str(path)


def finished_run(
    runner: str,
    t0: float,
    study_dir: Path,
    artefacts,
    output_tail: str,
    *,
    ok: bool = True,
    exit_code: int | None = None,
    timed_out: bool = False,
    suggested: tuple[str | None, str | None] = (None, None),
    details: dict | None = None,
) -> RunResult:
    """The :class:`RunResult` of a run that started at ``time.monotonic() == t0`` and ends now.

    Parameters
    ----------
    runner : str
        The runner kind.
    t0 : float
        :func:`time.monotonic` at the start of the run; the duration is taken from it now.
    study_dir : pathlib.Path
        The study folder, which the artefacts' paths are made relative to.
    artefacts : iterable of pathlib.Path
        Files the run wrote.
    output_tail : str
        The last lines of its output.
    ok, exit_code, timed_out : bool, int or None, bool
        How the run ended; the defaults are an in-process run that ran to its end.
    suggested : (str or None, str or None)
        The suggested outcome and failure type, where the runner can tell.
    details : dict, optional
        The runner-specific physical record.

    Returns
    -------
    RunResult
    """
    return RunResult(
        runner=runner,
        ok=ok,
        exit_code=exit_code,
        timed_out=timed_out,
        duration_s=round(time.monotonic() - t0, 4),
        output_tail=output_tail,
        suggested_outcome=suggested[0],
        suggested_failure=suggested[1],
        artefacts=tuple(artefact_path(a, study_dir) for a in artefacts),
        details={} if details is None else details,
    )


@dataclass(frozen=True)
class RunnerInfo:
    """One runner kind of the registry.

    Attributes
    ----------
    id : str
        ``runner.kind`` in ``study.yaml``.
    label : str
        Its name in the docs.
    keys : tuple of str
        The keys its specification may hold besides ``kind``.
    factory : callable
        ``factory(spec, study_dir)`` -> an object with ``run(TrialRequest) -> RunResult``.
    """

    id: str
    label: str
    keys: tuple[str, ...]
    factory: Callable[[Mapping, Path], object]


def _command_factory(spec: Mapping, study_dir: Path) -> object:
    from evalsim.study.runners.command import CommandRunner

    return CommandRunner.from_spec(spec, study_dir)


def _mujoco_factory(spec: Mapping, study_dir: Path) -> object:
    from evalsim.study.runners.mujoco import MujocoRunner

    return MujocoRunner.from_spec(spec, study_dir)


RUNNERS: dict[str, RunnerInfo] = by_id(
    RunnerInfo(
        "command",
        "a command per arm (a real robot: lerobot-record, an openpi client, a script)",
        ("command", "timeout_s", "kill_grace_s", "tail_lines", "cwd"),
        _command_factory,
    ),
    RunnerInfo(
        "mujoco",
        "the SO-101 arm in MuJoCo with the arm's aim noise (the demo robot)",
        ("sigma_mm", "task", "config", "seed"),
        _mujoco_factory,
    ),
)


def make_runner(spec: Mapping, study_dir: str | Path) -> object:
    """The runner an arm's ``runner:`` specification describes.

    Parameters
    ----------
    spec : mapping
        ``{"kind": "command", "command": "...", ...}`` or ``{"kind": "mujoco", "sigma_mm": 9}``.
    study_dir : path
        The study folder (relative paths in the specification are taken from it).

    Returns
    -------
    object
        The runner: ``run(TrialRequest) -> RunResult``.

    Raises
    ------
    RunnerError
        Unknown kind or key, naming the allowed ones.
    """
    if not isinstance(spec, Mapping):
        raise RunnerError(f"runner: expected a mapping with a 'kind', got {spec!r}")
    kind = spec.get("kind")
    if kind not in RUNNERS:
        raise RunnerError(f"runner: unknown kind {kind!r}; known kinds: {', '.join(RUNNERS)}")
    info = RUNNERS[kind]
    extra = sorted(set(spec) - {"kind", *info.keys})
    if extra:
        raise RunnerError(
            f"runner ({kind}): unknown key(s) {', '.join(map(repr, extra))}; "
            f"allowed: kind, {', '.join(info.keys)}"
        )
    return info.factory(spec, Path(study_dir))


def redact_arms(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """``text`` with every secret (an arm name, a token of one arm's command) replaced by
    ``[arm]``.

    A runner's output may print the policy it ran (a checkpoint path, a policy name); the
    console shows output only through this, before the unblinding. A secret of three or more
    characters is replaced wherever it occurs, in any case; a shorter one (an arm called "A")
    only as a whole word, in its own case, so that ordinary words survive.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= 3:
            text = re.sub(re.escape(secret), "[arm]", text, flags=re.IGNORECASE)
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "[arm]", text)
    return text
