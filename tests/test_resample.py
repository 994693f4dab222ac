"""The resampling kernel and its summaries: exact streams, determinism, agreement with exact.

Agreement rule used throughout: a resampled rate agrees with the exact probability it
estimates when they differ by at most 3 standard errors, SE = sqrt(q (1 - q) / draws) at the
exact value q. Every draw here is seeded, so these tests are deterministic; they fail only if
the kernel or a summary is wrong.
"""

from __future__ import annotations

import naive_resample as naive
import numpy as np
import pytest
from scipy.stats import binom, chisquare, fisher_exact
from statsmodels.stats.proportion import proportion_confint

from evalsim.stats.proportion.coverage import exact_coverage
from evalsim.stats.resample import _kernels as K
from evalsim.stats.resample import draws as rs

N_SE = 3.0


def pool_of(k: int, n: int) -> np.ndarray:
    """A pool of n trials with k successes, interleaved (order must not matter)."""
    out = np.zeros(n, dtype=bool)
    out[np.linspace(0, n - 1, k).round().astype(int)] = True
    assert out.sum() == k
    return out


POOL_A = pool_of(221, 300)  # document 000's pool A rate, 221/300
POOL_B = pool_of(263, 300)  # document 000's pool B rate, 263/300


def within(resampled: float, exact: float, draws: int) -> bool:
    return abs(resampled - exact) <= N_SE * np.sqrt(exact * (1 - exact) / draws) + 1e-12


# ---------------------------------------------------------------- the stream and the kernel


def test_splitmix64_matches_reference_outputs():
    # First outputs of Vigna's splitmix64.c with x = 0 (also what naive.splitmix64(0) gives):
    # 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f
    with np.errstate(over="ignore"):  # wrap-around is the algorithm (matters without JIT)
        got = [int(x) for x in K.splitmix64_outputs(0, 3)]
        more = [int(x) for x in K.splitmix64_outputs(123456789, 50)]
    assert got == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    ref = naive.splitmix64(123456789)
    assert more == [next(ref) for _ in range(50)]


@pytest.mark.parametrize(
    ("m", "n", "n_evals", "seed"), [(300, 10, 40, 7), (7, 5, 30, 2**62 + 11), (1, 3, 4, 0)]
)
def test_kernel_equals_plain_python_draw_for_draw(m, n, n_evals, seed):
    success = (np.arange(m) % 3 != 0).astype(np.uint8)
    got = rs.draw_counts(success, n, n_evals, seed)
    assert got.dtype == np.int64
    assert got.tolist() == naive.draw_counts(success.tolist(), n, n_evals, seed)


def test_draws_are_deterministic_and_keyed():
    a1 = rs.evaluations(POOL_A, 10, 500, 20251129, "A", "t")
    b1 = rs.evaluations(POOL_B, 10, 500, 20251129, "B", "t")
    # Reverse call order, interleave an unrelated draw: same counts.
    b2 = rs.evaluations(POOL_B, 10, 500, 20251129, "B", "t")
    rs.evaluations(POOL_A, 20, 100, 20251129, "A", "other")
    a2 = rs.evaluations(POOL_A, 10, 500, 20251129, "A", "t")
    np.testing.assert_array_equal(a1.counts, a2.counts)
    np.testing.assert_array_equal(b1.counts, b2.counts)
    # Another purpose, policy, n or study seed gives another stream.
    assert not np.array_equal(a1.counts, rs.evaluations(POOL_A, 10, 500, 20251129, "A", "u").counts)
    assert not np.array_equal(a1.counts, rs.evaluations(POOL_A, 10, 500, 1, "A", "t").counts)
    assert a1.seed != rs.evaluations(POOL_A, 11, 500, 20251129, "A", "t").seed
    assert "n=10" in repr(a1) and "221/300" in repr(a1)


def test_pair_streams_do_not_depend_on_other_comparisons():
    a, b = rs.evaluation_pairs(POOL_A, POOL_B, 20, 300, 5, "A", "B")
    a2, _ = rs.evaluation_pairs(POOL_A, pool_of(100, 300), 20, 300, 5, "A", "C")
    a3, b3 = rs.evaluation_pairs(POOL_A, POOL_B, 20, 300, 5, "A", "B")
    np.testing.assert_array_equal(a.counts, a3.counts)
    np.testing.assert_array_equal(b.counts, b3.counts)
    assert not np.array_equal(a.counts, a2.counts)  # each comparison has its own draws


def test_counts_follow_the_binomial():
    n, n_evals = 10, 40_000
    ev = rs.evaluations(POOL_A, n, n_evals, 99, "A", "chi2")
    expected = binom.pmf(np.arange(n + 1), n, 221 / 300) * n_evals
    # Merge the sparse low tail (k <= 3) so every expected count is >= 5.
    obs = np.concatenate([[ev.frequencies()[:4].sum()], ev.frequencies()[4:]])
    exp = np.concatenate([[expected[:4].sum()], expected[4:]])
    assert chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3
    assert within(ev.counts.mean() / n, 221 / 300, n * n_evals)


def test_validation_quotes_the_bad_value():
    with pytest.raises(ValueError, match="2"):
        rs.draw_counts([0, 1, 2], 5, 10, 1)
    with pytest.raises(ValueError, match="0"):
        rs.draw_counts(POOL_A, 0, 10, 1)
    with pytest.raises(ValueError, match="-1"):
        rs.draw_counts(POOL_A, 5, 10, -1)
    with pytest.raises(ValueError, match="shape"):
        rs.draw_counts([], 5, 10, 1)
    with pytest.raises(ValueError, match="11"):
        rs.rate_at_least(rs.evaluations(POOL_A, 10, 10, 1, "A", "v"), 11)


# ---------------------------------------------------------------- summaries vs exact


@pytest.mark.parametrize("n", [5, 10, 20, 50, 100])
@pytest.mark.parametrize("method", ["wilson", "wald"])
def test_resampled_coverage_agrees_with_exact_within_3_se(n, method):
    n_evals = 4000
    ev = rs.evaluations(POOL_A, n, n_evals, 20251129, "A", "coverage-test")
    summ = rs.interval_summary(ev, method)
    exact = exact_coverage(method, n, 221 / 300)
    assert within(summ.coverage, exact, n_evals), (summ.coverage, exact)
    assert summ.coverage_se == pytest.approx(np.sqrt(summ.coverage * (1 - summ.coverage) / n_evals))


def test_interval_summary_equals_brute_force_statsmodels():
    ev = rs.evaluations(POOL_B, 20, 300, 3, "B", "brute")
    p = ev.pool_rate
    lo, up = proportion_confint(ev.counts, 20, alpha=0.05, method="wilson")
    summ = rs.interval_summary(ev, "wilson")
    assert summ.coverage == pytest.approx(np.mean((lo <= p) & (p <= up)), abs=1e-12)
    assert summ.mean_width == pytest.approx(np.mean(up - lo), rel=1e-9)
    lo, up = proportion_confint(ev.counts, 20, alpha=0.05, method="normal")
    lo, up = np.clip(lo, 0, 1), np.clip(up, 0, 1)
    assert rs.interval_summary(ev, "wald").coverage == pytest.approx(
        np.mean((lo <= p) & (p <= up)), abs=1e-12
    )


def test_pair_summary_equals_brute_force_scipy():
    ev_a, ev_b = rs.evaluation_pairs(POOL_A, POOL_B, 20, 200, 11, "A", "B")
    summ = rs.pair_summary(ev_a, ev_b, alpha=0.05)
    rej = dis = le = 0
    for ka, kb in zip(ev_a.counts.tolist(), ev_b.counts.tolist(), strict=True):
        rej += fisher_exact([[ka, 20 - ka], [kb, 20 - kb]]).pvalue < 0.05
        (la, ua), (lb, ub) = naive.wilson(ka, 20), naive.wilson(kb, 20)
        dis += ua < lb or ub < la
        le += kb <= ka
    assert summ.fisher_rejection_rate == rej / 200
    assert summ.disjoint_rate == dis / 200
    assert summ.b_not_better_rate == le / 200


@pytest.mark.parametrize(("n_a", "n_b"), [(10, 10), (20, 20), (7, 12)])
def test_exact_pair_probabilities_equal_double_loop(n_a, n_b):
    ex = rs.exact_pair_probabilities(0.737, n_a, 0.877, n_b)
    disjoint, b_not_better = naive.pair_probabilities(0.737, n_a, 0.877, n_b)
    assert ex.disjoint == pytest.approx(disjoint, abs=1e-12)
    assert ex.b_not_better == pytest.approx(b_not_better, abs=1e-12)


def test_exact_b_not_better_equals_stats_power():
    from evalsim.stats.two_sample import power as power

    for n in (10, 20, 50, 100):
        ours = rs.exact_pair_probabilities(221 / 300, n, 263 / 300, n).b_not_better
        assert ours == pytest.approx(power.prob_b_not_better(221 / 300, n, 263 / 300, n), abs=1e-10)


@pytest.mark.parametrize("n", [10, 20, 50])
def test_resampled_pair_rates_agree_with_exact_within_3_se(n):
    pairs = 2000
    ev_a, ev_b = rs.evaluation_pairs(POOL_A, POOL_B, n, pairs, 20251129, "A", "B", "agree")
    summ = rs.pair_summary(ev_a, ev_b)
    ex = rs.exact_pair_probabilities(ev_a.pool_rate, n, ev_b.pool_rate, n)
    assert within(summ.disjoint_rate, ex.disjoint, pairs)
    assert within(summ.b_not_better_rate, ex.b_not_better, pairs)


def test_rate_range_and_at_least():
    ev = rs.evaluations(POOL_A, 10, 2000, 4, "A", "range")
    lo, hi = rs.rate_range(ev)
    assert (lo, hi) == (
        np.quantile(ev.rates, 0.05, method="inverted_cdf"),
        np.quantile(ev.rates, 0.95, method="inverted_cdf"),
    )
    assert rs.rate_at_least(ev, 9) == np.mean(ev.counts >= 9)
    assert within(rs.rate_at_least(ev, 9), binom.sf(8, 10, 221 / 300), 2000)


@pytest.mark.parametrize(("rate", "draws"), [(0.3, 100), (0.5, 1), (0.99, 4000), (0.0, 10)])
def test_standard_error_is_the_binomial_formula(rate, draws):
    want = (rate * (1 - rate) / draws) ** 0.5
    assert rs.standard_error(rate, draws) == pytest.approx(want, rel=1e-15, abs=0)
    assert isinstance(rs.standard_error(rate, draws), float)


def test_as_success_array_accepts_bool_and_01_and_refuses_the_rest():
    out = rs.as_success_array([True, False, True])
    assert out.dtype == np.uint8 and out.tolist() == [1, 0, 1] and out.flags.c_contiguous
    assert rs.as_success_array(np.array([0.0, 1.0])).tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"only 0/1, got .*3.* at index 2"):
        rs.as_success_array(np.array([1, 0, 3, 1]))
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        rs.as_success_array(np.ones((2, 2)))


def test_evaluations_record_their_pool_and_seed():
    from evalsim.seeding import int_seed_for

    ev = rs.evaluations(POOL_A, 10, 50, 7, "A", "p")
    assert (ev.policy, ev.purpose, ev.n, ev.n_evals) == ("A", "p", 10, 50)
    assert (ev.pool_successes, ev.pool_size) == (221, 300) and ev.pool_rate == 221 / 300
    assert ev.seed == int_seed_for(7, "resample", "A", 10, "p")
    np.testing.assert_array_equal(ev.counts, rs.draw_counts(POOL_A, 10, 50, ev.seed))
    np.testing.assert_array_equal(ev.rates, ev.counts / 10)
    assert ev.frequencies().tolist() == np.bincount(ev.counts, minlength=11).tolist()
    assert len(ev.frequencies()) == 11
    a, b = rs.evaluation_pairs(POOL_A, POOL_B, 10, 50, 7, "A", "B", purpose="x")
    assert a.purpose == b.purpose == "x:A|B" and (a.policy, b.policy) == ("A", "B")
    np.testing.assert_array_equal(a.counts, rs.evaluations(POOL_A, 10, 50, 7, "A", "x:A|B").counts)
    np.testing.assert_array_equal(b.counts, rs.evaluations(POOL_B, 10, 50, 7, "B", "x:A|B").counts)


def test_summaries_record_their_arguments_and_refuse_bad_ones():
    ev = rs.evaluations(POOL_A, 10, 200, 1, "A", "args")
    s = rs.interval_summary(ev, "wilson", p=0.5, confidence=0.9)
    assert (s.method, s.n, s.n_evals, s.p) == ("wilson", 10, 200, 0.5)
    lo, up = proportion_confint(ev.counts, 10, alpha=0.1, method="wilson")
    assert s.coverage == pytest.approx(np.mean((lo <= 0.5) & (0.5 <= up)), abs=1e-12)
    ev_b = rs.evaluations(POOL_B, 10, 200, 1, "B", "args")
    ps = rs.pair_summary(ev, ev_b, alpha=0.1, confidence=0.9)
    assert (ps.n, ps.n_pairs, ps.alpha, ps.confidence) == (10, 200, 0.1, 0.9)
    rej = sum(
        fisher_exact([[ka, 10 - ka], [kb, 10 - kb]]).pvalue < 0.1
        for ka, kb in zip(ev.counts.tolist(), ev_b.counts.tolist(), strict=True)
    )
    assert ps.fisher_rejection_rate == rej / 200
    dis = 0
    for ka, kb in zip(ev.counts.tolist(), ev_b.counts.tolist(), strict=True):
        (la, ua), (lb, ub) = naive.wilson(ka, 10, 0.9), naive.wilson(kb, 10, 0.9)
        dis += ua < lb or ub < la
    assert ps.disjoint_rate == dis / 200
    ev20 = rs.evaluations(POOL_B, 20, 200, 1, "B", "args")
    assert rs.pair_summary(ev, ev20).n == -1
    with pytest.raises(ValueError, match="as many A as B"):
        rs.pair_summary(ev, rs.evaluations(POOL_B, 10, 100, 1, "B", "args"))
    with pytest.raises(ValueError, match="alpha"):
        rs.pair_summary(ev, ev_b, alpha=1.5)
    with pytest.raises(ValueError, match="confidence"):
        rs.interval_summary(ev, confidence=95)
    with pytest.raises(ValueError, match="lower"):
        rs.rate_range(ev, lower=-0.1)
    assert rs.rate_range(ev, 0.0, 1.0) == (ev.rates.min(), ev.rates.max())
    assert rs.rate_at_least(ev, 0) == 1.0 and rs.rate_at_least(ev, 10) == np.mean(ev.counts == 10)
    ex = rs.exact_pair_probabilities(0.6, 7, 0.8, 9, confidence=0.9)
    assert (ex.p_a, ex.n_a, ex.p_b, ex.n_b, ex.confidence) == (0.6, 7, 0.8, 9, 0.9)
    disjoint, b_le = naive.pair_probabilities(0.6, 7, 0.8, 9, confidence=0.9)
    assert ex.disjoint == pytest.approx(disjoint, abs=1e-12)
    assert ex.b_not_better == pytest.approx(b_le, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rs.draw_counts(POOL_A, 0, 10, 1), r"^n must be an integer >= 1, got 0$"),
        (lambda: rs.draw_counts(POOL_A, 5, 0, 1), r"^n_evals must be an integer >= 1, got 0$"),
        (lambda: rs.draw_counts(POOL_A, 5, 2, 2**63), r"^seed must be an integer in \[0, 2\*\*63"),
        (lambda: rs.draw_counts(POOL_A, 5, 2, True), r"^seed must be an integer"),
        (lambda: rs.exact_pair_probabilities(1.5, 5, 0.5, 5), r"^p_a must be a probability"),
        (lambda: rs.exact_pair_probabilities(0.5, 5, 1.5, 5), r"^p_b must be a probability"),
        (lambda: rs.exact_pair_probabilities(0.5, 0, 0.5, 5), r"^n_a must be an integer >= 1"),
        (lambda: rs.exact_pair_probabilities(0.5, 5, 0.5, 0), r"^n_b must be an integer >= 1"),
        (lambda: rs.rate_at_least(EV10, -1), r"^k must be an integer >= 0, got -1$"),
        (lambda: rs.rate_range(EV10, lower=-0.1), r"^lower must be a probability"),
        (lambda: rs.rate_range(EV10, upper=1.1), r"^upper must be a probability"),
    ],
)
def test_validation_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


EV10 = rs.evaluations(POOL_A, 10, 4, 3, "A", "names")


def test_seed_range_edges_and_defaults():
    assert rs.draw_counts(POOL_A, 3, 2, 2**63 - 1).shape == (2,)
    a, b = rs.evaluation_pairs(POOL_A, POOL_B, 5, 3, 1, "A", "B")
    assert a.purpose == b.purpose == "compare:A|B"
    assert rs.interval_summary(a).method == "wilson"
    # rate_range reports observed rates (inverted CDF), never a value between two of them
    ev = rs.evaluations(POOL_A, 10, 4, 3, "A", "median")
    lo, hi = rs.rate_range(ev, 0.5, 0.5)
    assert lo in set(ev.rates.tolist()) and lo == hi
    assert lo == np.quantile(ev.rates, 0.5, method="inverted_cdf")


def test_boundaries_count_as_inside_and_as_rejections():
    zeros, ones = np.zeros(50, bool), np.ones(50, bool)
    ev0 = rs.evaluations(zeros, 10, 20, 1, "Z", "edge")
    # Wilson's interval for 0/10 is [0, 0.278]: p = 0 lies on its closed lower end
    assert rs.interval_summary(ev0, "wilson", p=0.0).coverage == 1.0
    ev1 = rs.evaluations(ones, 10, 20, 1, "O", "edge")
    assert rs.interval_summary(ev1, "wilson", p=1.0).coverage == 1.0
    # alpha equal to an attainable p-value: p < alpha is strict, that table is not rejected
    from evalsim.stats.two_sample.fisher import fisher_pvalue_table

    p_0_vs_2 = float(np.asarray(fisher_pvalue_table(2, 2))[0, 2])
    a = rs.evaluations(zeros, 2, 5, 1, "Z", "edge")
    b = rs.evaluations(ones, 2, 5, 1, "O", "edge")
    assert rs.pair_summary(a, b, alpha=p_0_vs_2).fisher_rejection_rate == 0.0
    # the tie rule (evalsim.stats.decision): an alpha within 1e-9 relative of p is a tie ...
    assert rs.pair_summary(a, b, alpha=np.nextafter(p_0_vs_2, 1)).fisher_rejection_rate == 0.0
    # ... and one clearly above p rejects
    assert rs.pair_summary(a, b, alpha=p_0_vs_2 * (1 + 1e-7)).fisher_rejection_rate == 1.0
