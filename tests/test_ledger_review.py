"""An independent review of the ledger's verdicts: claims across the four documents.

Each entry holds the verdict a reader checking the document by hand expects and why, with
the document's sentence quoted in a comment. Verdicts of kind (a) (the document against its
own inputs) do not depend on the pools; where a verdict depends on the pools, the expectation
is computed here from the pool counts (T07), and asserted only when the pools are clearly on
one side (away from the boundary of the bootstrap criterion).

The review runs in CI: the ledger is built from the smoke pipeline the suite already runs
(``smoke_run``, one run per session), whose grids hold every row a claim reads. A checkout
with a full study in ``results/`` is reviewed as well.

Issue 46 adds four rows the written primary-reading rule decides (000-40, 000-44, 000-47,
001-28) and ten claims no row covered, each with the sentence that decides it.

Issue 23 lists eleven disagreements between a student's reading and the ledger: 000-28,
000-29 (000-33 is merged into 000-28), 000-34.A, 000-34.B, 000-31, 000-36.n10 (000-18.n10
merged), 000-26, 004-05, 002-05, 001-11 and 004-08. Each is below, marked "issue 23".
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from evalsim.ledger import build_ledger, load_claims

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pipeline")]

# (claim id, expected verdict, reason)
REVIEW = [
    # 000 l.36: "for policy A (p = 0.737), P(>= 9/10) = 0.215 (binomial)"
    ("000-02", "matches", "binomial sf at the printed 0.737 rounds to 0.215"),
    # 000 l.161: "policy B (p = 0.877): P(>= 9/10) = 0.645"
    ("000-03", "matches", "binomial sf at 0.877 rounds to 0.645"),
    # 000 l.74: "At 10/10 it reports [1.000, 1.000]"
    ("000-04.wald.10of10", "matches", "Wald at p-hat = 1 has zero width"),
    # 000 l.30: "wilson(9, 10) (0.596, 0.982)"
    ("000-05.wilson.9of10", "matches", "Wilson formula at z = 1.96"),
    # 000 l.132: "with that z, max difference over k = 0..20 of n = 20: 2.2e-16"
    ("000-07", "matches", "the same formula as SciPy agrees to round-off"),
    # 000 l.190: "P(B scores <= A)" 0.301 at n = 10
    ("000-16.n10", "matches", "exact binomial sum at the document's rates"),
    # 000 l.192: "with 1000 pairs the standard error of a rate near 0.66 is about 0.015"
    ("000-17", "matches", "sqrt(0.66 * 0.34 / 1000) = 0.0150"),
    # 000 l.260: "'Exact' is the same coverage computed from the binomial distribution at p = 0.737"
    ("000-30.n10", "matches", "exact Wilson/Wald coverage at n = 10 is 0.975/0.927"),
    # 000 l.262: "Wilson stays within about one point of 95% (0.942-0.987 ...)"
    ("000-32", "document error", "its own Table B has 0.987, 3.7 points from 95%"),
    # 000 l.270: "B fails to produce one in about a third of evaluations"
    ("000-35", "document rounding", "1 - 0.645 = 0.355, 'about a third'"),
    # 000 l.288: "With 20 trials each, the better policy scores the same or worse 17% of the time"
    # (issue 46: the paragraph restates Table E, 0.170; the exact 0.173 is reported beside)
    ("000-39", "matches", "Table E's 0.170 rounds to 17% (exact P(B <= A) 0.173)"),
    # 000 l.106: "disjoint 95% intervals are a stricter test than a direct comparison"
    # (Table E, n = 20: disjoint 0.025 vs Fisher 0.113): issue 23's missing claim.
    ("000-50", "matches", "P(disjoint Wilson) < P(Fisher p < 0.05) at every n"),
    # 001: "a 70% score carries a 95% interval of roughly +-0.8 points" (MMLU, 14,000)
    ("001-01", "document rounding", "1.96 sqrt(0.21/14042) = 0.76 points, 'roughly 0.8'"),
    # issue 23. 001 l.25: "Evaluate the same frozen checkpoint twice, 20 trials each time, and
    # the scores differ by 20 or more points about one time in six". Every premise is stated
    # (n = 20, p = 0.7, ">= 20 points"); the exact probability is 0.226, one in 4.4. Only the
    # normal approximation gives 1/6 (a method, not a premise): a document error, as T14's
    # note says ("not one in six"), not "ambiguous".
    ("001-11", "document error", "exact P(|k1-k2| >= 4) = 0.226, one in 4.4, not one in six"),
    # 001: "the +-3-point precision ... takes on the order of a thousand trials"
    ("001-18", "document rounding", "about 900-1,100 trials: 'on the order of a thousand'"),
    # 001: "250 trials per method, enough for coarse aggregate claims of roughly 10 points"
    ("001-21", "document error", "the worst-case MDE at 250 per arm is 12.5 points"),
    # issue 23. 002 l.31/71: "around two hundred trials per policy"; l.71 fixes the premise:
    # "how many trials it takes to separate 90% from 80% at 80% power".
    ("002-05", "document rounding", "199 per policy at 80% power: 'around two hundred'"),
    # 002: "stopping at the first significant result declares one 11.0% of the time"
    ("002-07", "matches", "within 2 SE of its 100,000 simulated experiments"),
    # 002 l.31: "Run the exact test ... around two hundred trials per policy" (issue 28): Fisher
    # needs 214 per arm at 0.80 vs 0.90, printed to the hundred; Boschloo 205.
    ("002-11", "document rounding", "exact Fisher n = 214 rounds to 'two hundred'"),
    # 004: "at 90% success rate, its 95% confidence interval spans approximately 19 pp"
    ("004-01", "document error", "the Wilson interval at 9/10 spans 38.6 points"),
    # 004: "Even expanding to 100 roll-outs, the interval width still sits near six pp"
    ("004-02", "document error", "the width at 90/100 is 11.9 points"),
    # issue 23. 004 l.19: "To reliably resolve a true difference of +-2 pp ... requires thousands"
    ("004-05", "matches", "the detection reading needs 3,213 per arm"),
    # 004 l.34: "The corresponding Wilson interval reads 82.77% - 95.07%" (63/70)
    ("004-07", "document error", "Wilson at 63/70 is 80.77-95.07: the lower bound is off by 2"),
    # issue 23. 004 l.98: "To estimate a single proportion near 90% to +-2 pp 95% confidence
    # requires roughly 1 000 roll-outs". The document's method gives 864 (Wilson) / 865
    # (normal); "roughly 1 000" is printed to the thousand and 865 rounds to it, 16% high: a
    # rounding, as T26's note says. The review of round 2 expected "document error" only by
    # a hand-set 10% for "roughly"; the printed digit decides now (issue 23, item 4).
    ("004-08", "document rounding", "865 roll-outs, printed to the thousand: 'roughly 1 000'"),
    # 004: "detect a true 2 pp difference ... needs about 3 200 total roll-outs"
    ("004-09", "document error", "3,213 per arm is 6,426 in total, not 3,200"),
    # 004 l.40-47: "def clopper_pearson(k, n, alpha=0.05)" (its k = 0 and k = n branches)
    ("004-11", "document error", "at 0/10 it returns (0, 0.995); the interval is (0, 0.308)"),
    # 004 l.98: "This number increases further when working with paired designs and low
    # discordant rates": McNemar at rho = 0.5 needs 1,619 pairs against 3,213 unpaired.
    ("004-12", "document error", "low discordance halves the n; it does not increase it"),
    # 004 l.51: Wilson "delivers better statistical coverage and narrower interval width"
    ("004-13", "matches", "Wilson is narrower than Clopper-Pearson at 63/70, 9/10, 90/100"),
    # issue 23. 004 l.81: "Treating every episode as an independent sample artificially
    # inflates effective sample size": T28's design effect of tasks' episodes is above 1.
    ("004-14", "matches", "the hierarchical design effect (T28) exceeds 1"),
    # issue 23. 001 l.47: "pairing wins big exactly when the task has strong easy-hard
    # structure across initial conditions, which manipulation tasks nearly always do": a
    # claim about manipulation tasks in general, which one simulated task cannot count.
    ("001-31", "ambiguous", "'nearly always' is about all manipulation tasks"),
    # ---- issue 46: four rows decided by the written primary-reading rule (config/claims.yaml)
    # issue 46. 000 l.288 "the difference is significant only 11% of the time": the paragraph
    # under Table E restates its 0.113 (rule: table). The exact power 0.119 is reported.
    ("000-40", "matches", "Table E's 0.113 rounds to 11%"),
    # issue 46. 000 l.333 "Ten trials give an interval about 0.46 wide": Table B's 0.463
    # (rule: table); at the document's 221/300 the exact mean width is 0.4618, reported.
    ("000-44", "matches", "Table B's 0.463 rounds to 0.46"),
    # issue 46. 000 l.54/96 "Halving it costs four times the trials" ... "The half-width is
    # about z sqrt(p(1-p)/n); halving it needs n four times larger" (rule: derivation).
    ("000-47", "matches", "the lesson's half-width approximation gives exactly 4"),
    # issue 46. 001 l.128 "80% power promises ... one experiment in five returns a null"
    # (rule: derivation): 1 - 0.80 = 1/5 exactly, not a rounding.
    ("001-28", "matches", "1 - 0.80 is one in five exactly"),
    # ---- issue 46: ten claims no row covered
    # 001 l.35 "the exact Clopper-Pearson interval is the conservative, strictly wider
    # alternative": not wider at 0/n and n/n from n = 46 (0/50: 0.0711 vs 0.0713).
    ("001-40", "document error", "110 (k, n), n <= 100, where it is not wider"),
    # 004 l.32 "This method guarantees coverage probability no less than the nominal
    # confidence level": its minimum exact coverage over p is at least 0.95.
    ("004-20", "matches", "Clopper-Pearson's minimum coverage over p is >= 0.95"),
    # 004 l.51 Wilson "delivers better statistical coverage": the rule calls it ambiguous
    # (which 'better' is unstated). A careful reader may call it an error: Wilson's minimum
    # coverage falls below 95%, where Clopper-Pearson's never does; closer to 95% on average
    # is the other reading, and there Wilson is better.
    ("004-21", "ambiguous", "better on average, worse at the minimum"),
    # 000 l.178 "SciPy uses 1e-14 for the same purpose": the installed fisher_exact's epsilon.
    ("000-60", "matches", "epsilon = 1e-14 in the installed SciPy"),
    # 000 l.210-211, 217, 237: SciPy's default method="exact", confidence_level=0.95;
    # statsmodels' method="normal" (Wald): read from the installed signatures.
    ("000-61", "matches", "the installed defaults are exact/0.95 and normal"),
    # 000 l.94 "The center moves toward 0.5 by z^2/2n": at 9/10 it moves 0.111, not 0.192.
    ("000-62", "document error", "the shift depends on p-hat: 0.111 at 9/10, not 0.192"),
    # 002 l.43 "the rate at which you declare a winner ... climbs with the number of looks".
    ("002-20", "matches", "F03's exact false-win rate rises at every step of the looks"),
    # 002 l.7-11 9/10 on Friday, 6/10 on Monday: "neither of you did anything wrong".
    ("002-21", "matches", "two-sided Fisher p of 9/10 vs 6/10 is 0.30"),
    # 004 l.77 "if correlation between paired runs becomes weak, the power gain diminishes".
    ("004-22", "matches", "T13's paired n rises as rho falls"),
    # 004 l.81 "Treating every episode as an independent sample ... produces over-optimistic
    # p-values": the naive bootstrap's p-value is smaller than the hierarchical one (T28).
    ("004-23", "matches", "p_hierarchical / p_naive >= 1 on our pools"),
]
# Simulation claims: (a) from the document's own inputs must hold, whatever the pools.
SELF_CONSISTENT = [
    # issue 23. 000 l.253-258, Table B: "Wilson covers p" 0.971 at n = 10 (2000 evaluations)
    "000-28.n10",
    # Table B, l.262 restated: "(0.942-0.987 ...)", 0.987 at n = 5
    "000-28.n5",
    # issue 23. Table B: "Wald covers p" 0.928 at n = 10, 0.764 at n = 5
    "000-29.n10",
    "000-29.n5",
    # issue 23. 000 l.267, Table C: "drawn from the pool" 0.208 for A
    "000-34.A",
    # issue 23. Table C: 0.634 for B
    "000-34.B",
    # issue 23. Table B: "5-95% of k/n" 0.50-0.90 at n = 10 and 0.62-0.84 at n = 50
    "000-31.n10",
    "000-31.n50",
    # issue 23. 000 l.284, Table E: "Fisher p < 0.05" 0.037 at n = 10 (one claim for the number)
    "000-36.n10",
    # Table E: "B scores <= A" 0.170 at n = 20
    "000-38.n20",
    # Table E: "Wilson intervals disjoint" 0.025 at n = 20
    "000-37.n20",
    # Table B: "mean Wilson width" 0.463 at n = 10
    "000-27.n10",
]
# 000-31: the 5-95% range of k/n at the document's own rate 0.737, by SciPy (inverted CDF).
TABLE_B_RANGE = {10: (0.50, 0.90), 50: (0.62, 0.84)}


@pytest.fixture(scope="module", params=["smoke", "full"])
def study(request, repo):
    """The folder whose ``results/`` the review reads: the smoke run (CI), or a full run."""
    if request.param == "full":
        if not list((repo / "results" / "tables").glob("T07_*.csv")):
            pytest.skip("no full study in results/ (the smoke run is reviewed)")
        return repo
    run = request.getfixturevalue("smoke_run")
    assert run.result.returncode == 0, run.result.stderr[-4000:]
    return run.work


@pytest.fixture(scope="module")
def ledger(study, repo):
    return build_ledger(load_claims(repo / "config" / "claims.yaml"), study).set_index("id")


def test_thirty_claims_across_the_four_documents():
    assert len(REVIEW) >= 30  # each with its verdict, reason and the document's sentence
    ids = [i for i, _, _ in REVIEW] + SELF_CONSISTENT + ["000-26"]
    assert len(ids) == len(set(ids))
    assert {i[:3] for i in ids} == {"000", "001", "002", "004"}
    eleven = {"000-28.n10", "000-29.n10", "000-34.A", "000-34.B", "000-31.n10", "000-36.n10"}
    eleven |= {"000-26", "004-05", "002-05", "001-11", "004-08"}
    assert eleven <= set(ids)


@pytest.mark.parametrize(("cid", "verdict", "why"), REVIEW, ids=[r[0] for r in REVIEW])
def test_reviewed_verdict(ledger, cid, verdict, why):
    row = ledger.loc[cid]
    if cid == "004-11" and not os.environ.get("EVALSIM_DOCUMENTS"):
        pytest.skip("the documents' code needs the documents ($EVALSIM_DOCUMENTS)")
    assert row.verdict == verdict, f"{cid}: expected {verdict} ({why}); ledger: {row.reason}"


@pytest.mark.parametrize("cid", SELF_CONSISTENT)
def test_table_b_c_e_are_self_consistent(ledger, cid):
    row = ledger.loc[cid]
    assert row.verdict in ("matches", "simulation differs", "not resolvable with the pools")
    assert "resolution: range width" in row.reason, row.reason
    assert "(a) at the document's own" in row.reason and "(within rounding" in row.reason


@pytest.mark.parametrize("n", sorted(TABLE_B_RANGE))
def test_table_b_range_is_the_binomial_at_the_documents_rate(ledger, n):
    # 000 l.262: "At 10 trials ... the observed rate lands anywhere from 0.50 to 0.90".
    lo, hi = (binom.ppf(q, n, 0.737) / n for q in (0.05, 0.95))
    assert abs(lo - TABLE_B_RANGE[n][0]) <= 2 / n and abs(hi - TABLE_B_RANGE[n][1]) <= 2 / n
    assert f"0.737: [{lo:.4g}, {hi:.4g}] (within" in ledger.loc[f"000-31.n{n}"].reason


def test_one_printed_number_one_claim(ledger):
    # issue 23: "The lesson's 0.037 (Table E, n = 10) is 'matches approximately' in 000-18.n10
    # and 'differs' in 000-36.n10": one claim now.
    table_e = ledger[ledger["stated"].astype(str) == "0.037"]
    assert list(table_e.index) == ["000-36.n10"]


def test_the_true_gap_against_the_pool_counts(ledger, study):
    # issue 23. 000 l.280: "The true gap is 0.14" (0.877 - 0.737). Expectation from T07's
    # counts; the document's 0.14 is itself the gap of two 300-trial pools (l.246-247), so its
    # sampling error counts as well as ours (issue 23: "a computed 2 SE is 0.0886").
    # The pooled seeds (T30), the largest honest sample (issue 46).
    (path,) = (study / "results" / "tables").glob("T30_*.csv")
    t30 = pd.read_csv(path)
    t30 = t30[(t30.criterion == "strict") & (t30.scope == "pooled seeds")].set_index("policy")
    a, b = t30.loc["A"], t30.loc["B"]
    se = math.sqrt(
        a.rate * (1 - a.rate) / a.n
        + b.rate * (1 - b.rate) / b.n
        + 0.737 * 0.263 / 300
        + 0.877 * 0.123 / 300
    )
    z = abs(b.rate - a.rate - 0.14) / se
    row = ledger.loc["000-26"]
    assert "(a) at the document's own p_a = 0.737, p_b = 0.877: 0.14 (within" in row.reason
    if z > 2.6:
        assert row.verdict == "simulation differs", row.reason
    elif z < 1.4:  # inside the range; a range that also holds 0 does not resolve (issue 46)
        want = "not resolvable with the pools" if "the range holds 0" in row.reason else "matches"
        assert row.verdict == want, row.reason


def test_paired_designs_read_from_the_sizing_table(ledger, study):
    # 004 l.98 "increases further when working with paired designs and low discordant
    # rates": recomputed here from T26's own rows, the pairs at rho = 0.5 over the unpaired n.
    (path,) = (study / "results" / "tables").glob("T26_*.csv")
    t26 = pd.read_csv(path)
    paired = t26[t26["method"].str.contains("rho = 0.5,", regex=False)]["n_per_arm"].iloc[0]
    unpaired = t26[t26["method"] == "normal (fleiss)"]["n_per_arm"].iloc[0]
    assert paired / unpaired < 0.6
    assert float(ledger.loc["004-12"].reproduced) == pytest.approx(paired / unpaired, rel=1e-5)
    assert np.isclose(unpaired, 3213)


def test_no_reading_on_our_pools_is_a_document_error(ledger, repo):
    # issue 46: the alternative readings of 000-01, 000-40, 000-41 and 000-45 on our pools
    # were labelled "document error"; by the verdicts' own definitions a difference only our
    # pools show is "simulation differs".
    claims = {c.id: c for c in load_claims(repo / "config" / "claims.yaml")}
    seen = 0
    for cid, row in ledger.iterrows():
        for src in claims[cid].sources:
            if not src.get("on_pools"):
                continue
            seen += 1
            part = row.reason.split(f"{src['method']} = ", 1)
            if len(part) == 2:  # reported as another reading: "= value (verdict)"
                assert not part[1].split(")", 1)[0].endswith("document error"), (cid, row.reason)
            elif row.method == src["method"]:
                assert row.verdict != "document error", (cid, row.reason)
    assert seen >= 10
