"""The console app (issue 42, items 1-3, 6-7), in-process with Starlette's TestClient:
blinding on every route, submissions that cannot double, the guard, escaping, review."""

from __future__ import annotations

import json
import re
import time
import uuid

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from study_console_helpers import ARM_A, ARM_B, client, echo_runner, make_locked_study, study_yaml  # noqa: E402

# the tests share one study (module scope) and build on each other's outcomes: one worker runs
# them in order
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.xdist_group("study_console"),
]

ORIGIN = "http://127.0.0.1:8765"


def _id() -> str:
    return uuid.uuid4().hex


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("console")
    # arm B's command prints its own name and checkpoint: the pages must never show them
    runner_b = echo_runner(root, f"loading ckpt/{ARM_B}_v3 for {ARM_B}")
    runner_a = echo_runner(root, "loading ckpt/other_v1")
    return make_locked_study(root / "s", study_yaml(4, runner_a, runner_b))


def _post(c, path, body, **headers):
    h = {"origin": ORIGIN} | headers
    return c.post(path, content=json.dumps(body), headers={"content-type": "application/json"} | h)


def _checklist(c):
    return c.get("/api/state").json()["checklist"]


def test_every_route_is_blind_until_unblinding(study):
    """Crawl every route (pages, scripts, API, stream, review, artefacts) after a session,
    runner runs, outcomes, an undo and a review label: no arm name or arm-only word
    appears anywhere."""
    from evalsim.study.web.app import ROUTES

    with client(study) as c:
        _post(c, "/api/session", {"id": _id(), "operator": "Ann", "checklist": _checklist(c)})
        for _ in range(3):
            cur = c.get("/api/state").json()["current"]
            r = _post(c, "/api/run", {"id": _id(), "trial": cur["trial"]})
            assert r.status_code == 200, r.text
            r = _post(c, "/api/outcome", {"id": _id(), "trial": cur["trial"], "success": True})
            assert r.status_code == 200, r.text
        assert _post(c, "/api/undo", {"id": _id()}).status_code == 200
        items = c.get("/api/review").json()["items"]
        key = items[0]["key"]
        _post(c, "/api/review", {"id": _id(), "key": key, "success": False, "reviewer": "Bo"})
        bodies = {}
        for route in ROUTES:
            if route == "/api/stream":
                with c.stream("GET", route) as s:
                    for line in s.iter_lines():
                        if line.startswith("data:"):
                            bodies[route] = line
                            break
            elif route.startswith("/artefact"):
                for it in c.get("/api/review").json()["items"]:
                    for a in it["artefacts"]:
                        bodies[a] = c.get(f"/artefact/{a}").text
            elif route == "/static":
                for f in ("console.js", "console.css"):
                    bodies[f] = c.get(f"/static/{f}").text
            else:
                bodies[route] = c.get(route).text
        assert any("loading" in b for b in bodies.values())  # the runner output is shown
        assert len(bodies) >= len(ROUTES)
        for where, body in bodies.items():
            low = body.lower()
            for secret in (ARM_A, ARM_B):
                assert secret not in low, f"{where} names an arm"
        # the schedule's arm field never leaks either
        assert '"arm"' not in bodies["/api/state"]


def test_double_submission_is_recorded_once_and_second_outcome_refused(study):
    with client(study) as c:
        cur = c.get("/api/state").json()["current"]
        body = {"id": _id(), "trial": cur["trial"], "success": False, "failure": "dropped"}
        first = _post(c, "/api/outcome", body)
        again = _post(c, "/api/outcome", body)  # a double click or a retry: same id
        assert first.status_code == 200 and again.status_code == 200
        assert again.json()["duplicate"] and again.json()["event"] == first.json()["event"]
        other = _post(c, "/api/outcome", body | {"id": _id(), "success": True, "failure": None})
        assert other.status_code == 409
        assert f"trial {cur['trial']} already has an outcome" in other.json()["error"]
        from evalsim.study.web.console import ConsoleStudy

        mine = {body["id"], other.request.content and json.loads(other.request.content)["id"]}
        evs = [e for e in ConsoleStudy(study).events() if e.id in mine]
        assert [e.id for e in evs] == [body["id"]]
        nxt = c.get("/api/state").json()["current"]["trial"]
        assert nxt != cur["trial"]  # the page moves on to the next scheduled trial


def test_undo_is_an_event_and_reopens_the_trial(study):
    with client(study) as c:
        st = c.get("/api/state").json()
        cur = st["current"]["trial"]
        _post(c, "/api/outcome", {"id": _id(), "trial": cur, "success": True})
        last = c.get("/api/state").json()["last_outcome"]
        assert last["trial"] == cur
        stale = _post(c, "/api/undo", {"id": _id(), "expected": "someoneelse"})
        assert stale.status_code == 409
        r = _post(c, "/api/undo", {"id": _id(), "expected": last["event"]})
        assert r.status_code == 200 and r.json()["cancels"] == last["event"]
        assert c.get("/api/state").json()["current"]["trial"] == cur
        from evalsim.study.web.console import ConsoleStudy

        undo = [e for e in ConsoleStudy(study).events() if e.kind == "undo"][-1]
        assert undo.cancels == last["event"]


def test_runner_failure_is_logged_and_rerunnable(tmp_path):
    folder = make_locked_study(
        tmp_path / "s",
        study_yaml(2, echo_runner(tmp_path, "no camera", 4), echo_runner(tmp_path, "no camera", 4)),
    )
    with client(folder) as c:
        cur = c.get("/api/state").json()["current"]["trial"]
        r1 = _post(c, "/api/run", {"id": _id(), "trial": cur}).json()["run"]
        r2 = _post(c, "/api/run", {"id": _id(), "trial": cur}).json()["run"]
        assert (r1["ok"], r1["exit_code"], r1["attempt"]) == (False, 4, 1)
        assert r2["attempt"] == 2 and r2["output_tail"] == "no camera"
        state = c.get("/api/state").json()
        assert state["done"] == 0 and state["current"]["run"]["ok"] is False


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"trial": "T999", "success": True}, 404, "not in the schedule"),
        ({"trial": "T001", "success": "yes"}, 400, "success: expected true or false"),
        ({"trial": "T001", "success": False, "failure": "exploded"}, 400, "not a failure type"),
        ({"trial": "T001", "success": True, "note": "x" * 3000}, 400, "note: at most"),
    ],
)
def test_bad_outcomes_are_refused_clearly(study, body, status, words):
    with client(study) as c:
        r = _post(c, "/api/outcome", {"id": _id()} | body)
        assert r.status_code == status and words in r.json()["error"]


def test_missing_client_id_is_refused(study):
    with client(study) as c:
        r = _post(c, "/api/outcome", {"trial": "T001", "success": True})
        assert r.status_code == 400 and "client-made id" in r.json()["error"]


def test_session_needs_name_and_every_checklist_item(study):
    with client(study) as c:
        items = _checklist(c)
        r = _post(c, "/api/session", {"id": _id(), "operator": "Ann", "checklist": items[:-1]})
        assert r.status_code == 400 and "checklist" in r.json()["error"]
        r = _post(c, "/api/session", {"id": _id(), "operator": " ", "checklist": items})
        assert r.status_code == 400 and "operator: required" in r.json()["error"]


def test_pause_is_stored(study):
    with client(study) as c:
        assert _post(c, "/api/pause", {"id": _id(), "paused": True}).status_code == 200
        assert c.get("/api/state").json()["paused"] is True
        assert _post(c, "/api/pause", {"id": _id(), "paused": False}).status_code == 200
        assert c.get("/api/state").json()["paused"] is False


def test_html_in_notes_and_names_stays_text(study):
    evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    with client(study) as c:
        _post(c, "/api/session", {"id": _id(), "operator": evil[:80], "checklist": _checklist(c)})
        cur = c.get("/api/state").json()["current"]["trial"]
        _post(c, "/api/outcome", {"id": _id(), "trial": cur, "success": True, "note": evil})
        for route in ("/", "/mirror", "/review"):
            page = c.get(route).text
            assert "<img src=x" not in page and "<script>alert" not in page
        js = c.get("/static/console.js").text
        assert "innerHTML" not in js  # data reaches the page through textContent only
        # JSON carries the note as data, escaped by the JSON encoder
        assert json.loads(c.get("/api/state").text)["recent"][0]["outcome"]["note"] == evil


@pytest.mark.parametrize(
    "path",
    [
        "../study.yaml",
        "/etc/passwd",
        "runs/../lock.json",
        "lock.json",
        "trials.sqlite",
        "runs/%2e%2e/lock.json",
        "runs/T001/../../lock.json",
    ],
)
def test_artefact_paths_cannot_leave_the_runs_folder(study, path):
    with client(study) as c:
        r = c.get(f"/artefact/{path}")
        assert r.status_code == 404
        assert ARM_A not in r.text and ARM_B not in r.text


def test_artefact_symlink_out_of_the_folder_is_refused(study):
    link = study / "runs" / "sneaky.json"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(study / "lock.json")
    try:
        with client(study) as c:
            assert c.get("/artefact/runs/sneaky.json").status_code == 404
    finally:
        link.unlink()


def test_writes_need_json_bounded_bodies_and_the_same_origin(study):
    with client(study) as c:
        r = c.post(
            "/api/outcome",
            content="trial=T001",
            headers={"origin": ORIGIN, "content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 415
        big = json.dumps({"id": _id(), "note": "x" * 20000})
        r = c.post(
            "/api/outcome",
            content=big,
            headers={"origin": ORIGIN, "content-type": "application/json"},
        )
        assert r.status_code == 413
        r = _post(
            c,
            "/api/outcome",
            {"id": _id(), "trial": "T001", "success": True},
            origin="http://evil.example",
        )
        assert r.status_code == 403
        r = c.post(
            "/api/outcome",
            content="[1,",
            headers={"origin": ORIGIN, "content-type": "application/json"},
        )
        assert r.status_code == 400 and "not JSON" in r.json()["error"]


def test_unknown_host_is_refused_on_loopback(study):
    with client(study) as c:
        assert c.get("/api/state", headers={"host": "attacker.example"}).status_code == 400


def test_lan_mode_requires_the_token(study):
    token = "tok_" + uuid.uuid4().hex
    with client(study, token=token, allowed_hosts=None) as c:
        assert c.get("/").status_code == 401
        assert c.get("/api/state").status_code == 401
        assert c.get("/api/state?token=wrong").status_code == 401
        r = c.get(f"/?token={token}")
        assert r.status_code == 200 and "evalsim_token" in r.headers["set-cookie"]
        assert (
            "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
        )
        assert c.get("/api/state").status_code == 200  # the cookie now carries it
        # a write with the cookie but from another origin is refused
        r = _post(c, "/api/pause", {"id": _id(), "paused": False}, origin="http://evil.example")
        assert r.status_code == 403
        # a write without Origin needs the Bearer header, not only the cookie
        r = c.post(
            "/api/pause",
            content=json.dumps({"id": _id(), "paused": False}),
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 403
        c.cookies.clear()
        r = c.post(
            "/api/pause",
            content=json.dumps({"id": _id(), "paused": False}),
            headers={"content-type": "application/json", "authorization": f"Bearer {token}"},
        )
        assert r.status_code == 200


def test_stream_pushes_the_new_state_after_a_write(study):
    with client(study) as c:
        with c.stream("GET", "/api/stream") as s:
            lines = s.iter_lines()
            first = json.loads(next(ln for ln in lines if ln.startswith("data:"))[5:])
            _post(c, "/api/pause", {"id": _id(), "paused": not first["paused"]})
            second = json.loads(next(ln for ln in lines if ln.startswith("data:"))[5:])
            assert second["paused"] is (not first["paused"])
            assert second["version"] > first["version"]


def test_unblinded_state_names_the_arms(tmp_path):
    folder = make_locked_study(tmp_path / "s", study_yaml(2))
    from evalsim.study.web.console import ConsoleStudy

    cs = ConsoleStudy(folder)
    assert "arm" not in (cs.state()["current"] or {})
    cs.store.append("unblind", {"by": "Lead"}, event_id="unblind-test")
    cur = ConsoleStudy(folder).state()["current"]
    assert cur["arm"] in (ARM_A, ARM_B)


def test_review_is_shuffled_blind_and_keyed(study):
    with client(study) as c:
        items = c.get("/api/review").json()["items"]
        assert items and all(re.fullmatch(r"[0-9a-f]{10}", it["key"]) for it in items)
        text = json.dumps(items)
        assert '"code"' not in text and '"trial"' not in text
        assert not re.search(r"T0\d\d", text)  # no trial id, not even in artefact paths
        r = _post(
            c, "/api/review", {"id": _id(), "key": "0000000000", "success": True, "reviewer": "Bo"}
        )
        assert r.status_code == 404


def test_stop_shows_the_rule_decided_and_not_who_won(tmp_path):
    folder = make_locked_study(tmp_path / "s", study_yaml(2))
    from evalsim.study import open_study

    open_study(folder).store.append(
        "stop", {"status": "stop", "verdict": f"{ARM_B} better"}, event_id="stop-test-0001"
    )
    with client(folder) as c:
        st = c.get("/api/state").json()
        assert st["stopped"] and st["stop_message"] == "stop: the pre-registered rule has decided"
        text = c.get("/api/state").text + c.get("/").text
        assert "better" not in text and ARM_B not in text


def test_an_entry_from_another_process_reaches_the_pages_within_a_second(study):
    from evalsim.study import open_study

    with client(study) as c:
        with c.stream("GET", "/api/stream") as s:
            lines = s.iter_lines()
            first = json.loads(next(ln for ln in lines if ln.startswith("data:"))[5:])
            other = open_study(study)  # another writer: its own connection, like `study record`
            trial = first["current"]["trial"]
            t0 = time.monotonic()
            other.record(trial, "failure", failure="missed", event_id=_id())
            second = json.loads(next(ln for ln in lines if ln.startswith("data:"))[5:])
            assert second["done"] == first["done"] + 1
            assert time.monotonic() - t0 < 1.0


def naive_out_of_order(n: int, ops) -> dict:
    """Plain reference of the out-of-order flags: an outcome is out of order when a trial
    scheduled before it is open (no active outcome) at the moment it is recorded."""
    open_idx, active, flags = set(range(n)), {}, {}
    for kind, i in ops:
        if kind == "outcome" and i in open_idx:
            flags[i] = i != min(open_idx)
            open_idx.discard(i)
            active[i] = True
        elif kind == "undo" and i in active:
            del active[i]
            open_idx.add(i)
    return {i: flags[i] for i in active}


def test_derive_state_flags_out_of_order_like_the_plain_reference():
    import random

    from evalsim.study.schedule import ScheduledTrial
    from evalsim.study.state import derive_state
    from evalsim.study.store import Event

    n = 12
    sched = [
        ScheduledTrial(f"T{i:03d}", i, "c", "p", 0.0, 0.0, "b", 1, "a", "CODE", 1) for i in range(n)
    ]
    rng = random.Random(5)
    for _ in range(200):
        ops, events, last_out = [], [], {}
        for seq in range(1, 30):
            i = min(n - 1, int(rng.expovariate(0.4)) + sum(1 for k in last_out))
            i = rng.randrange(n) if rng.random() < 0.3 else i % n
            if i in last_out and rng.random() < 0.5:
                ev = Event(seq, f"u{seq}", "undo", None, last_out.pop(i), {}, "", "")
                ops.append(("undo", i))
            elif i not in last_out:
                ev = Event(seq, f"o{seq}", "outcome", f"T{i:03d}", None, {"success": True}, "", "")
                last_out[i] = ev.id
                ops.append(("outcome", i))
            else:
                continue
            events.append(ev)
        st = derive_state(sched, events)
        got = {o.trial.index: o.out_of_order for o in st.outcomes.values()}
        assert got == naive_out_of_order(n, ops)
