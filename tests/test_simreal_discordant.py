"""``discordant_exact``: the interval against a plain SciPy reference, exact coverage on
adversarial laws, the numba enumeration against a brute-force one, Monte Carlo."""

from __future__ import annotations

import math

import naive_simreal as naive
import numpy as np
import pytest
from scipy import integrate, optimize, stats

from evalsim.stats.simreal import _kernels as K
from evalsim.stats.simreal import discordant as dis
from evalsim.stats.simreal import methods as sr
from evalsim.stats.simreal import real_only as ro

M = "discordant_exact"

# Pinned pair tables (n11, n10, n01, n00) and simulated counts (k_sim, N).
CASES = [
    ((14, 2, 3, 1), (1500, 2000)),
    ((40, 0, 1, 9), (7900, 10000)),
    ((3, 2, 2, 3), (260, 500)),
    ((45, 0, 0, 5), (9500, 10000)),
    ((0, 0, 0, 6), (0, 12)),
    ((7, 1, 0, 0), (12, 12)),
]


def _level(x: int, size: int, u: float) -> float:
    """The rate r with P_r(Binomial(size, r) <= x) = u, by root finding on the CDF."""
    if u >= 1.0:
        return 0.0
    if x >= size:
        return 1.0
    return optimize.brentq(
        lambda r: stats.binom.cdf(x, size, r) - u, 0.0, 1.0, xtol=1e-15, rtol=1e-15
    )


def _grid(t: float, points: int, g: float = 0.5):
    u = [1.0]
    u += [1.0 - v for v in np.geomspace(1e-12, 0.5, points)]
    u += list(np.geomspace(0.5, t ** (1.0 / g), points)[1:])
    return u


def ref_upper(x: int, n_sim: int, y: int, n: int, beta: float, points: int) -> float:
    """Certified supremum of s + b over {P_b(N10 <= y) > min(1, t / sqrt(P_s(K <= x)))},
    written from the definition: the segment bound on the same grid, CDF root finding (t is
    the method's certified threshold, tested on its own below; the exponent g from the
    design, 0.25 + 1.15 (sqrt(n / N) - 0.1) in [0.25, 0.75] rounded to 0.05)."""
    g = round(min(max(0.25 + 1.15 * (math.sqrt(n / n_sim) - 0.1), 0.25), 0.75) * 20) / 20
    assert g == dis.combine_power(n, n_sim)
    t = dis.combine_t(beta, n, g)
    u = _grid(t, points, g)
    a = [_level(x, n_sim, v) for v in u]
    best = 0.0
    for j in range(len(u) - 1):
        c = min(t * u[j] ** -g, 1.0)
        b = 0.0 if c >= 1.0 else _level(y, n, c)
        best = max(best, a[j + 1] + b)
    return min(best, 1.0)


def sup_from_below(x: int, n_sim: int, y: int, n: int, beta: float) -> float:
    """The supremum of s + b (capped at 1) over the same region, searched on a dense grid of
    s: a value the certified bound must not undercut."""
    t = 1.0 - math.sqrt(1.0 - beta)
    s = np.linspace(0.0, 1.0, 200_001)
    p1 = stats.binom.cdf(x, n_sim, s)
    with np.errstate(divide="ignore"):
        c = np.where(p1 > 0, t / np.sqrt(p1), 1.0)
    ok = c < 1.0
    b = np.ones_like(s) if y >= n else stats.beta.ppf(1.0 - c[ok], y + 1, n - y)
    return min(float(np.max(s[ok] + (b if y < n else 1.0))), 1.0)


def blaker_acceptability(p: float, k: int, n: int) -> float:
    """Blaker's acceptability of p at count k, from the definition with SciPy tails:
    the probability of the counts whose smaller tail is at most k's."""
    x = np.arange(n + 1)
    tail = np.minimum(stats.binom.cdf(x, n, p), stats.binom.sf(x - 1, n, p))
    pmf = stats.binom.pmf(x, n, p)
    return float(sum(pmf[i] for i in range(n + 1) if tail[i] <= tail[k] * (1 + 1e-10)))


def ref_blaker(k: int, n: int, alpha: float, points: int = 201):
    """Blaker's interval (convex hull of the accepted rates): the outermost accepted points
    of a uniform grid, each end refined by bisection against its rejected neighbour."""
    g = np.linspace(0.0, 1.0, points)
    ok = [i for i, p in enumerate(g) if blaker_acceptability(p, k, n) > alpha]
    ends = []
    for inside, outside in ((ok[0], ok[0] - 1), (ok[-1], ok[-1] + 1)):
        if outside < 0 or outside >= points:
            ends.append(g[inside])
            continue
        a, b = g[outside], g[inside]
        for _ in range(60):
            mid = 0.5 * (a + b)
            if blaker_acceptability(mid, k, n) > alpha:
                b = mid
            else:
                a = mid
        ends.append(b)
    return ends[0], ends[1]


def ref_interval(table, sims, alpha: float, share: float, points: int):
    n11, n10, n01, n00 = table
    k_sim, n_sim = sims
    n = n11 + n10 + n01 + n00
    beta = alpha * (1.0 - share) / 2.0
    hi = ref_upper(k_sim, n_sim, n10, n, beta, points)
    lo = 1.0 - ref_upper(n_sim - k_sim, n_sim, n01, n, beta, points)
    r_lo, r_hi = ref_blaker(n11 + n10, n, alpha * share)
    a, b = max(lo, r_lo), min(hi, r_hi)
    return (a, b) if a <= b else (r_lo, r_hi)


def _data(table, sims):
    real, twin = naive.lists(*table)
    return sr.simreal_data(real, twin, *sims)


@pytest.mark.parametrize("table,sims", CASES)
def test_interval_matches_plain_reference(table, sims):
    d = _data(table, sims)
    for conf, share in ((0.95, None), (0.9, 0.3)):
        r = sr.simreal_interval(d, M, conf, share)
        s = sr.DISCORDANT_REAL_SHARE if share is None else share
        want = ref_interval(table, sims, 1.0 - conf, s, sr.COMBINE_GRID)
        assert (r.lower, r.upper) == pytest.approx(want, abs=1e-9)
        assert r.validity == "finite-sample" and r.lam == 1.0
        assert r.method == M


@pytest.mark.parametrize(
    "x,n_sim,y,n", [(1500, 2000, 2, 20), (40, 50, 0, 50), (5, 12, 3, 6), (9000, 10000, 1, 100)]
)
def test_certified_bound_is_above_the_searched_supremum_and_close_to_it(x, n_sim, y, n):
    beta = 0.01
    t = 1.0 - math.sqrt(1.0 - beta)
    u, c = dis.combine_grid(t)
    got = K.discordant_upper(dis.sim_levels([x], n_sim, u), dis.pair_levels(n, c, [y]))[0, 0]
    below = sup_from_below(x, n_sim, y, n, beta)
    assert below <= got + 1e-12
    assert got - below < 2e-3


def test_combination_level_is_beta():
    # P(p_b <= min(1, t / sqrt(p_s))) for independent uniforms is 2 t - t^2 = beta
    beta = 0.01
    t = dis.combine_t0(beta)
    assert 2 * t - t * t == pytest.approx(beta, rel=1e-12)
    rng = np.random.default_rng(5)
    u1, u2 = rng.random(400_000), rng.random(400_000)
    hit = np.mean(u2 <= np.minimum(1.0, t / np.sqrt(u1)))
    assert abs(hit - beta) < 4 * math.sqrt(beta / 400_000)


def _laws(p_real, p_sim):
    """Correlation 0, the largest and the smallest correlation the marginals allow (a
    discordant cell empty: the boundary laws where p_R = p_S + p10 or p_S - p01)."""
    sd = math.sqrt(p_real * (1 - p_real) * p_sim * (1 - p_sim))
    hi = (min(p_real, p_sim) - p_real * p_sim) / sd
    lo = (max(0.0, p_real + p_sim - 1) - p_real * p_sim) / sd
    return (0.0, hi * (1 - 1e-12), lo * (1 - 1e-12))


@pytest.mark.parametrize("share", [sr.DISCORDANT_REAL_SHARE, 0.05])
def test_exact_coverage_holds_on_adversarial_laws(share):
    worst = 1.0
    # the design's exponent g: 0.75 for the first three, 0.4 and 0.25 for the last two
    for n, n_sim in ((5, 10), (12, 30), (25, 60), (15, 300), (20, 2000)):
        for p_real in (0.03, 0.5, 0.9, 0.98):
            for bias in (-0.15, 0.0, 0.08):
                p_sim = min(max(p_real + bias, 0.01), 0.99)
                for rho in _laws(p_real, p_sim):
                    oc = sr.operating_characteristics(
                        p_real, p_sim, rho, n, n_sim, real_share=share, joint=False
                    )
                    assert oc.discordant_share == share
                    worst = min(worst, oc.coverage[M])
    # many discordant pairs, none of one kind: where the sim + p10 bound is nearly tight
    for p_sim, p10 in ((0.1, 0.45), (0.2, 0.6)):
        p_real = p_sim + p10
        rho = _laws(p_real, p_sim)[1]
        oc = sr.operating_characteristics(p_real, p_sim, rho, 40, 80, real_share=share, joint=False)
        worst = min(worst, oc.coverage[M])
    assert worst >= 0.95 - 1e-9
    assert worst < 0.995  # the enumeration measures something


@pytest.mark.parametrize(
    "p_real,p_sim,rho,n,n_sim",
    [
        (0.7, 0.6, 0.5, 4, 5),
        (0.9, 0.9, 0.0, 5, 6),
        (0.5, 0.7, -0.2, 3, 7),
        (0.8, 0.8, 0.9, 4, 4),
        (0.8, 0.75, 0.5, 2, 200),  # g = 0.25
    ],
)
def test_oc_matches_brute_force_enumeration(p_real, p_sim, rho, n, n_sim):
    for share in (None, 0.2):
        oc = sr.operating_characteristics(
            p_real, p_sim, rho, n, n_sim, real_share=share, joint=False
        )

        def interval(n11, n10, n01, n00, ks, share=share):
            d = sr.SimRealData(n11, n10, n01, n00, ks, n_sim)
            r = sr.simreal_interval(d, M, 0.95, share)
            return r.lower, r.upper

        cov, wid = naive.exact_oc(interval, p_real, p_sim, rho, n, n_sim)
        assert oc.coverage[M] == pytest.approx(cov, abs=1e-12)
        assert oc.width[M] == pytest.approx(wid, abs=1e-12)


def test_oc_agrees_with_monte_carlo():
    p_real, p_sim, rho, n, n_sim = 0.8, 0.75, 0.6, 20, 500
    oc = sr.operating_characteristics(p_real, p_sim, rho, n, n_sim, real_share=0.2)
    rng = np.random.default_rng(20261202)
    cells = np.array(sr.joint_law(p_real, p_sim, rho))
    reps = 1500
    hits, widths = 0, []
    for _ in range(reps):
        tab = rng.multinomial(n, cells)
        d = sr.SimRealData(*map(int, tab), int(rng.binomial(n_sim, p_sim)), n_sim)
        r = sr.simreal_interval(d, M, 0.95, 0.2)
        hits += r.lower <= p_real <= r.upper
        widths.append(r.width)
    c = oc.coverage[M]
    assert abs(hits / reps - c) <= 4 * math.sqrt(c * (1 - c) / reps) + 1e-3
    assert abs(np.mean(widths) - oc.width[M]) <= 4 * np.std(widths) / math.sqrt(reps)


def test_width_gains_at_high_correlation_and_adapts_at_zero():
    oc9 = sr.operating_characteristics(0.8, 0.8, 0.9, 100, 10000, joint=False)
    oc0 = sr.operating_characteristics(0.8, 0.8, 0.0, 50, 2000, joint=False)
    cp9, cp0 = oc9.width["clopper_pearson"], oc0.width["clopper_pearson"]
    assert oc9.width[M] / cp9 < 0.9
    assert oc9.width[M] < oc9.width["stratified_exact"]
    assert 1.0 < oc0.width[M] / cp0 <= 1.10


def test_registry_and_defaults():
    assert M in sr.METHODS and sr.VALIDITY[M] == "finite-sample"
    for n, big in ((50, 500), (50, 10_000)):
        assert sr.VALIDITY[sr.recommended(n, big)] == "finite-sample"
    d = _data((14, 2, 3, 1), (1500, 2000))
    a = sr.simreal_interval(d, M)
    b = sr.simreal_interval(d, M, 0.95, sr.DISCORDANT_REAL_SHARE)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    assert a.estimate == pytest.approx(1500 / 2000 + (2 - 3) / 20)
    # the stratified interval keeps its own default share
    s = sr.simreal_interval(d, "stratified_exact")
    t = sr.simreal_interval(d, "stratified_exact", 0.95, sr.DEFAULT_REAL_SHARE)
    assert (s.lower, s.upper) == (t.lower, t.upper)
    with pytest.raises(ValueError, match=r"real_share must be a number in \(0, 1\), got 0.0"):
        sr.simreal_interval(d, M, 0.95, 0.0)


@pytest.mark.parametrize("n,alpha", [(7, 0.05), (20, 0.035), (50, 0.015)])
def test_blaker_table_matches_brute_force_inversion(n, alpha):
    lo, hi = ro.blaker_table(n, alpha)
    cp_lo, cp_hi = np.array([naive.cp(k, n, alpha) for k in range(n + 1)]).T
    for k in sorted({0, 1, 2, n // 3, n // 2, n - 2, n - 1, n}):
        want = ref_blaker(k, n, alpha)
        # the ends agree; the method's are outside every accepted rate (never inside)
        assert (lo[k], hi[k]) == pytest.approx(want, abs=1e-9)
        assert cp_lo[k] - 1e-12 <= lo[k] and hi[k] <= cp_hi[k] + 1e-12
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0)


@pytest.mark.parametrize("n,alpha", [(10, 0.015), (37, 0.035), (100, 0.015)])
def test_blaker_exact_coverage_and_shorter_than_clopper_pearson(n, alpha):
    lo, hi = ro.blaker_table(n, alpha)
    # the coverage sum_k pmf(k) [lo_k <= p <= hi_k] over a contiguous range of k is
    # quasi-concave in p between ends: its minimum is at the ends (approached from outside)
    ends = np.concatenate([lo, hi])
    p = np.concatenate([ends, ends - 1e-12, ends + 1e-12, np.linspace(0, 1, 2001)])
    p = np.clip(p, 0.0, 1.0)
    k = np.arange(n + 1)
    inside = (lo[None, :] <= p[:, None]) & (p[:, None] <= hi[None, :])
    cov = np.sum(stats.binom.pmf(k[None, :], n, p[:, None]) * inside, axis=1)
    assert cov.min() >= 1 - alpha - 1e-12
    assert cov.min() < 1 - alpha + 0.01  # measures something
    cp_lo, cp_hi = np.array([naive.cp(int(j), n, alpha) for j in k]).T
    assert np.sum(hi - lo) < 0.99 * np.sum(cp_hi - cp_lo)


@pytest.mark.parametrize("g", [0.25, 0.5, 0.65])
def test_continuous_level_is_the_integral_of_the_threshold(g):
    beta = 0.0075
    t = dis.combine_t0(beta, g)
    us = t ** (1 / g)  # the threshold is 1 below u*
    assert t * us**-g == pytest.approx(1.0, rel=1e-12)
    # on a log scale (u = e^-x), where the integrand t e^(-(1 - g) x) is smooth
    rest, _ = integrate.quad(lambda x: t * math.exp(-(1 - g) * x), 0.0, -math.log(us))
    area = us + rest
    assert area == pytest.approx(beta, rel=1e-9)
    assert dis.continuous_level(t, g) == pytest.approx(beta, rel=1e-12)


def test_combination_power_follows_the_design():
    assert [dis.combine_power(n, big) for n, big in ((100, 500), (50, 500), (50, 10000))] == [
        0.65,
        0.5,
        0.25,
    ]
    assert dis.combine_power(400, 400) == 0.75


@pytest.mark.parametrize("n,g", [(10, 0.5), (50, 0.5), (100, 0.5), (50, 0.3), (100, 0.65)])
def test_certified_threshold_bounds_the_level(n, g):
    beta = 0.0075
    t0, t = dis.combine_t0(beta, g), dis.combine_t(beta, n, g)
    assert t > 1.1 * t0  # the certificate buys something
    assert dis.certified_level(t, n, g) <= beta
    assert dis.certified_level(1.01 * t, n, g) > beta  # the largest such t (bisection)
    # the certificate is above the level computed directly at rates between its nodes
    b = np.concatenate([np.linspace(0.0005, 0.9995, 3000), [1e-6, 1 - 1e-9]])
    y = np.arange(n + 1)
    F = stats.binom.cdf(y[None, :], n, b[:, None])
    with np.errstate(divide="ignore", over="ignore"):
        h = np.where(F > 0, np.minimum(1.0, (t / F) ** (1 / g)), 1.0)
    level = np.sum(stats.binom.pmf(y[None, :], n, b[:, None]) * h, axis=1)
    assert level.max() <= dis.certified_level(t, n, g) + 1e-15
    assert level.max() > 0.8 * beta
    # Monte Carlo: uniform simulated p-value, binomial pair p-value at the worst rate
    rng = np.random.default_rng(n)
    bw = b[np.argmax(level)]
    n10 = rng.binomial(n, bw, 400_000)
    pb = stats.binom.cdf(n10, n, bw)
    hit = np.mean(pb <= np.minimum(1.0, t * rng.random(n10.size) ** -g))
    assert hit <= beta + 4 * math.sqrt(beta / n10.size)
