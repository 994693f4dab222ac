"""A study locked on a sequential design file from ``evalsim sequential design``: after each
completed pair the design decides continue or stop (checked against a plain replay of the
file's integer boundaries), the stop is recorded once with the certified error rate, and a
trial recorded after the stop is kept, flagged, and left out of the primary analysis."""

from __future__ import annotations

import json

import pytest
from cli_run import run
from naive_sequential_file import paired_file_stop
from study_helpers import study_copy

from evalsim.study import init_study, lock_study, open_study
from evalsim.study.report import report_document

# (baseline, candidate) per condition, in schedule order
PATTERN = [(0, 1), (1, 1), (0, 1), (0, 1), (0, 0), (0, 1), (0, 1), (1, 1), (0, 1), (0, 1)] + [
    (1, 0)
] * 10


@pytest.fixture(scope="module")
def seq_study(tmp_path_factory):

    from evalsim.cli import main

    d = tmp_path_factory.mktemp("seq") / "s"
    init_study(d)
    rc = main(
        [
            "sequential",
            "design",
            "--out",
            str(d / "design.json"),
            "--kind",
            "paired",
            "--n-max",
            "20",
            "--alternative",
            "two-sided",
            "--spending",
            "pocock",
        ]
    )
    assert rc == 0
    text = (d / "study.yaml").read_text()
    text = (
        text.replace("  n: 20 ", "  # n: 20 ")
        .replace("  # sequential: design.json", "  sequential: design.json")
        .replace("  primary: mcnemar ", "  primary: sequential ")
    )
    (d / "study.yaml").write_text(text)
    lock_study(d, seed=8, sheets=False)
    return d


def test_design_decides_after_each_pair_and_the_stop_is_recorded_once(seq_study, tmp_path):
    d = study_copy(seq_study, tmp_path)
    s = open_study(d)
    design = json.loads((d / "design.json").read_text())
    want_at, want_verdict = paired_file_stop(design, PATTERN)
    assert want_verdict == "b-better" and want_at < 20
    by_cond: dict[str, dict] = {}
    for t in s.schedule:
        by_cond.setdefault(t.condition, {})[t.arm] = t
    conds = list(by_cond.values())
    decisions = []
    for i, (ca, cb) in enumerate(PATTERN[: want_at + 1]):
        for arm, ok in (("baseline", ca), ("candidate", cb)):
            r = s.record(conds[i][arm].trial, bool(ok))
            decisions.append((i + 1, arm, r.decision, r.after_stop))
    # before the stop pair: continue; at its second trial: stop
    for pair, arm, dec, after in decisions:
        if pair < want_at or (pair == want_at and arm == "baseline"):
            assert dec["status"] == "continue" and not after, (pair, arm, dec)
        elif pair == want_at:
            assert dec["status"] == "stop" and dec["verdict"] == "b-better"
            assert dec["at"] == want_at
            assert dec["certified_type1"] == pytest.approx(design["certificate"]["max_type1_upper"])
        else:
            assert after, "the trial after the stop is flagged"
    stops = [e for e in s.events() if e.kind == "stop"]
    assert len(stops) == 1 and stops[0].payload["at"] == want_at
    st = s.state()
    assert [o.trial.trial for o in st.after_stop] == [
        conds[want_at]["baseline"].trial,
        conds[want_at]["candidate"].trial,
    ]
    doc = report_document(s)
    h = doc["headline"]
    assert h["counts"]["pairs"] == want_at  # after-stop trials never enter the primary analysis
    assert h["direction"] == "b-better" and h["rejects"]
    assert f"stopped at {want_at} pairs" in h["text"] and "certified false-win rate" in h["text"]
    assert doc["deviations"]["after_stop"] == [o.trial.trial for o in st.after_stop]


def test_record_prints_the_designs_decision(seq_study, tmp_path, capsys):
    d = study_copy(seq_study, tmp_path)
    s = open_study(d)
    assert run(capsys, "study", "status", d)[0] == 0
    first = s.schedule[0]
    rc, out, err = run(capsys, "study", "record", d, first.trial, "success", "--json")
    assert rc == 0, err
    assert json.loads(out)["decision"]["status"] == "continue"


def test_design_file_edit_after_lock_is_refused(seq_study, tmp_path, capsys):
    d = study_copy(seq_study, tmp_path)
    design = json.loads((d / "design.json").read_text())
    (d / "design.json").write_text(json.dumps(design, indent=4))
    rc, out, err = run(capsys, "study", "status", d)
    assert rc == 2 and "design file changed" in err


def test_design_whose_n_max_the_conditions_cannot_fill_is_refused(seq_study, tmp_path, capsys):
    d = study_copy(seq_study, tmp_path, "s2")
    (d / "lock.json").unlink()
    assert (
        run(
            capsys,
            "sequential",
            "design",
            "--out",
            d / "design.json",
            "--kind",
            "paired",
            "--n-max",
            "30",
        )[0]
        == 0
    )
    rc, out, err = run(capsys, "study", "lock", d)
    assert rc == 2 and "design.sequential" in err and "30" in err
