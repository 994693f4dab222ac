"""The demo study: lesson 25's policies A and B on the MuJoCo SO-101 arm, half run.

``evalsim study demo [DIR]`` writes :data:`DEMO_STUDY` into DIR, locks it, runs the first
half of its schedule through the runners (the operator confirming each suggestion as
"demo"), and opens the console: a student can try the whole bench workflow, with no robot,
in a minute. A (sigma 9 mm) and B (sigma 6 mm) are the aim noises of ``config/config.yaml``;
the 20 positions lie in the arm's workspace (x 17-27 cm, y -6..6 cm), dealt to two object
blocks of 10.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEMO_SEED", "DEMO_STUDY", "demo_positions", "prepare_demo"]

DEMO_SEED = 25
DEMO_X_CM = (17.0, 19.5, 22.0, 24.5, 27.0)
DEMO_Y_CM = (-6.0, -2.0, 2.0, 6.0)


def demo_positions() -> list[tuple[str, float, float]]:
    """The demo's 4 x 5 grid, rows A-D (y) and columns 1-5 (x), in the arm's base frame."""
    return [
        (f"{chr(ord('A') + r)}{c + 1}", x, y)
        for r, y in enumerate(DEMO_Y_CM)
        for c, x in enumerate(DEMO_X_CM)
    ]


def _study_text() -> str:
    pos = "\n".join(
        f"      - {{name: {n}, x_cm: {x:g}, y_cm: {y:g}}}" for n, x, y in demo_positions()
    )
    return f"""# evalsim demo study: lesson 25's policies A and B on the MuJoCo SO-101 arm.
version: 1
title: Lesson 25 on the simulated SO-101 (demo)
question:
  primary: {{a: A, b: B}}
  alternative: two-sided
  alpha: 0.05
arms:                       # the runners switch the policy: the operator sees only codes
  - name: A
    runner: {{kind: mujoco, sigma_mm: 9.0}}
  - name: B
    runner: {{kind: mujoco, sigma_mm: 6.0}}
conditions:
  positions:
    list:                   # x, y in the arm's base frame (cm), as in the pools
{pos}
  blocks:
    factors:
      object: [cube-1, cube-2]
    assign: split
  replicates: 1
rubric:
  success: "The cube's lowest corner is 4 cm above the table at the end, held by both jaws."
  failure_types: [missed, pushed, dropped, held_low]
design:
  paired: true
  n: 20
analysis:
  primary: mcnemar
  secondary: [fisher]
plan:
  expected: {{A: 0.74, B: 0.88}}
"""


DEMO_STUDY = _study_text()


def prepare_demo(folder, half: bool = True, operator: str = "demo") -> Path:
    """Write, lock and (``half``) half-run the demo study in ``folder``; reuse a locked one.

    Returns
    -------
    pathlib.Path
        The study folder.
    """
    from evalsim.study.errors import StudyError
    from evalsim.study.lock import LOCK_FILE, lock_study
    from evalsim.study.web.console import ConsoleStudy

    d = Path(folder)
    if (d / LOCK_FILE).exists():
        return d
    if d.exists() and not d.is_dir():
        raise StudyError(f"{d}: exists and is not a folder")
    if d.exists() and any(d.iterdir()):
        raise StudyError(f"{d}: not empty and not a locked study; give an empty folder")
    d.mkdir(parents=True, exist_ok=True)
    (d / "study.yaml").write_text(DEMO_STUDY, encoding="utf-8")
    lock_study(d, seed=DEMO_SEED)
    if half:
        cs = ConsoleStudy(d)
        cs.start_session("demo-session-0001", operator, list(cs.checklist))
        for t in cs.schedule[: len(cs.schedule) // 2]:
            run = cs.run_trial(f"demo-run-{t.trial}", t.trial)["run"]
            ok = run["suggested_outcome"] == "success"
            cs.record_outcome(
                f"demo-out-{t.trial}",
                t.trial,
                ok,
                None if ok else run["suggested_failure"],
                operator=operator,
            )
    return d
