"""Shared fixtures. Tests are fast; none needs the full pipeline.

The one pipeline run (the smoke config, in a scratch copy of the workflow) is shared by every
worker of a ``pytest -n 2`` session: the first worker that needs it runs it under a file lock
in the session's common temporary folder, the others wait on the lock and read its outcome.
So its tests spread over the workers instead of queueing on one (issue 26). Tests treat the
run as read-only: a test that changes files works on its own copy (:func:`copy_smoke`).

A test that first runs pipelines of its own and compares with the smoke run only at its end
(the SLURM run, the kill -9 run, the one-core run) takes :func:`smoke_run_later` instead, and
such tests run first (:func:`pytest_collection_modifyitems`): their runs, mostly waiting on
Snakemake's job polling and a cluster, overlap the smoke run instead of following it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from waiting import wait_exit, wait_for

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")

os.environ.setdefault("MPLBACKEND", "Agg")
# The documents stay outside the repository; the pipeline runs of the tests (smoke copies in
# tmp folders, SLURM jobs) find them through $EVALSIM_DOCUMENTS, as a checkout finds them beside it.
DOCUMENTS = REPO.parent / "shared" / "seeds"
if DOCUMENTS.is_dir():
    os.environ.setdefault("EVALSIM_DOCUMENTS", str(DOCUMENTS))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture
def figure_style() -> Iterator[None]:
    """The figures' house style for one test, and every figure closed after it (a figure
    test module asks for it with ``pytestmark = pytest.mark.usefixtures("figure_style")``)."""
    import matplotlib.pyplot as plt

    from evalsim.figures import set_style

    set_style()
    yield
    plt.close("all")


def copy_workflow(dest: Path) -> Path:
    """Copy what the workflow needs (not results) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config", "workflow"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    return dest


def snakemake(cwd: Path, *args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    return subprocess.run(
        [SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@dataclass(frozen=True)
class SmokeRun:
    work: Path
    result: subprocess.CompletedProcess


def shared_dir(tmp_path_factory, worker_id: str) -> Path:
    """A folder every xdist worker of this session sees (the basetemp's parent under xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (blocks while another worker holds it)."""
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def run_once(root: Path, name: str, make) -> dict:
    """``make()`` once per session across workers; its JSON outcome is kept in ``root``.

    ``make`` returns a JSON-able dict; the first caller runs it under ``root/name.lock`` and
    writes ``root/name.json`` (atomically), later callers read that file.
    """
    done = root / f"{name}.json"
    with locked(root / f"{name}.lock"):
        if not done.is_file():
            tmp = done.with_suffix(".part")
            tmp.write_text(json.dumps(make()))
            tmp.replace(done)
    return json.loads(done.read_text())


def _completed(outcome: dict) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(
        outcome["args"], outcome["returncode"], outcome["stdout"], outcome["stderr"]
    )


def _outcome(res: subprocess.CompletedProcess) -> dict:
    return {
        "args": res.args,
        "returncode": res.returncode,
        "stdout": res.stdout,
        "stderr": res.stderr,
    }


# The smoke run's runner: a detached process that runs Snakemake and writes its outcome as JSON,
# atomically, so that any worker can wait for the file.
_RUNNER = """
import json, os, subprocess, sys
work, out, *cmd = sys.argv[1:]
try:
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=3000)
    outcome = {"returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr}
except Exception as exc:  # a timeout or a failed start: the waiters see it as a failed run
    outcome = {"returncode": -1, "stdout": "", "stderr": f"smoke run not completed: {exc!r}"}
with open(out + ".part", "w") as fh:
    json.dump({"args": cmd, **outcome}, fh)
os.replace(out + ".part", out)
"""


def start_smoke_run(root: Path) -> subprocess.Popen | None:
    """Start the smoke run in the background unless a worker of this session already did.

    Returns the process to the worker that started it (None to the others)."""
    try:  # O_EXCL: exactly one worker claims the start
        os.close(os.open(root / "smoke.started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None
    work = copy_workflow(root / "smoke" / "work")
    cmd = [SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"]
    return subprocess.Popen(
        [sys.executable, "-c", _RUNNER, str(work), str(root / "smoke_run.json"), *cmd],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture(scope="session")
def session_worker(request) -> str:
    """xdist's worker id ("gw0", ...), or "master" without workers or without xdist itself
    (mutmut runs pytest with the plugin off, where xdist's own ``worker_id`` fixture is
    missing)."""
    return getattr(request.config, "workerinput", {}).get("workerid", "master")


#: The fixtures that need the smoke run: with either, a test starts it early.
SMOKE_FIXTURES = frozenset({"smoke_run", "smoke_run_later"})


def pytest_collection_modifyitems(config, items):
    """The SLURM test, then the tests that overlap their own runs with the smoke run
    (:func:`smoke_run_later`), run first; the rest keep their order.

    xdist (``--dist loadgroup``) hands out work in this order (its largest group, the ledger
    review on the smoke run, still goes first): the long runs start beside the smoke run, and
    the short unit tests are left to even out the workers' ends."""
    # sorted() is stable: within each rank the collection order stays
    items[:] = sorted(
        items,
        key=lambda item: (
            item.get_closest_marker("slurm") is None,
            "smoke_run_later" not in item.fixturenames,
        ),
    )


@pytest.fixture(scope="session", autouse=True)
def smoke_run_started_early(request, tmp_path_factory, session_worker):
    """Start the smoke run at the session's start when a selected test needs it, so that it
    runs beside the unit tests instead of after them.

    The worker that started it waits for it at its own end, since another worker may still
    need it. (An interrupted session leaves it to finish on its own, in the session's tmp.)"""
    if not any(SMOKE_FIXTURES & set(item.fixturenames) for item in request.session.items):
        yield
        return
    proc = start_smoke_run(shared_dir(tmp_path_factory, session_worker))
    yield
    if proc is not None:
        wait_exit(proc, "the smoke pipeline run to finish", limit_s=3600)


def _wait_smoke_run(root: Path) -> SmokeRun:
    done = root / "smoke_run.json"
    wait_for(done.is_file, "the smoke pipeline run to finish", limit_s=3600, poll_s=2.0)
    return SmokeRun(root / "smoke" / "work", _completed(json.loads(done.read_text())))


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, session_worker) -> SmokeRun:
    """The whole workflow on config/smoke.yaml, run once per test session (all workers)."""
    root = shared_dir(tmp_path_factory, session_worker)
    start_smoke_run(root)  # a no-op when the session already started it
    return _wait_smoke_run(root)


@pytest.fixture(scope="session")
def smoke_run_later(tmp_path_factory, session_worker) -> Callable[[], SmokeRun]:
    """The smoke run (as :func:`smoke_run`), waited for only when the test calls this.

    For a test that first runs pipelines of its own and compares with the smoke run at the
    end: its work overlaps the smoke run instead of waiting for it."""
    root = shared_dir(tmp_path_factory, session_worker)
    start_smoke_run(root)  # a no-op when the session already started it
    return lambda: _wait_smoke_run(root)


def copy_smoke(smoke_run: SmokeRun, dest: Path) -> Path:
    """A private copy of the smoke run's folder (mtimes kept, so nothing looks out of date)."""
    shutil.copytree(smoke_run.work, dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def smoke_report(smoke_run, tmp_path_factory, session_worker) -> Path:
    """``results/report.html`` of the smoke run (``snakemake --report``), built once.

    With the workflow profile (``profiles/default``: the landing page's metadata), as
    ``snakemake --report`` in a checkout reads it."""
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    report = smoke_run.work / "results" / "report.html"

    def make() -> dict:
        profile = smoke_run.work / "profiles" / "default"
        shutil.copytree(REPO / "profiles" / "default", profile, dirs_exist_ok=True)
        args = ("--configfile", "config/smoke.yaml", "--report", str(report))
        return _outcome(snakemake(smoke_run.work, *args, timeout=600))

    res = _completed(run_once(shared_dir(tmp_path_factory, session_worker), "smoke_report", make))
    assert res.returncode == 0, res.stderr[-4000:]
    return report
