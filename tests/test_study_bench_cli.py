"""``evalsim study serve`` and ``evalsim study demo`` (issue 42, items 1 and 5): the bench
extra named in one line when it is missing, bad folders refused, the --lan token, and the
half-run demo study."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cli_run import run
from study_console_helpers import make_locked_study, study_yaml

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.parametrize("module", ["starlette", "uvicorn"])
def test_serve_without_the_bench_extra_names_it(capsys, tmp_path, monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # import raises ModuleNotFoundError
    rc, out, err = run(capsys, "study", "serve", tmp_path)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "pip install 'evalsim[bench]'" in err
    assert module in err


def test_serve_refuses_a_folder_that_is_not_a_locked_study(capsys, tmp_path):
    pytest.importorskip("uvicorn")
    rc, _, err = run(capsys, "study", "serve", tmp_path)
    assert rc == 2 and err.count("\n") == 1 and "not locked" in err


def test_serve_refuses_a_bad_port(capsys, tmp_path):
    rc, _, err = run(capsys, "study", "serve", tmp_path, "--port", "70000")
    assert rc == 2 and "port must be in 1..65535" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_lan_mode_prints_token_url_and_qr_and_refuses_without_token(tmp_path):
    pytest.importorskip("uvicorn")
    pytest.importorskip("segno")
    folder = make_locked_study(tmp_path / "s", study_yaml(2))
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import sys; from evalsim.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", code, "study", "serve", str(folder), "--lan", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stdout.readline().decode()
        m = re.search(r"http://([0-9.]+):(\d+)/\?token=([A-Za-z0-9_\-]+)", first)
        assert m, first
        token = m.group(3)
        assert len(token) >= 32
        deadline = time.monotonic() + 30
        while True:  # bounded
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10)
        assert info.value.code == 401
        ok = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state?token={token}", timeout=10)
        assert ok.status == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    text = first + out.decode()
    assert "\u2580" in text or "\u2584" in text or "\u2588" in text  # the QR code as text
    for arm in ("armalphaqx", "armbravoqx"):
        assert arm not in text


@pytest.mark.slow
def test_demo_is_locked_and_half_run_on_the_mujoco_runner(capsys, tmp_path, monkeypatch):
    pytest.importorskip("mujoco")
    pytest.importorskip("uvicorn")
    from evalsim.study import open_study, plan

    monkeypatch.setattr(plan, "plan_study", lambda protocol: {"skipped": "test"})
    rc, out, err = run(capsys, "study", "demo", tmp_path / "demo", "--no-serve")
    assert rc == 0, err
    study = open_study(tmp_path / "demo")
    st = study.state()
    assert len(study.schedule) == 40 and st.done == 20
    assert st.next_trial.trial == study.schedule[20].trial and not st.out_of_order
    assert {a["name"]: a["runner"]["sigma_mm"] for a in study.protocol.data["arms"]} == {
        "A": 9.0,
        "B": 6.0,
    }
    for o in st.outcomes.values():  # the operator confirmed the physics' suggestion
        assert (o.event.payload["suggested"]["outcome"] == "success") == o.success
    rc, _, _ = run(capsys, "study", "demo", tmp_path / "demo", "--no-serve")  # reused
    assert rc == 0 and open_study(tmp_path / "demo").state().done == 20


def test_core_install_never_imports_the_web_stack():
    # the command, the study and the serve/demo parsers load without starlette or uvicorn
    code = (
        "import sys; import evalsim.cli, evalsim.study, evalsim.cli.study_bench; "
        "from evalsim.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('starlette', 'uvicorn', 'segno', 'jinja2') if m in sys.modules))"
    )
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
