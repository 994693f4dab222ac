"""The console's runners (issue 42, item 4): the command runner's process group, timeout,
exit code and output tail; the MuJoCo runner's physics suggestion and its keyed draws."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from evalsim.study.runners import RUNNERS, RunnerError, TrialRequest, make_runner, redact_arms
from evalsim.study.runners.command import render_command


def _req(tmp_path, trial="T001", condition="P07", x=20.0, y=-4.0, block="cube-1", attempt=1):
    return TrialRequest(trial, condition, x, y, block, tmp_path / "runs" / trial, attempt)


def _py(tmp_path, code: str) -> str:
    """A command template running ``code`` (saved as a script) with this interpreter."""
    script = tmp_path / f"cmd{len(list(tmp_path.glob('cmd*.py')))}.py"
    script.write_text(code)
    return f"{sys.executable} {script}"


def test_template_fills_every_field_word_by_word(tmp_path):
    runner = make_runner(
        {"kind": "command", "command": "rec --t {trial} --c={condition} {x_cm},{y_cm} {out}"},
        tmp_path,
    )
    argv = runner.argv(_req(tmp_path, x=20.5, y=-4.0))
    assert argv == ["rec", "--t", "T001", "--c=P07", "20.5,-4", str(tmp_path / "runs" / "T001")]


def test_a_value_never_becomes_shell_syntax(tmp_path):
    # a trial id with shell metacharacters stays one argument: no shell runs
    argv = render_command(
        "echo {trial}",
        dict.fromkeys(
            ("trial", "condition", "x_cm", "y_cm", "block", "attempt", "out"), "x; rm -rf /"
        ),
    )
    assert argv == ["echo", "x; rm -rf /"]


@pytest.mark.parametrize(
    "spec, words",
    [
        ({"kind": "command", "command": "run {policy}"}, "unknown field {policy}"),
        ({"kind": "command", "command": "run 'open"}, "cannot split"),
        ({"kind": "command"}, "missing key 'command'"),
        ({"kind": "command", "command": "x", "timeout_s": 0}, "timeout_s must be > 0"),
        ({"kind": "command", "command": "x", "shell": True}, "unknown key(s) 'shell'"),
        ({"kind": "robot"}, "unknown kind 'robot'"),
        ({"kind": "mujoco"}, "missing key 'sigma_mm'"),
        ({"kind": "mujoco", "sigma_mm": -1}, "sigma_mm must be in [0, 100]"),
        ({"kind": "mujoco", "sigma_mm": 6, "task": "sphere"}, "unknown task 'sphere'"),
    ],
)
def test_bad_specifications_are_refused_naming_the_key(tmp_path, spec, words):
    with pytest.raises(RunnerError, match=None) as info:
        make_runner(spec, tmp_path)
    assert words in str(info.value)


def test_registry_kinds_are_the_documented_ones():
    assert list(RUNNERS) == ["command", "mujoco"]


def test_success_records_exit_code_tail_duration_and_suggestion(tmp_path):
    code = (
        "import json, pathlib, sys\n"
        "for i in range(50): print('line', i)\n"
        "pathlib.Path(sys.argv[1]).joinpath('outcome.json').write_text("
        "json.dumps({'outcome': 'failure', 'failure': 'dropped'}))"
    )
    runner = make_runner(
        {"kind": "command", "command": _py(tmp_path, code) + " {out}", "tail_lines": 3}, tmp_path
    )
    res = runner.run(_req(tmp_path))
    assert res.ok and res.exit_code == 0 and not res.timed_out
    assert res.output_tail.splitlines() == ["line 47", "line 48", "line 49"]
    assert (res.suggested_outcome, res.suggested_failure) == ("failure", "dropped")
    assert res.duration_s > 0
    assert res.artefacts == ("runs/T001/runner.log", "runs/T001/outcome.json")


def test_nonzero_exit_is_a_runner_failure_without_suggestion(tmp_path):
    code = (
        "import json, pathlib, sys\n"
        "pathlib.Path(sys.argv[1]).joinpath('outcome.json').write_text("
        "json.dumps({'outcome': 'success'}))\n"
        "print('camera not found'); sys.exit(3)"
    )
    res = make_runner({"kind": "command", "command": _py(tmp_path, code) + " {out}"}, tmp_path).run(
        _req(tmp_path)
    )
    assert not res.ok and res.exit_code == 3
    assert res.output_tail == "camera not found"
    assert res.suggested_outcome is None  # a failed run suggests nothing, not a failure


def test_missing_program_is_a_runner_failure(tmp_path):
    res = make_runner({"kind": "command", "command": "no-such-program-xyz {trial}"}, tmp_path).run(
        _req(tmp_path)
    )
    assert not res.ok and res.exit_code is None
    assert "no-such-program-xyz" in res.output_tail


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_timeout_terms_then_kills_the_whole_group(tmp_path):
    # the command ignores SIGTERM and leaves a grandchild in its group: both must go
    code = (
        "import signal, subprocess, sys, time, pathlib\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "pathlib.Path(sys.argv[1]).joinpath('child.pid').write_text(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)"
    )
    runner = make_runner(
        {
            "kind": "command",
            "command": _py(tmp_path, code) + " {out}",
            "timeout_s": 1.0,
            "kill_grace_s": 0.3,
        },
        tmp_path,
    )
    t0 = time.monotonic()
    res = runner.run(_req(tmp_path))
    elapsed = time.monotonic() - t0
    assert res.timed_out and not res.ok
    assert res.exit_code == -9  # SIGTERM was ignored, so SIGKILL ended it
    assert res.output_tail == "started"
    assert elapsed < 20  # bounded: never waits for the 60 s sleep
    child = int((tmp_path / "runs" / "T001" / "child.pid").read_text())
    deadline = time.monotonic() + 30  # a state, not a time: generous on a busy machine
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_sigterm_is_tried_first(tmp_path):
    code = "import time; print('up', flush=True); time.sleep(60)"
    res = make_runner(
        {"kind": "command", "command": _py(tmp_path, code), "timeout_s": 0.5, "kill_grace_s": 10},
        tmp_path,
    ).run(_req(tmp_path))
    assert res.timed_out and res.exit_code == -15


def test_redaction_hides_arm_names_and_keeps_words():
    text = "loading outputs/policy_b_ckpt (policy B); a cube at A1"
    assert redact_arms(text, ["A", "B", "policy_b_ckpt"]) == (
        "loading outputs/[arm] (policy [arm]); a cube at A1"
    )


@pytest.fixture(scope="module")
def mujoco_runs(tmp_path_factory):
    pytest.importorskip("mujoco")
    root = tmp_path_factory.mktemp("mj")
    precise = make_runner({"kind": "mujoco", "sigma_mm": 0.0}, root)
    noisy = make_runner({"kind": "mujoco", "sigma_mm": 30.0}, root)
    reqs = [
        _req(root, f"T{i:03d}", f"P{i:02d}", 17.0 + 2.5 * (i % 5), -6.0 + 3.0 * (i // 5))
        for i in range(10)
    ]
    return root, precise, noisy, reqs


def test_mujoco_runner_with_no_aim_noise_lifts_nearly_every_cube(mujoco_runs):
    # the calibrated arm keeps a few drops that do not depend on sigma (pad surfaces)
    root, precise, noisy, reqs = mujoco_runs
    results = [precise.run(r) for r in reqs]
    assert all(r.ok for r in results)
    wins = [r for r in results if r.suggested_outcome == "success"]
    assert len(wins) >= 8
    assert all(r.suggested_failure is None for r in wins)
    rec = json.loads((root / wins[0].artefacts[0]).read_text())
    assert rec["success_strict"] and rec["lift_height_cm"] >= 4.0
    noisy_wins = sum(noisy.run(r).suggested_outcome == "success" for r in reqs)
    assert noisy_wins < len(wins)  # the arm's sigma reaches the physics


def test_mujoco_runner_large_noise_fails_with_physics_failure_types(mujoco_runs):
    from evalsim.sim.scene import FAILURES

    _, _, noisy, reqs = mujoco_runs
    results = [noisy.run(r) for r in reqs]
    failed = [r for r in results if r.suggested_outcome == "failure"]
    assert failed, "sigma 30 mm misses a 30 mm cube often"
    assert all(r.suggested_failure in FAILURES[1:] for r in failed)
    for r in results:  # the suggestion is the physics' strict test
        assert (r.suggested_outcome == "success") == r.details["success_strict"]


def test_mujoco_runner_is_keyed_per_trial_and_hides_sigma(mujoco_runs):
    _, _, noisy, reqs = mujoco_runs
    a = noisy.run(reqs[3])
    noisy.run(reqs[7])  # another trial in between changes nothing
    b = noisy.run(reqs[3])
    assert a.details == b.details and a.output_tail == b.output_tail
    text = json.dumps(a.to_dict())
    assert "sigma" not in text and "30" not in text.replace("cube30", "")
