"""The documents' own Python: extracted at run time, run in a subprocess, checked at the edges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scipy.stats import beta

from evalsim.ledger.doccode import extract_snippets, run_document

RIGHT_CP = """
from scipy.stats import beta

def clopper_pearson(k, n, alpha=0.05):
    lower = 0.0 if k == 0 else beta.ppf(alpha / 2, k, n - k + 1)
    upper = 1.0 if k == n else beta.ppf(1 - alpha / 2, k + 1, n - k)
    return float(lower), float(upper)
"""
# The same with 004's edge handling: alpha instead of alpha/2, and 1 - ppf at k = 0.
WRONG_CP = """
from scipy.stats import beta

def clopper_pearson(k, n, alpha=0.05):
    if k <= 0:
        return 0.0, 1.0 - beta.ppf(alpha, 1, n)
    if k >= n:
        return beta.ppf(alpha, n, 1), 1.0
    return float(beta.ppf(alpha / 2, k, n - k + 1)), float(beta.ppf(1 - alpha / 2, k + 1, n - k))
"""


def _doc(tmp_path, code, prose="Some prose.\n\nMore prose: 42.\n"):
    path = tmp_path / "doc.txt"
    path.write_text(f"Intro line.\n\n{code}\n{prose}", encoding="utf-8")
    return path


def test_snippets_are_found_between_prose_with_their_lines(tmp_path):
    text = (
        "Intro.\n\nimport math\n\ndef f(x):\n    return x + 1\n\nThe text goes on.\nprint(f(1))\n"
    )
    (snip,) = extract_snippets(text)
    assert snip[:2] == (3, 6)
    assert snip[2] == "import math\n\ndef f(x):\n    return x + 1"


def test_a_right_clopper_pearson_passes_and_the_edge_bug_is_found(tmp_path):
    (row,) = run_document(_doc(tmp_path, RIGHT_CP))
    assert row["ran"] == "ok" and row["function"] == "clopper_pearson"
    assert row["right"] is True and row["max_abs_error"] <= 1e-12
    (row,) = run_document(_doc(tmp_path, WRONG_CP))
    assert row["right"] is False
    # The largest error on the grid is at k = 0 of n = 20: 1 - ppf(alpha; 1, n) against the
    # right upper bound ppf(1 - alpha/2; 1, n), both computed here.
    wrong, right = 1 - beta.ppf(0.05, 1, 20), beta.ppf(0.975, 1, 20)
    assert row["max_abs_error"] == pytest.approx(wrong - right, rel=1e-12)
    assert row["worst_case"].startswith("0/20: (0, 0.9974)")


def test_printed_lines_are_looked_up_in_the_document(tmp_path):
    code = "def width(k, n):\n    return 1.0\n\nprint('More prose: 42.')\nprint('absent 7')"
    (row,) = run_document(_doc(tmp_path, code))
    assert (row["printed_lines"], row["printed_in_document"]) == (2, 1)


def test_the_network_is_disabled_and_a_failing_snippet_is_reported(tmp_path):
    code = (
        "import socket\n\nsocket.create_connection(('example.org', 80))\n\n"
        "Prose.\n\nimport math\n\nx = undefined_name\n"
    )
    (row,) = run_document(_doc(tmp_path, code))
    assert "network disabled by evalsim.ledger" in row["ran"]
    assert "NameError" in row["ran"]


def test_document_004_clopper_pearson_is_wrong_at_the_edges(repo):
    env = os.environ.get("EVALSIM_DOCUMENTS")
    folder = Path(env) if env else repo.parent / "shared" / "seeds"
    docs = sorted(folder.glob("004_*.txt"))
    if not docs:
        pytest.skip(f"documents not found at {folder} (set EVALSIM_DOCUMENTS)")
    (row,) = [r for r in run_document(docs[0]) if r["function"] == "clopper_pearson"]
    assert row["right"] is False
    # 0/10 returns (0, 0.995); the right interval is (0, 0.308) (the numbers).
    assert 1 - beta.ppf(0.05, 1, 10) == pytest.approx(0.995, abs=5e-4)
    assert beta.ppf(0.975, 1, 10) == pytest.approx(0.308, abs=5e-4)
    assert row["worst_case"].startswith("0/")


def test_without_the_documents_the_table_says_so(tmp_path):
    from evalsim.ledger.doccode import document_code_table

    df = document_code_table(tmp_path / "absent")
    # the same bytes wherever it runs: the row names no folder
    assert df["ran"].tolist() == ["no documents (*.txt) found; set EVALSIM_DOCUMENTS"]
