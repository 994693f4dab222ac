"""Table notes and the claims ledger cannot disagree (issue 23, item 3).

A note that judges a document's number (T14's "not one in six", T26's "a generous rounding",
T08's "self-consistent") says what the ledger's verdict on that claim says: each check below
pairs a phrase of a note with the claims it talks about and the verdicts the phrase means.
The phrase must be in the note exactly when every such claim has one of those verdicts, so
changing either side alone fails here.

Checked three ways: the builders' notes against a ledger built from the same tables (fast,
no pipeline); the smoke pipeline's notes (``results/tables/*.md``) against its
``results/claims.csv`` (CI); and a full study's, when ``results/`` holds one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from evalsim.ledger import build_ledger, load_claims
from evalsim.products.design.detection import repeat_evaluation_gap
from evalsim.products.design.sizing import estimation_vs_detection
from evalsim.products.settings import Sizing

SELF_CONSISTENT = {"matches", "simulation differs", "not resolvable with the pools"}  # (a) holds
# (table, phrase of its note, claim ids or id prefixes ending in ".", verdicts the phrase means)
NOTE_CHECKS = [
    # T14: "... exactly 0.2258 (one time in 4.4), not one in six" -- 001-11.
    ("T14", "not one in six", ["001-11"], {"document error"}),
    # T26: "the document's 'roughly 1 000' is a generous rounding" -- 004-08.
    ("T26", "'roughly 1 000' is a generous rounding", ["004-08"], {"document rounding"}),
    # T26: "the document's 'about 3 200 total' is the per-arm number" -- 004-09.
    ("T26", "'about 3 200 total' is the per-arm number", ["004-09"], {"document error"}),
    # T26: paired designs with low discordance "need more; the paired rows show the opposite".
    ("T26", "the paired rows show the opposite", ["004-12"], {"document error"}),
    # T08: Table B's exact columns at the document's rate -- 000-30.*.
    ("T08", "its exact columns all match ours", ["000-30."], {"matches"}),
    # T08: Table B's resampled columns are self-consistent -- question (a) of 000-28/29.
    ("T08", "self-consistent", ["000-28.", "000-29."], SELF_CONSISTENT),
    # T10: Table E at the document's own rates -- question (a) of 000-36/37/38; the note
    # leaves question (b), the pools, to the ledger.
    ("T10", "self-consistent", ["000-36.", "000-37.", "000-38."], SELF_CONSISTENT),
]


def _rows(ledger: pd.DataFrame, ids: list[str]) -> pd.DataFrame:
    keep = ledger["id"].map(
        lambda i: any(i == w or (w[-1] == "." and i.startswith(w)) for w in ids)
    )
    return ledger[keep]


def disagreements(notes: dict[str, str], ledger: pd.DataFrame) -> list[str]:
    """Each check whose phrase's presence differs from the ledger's verdicts, described."""
    out = []
    for table, phrase, ids, verdicts in NOTE_CHECKS:
        if table not in notes:
            continue
        rows = _rows(ledger, ids)
        assert not rows.empty, f"no claim {ids} in the ledger"
        says = phrase in re.sub(r"\s+", " ", notes[table])
        holds = bool(rows["verdict"].isin(verdicts).all())
        if verdicts == SELF_CONSISTENT:
            holds = holds and bool(rows["reason"].str.contains(r"\(a\) .*\(within").all())
        if says != holds:
            got = ", ".join(f"{r.id}: {r.verdict}" for r in rows.itertuples())
            out.append(f"{table}'s note {'says' if says else 'lacks'} {phrase!r}; ledger: {got}")
    return out


@pytest.fixture(scope="module")
def claims(repo):
    return load_claims(repo / "config" / "claims.yaml")


def _design_tables():
    # The builders with the study's design parameters (config/config.yaml, design section).
    t14 = repeat_evaluation_gap(n=20, p=0.7, gap_points=20.0)
    t26 = estimation_vs_detection(
        Sizing(alpha=0.05, power=0.8, exact_fisher=False), paired_rhos=[0.0, 0.5]
    )
    return {"T14": t14, "T26": t26}


def _ledger(claims, tables, ids):
    chosen = [c for c in claims if c.id in ids]
    return build_ledger(chosen, "/nonexistent", overrides=tables)


def test_the_design_notes_say_what_the_ledger_says(claims):
    tables = _design_tables()
    ledger = _ledger(claims, tables, {"001-11", "004-08", "004-09", "004-12"})
    notes = {k: t.attrs["note"] for k, t in tables.items()}
    assert disagreements(notes, ledger) == []
    # Independent of both: 001-11's exact probability by plain Python, T26's n by the formula.
    from math import comb

    pmf = [comb(20, k) * 0.7**k * 0.3 ** (20 - k) for k in range(21)]
    p_ge = sum(pmf[i] * pmf[j] for i in range(21) for j in range(21) if abs(i - j) >= 4)
    assert f"{p_ge:.4f}" in notes["T14"] and round(1 / p_ge) != 6


def test_a_note_that_contradicts_its_claim_is_caught(claims):
    tables = _design_tables()
    ledger = _ledger(claims, tables, {"001-11", "004-08", "004-09", "004-12"})
    notes = {k: t.attrs["note"] for k, t in tables.items()}
    # The round-2 note wording against today's ledger, and today's note against a ledger in
    # which one in six held: both are disagreements.
    notes_old = dict(notes, T26=notes["T26"].replace("a generous rounding", "an error"))
    assert any("roughly 1 000" in d for d in disagreements(notes_old, ledger))
    t14 = tables["T14"].copy()
    t14.loc[t14["quantity"].str.contains(">= 20 points", regex=False), "value"] = 0.16
    flipped = _ledger(claims, dict(tables, T14=t14), {"001-11"})
    assert flipped.loc[0, "verdict"] == "document rounding"
    assert any("not one in six" in d for d in disagreements({"T14": notes["T14"]}, flipped))


def _run_notes(root: Path) -> dict[str, str]:
    notes = {}
    for table in {t for t, *_ in NOTE_CHECKS}:
        (md,) = (root / "results" / "tables").glob(f"{table}_*.md")
        notes[table] = md.read_text(encoding="utf-8")
    return notes


@pytest.mark.slow
@pytest.mark.xdist_group("pipeline")
def test_the_smoke_runs_notes_and_ledger_agree(smoke_run):
    assert smoke_run.result.returncode == 0, smoke_run.result.stderr[-4000:]
    ledger = pd.read_csv(smoke_run.work / "results" / "claims.csv", dtype=str)
    assert disagreements(_run_notes(smoke_run.work), ledger) == []


def test_the_full_studys_notes_and_ledger_agree(repo):
    if not (repo / "results" / "claims.csv").is_file():
        pytest.skip("no full study in results/ (the smoke run is checked)")
    ledger = pd.read_csv(repo / "results" / "claims.csv", dtype=str)
    assert disagreements(_run_notes(repo), ledger) == []
