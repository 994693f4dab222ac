"""The documents' own Python: extracted at run time, run in a subprocess, checked at the edges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scipy.stats import beta, binom, fisher_exact

from evalsim.ledger.doccode import extract_snippets, run_document

RIGHT_CP = """
from scipy.stats import beta, binom, fisher_exact

def clopper_pearson(k, n, alpha=0.05):
    lower = 0.0 if k == 0 else beta.ppf(alpha / 2, k, n - k + 1)
    upper = 1.0 if k == n else beta.ppf(1 - alpha / 2, k + 1, n - k)
    return float(lower), float(upper)
"""
# The same with 004's edge handling: alpha instead of alpha/2, and 1 - ppf at k = 0.
WRONG_CP = """
from scipy.stats import beta, binom, fisher_exact

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


# Lesson 25's Build it functions as the document types them (plain Python, math.comb).
LESSON = """
import math

def wald(k, n, z=1.96):
    p = k / n
    h = z * math.sqrt(p * (1 - p) / n)
    return max(0.0, p - h), min(1.0, p + h)

def wilson(k, n, z=1.96):
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, c - h), min(1.0, c + h)

def binom_pmf(k, n, p):
    return math.comb(n, k) * p ** k * (1 - p) ** (n - k)

def coverage(interval, n, p, z=1.96):
    return sum(binom_pmf(k, n, p) for k in range(n + 1)
               if interval(k, n, z)[0] <= p <= interval(k, n, z)[1])

def trials_needed(p, half_width, z=1.96):
    n = 1
    while True:
        lo, hi = wilson(round(p * n), n, z)
        if (hi - lo) / 2 <= half_width:
            return n
        n += 1

def fisher_p(k1, n1, k2, n2):
    K, N = k1 + k2, n1 + n2
    pmf = {a: math.comb(n1, a) * math.comb(n2, K - a) / math.comb(N, K)
           for a in range(max(0, K - n2), min(K, n1) + 1)}
    return min(1.0, sum(q for q in pmf.values() if q <= pmf[k1] * (1 + 1e-7)))

def power(p1, p2, n, alpha=0.05):
    pm1 = [binom_pmf(k, n, p1) for k in range(n + 1)]
    pm2 = [binom_pmf(k, n, p2) for k in range(n + 1)]
    return sum(pm1[a] * pm2[b] for a in range(n + 1) for b in range(n + 1)
               if fisher_p(a, n, b, n) < alpha)
"""


def _rows(tmp_path, code) -> dict:
    return {r["function"]: r for r in run_document(_doc(tmp_path, code))}


def test_the_lessons_functions_are_checked_against_scipy_by_name(tmp_path):
    rows = _rows(tmp_path, LESSON)
    assert set(rows) == {
        "wald", "wilson", "binom_pmf", "coverage", "trials_needed", "fisher_p", "power"
    }  # fmt: skip
    assert all(r["right"] is True for r in rows.values()), rows
    # The references the rows were judged by, recomputed here with SciPy on grid points.
    from evalsim.ledger.doccode import FUNCTION_CHECKS

    k1, n1, k2, n2 = FUNCTION_CHECKS["fisher_p"].calls[-1]
    assert FUNCTION_CHECKS["fisher_p"].reference(k1, n1, k2, n2) == pytest.approx(
        fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue, rel=1e-12
    )
    assert FUNCTION_CHECKS["binom_pmf"].reference(3, 20, 0.1) == pytest.approx(
        binom.pmf(3, 20, 0.1), rel=1e-12
    )


@pytest.mark.parametrize(
    ("old", "new", "function", "where"),
    [
        # the observed table left out of the two-sided sum (a strict '<')
        ("q <= pmf[k1] * (1 + 1e-7)", "q < pmf[k1]", "fisher_p", "fisher_p("),
        # an edge: at p = 0 the pmf of k = 0 is 1, not 0
        ("return math.comb(n, k) * p", "return 0.0 if p == 0 else math.comb(n, k) * p",
         "binom_pmf", "binom_pmf(0, "),
        # the full width taken for the half-width
        ("if (hi - lo) / 2 <= half_width", "if (hi - lo) <= half_width", "trials_needed",
         "trials_needed("),
        # power at a one-sided level
        ("if fisher_p(a, n, b, n) < alpha", "if fisher_p(a, n, b, n) < 2 * alpha", "power",
         "power("),
    ],
)  # fmt: skip
def test_a_wrong_lesson_function_is_found(tmp_path, old, new, function, where):
    assert old in LESSON
    rows = _rows(tmp_path, LESSON.replace(old, new))
    assert rows[function]["right"] is False and rows[function]["max_abs_error"] > 1e-6
    assert rows[function]["worst_case"].startswith(where)
    others = {f for f, r in rows.items() if r["right"] is not True}
    # a wrong binom_pmf also spoils coverage and power, which call it; nothing else moves
    assert others <= {function, "coverage", "power"}


def test_a_function_that_raises_is_wrong_and_says_why(tmp_path):
    code = "import math\n\ndef binom_pmf(k, n, p):\n    return math.comb(n, k) / (1 - p)\n"
    (row,) = run_document(_doc(tmp_path, code))
    assert row["function"] == "binom_pmf" and row["right"] is False
    assert row["max_abs_error"] == float("inf") and "ZeroDivisionError" in row["worst_case"]


def test_document_000_and_001_functions_are_right(repo):
    env = os.environ.get("EVALSIM_DOCUMENTS")
    folder = Path(env) if env else repo.parent / "shared" / "seeds"
    docs = {d.name[:3]: d for d in folder.glob("00[01]_*.txt")}
    if len(docs) < 2:
        pytest.skip(f"documents not found at {folder} (set EVALSIM_DOCUMENTS)")
    lesson = {r["function"]: r for r in run_document(docs["000"])}
    for f in ("binom_pmf", "coverage", "trials_needed", "fisher_p", "power"):
        assert lesson[f]["right"] is True, lesson[f]
    design = {r["function"]: r for r in run_document(docs["001"])}
    assert design["mde"]["right"] is True and design["n_per_arm"]["right"] is True
    assert design["wald"]["right"] is False  # 001's wald is not clipped to [0, 1]
