"""Blind review (issue 42, item 6): Cohen's kappa with its interval against a plain-Python
reference, the pairing of review labels with the live scoring, and the report's section."""

from __future__ import annotations

import math
import uuid

import numpy as np
import pytest
from scipy.stats import norm
from study_console_helpers import make_locked_study, study_yaml

from evalsim.study.review import cohens_kappa_interval, review_agreement


def naive_kappa(table, confidence=0.95):
    """Cohen (1960) kappa; its large-sample variance from Fleiss, Cohen and Everitt (1969,
    eq. 13), written out term by term."""
    t = [[float(v) for v in row] for row in table]
    k = len(t)
    n = sum(map(sum, t))
    p = [[v / n for v in row] for row in t]
    row = [sum(p[i]) for i in range(k)]
    col = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(p[i][i] for i in range(k))
    pe = sum(row[i] * col[i] for i in range(k))
    kappa = (po - pe) / (1 - pe)
    a = sum(p[i][i] * (1 - (row[i] + col[i]) * (1 - kappa)) ** 2 for i in range(k))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (col[i] + row[j]) ** 2 for i in range(k) for j in range(k) if i != j
    )
    c = (kappa - pe * (1 - kappa)) ** 2
    se = math.sqrt((a + b - c) / (n * (1 - pe) ** 2))
    z = norm.ppf(0.5 + confidence / 2)
    return kappa, kappa - z * se, kappa + z * se


@pytest.mark.parametrize(
    "table", [[[20, 5], [10, 15]], [[40, 1], [3, 6]], [[7, 0], [0, 3]], [[3, 9], [8, 2]]]
)
def test_kappa_and_interval_match_the_plain_reference(table):
    got = cohens_kappa_interval(table, 0.95)
    want = naive_kappa(table, 0.95)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_kappa_is_undefined_with_one_category_only():
    assert all(math.isnan(v) for v in cohens_kappa_interval([[9, 0], [0, 0]]))
    assert all(math.isnan(v) for v in cohens_kappa_interval([[0, 0], [0, 0]]))


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    from evalsim.study import open_study

    folder = make_locked_study(tmp_path_factory.mktemp("rev") / "s", study_yaml(4))
    study = open_study(folder)
    live = {}  # trial -> (success, failure)
    review = {}
    plan = [  # operator, reviewer
        ((True, None), (True, None)),
        ((True, None), (False, "dropped")),
        ((False, "pushed"), (False, "pushed")),
        ((False, "pushed"), (False, "missed")),  # both failures, types differ
        ((False, "dropped"), (True, None)),
        ((True, None), (True, None)),
    ]
    for t, (op, rv) in zip(study.schedule, plan, strict=False):
        study.record(t.trial, op[0], op[1], event_id=uuid.uuid4().hex)
        study.store.append(
            "review",
            {"success": rv[0], "failure": rv[1], "by": "Sam"},
            event_id=uuid.uuid4().hex,
            trial=t.trial,
        )
        live[t.trial], review[t.trial] = op, rv
    return study, live, review


def test_agreement_pairs_each_trial_with_its_review(reviewed):
    study, live, review = reviewed
    events = study.events()
    ag = review_agreement(study.state(events), events)
    # the 2 x 2 table, counted by hand from the plan above
    assert ag.table == [[2, 1], [1, 2]] and ag.n == 6 and ag.agree == 4
    want = naive_kappa(ag.table)
    assert ag.kappa == pytest.approx(want[0]) and ag.kappa_low == pytest.approx(want[1])
    assert sorted(d["trial"] for d in ag.disagreements) == sorted(
        t for t in live if live[t] != review[t]
    )
    assert all(d["code"] in study.codes.values() for d in ag.disagreements)


def test_an_undone_outcome_is_not_paired(reviewed):
    study, live, _ = reviewed
    st = study.state()
    first = st.ordered_outcomes()[0]
    events = study.events()
    ag_before = review_agreement(st, events)
    study.undo(first.event.id, why="test")
    events = study.events()
    ag = review_agreement(study.state(events), events)
    assert ag.n == ag_before.n - 1


def test_report_shows_kappa_and_disagreements(reviewed):
    from evalsim.study.report import REPORT_SCHEMA, report_document
    from evalsim.study.report_html import render_html

    study, _, _ = reviewed
    doc = report_document(study)
    import jsonschema

    jsonschema.validate(doc, REPORT_SCHEMA)
    assert doc["review"]["n"] >= 5 and doc["review"]["kappa"] is not None
    html = render_html(doc, study)
    assert 'id="review-kappa"' in html and "Cohen&#x27;s kappa" in html
    assert 'id="review-disagreements"' in html
