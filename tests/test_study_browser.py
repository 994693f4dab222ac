"""The console in a real browser (issue 42, item 8): Debian's chromium driven by
Playwright's Python package through ``executable_path`` (no browser download), against the
console under uvicorn in a subprocess on 127.0.0.1.

- a whole 20-pair study through the operator page on the MuJoCo runner, by clicks, with the
  server killed with SIGKILL at a random moment, restarted, and resumed at the right trial;
- the 360 x 740 view shows the code, the position and the buttons without scrolling;
- the mirror follows the operator live (server-sent events), and the review page scores.

Skipped with a reason when chromium or playwright is missing. Set ``EVALSIM_SHOTS=DIR`` to
keep the screenshots.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip) is not installed")
pytest.importorskip("uvicorn", reason="the bench extra (uvicorn) is not installed")

from study_console_helpers import ARM_A, ARM_B, make_locked_study  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

CHROME_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SRC = Path(__file__).resolve().parents[1] / "src"


def _cli(*argv) -> subprocess.CompletedProcess:
    """``evalsim *argv`` in a fresh process (as an operator would type it)."""
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import sys; from evalsim.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, argv)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``evalsim.cli.study_bench.serve`` in its own process (so it can be SIGKILLed)."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder, self.port = folder, port
        self.proc = None

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        code = (
            "import sys; from evalsim.cli.study_bench import serve; "
            "serve(sys.argv[1], int(sys.argv[2]))"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, str(self.folder), str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder.parent / "server.log", "ab"),  # noqa: SIM115
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # bounded: the server answers or the test fails
            if self.proc.poll() is not None:
                raise RuntimeError((self.folder.parent / "server.log").read_text()[-2000:])
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the console did not start within 30 s")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _demo_like_study(folder: Path) -> Path:
    from evalsim.study.demo import DEMO_STUDY

    text = DEMO_STUDY.replace("name: A\n", f"name: {ARM_A}\n").replace(
        "name: B\n", f"name: {ARM_B}\n"
    )
    text = text.replace("{a: A, b: B}", f"{{a: {ARM_A}, b: {ARM_B}}}")
    text = text.replace("{A: 0.74, B: 0.88}", f"{{{ARM_A}: 0.74, {ARM_B}: 0.88}}")
    return make_locked_study(folder, text, seed=25)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
        yield b
        b.close()


def _shot(page, name: str) -> None:
    where = os.environ.get("EVALSIM_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / name))


def _in_view(page, selector: str, height: int = 740) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_whole_study_by_clicks_survives_kill9(tmp_path, browser):
    from evalsim.study.web.console import ConsoleStudy

    folder = _demo_like_study(tmp_path / "study")
    server = Server(folder, _free_port())
    server.start()
    acknowledged: set[str] = set()
    # the test drives the page with string predicates, which the page's own CSP forbids
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, bypass_csp=True)
    page = ctx.new_page()
    page.set_default_timeout(20000)
    # the mirror is a second screen: its own context, so neither page is a background tab
    mctx = browser.new_context(viewport={"width": 800, "height": 600}, bypass_csp=True)
    mirror = mctx.new_page()

    def on_response(resp):
        if resp.url.endswith("/api/outcome") and resp.status == 200:
            acknowledged.add(resp.json()["event"])

    page.on("response", on_response)
    try:
        page.goto(server.url + "/")
        page.fill("#session-operator", "Robin <i>")
        for box in page.locator("#checklist input").all():
            box.check()
        page.click("#session-start")
        page.wait_for_selector("#session", state="hidden")
        mirror.goto(server.url + "/mirror")

        # the phone view: code, position and every button without scrolling
        assert page.evaluate("window.scrollY") == 0
        for sel in ("#code", "#position", "#startstop", "#outcomes button >> nth=-1", "#undo"):
            assert _in_view(page, sel), f"{sel} is not visible at 360 x 740"
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        _shot(page, "operator-360x740.png")

        total = len(ConsoleStudy(folder).schedule)
        t_start = time.monotonic()
        # a random moment each run; EVALSIM_KILL_SEED replays one (it is in every message)
        kill_seed = int(os.environ.get("EVALSIM_KILL_SEED", time.time_ns() % 1_000_000))
        kill_at = random.Random(kill_seed).randrange(5, total - 5)
        killed = False
        done = 0
        guard = 0
        while done < total and guard < 3 * total:  # bounded
            guard += 1
            trial = page.text_content("#trial-id")
            page.click("#startstop")  # Start: the runner runs the arm's policy
            try:
                page.wait_for_function(
                    polling=50,
                    expression="document.getElementById('run-info').textContent"
                    ".startsWith('runner: done')",
                )
            except sync_api.TimeoutError:
                info = page.text_content("#run-info"), page.text_content("#status")
                log = (folder.parent / "server.log").read_text()[-1500:]
                raise AssertionError(
                    f"trial {trial}: no run result; page says {info}; {log}"
                ) from None
            page.click("#startstop")  # Stop
            page.click("#outcomes button.suggested")
            if not killed and done == kill_at:
                server.kill9()  # the outcome may or may not have been acknowledged
                killed = True
                server.start()
                # the page reconnects by itself (SSE) and shows the next scheduled trial
                # without an outcome in the store; a submission in flight at the kill is
                # either stored or retried by the page with the same id
                agreed, deadline = 0, time.monotonic() + 40
                # agreement held for 2 s: longer than the page's retries of a lost submission
                while agreed < 10 and time.monotonic() < deadline:  # bounded
                    st = ConsoleStudy(folder).derive()
                    expected = st.next_trial.trial if st.next_trial else None
                    shown = page.text_content("#trial-id")
                    quiet = page.text_content("#status") == ""
                    agreed = agreed + 1 if (shown == expected and quiet) else 0
                    page.wait_for_timeout(200)
                assert agreed >= 10, (
                    f"kill seed {kill_seed}: page shows {shown}, store's next is {expected}"
                )
                if os.environ.get("EVALSIM_TRACE"):
                    print(
                        f"kill -9 after {kill_at} outcomes (seed {kill_seed}); resumed at "
                        f"{expected}; acknowledged {len(acknowledged)}, stored {st.done}"
                    )
            else:
                page.wait_for_function(
                    polling=50,
                    expression=f"document.getElementById('trial-id').textContent !== {trial!r}"
                    " || !document.getElementById('done').hidden",
                )
            done = ConsoleStudy(folder).derive().done
            if os.environ.get("EVALSIM_TRACE"):
                print(f"{time.monotonic() - t_start:7.2f}s trial {trial} done {done}", flush=True)
            if done == 6:  # the mirror follows live
                mirror.wait_for_function(
                    polling=50,
                    expression="document.getElementById('progress-text').textContent"
                    ".startsWith('6 /')",
                )
                _shot(mirror, "mirror.png")
        assert killed and done == total
        page.wait_for_selector("#done", state="visible")
        st = ConsoleStudy(folder).derive()
        stored = {o.event.id for o in st.outcomes.values()}
        assert acknowledged <= stored, f"kill seed {kill_seed}"  # kill -9 lost none
        assert not st.out_of_order  # resumed at the right trial every time
        # every outcome is the operator's confirmation of the physics' suggestion, both stored
        for o in st.outcomes.values():
            sug = o.event.payload["suggested"]
            assert (sug["outcome"] == "success") == o.success
            assert o.event.payload["by"] == "Robin <i>"

        # blind review in the browser
        rev = ctx.new_page()
        rev.goto(server.url + "/review")
        rev.fill("#reviewer", "Sam")
        for _ in range(3):
            rev.locator("article.item:not(:has(.labelled)) button.success").first.click()
            rev.wait_for_timeout(150)
        rev.wait_for_function(
            polling=50, expression="document.querySelectorAll('.labelled').length >= 3"
        )
        rev.evaluate("window.scrollTo(0, 0)")
        _shot(rev, "review.png")
        html = page.content() + mirror.content() + rev.content()
        assert ARM_A not in html and ARM_B not in html
        assert "<i>" not in page.inner_html("#operator-name")  # escaped, shown as text

        # unblind from the command line; the report, opened in the browser, equals the
        # library's numbers on the exported log
        assert _cli("study", "unblind", folder, "--by", "Lead").returncode == 0
        assert _cli("study", "report", folder).returncode == 0
        assert _cli("study", "export", folder, "--out", tmp_path / "log.csv").returncode == 0
        doc = json.loads((folder / "report" / "report.json").read_text())
        lib = json.loads(
            _cli("compare", tmp_path / "log.csv", "--a", ARM_A, "--b", ARM_B, "--json").stdout
        )
        rep = ctx.new_page()
        rep.goto((folder / "report" / "report.html").as_uri())
        assert rep.text_content("#headline").strip() == doc["headline"]["text"].strip()
        assert int(rep.text_content("#done")) == doc["progress"]["done"] == total
        head = doc["headline"]
        assert head["pvalue"] == pytest.approx(lib["mcnemar_p"], rel=1e-12)
        assert (head["counts"]["k_a"], head["counts"]["k_b"]) == (lib["k_a"], lib["k_b"])
        assert doc["paired"]["interval"] == pytest.approx(lib["paired_intervals"]["tango"])
        assert doc["review"]["n"] == 3 and "kappa" in rep.text_content("#review-kappa")
        _shot(rep, "report.png")
    finally:
        ctx.close()
        mctx.close()
        server.stop()
