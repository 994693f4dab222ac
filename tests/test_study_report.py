"""The study report: JSON against its versioned schema, the headline's numbers against SciPy and
statsmodels, the null verdict's wording, the blinding of every output, escaping of user
strings, deviations and amendments in both reports, the export read back by
``evalsim compare``, the paper run-sheet import, and the HTML in headless Chromium."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess

import jsonschema
import naive_unconditional as naive
import pytest
from cli_run import run, run_json
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.study import init_study, lock_study, open_study
from evalsim.study.example import EXAMPLE_STUDY
from evalsim.study.report import REPORT_SCHEMA, REPORT_SCHEMA_VERSION, write_report
from evalsim.study.schema import PRIMARY_TESTS, STUDY_SCHEMA

HOSTILE_RUBRIC = "Cube in bin <img src=x onerror=alert(1)> & no touch"
# the outcomes of (baseline, candidate) on the 20 conditions, in schedule order
PATTERN = [(1, 1)] * 6 + [(0, 1)] * 8 + [(1, 0)] * 1 + [(0, 0)] * 5


def _make(
    base, name, pattern, title="Cube <script>alert(1)</script> study", seed=21, secondary=None
):
    d = base / name
    init_study(d)
    text = EXAMPLE_STUDY.replace("title: Cube to bin, baseline vs candidate", f'title: "{title}"')
    if secondary is not None:  # the secondary tests declared instead of the example's
        every = f"secondary: [{', '.join(secondary)}]"
        text = text.replace("secondary: [fisher, boschloo]", every)
        assert every in text
    text = text.replace(
        'The cube rests inside the bin within 60 s of "go", with no human touch after "go".',
        HOSTILE_RUBRIC,
    )
    (d / "study.yaml").write_text(text)
    lock_study(d, seed=seed, sheets=False)
    s = open_study(d)
    by_cond: dict[str, dict] = {}
    for t in s.schedule:
        by_cond.setdefault(t.condition, {})[t.arm] = t
    for (ca, cb), trials in zip(pattern, by_cond.values(), strict=False):
        for arm, ok in (("baseline", ca), ("candidate", cb)):
            t = trials[arm]
            s.record(t.trial, bool(ok), failure=None if ok else "dropped", note="<b>n</b>")
    return s


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    base = tmp_path_factory.mktemp("report")
    return {
        "effect": _make(base, "effect", PATTERN),
        "null": _make(base, "null", [(1, 1)] * 10 + [(1, 0)] * 3 + [(0, 1)] * 3 + [(0, 0)] * 4),
    }


@pytest.fixture(scope="module")
def effect_report(studies):
    paths, doc = write_report(studies["effect"])
    return paths, doc


def test_json_follows_its_versioned_schema(effect_report, studies):
    paths, doc = effect_report
    on_disk = json.loads(paths["json"].read_text())
    assert on_disk["schema_version"] == REPORT_SCHEMA_VERSION == 1
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(on_disk)
    _, null_doc = write_report(studies["null"])
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(json.loads(json.dumps(null_doc)))


def test_headline_numbers_against_scipy_and_statsmodels(effect_report, studies):
    _, doc = effect_report
    h = doc["headline"]
    a_only = sum(1 for a, b in PATTERN if a and not b)
    b_only = sum(1 for a, b in PATTERN if b and not a)
    assert (h["counts"]["a_only"], h["counts"]["b_only"], h["counts"]["pairs"]) == (1, 8, 20)
    want = binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert h["pvalue"] == pytest.approx(want, rel=1e-12)
    assert h["rejects"] == bool(want < 0.05) and h["direction"] == "b-better"
    codes = studies["effect"].codes
    assert h["verdict"] == f"{codes['candidate']} detected better than {codes['baseline']}"
    for arm, col in zip(doc["arms"], (0, 1), strict=True):
        k = sum(p[col] for p in PATTERN)
        assert (arm["k"], arm["n"]) == (k, 20)
        assert arm["wilson"] == pytest.approx(proportion_confint(k, 20, method="wilson"), abs=1e-9)
        assert arm["clopper_pearson"] == pytest.approx(
            proportion_confint(k, 20, method="beta"), abs=1e-9
        )
        assert arm["failure_types"] == ({"dropped": 20 - k} if k < 20 else {})
    assert doc["progress"] == {"done": 40, "total": 40, "complete": True}
    assert [x["note"] for x in doc["secondary"]] == ["secondary: not pre-registered as primary"] * 2


def test_null_reads_not_detected_never_equal(studies):
    _, doc = write_report(studies["null"])
    text = doc["headline"]["text"]
    assert "not detected at this n; the study could have detected a difference of at least" in text
    assert "with 80% power" in text and "equal" not in text.lower()
    # recorded in a sorted pattern (all joint successes first): the time checks flag it, and
    # the verdict is qualified beside it
    assert "not exchangeable over time" in text and doc["headline"]["qualifications"]
    x = doc["headline"]["mde"]["mde"]
    assert f"at least {100 * x:.0f} percentage points" in text
    # the MDE is where exact McNemar power at the planned discordance reaches 80%
    psi = doc["headline"]["mde"]["discordance"]
    from test_study_protocol import _naive_mcnemar_power

    assert _naive_mcnemar_power(20, (psi + x) / 2, (psi - x) / 2, 0.05) >= 0.8 - 1e-9
    assert _naive_mcnemar_power(20, (psi + x - 0.01) / 2, (psi - x + 0.01) / 2, 0.05) < 0.8


def test_blind_until_unblinded_then_named(tmp_path, studies, capsys):
    d = tmp_path / "b"
    shutil.copytree(studies["null"].folder, d)
    s = open_study(d)
    paths, _ = write_report(s)
    texts = [p.read_text() for p in paths.values()]
    texts.append(run(capsys, "study", "status", d, "--json")[1])
    texts.append(run(capsys, "study", "export", d)[1])
    for t in texts:
        assert "baseline" not in t and "candidate" not in t
        assert s.codes["baseline"] in t
    rc, out, err = run(capsys, "study", "unblind", d, "--by", "Ana <ana@lab>")
    assert rc == 0 and "baseline" in out
    assert [e.kind for e in s.events()][-1] == "unblind"
    paths, doc = write_report(s)
    assert doc["blind"] is False and doc["unblinded"]["by"] == "Ana <ana@lab>"
    html = paths["html"].read_text()
    assert "candidate" in html and "Ana &lt;ana@lab&gt;" in html


def test_user_strings_are_escaped(effect_report):
    paths, _ = effect_report
    html = paths["html"].read_text()
    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; no touch" in html
    assert "<script" not in html.lower()  # the page carries no script at all
    assert re.search(r'src="(?!data:image/png;base64,)', html) is None  # nothing external


def test_deviations_amendment_and_undo_in_both_reports(tmp_path, studies, capsys):
    d = tmp_path / "dev"
    shutil.copytree(studies["null"].folder, d)
    s = open_study(d)
    last = s.events()[-1]
    s.undo(last.id, why="video <lost>")
    (d / "study.yaml").write_text(
        (d / "study.yaml").read_text().replace("alpha: 0.05", "alpha: 0.1")
    )
    rc, out, err = run(capsys, "study", "amend", d, "--why", "alpha was a typo")
    assert rc == 0, err
    new = tmp_path / "dev-amend1"
    assert (new / "lock.json").is_file() and (d / "lock.json").is_file()
    assert run(capsys, "study", "status", d)[0] == 0  # the old study is whole again
    old_doc = write_report(open_study(d))[1]
    new_doc = write_report(open_study(new))[1]
    old_dev, new_dev = old_doc["deviations"], new_doc["deviations"]
    assert old_dev["undone"][0]["why"] == "video <lost>"
    assert old_dev["amendments"][0]["kind"] == "amended_by"
    assert old_dev["amendments"][0]["why"] == "alpha was a typo"
    assert new_dev["amendments"][0]["kind"] == "amends"
    assert new_dev["amendments"][0]["study_sha256"] == old_doc["study"]["study_sha256"]
    assert new_doc["study"]["study_sha256"] != old_doc["study"]["study_sha256"]
    assert "video &lt;lost&gt;" in (d / "report" / "report.html").read_text()


def test_export_is_read_and_paired_by_evalsim_compare(tmp_path, studies, capsys):
    s = studies["effect"]
    out = tmp_path / "log.csv"
    rc, _, err = run(capsys, "study", "export", s.folder, "--out", out)
    assert rc == 0, err
    res = run_json(capsys, "compare", out, "--a", s.codes["baseline"], "--b", s.codes["candidate"])
    assert res["paired"] is True and res["n_pairs"] == 20
    assert res["mcnemar_p"] == pytest.approx(binomtest(1, 9, 0.5).pvalue, rel=1e-12)
    rc, _, err = run(capsys, "study", "export", s.folder, "--out", tmp_path / "log.parquet")
    assert rc == 0, err
    import pandas as pd

    df = pd.read_parquet(tmp_path / "log.parquet")
    assert len(df) == 40 and set(df["policy"]) == set(s.codes.values())


def test_import_from_paper_run_sheet(tmp_path, studies, capsys):
    d = tmp_path / "imp"
    init_study(d)
    lock_study(d, seed=3, sheets=False)
    s = open_study(d)
    t = s.schedule
    csv = tmp_path / "sheet.csv"
    csv.write_text(
        "trial,code,outcome,failure,note\n"
        f"{t[0].trial},{t[0].code},S,,\n"
        f"{t[1].trial},{t[1].code},F,timeout,slow\n"
        f"{t[3].trial},,failure,,\n"
    )
    rc, out, err = run(capsys, "study", "import", d, csv, "--json")
    assert rc == 0, err
    res = json.loads(out)
    assert res["recorded"] == 3 and res["out_of_order"] == [t[3].trial]
    rc, out, err = run(capsys, "study", "import", d, csv, "--json")
    assert rc == 0 and json.loads(out)["already"] == 3  # the same file twice: recorded once
    assert len(s.events()) == 3
    for body, word in (
        ("trial,outcome\nT999,S\n", "T999"),
        (f"trial,outcome\n{t[5].trial},maybe\n", "maybe"),
        (f"trial,outcome,code\n{t[5].trial},S,ZZZZ\n", "ZZZZ"),
        (f"trial,outcome\n{t[5].trial},S\n{t[5].trial},F\n", "twice"),
        (f"trial,outcome\n{t[0].trial},F\n", "already has an outcome"),
        ("outcome\nS\n", "missing column 'trial'"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(body)
        rc, out, err = run(capsys, "study", "import", d, bad)
        assert rc == 2 and word in err and "bad.csv" in err and err.count("\n") == 1, err
    assert len(s.events()) == 3  # a bad file writes nothing


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.xdist_group("study-browser")
def test_report_in_headless_chromium_matches_the_json(effect_report, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium on PATH (make test installs Debian's chromium as root)")
    paths, doc = effect_report
    res = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            paths["html"].as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-500:]
    dom = res.stdout
    import html as html_lib

    head = re.search(r'<p id="headline" class="headline">(.*?)</p>', dom, re.S).group(1)
    assert html_lib.unescape(head) == doc["headline"]["text"]
    arms = re.search(r'<table id="arms">(.*?)</table>', dom, re.S).group(1)
    rows = re.findall(
        r"<tr><td>(.*?)</td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>", arms
    )
    assert [(html_lib.unescape(a), int(k), int(n)) for a, k, n in rows] == [
        (a["arm"], a["k"], a["n"]) for a in doc["arms"]
    ]
    assert re.search(r'<span id="done">(\d+)</span>', dom).group(1) == str(doc["progress"]["done"])


def test_every_study_test_of_the_registry_is_computed_as_its_reference(tmp_path):
    """The study's tests are McNemar's, every unpaired test of the two-sample registry and the
    sequential rule; a paired study declaring every unpaired one as secondary gets each p-value
    as SciPy (Fisher) or the plain-Python grid supremum (the unconditional tests) computes it."""
    unpaired = list(TWO_SAMPLE_TESTS)
    assert list(PRIMARY_TESTS) == ["mcnemar", *unpaired, "sequential"]
    analysis = STUDY_SCHEMA["properties"]["analysis"]["properties"]
    assert analysis["primary"]["enum"] == list(PRIMARY_TESTS)
    assert analysis["secondary"]["items"]["enum"] == ["mcnemar", *unpaired]
    pattern = [(1, 1)] * 7 + [(0, 1)] * 6 + [(1, 0)] * 2 + [(0, 0)] * 5
    _, doc = write_report(_make(tmp_path, "all", pattern, seed=5, secondary=unpaired))
    ka, kb = sum(a for a, _ in pattern), sum(b for _, b in pattern)
    got = {x["test"]: x["pvalue"] for x in doc["secondary"]}
    assert list(got) == unpaired
    for tid, entry in TWO_SAMPLE_TESTS.items():
        if entry.certified:  # a supremum over the common rate: the grid's is a lower bound
            want = naive.pvalue(tid, ka, 20, kb, 20, "two-sided", grid=400)
            assert want - 1e-12 <= got[tid] == pytest.approx(want, rel=2e-3)
        else:
            module, name = entry.scipy.rsplit(".", 1)
            scipy_test = getattr(importlib.import_module(module), name)
            want = scipy_test([[ka, kb], [20 - ka, 20 - kb]]).pvalue
            assert got[tid] == pytest.approx(want, rel=1e-12)
