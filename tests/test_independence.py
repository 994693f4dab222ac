"""Independence checks: enumeration, SciPy/statsmodels, exact laws under drift, Monte Carlo."""

from __future__ import annotations

import json
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from naive_independence import (
    null_law,
    pvalues,
    rank_sum,
    rank_sum_counts_int,
    rejection_probabilities,
    runs_of,
)
from scipy import stats
from statsmodels.sandbox.stats.runs import runstest_1samp
from statsmodels.stats.contingency_tables import Table

from evalsim.cli import main
from evalsim.cli._independence import independence_data
from evalsim.stats.independence import checks as ind

SMALL = [(n, k) for n in range(2, 13) for k in range(n + 1)]


# ------------------------------------------------------------------ null laws


@pytest.mark.parametrize(("n", "k"), SMALL)
def test_runs_null_law_matches_enumeration(n, k):
    law = null_law(n, k, runs_of)
    pmf = ind.runs_null_pmf(k, n - k)
    for r in range(n + 1):
        assert pmf[r] == pytest.approx(float(law.get(r, 0)), abs=1e-14)


@pytest.mark.parametrize(("n", "k"), SMALL)
def test_trend_null_law_matches_enumeration(n, k):
    law = null_law(n, k, rank_sum)
    pmf = ind.trend_null_pmf(n, k)
    base = k * (k + 1) // 2
    assert pmf.size == k * (n - k) + 1
    for u, v in enumerate(pmf):
        assert v == pytest.approx(float(law.get(base + u, 0)), abs=1e-14)


def test_the_exact_integer_counts_match_enumeration():
    # the tail test's reference (a Gaussian binomial's coefficients) against listing subsets
    for n, m in SMALL:
        law = null_law(n, m, rank_sum)
        base = m * (m + 1) // 2
        counts = rank_sum_counts_int(n, m)
        assert len(counts) == m * (n - m) + 1
        assert [Fraction(c, math.comb(n, m)) for c in counts] == [
            law.get(base + u, Fraction(0)) for u in range(len(counts))
        ]


@pytest.mark.parametrize(("n", "m"), [(60, 30), (120, 17), (200, 100)])
def test_trend_null_law_matches_exact_integers_in_the_tails(n, m):
    counts = rank_sum_counts_int(n, m)
    total = math.comb(n, m)
    pmf = ind.trend_null_pmf(n, m)
    assert pmf.size == len(counts)
    exact_cdf = np.array([float(Fraction(c, total)) for c in np.cumsum(counts, dtype=object)])
    ours_cdf = np.cumsum(pmf)
    keep = exact_cdf > 1e-10  # the tails a p-value reads, to 1e-10 of the total mass
    np.testing.assert_allclose(ours_cdf[keep], exact_cdf[keep], rtol=1e-9)


def test_runs_mean_and_variance_formulas():
    for n1, n2 in [(5, 7), (30, 12), (150, 150)]:
        pmf = ind.runs_null_pmf(n1, n2)
        r = np.arange(pmf.size)
        n = n1 + n2
        mean = 1 + 2 * n1 * n2 / n
        var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n**2 * (n - 1))
        assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
        assert (r * pmf).sum() == pytest.approx(mean, rel=1e-12)
        assert ((r - mean) ** 2 * pmf).sum() == pytest.approx(var, rel=1e-10)


# ------------------------------------------------------------------ p-values


def _random_sequences(rng, count, n_lo, n_hi):
    for _ in range(count):
        n = int(rng.integers(n_lo, n_hi + 1))
        yield rng.random(n) < rng.uniform(0.2, 0.8)


def test_pvalues_match_enumeration_on_small_sequences():
    rng = np.random.default_rng(7)
    seqs = [[1] * 6 + [0] * 6, [1, 0] * 6, [1, 1, 0, 1, 0, 0, 1, 0, 0, 0]]
    seqs += [list(map(int, s)) for s in _random_sequences(rng, 40, 2, 12)]
    for s in seqs:
        ref = pvalues(s)
        assert ind.runs_test(s).pvalue == pytest.approx(float(ref["runs"]), abs=1e-12)
        assert ind.trend_test(s).pvalue == pytest.approx(float(ref["trend"]), abs=1e-12)
        assert ind.halves_test(s).pvalue == pytest.approx(float(ref["halves"]), rel=1e-12)


def test_trend_test_is_scipy_mannwhitneyu_exact():
    rng = np.random.default_rng(11)
    for s in _random_sequences(rng, 60, 8, 60):
        pos = np.arange(1, s.size + 1)
        if s.all() or not s.any():
            continue
        ref = stats.mannwhitneyu(pos[s], pos[~s], method="exact", alternative="two-sided")
        assert ind.trend_test(s).pvalue == pytest.approx(ref.pvalue, rel=1e-9)
        less = stats.mannwhitneyu(pos[s], pos[~s], method="exact", alternative="less")
        assert ind.trend_test(s).p_falling == pytest.approx(less.pvalue, rel=1e-9)


def test_trend_test_near_statsmodels_asymptotic_cochran_armitage_for_large_n():
    rng = np.random.default_rng(5)
    n = 600
    p = np.linspace(0.75, 0.62, n)
    for _ in range(5):
        s = rng.random(n) < p
        table = np.column_stack([s, ~s]).astype(float)
        res = Table(table, shift_zeros=False).test_ordinal_association(
            row_scores=np.arange(1, n + 1), col_scores=np.array([1.0, 0.0])
        )
        ours = ind.trend_test(s)
        assert ours.method == "exact"
        assert ours.pvalue == pytest.approx(res.pvalue, abs=0.01)
    big = rng.random(ind.EXACT_TREND_MAX_N + 10) < 0.6
    assert ind.trend_test(big).method == "normal"


def test_runs_test_near_statsmodels_asymptotic_for_large_n():
    # The doubled exact tail counts P(R = r) twice; its mid-p version (minus P(R = r)) is
    # what the uncorrected normal approximation estimates.
    rng = np.random.default_rng(3)
    for rate in (0.7, 0.5, 0.3):
        for _ in range(4):
            s = (rng.random(800) < rate).astype(float)
            _, p_sm = runstest_1samp(s, cutoff=0.5, correction=False)
            r = ind.runs_test(s)
            pmf = ind.runs_null_pmf(r.n_success, r.n - r.n_success)
            assert r.pvalue - pmf[r.runs] == pytest.approx(p_sm, abs=0.01)
    clustered = np.repeat(rng.random(200) < 0.6, 4).astype(float)
    _, p_sm = runstest_1samp(clustered, cutoff=0.5, correction=False)
    assert ind.runs_test(clustered).pvalue < 1e-6 and p_sm < 1e-6


def test_halves_is_scipy_fisher():
    rng = np.random.default_rng(2)
    for s in _random_sequences(rng, 30, 2, 101):
        h = s.size // 2
        k1, k2 = int(s[:h].sum()), int(s[h:].sum())
        ref = stats.fisher_exact([[k1, h - k1], [k2, s.size - h - k2]]).pvalue
        r = ind.halves_test(s)
        assert (r.n_first, r.k_first, r.k_second) == (h, k1, k2)
        assert r.pvalue == pytest.approx(ref, rel=1e-10)


def test_degenerate_and_bad_sequences():
    c = ind.independence_checks([1] * 12)
    assert c.pvalues == {"runs": 1.0, "trend": 1.0, "halves": 1.0} and not c.dependent
    with pytest.raises(ValueError, match="2 at index 1"):
        ind.runs_test([1, 2, 0])
    with pytest.raises(ValueError, match="at least 2"):
        ind.trend_test([1])


def test_drifting_sequence_is_flagged_and_directions_are_named():
    s = [1] * 16 + [1, 0] * 4 + [0] * 16
    c = ind.independence_checks(s)
    assert c.dependent and c.trend.p_falling < c.trend.p_rising
    assert c.runs.p_few < c.runs.p_many and c.trend.slope_per_trial < 0
    alternating = ind.runs_test([1, 0] * 15)
    assert alternating.p_many < 1e-6 and alternating.runs == 30


# ------------------------------------------------------------------ under drift


@pytest.mark.parametrize(
    "p",
    [
        [0.7] * 9,
        list(np.linspace(0.9, 0.3, 10)),
        [0.2, 0.9, 0.5, 0.5, 0.8, 0.1, 0.6, 0.6, 0.3, 0.95],
    ],
)
def test_exact_rejection_probabilities_match_enumeration(p):
    for alpha in (0.05, 0.2):
        ours = ind.exact_rejection_probabilities(p, alpha)
        ref = rejection_probabilities(list(p), alpha)
        for name in ind.CHECKS:
            assert ours[name] == pytest.approx(ref[name], abs=1e-12)


def test_poisson_binomial_and_joint_laws_match_enumeration_and_scipy():
    import itertools

    from evalsim.stats.independence import _kernels as K

    p = np.array([0.9, 0.15, 0.5, 0.72, 0.33, 0.6, 0.05])
    n = p.size
    pb = np.zeros(n + 1)
    runs = np.zeros((n + 1, n + 1))
    trend = np.zeros((n + 1, n * (n + 1) // 2 + 1))
    for seq in itertools.product((0, 1), repeat=n):
        w = float(np.prod(np.where(seq, p, 1 - p)))
        k = sum(seq)
        pb[k] += w
        runs[k, runs_of(seq)] += w
        trend[k, rank_sum(seq)] += w
    np.testing.assert_allclose(ind.poisson_binomial_pmf(p), pb, atol=1e-15)
    np.testing.assert_allclose(K.runs_joint_law(p), runs, atol=1e-15)
    np.testing.assert_allclose(K.trend_joint_law(p), trend, atol=1e-15)
    ks = np.arange(31)
    np.testing.assert_allclose(
        ind.poisson_binomial_pmf(np.full(30, 0.37)), stats.binom.pmf(ks, 30, 0.37), rtol=1e-10
    )


def test_size_under_iid_is_at_most_alpha():
    for n in (20, 50):
        for p in (0.3, 0.7, 0.9):
            ours = ind.exact_rejection_probabilities(np.full(n, p), 0.05)
            for name in ind.CHECKS:
                assert ours[name] <= 0.05 + 1e-12


def test_monte_carlo_matches_exact_and_bonferroni_false_alarm_rate():
    rng = np.random.default_rng(20251130)
    n_sim = 40_000
    for p in (np.full(50, 0.7), np.linspace(0.85, 0.55, 50)):
        exact = ind.exact_rejection_probabilities(p, 0.05)
        mc = ind.rejection_rates_mc(p, 0.05, n_sim, rng)
        for name in ind.CHECKS:
            se = math.sqrt(max(exact[name] * (1 - exact[name]), 1e-4) / n_sim)
            assert abs(mc[name] - exact[name]) < 4 * se
    # The CLI's rule (any of three at alpha / 3) under i.i.d. trials: false alarms <= alpha.
    for n, p in ((20, 0.5), (50, 0.7), (100, 0.85)):
        fa = ind.rejection_rates_mc(np.full(n, p), 0.05, n_sim, rng, bonferroni=True)["any"]
        assert fa <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n_sim)
        assert fa >= 0.01  # about alpha (Bonferroni and discreteness make it conservative)


def test_mc_is_reproducible_from_the_generator():
    p = np.linspace(0.9, 0.5, 30)
    a = ind.rejection_rates_mc(p, 0.05, 2000, np.random.default_rng(1))
    b = ind.rejection_rates_mc(p, 0.05, 2000, np.random.default_rng(1))
    assert a == b


# ------------------------------------------------------------------ the CLI's --order

REPO = Path(__file__).resolve().parents[1]


def _session(rng, p_a, p_b, design, start="2026-01-05T08:00:00"):
    """A two-policy session log: per-trial success probabilities of A's and B's trials."""
    n = len(p_a)
    if design == "blocked":
        pos_a, pos_b = np.arange(n), np.arange(n, 2 * n)
    else:
        pos_a, pos_b = np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
    rows = []
    for policy, pos, p in (("A", pos_a, p_a), ("B", pos_b, p_b)):
        ok = rng.random(n) < np.asarray(p)
        for j, s in zip(pos, ok, strict=True):
            t = pd.Timestamp(start) + pd.Timedelta(minutes=3 * int(j))
            rows.append(
                {"policy": policy, "trial": int(j) + 1, "time": t.isoformat(), "success": int(s)}
            )
    return pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # file order != trial order


def _cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_warns_on_a_planted_drift_and_a_blocked_order(tmp_path, capsys):
    n = 60
    p_a = np.where(np.arange(n) < 30, 0.95, 0.2)  # A's servo overheats half-way through A
    # The planted drift is found with near certainty (exact power of the trend test alone):
    assert ind.exact_rejection_probabilities(p_a, 0.05 / 3)["trend"] > 0.999
    log = _session(np.random.default_rng(4), p_a, np.full(n, 0.2), "blocked")
    path = tmp_path / "drift.csv"
    log.to_csv(path, index=False)
    rc, out, err = _cli(capsys, "summarize", path, "--order", "trial")
    assert rc == 0 and err == ""
    assert "warning: A: success fell from" in out and "the trials are not independent" in out
    assert "warning: B:" not in out
    rc, out, _ = _cli(capsys, "compare", path, "--a", "A", "--b", "B", "--order", "time", "--json")
    data = json.loads(out)["independence"]
    assert data["interleaving"] == {
        "status": "blocked",
        "first": "A",
        "switches": 1,
        "max_switches": 2 * n - 1,
    }
    assert any("all of A ran before B" in w for w in data["warnings"])
    a = next(g for g in data["groups"] if g["policy"] == "A")
    assert a["dependent"] and "trend" in a["flagged"]
    # The reported numbers are the library's on the sequence sorted by the order column.
    x = log.sort_values("trial").query("policy == 'A'")["success"].to_numpy()
    assert a["trend"]["pvalue"] == pytest.approx(ind.trend_test(x).pvalue, rel=1e-12)
    assert a["runs"]["runs"] == ind.runs_test(x).runs


def test_cli_is_silent_on_an_iid_interleaved_log(tmp_path, capsys):
    n = 50
    log = _session(np.random.default_rng(8), np.full(n, 0.7), np.full(n, 0.7), "interleaved")
    path = tmp_path / "iid.csv"
    log.to_csv(path, index=False)
    rc, out, _ = _cli(capsys, "compare", path, "--a", "A", "--b", "B", "--order", "time")
    assert rc == 0
    assert "order of the policies: interleaved (99 of at most 99 switches" in out
    assert "not independent" not in out and "ran before" not in out
    assert out.count("looks independent") == 2


def test_cli_false_alarm_rate_is_about_alpha():
    # Many i.i.d. interleaved sessions through the CLI's own report function.
    rng = np.random.default_rng(20251130)
    n_logs, n = 600, 40
    policy = np.tile(["A", "B"], n)
    p = np.where(policy == "A", 0.7, 0.6)
    alarms = 0
    for _ in range(n_logs):
        log = pd.DataFrame(
            {"policy": policy, "trial": np.arange(1, 2 * n + 1), "success": rng.random(2 * n) < p}
        )
        data = independence_data(log, "trial", 0.05)
        alarms += sum(g["dependent"] for g in data["groups"])
    rate = alarms / (2 * n_logs)  # per policy; Bonferroni over 3 discrete tests: <= alpha
    assert 0.005 <= rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / (2 * n_logs))


def test_cli_order_bad_input_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "log.csv"
    pd.DataFrame({"policy": ["A"] * 6, "success": [1, 0] * 3, "when": ["x"] * 6}).to_csv(
        path, index=False
    )
    rc, out, err = _cli(capsys, "summarize", path, "--order", "trial")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "no column trial" in err
    rc, out, err = _cli(capsys, "summarize", path, "--order", "when")
    assert rc == 2 and "neither a number nor a timestamp" in err and err.count("\n") == 1


def test_example_drifting_log_is_labelled_synthetic_and_reproducible():
    text = (REPO / "examples" / "make_drifting_log.py").read_text()
    assert "SYNTHETIC" in text
    sys.path.insert(0, str(REPO / "examples"))
    try:
        from make_drifting_log import make_log
    finally:
        sys.path.pop(0)
    saved = pd.read_csv(REPO / "examples" / "drifting_session.csv")
    pd.testing.assert_frame_equal(make_log().reset_index(drop=True), saved, check_dtype=False)


# ------------------------------------------------------------------ issue 24, item 1


#: SciPy 1.17.1's exact Mann-Whitney p-values of the two sequences below, pinned (about 50 s
#: of CPU each to recompute):
#:   rng = np.random.default_rng(24); for _ in range(2): s = rng.random(600) < 0.5;
#:   pos = np.arange(1, 601); stats.mannwhitneyu(pos[s], pos[~s], method="exact").pvalue
SCIPY_EXACT_MWU_N600 = (0.7838839563385769, 0.26698512918929185)


def test_item01_trend_test_n600_matches_scipy_exact_mannwhitneyu():
    # The float Harding recursion lost every digit by n ~ 600 (0.886 where SciPy gives 0.944).
    rng = np.random.default_rng(24)
    for ref in SCIPY_EXACT_MWU_N600:
        s = rng.random(600) < 0.5
        ours = ind.trend_test(s)
        assert ours.method == "exact"
        assert ours.pvalue == pytest.approx(ref, rel=1e-11)
    # and SciPy agrees live where it is quick: n = 120, the same statistic
    s = np.random.default_rng(25).random(120) < 0.5
    pos = np.arange(1, s.size + 1)
    live = stats.mannwhitneyu(pos[s], pos[~s], method="exact", alternative="two-sided").pvalue
    assert ind.trend_test(s).pvalue == pytest.approx(live, rel=1e-11)


def test_item01_trend_law_n400_matches_python_integers_everywhere():
    # Plain-Python reference: the Gaussian binomial's coefficients by the same factor-pair
    # recursion in exact integers (no rounding), compared over the whole lower half.
    n, m = 400, 40
    coeffs = [1]
    for j in range(1, m + 1):
        a = n - m + j
        coeffs = coeffs + [0] * (n - m)
        for u in range(j, len(coeffs)):
            coeffs[u] += coeffs[u - j]
        for u in range(len(coeffs) - 1, a - 1, -1):
            coeffs[u] -= coeffs[u - a]
    total = math.comb(n, m)
    assert sum(coeffs) == total
    pmf = ind.trend_null_pmf(n, m)
    ref = np.array([c / total for c in coeffs])
    np.testing.assert_allclose(pmf, ref, rtol=1e-13, atol=0)


@pytest.mark.parametrize("n", [1000, 1500, 2000])
def test_item01_trend_test_large_n_matches_normal_approximation(n):
    # Was 9.4e-7, 6.6e-7, 7.0e-8 on Bernoulli(0.5) sequences where the normal law gives 0.1-0.2.
    rng = np.random.default_rng(n)
    s = rng.random(n) < 0.5
    pos = np.arange(1, n + 1)
    ref = stats.mannwhitneyu(pos[s], pos[~s], method="asymptotic", use_continuity=True)
    ours = ind.trend_test(s)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_item01_trend_exact_and_normal_agree_at_the_switch():
    rng = np.random.default_rng(7)
    n = ind.EXACT_TREND_MAX_N
    s = rng.random(n) < 0.4
    pos = np.arange(1, n + 1)
    normal = stats.mannwhitneyu(pos[s], pos[~s], method="asymptotic").pvalue
    assert ind.trend_test(s).pvalue == pytest.approx(normal, rel=2e-3)
