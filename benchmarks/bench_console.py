"""Time the console at the robot (issue 42), in one run, on 127.0.0.1 only.

Keys of ``--json``, each with its target:

- ``outcome_roundtrip_ms_p50`` (<= 30) and ``outcome_roundtrip_ms_p99`` (<= 150): over
  ``--submissions`` outcomes (default 1,000), the wall time from sending ``POST
  /api/outcome`` to the console under uvicorn, through the event stored (``synchronous=FULL``
  SQLite, one transaction), to the mirror's server-sent-events stream delivering the state
  that counts it;
- ``mujoco_runner_trial_seconds`` (<= 0.2): the median wall time of one SO-101 trial of the
  MuJoCo runner (lesson 25's A, sigma 9 mm) over ``--mujoco-trials`` trials, the scene
  already built; ``mujoco_scene_build_seconds`` is that one-off build.

Baselines measured in the same run: ``store_append_ms_p50``, one bare
:meth:`evalsim.study.store.EventStore.append` of an outcome in-process (the floor of a
round trip), and ``roundtrip_over_append`` their ratio. ``load_average_1min`` is recorded:
wall times follow the load of a shared machine.

The study is locked without its power plan (the console never reads it). Every loop is
bounded: a submission whose state does not arrive within 10 s ends the run with an error.

Usage: python benchmarks/bench_console.py [--json] [--submissions 1000] [--mujoco-trials 30]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from _common import print_result

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _study(folder: Path, pairs: int) -> Path:
    from evalsim.study import plan
    from evalsim.study.lock import lock_study

    cols = 20
    rows = -(-pairs // cols)
    text = f"""version: 1
title: console benchmark
question: {{primary: {{a: base, b: cand}}}}
arms: [{{name: base}}, {{name: cand}}]
conditions:
  positions: {{grid: {{rows: {rows}, columns: {cols}, spacing_cm: 1}}}}
rubric: {{success: lifted, failure_types: [missed, dropped]}}
design: {{paired: true, n: {rows * cols}}}
analysis: {{primary: mcnemar}}
"""
    folder.mkdir(parents=True)
    (folder / "study.yaml").write_text(text)
    plan.plan_study = lambda protocol: {"skipped": "benchmark"}
    lock_study(folder, seed=1, sheets=False)
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mirror(threading.Thread):
    """A mirror: reads the SSE stream and notes when each ``done`` count arrives."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.arrived: dict[int, float] = {}
        self.cond = threading.Condition()
        self.stop = False

    def run(self) -> None:
        con = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        con.request("GET", "/api/stream")
        resp = con.getresponse()
        while not self.stop:
            line = resp.fp.readline()
            if not line:
                return
            if line.startswith(b"data:"):
                done = json.loads(line[5:])["done"]
                with self.cond:
                    self.arrived.setdefault(done, time.perf_counter())
                    self.cond.notify_all()

    def wait_for(self, done: int, timeout: float = 10.0) -> float:
        deadline = time.perf_counter() + timeout
        with self.cond:
            while done not in self.arrived:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise RuntimeError(f"the mirror never showed {done} outcomes")
                self.cond.wait(left)
            return self.arrived[done]


def bench_roundtrip(submissions: int, workdir: Path) -> dict:
    from evalsim.study import open_study

    folder = _study(workdir / "rt", (submissions + 1) // 2)
    trials = [t.trial for t in open_study(folder).schedule][:submissions]
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    code = (
        "import sys; from evalsim.cli.study_bench import serve; "
        "serve(sys.argv[1], int(sys.argv[2]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(folder), str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # bounded: the server answers within 30 s or the run fails
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the console did not start") from None
                time.sleep(0.05)
        mirror = Mirror(port)
        mirror.start()
        mirror.wait_for(0)
        con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"content-type": "application/json", "origin": f"http://127.0.0.1:{port}"}
        ms = []
        for i, trial in enumerate(trials):
            body = json.dumps({"id": uuid.uuid4().hex, "trial": trial, "success": i % 3 != 0})
            t0 = time.perf_counter()
            con.request("POST", "/api/outcome", body, headers)
            resp = con.getresponse()
            resp.read()
            if resp.status != 200:
                raise RuntimeError(f"POST refused: {resp.status}")
            ms.append(1000.0 * (mirror.wait_for(i + 1) - t0))
        mirror.stop = True
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    q = statistics.quantiles(ms, n=100, method="inclusive")
    return {
        "outcome_roundtrip_ms_p50": round(statistics.median(ms), 2),
        "outcome_roundtrip_ms_p99": round(q[98], 2),
        "outcome_roundtrip_submissions": len(ms),
    }


def bench_append(workdir: Path, n: int = 200) -> float:
    from evalsim.study import open_study

    study = open_study(_study(workdir / "ap", n // 2))
    ms = []
    for t in study.schedule[:n]:
        t0 = time.perf_counter()
        study.store.append("outcome", {"success": True}, event_id=uuid.uuid4().hex, trial=t.trial)
        ms.append(1000.0 * (time.perf_counter() - t0))
    return statistics.median(ms)


def bench_mujoco(trials: int, workdir: Path) -> dict:
    from evalsim.study.runners import TrialRequest, make_runner

    runner = make_runner({"kind": "mujoco", "sigma_mm": 9.0}, workdir)
    t0 = time.perf_counter()
    runner.scene  # noqa: B018  (the one-off build, timed apart)
    build = time.perf_counter() - t0
    times = []
    for i in range(trials):
        req = TrialRequest(
            f"T{i:03d}",
            f"P{i % 20}",
            17.0 + 2.5 * (i % 5),
            -6.0 + 4.0 * (i % 4),
            "cube-1",
            workdir / "runs" / f"T{i:03d}",
        )
        t0 = time.perf_counter()
        runner.run(req)
        times.append(time.perf_counter() - t0)
    return {
        "mujoco_runner_trial_seconds": round(statistics.median(times), 4),
        "mujoco_runner_trial_seconds_max": round(max(times), 4),
        "mujoco_scene_build_seconds": round(build, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--submissions", type=int, default=1000)
    ap.add_argument("--mujoco-trials", type=int, default=30)
    args = ap.parse_args()
    if not 1 <= args.submissions <= 5000 or not 1 <= args.mujoco_trials <= 1000:
        ap.error("--submissions in 1..5000, --mujoco-trials in 1..1000")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        result = {"load_average_1min": round(os.getloadavg()[0], 2)}
        result.update(bench_roundtrip(args.submissions, work))
        append = bench_append(work)
        result["store_append_ms_p50"] = round(append, 2)
        result["roundtrip_over_append"] = round(result["outcome_roundtrip_ms_p50"] / append, 2)
        result.update(bench_mujoco(args.mujoco_trials, work))
    print_result(result, args.json)


if __name__ == "__main__":
    main()
