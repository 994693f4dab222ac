"""Locked studies for the console tests (issue 42): small, with distinctive arm names so a
crawl can search every answer for them."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
import yaml

#: Arm names no page would contain by chance.
ARM_A, ARM_B = "armalphaqx", "armbravoqx"


def study_yaml(
    positions: int = 4,
    runner_a: str | None = None,
    runner_b: str | None = None,
    title: str = f"{ARM_A} vs {ARM_B}",
    failure_types=("missed", "pushed", "dropped", "held_low"),
    grid: tuple[int, int] | None = None,
) -> str:
    """The demo study (:data:`evalsim.study.demo.DEMO_STUDY`: two arms, two object blocks,
    paired, McNemar) made small: arms :data:`ARM_A` and :data:`ARM_B`, run by ``runner_a`` and
    ``runner_b`` (YAML flow mappings; no runner by default), ``positions`` listed positions (or
    a ``(rows, columns)`` grid), no secondary analysis and no plan."""
    from evalsim.study.demo import DEMO_STUDY

    study = yaml.safe_load(DEMO_STUDY)
    study["title"] = title
    study["question"]["primary"] = {"a": ARM_A, "b": ARM_B}
    study["arms"] = [
        {"name": name} | ({"runner": yaml.safe_load(runner)} if runner else {})
        for name, runner in ((ARM_A, runner_a), (ARM_B, runner_b))
    ]
    if grid is None:
        where = {
            "list": [
                {"name": f"P{i + 1:02d}", "x_cm": 17 + 2 * (i % 5), "y_cm": -6 + 3 * (i // 5)}
                for i in range(positions)
            ]
        }
        n = positions
    else:
        rows, cols = grid
        where = {"grid": {"rows": rows, "columns": cols, "spacing_cm": 2.5, "origin_cm": [17, -6]}}
        n = rows * cols
    study["conditions"]["positions"] = where
    study["rubric"]["failure_types"] = list(failure_types)
    study["design"]["n"] = n
    study["analysis"]["secondary"] = []
    del study["plan"]
    return yaml.safe_dump(study, sort_keys=False)


def make_locked_study(folder: Path, text: str, seed: int = 11) -> Path:
    """Write ``text`` as ``folder/study.yaml`` and lock it (without sheets, and without the
    plan's power search, which these tests do not read)."""
    from evalsim.study import plan
    from evalsim.study.lock import lock_study

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.yaml").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plan, "plan_study", lambda protocol: {"skipped": "console tests"})
        lock_study(folder, seed=seed, sheets=False)
    return folder


def echo_runner(script_dir: Path, text: str, code: int = 0) -> str:
    """A command-runner spec (YAML flow mapping) that prints ``text`` and exits ``code``."""
    script = script_dir / f"echo_{abs(hash((text, code)))}.py"
    script.write_text(f"import sys\nprint({text!r})\nsys.exit({code})\n")
    return f"{{kind: command, command: '{sys.executable} {script} {{trial}}', timeout_s: 30}}"


@contextlib.contextmanager
def client(folder: Path, **kw):
    """A Starlette TestClient on the console app of ``folder`` (127.0.0.1)."""
    from starlette.testclient import TestClient

    from evalsim.study.web.app import create_app

    app = create_app(folder, **kw)
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:
        yield c
