"""evalsim.stats.simreal.methods: intervals against ppi_py and plain references, exact operating
characteristics against brute-force enumeration and Monte Carlo, validation."""

from __future__ import annotations

import math

import naive_simreal as naive
import numpy as np
import pytest

from evalsim.stats.simreal import methods as sr

# Pinned pair tables (n11, n10, n01, n00) and simulated counts (k_sim, N).
CASES = [
    ((14, 2, 3, 1), (1500, 2000)),
    ((8, 0, 1, 1), (430, 500)),
    ((30, 5, 2, 13), (7000, 10000)),
    ((3, 2, 2, 3), (260, 500)),
    ((40, 1, 0, 9), (9100, 10000)),
]


def _data(table, sims):
    real, twin = naive.lists(*table)
    return real, twin, sr.simreal_data(real, twin, *sims)


def _sim_list(k, n):
    return [1] * k + [0] * (n - k)


@pytest.mark.parametrize("table,sims", CASES)
@pytest.mark.parametrize("method,lam", [("ppi", 1), ("ppi_plus", None)])
def test_ppi_matches_ppi_py(table, sims, method, lam):
    ppi_py = pytest.importorskip("ppi_py")
    real, twin, d = _data(table, sims)
    sims_list = _sim_list(*sims)
    lo, hi = ppi_py.ppi_mean_ci(
        np.array(real, float),
        np.array(twin, float),
        np.array(sims_list, float),
        alpha=0.05,
        lam=lam,
    )
    r = sr.simreal_interval(d, method)
    assert r.lower == pytest.approx(float(np.ravel(lo)[0]), rel=1e-10, abs=1e-12)
    assert r.upper == pytest.approx(float(np.ravel(hi)[0]), rel=1e-10, abs=1e-12)
    assert r.validity == "asymptotic"


@pytest.mark.parametrize("table,sims", CASES)
def test_intervals_match_plain_reference(table, sims):
    real, twin, d = _data(table, sims)
    sims_list = _sim_list(*sims)
    for conf in (0.9, 0.95):
        alpha = 1 - conf
        for method, tuned in (("ppi", False), ("ppi_plus", True)):
            lo, hi, lam = naive.ppi(real, twin, sims_list, alpha, tuned)
            r = sr.simreal_interval(d, method, conf)
            assert (r.lower, r.upper, r.lam) == pytest.approx((lo, hi, lam), rel=1e-10, abs=1e-12)
        for share in (0.5, 0.8):
            lo, hi = naive.stratified(
                real, twin, *sims, alpha, share, sr.STRATUM_SHARE, sr.SIM_SHARE
            )
            r = sr.simreal_interval(d, "stratified_exact", conf, share)
            assert (r.lower, r.upper) == pytest.approx((lo, hi), rel=1e-12, abs=1e-14)
            assert r.validity == "finite-sample" and math.isnan(r.lam)
        cp = naive.cp(sum(real), len(real), alpha)
        r = sr.simreal_interval(d, "clopper_pearson", conf)
        assert (r.lower, r.upper) == pytest.approx(cp, rel=1e-12, abs=1e-14)


def test_result_fields_are_the_documented_quantities():
    real, twin, d = _data((14, 2, 3, 1), (1500, 2000))
    r = sr.simreal_interval(d, "ppi")
    n = 20
    cp_w = r.cp_upper - r.cp_lower
    assert r.effective_n == pytest.approx(n * (cp_w / (r.upper - r.lower)) ** 2, rel=1e-12)
    y, t = np.array(real, float), np.array(twin, float)
    assert r.correlation == pytest.approx(np.corrcoef(y, t)[0, 1], rel=1e-12)
    assert r.sim_bias == pytest.approx(1500 / 2000 - 16 / 20, rel=1e-12)
    assert sr.simreal_interval(d, "clopper_pearson").effective_n == pytest.approx(n)
    # constant twins: no correlation defined
    _, _, d2 = _data((5, 5, 0, 0), (100, 100))
    assert math.isnan(d2.correlation)


@pytest.mark.parametrize(
    "p_real,p_sim,rho,n,n_sim",
    [(0.7, 0.6, 0.5, 4, 5), (0.9, 0.9, 0.0, 5, 6), (0.5, 0.7, -0.2, 3, 7), (0.8, 0.8, 0.9, 4, 4)],
)
def test_oc_matches_brute_force_enumeration(p_real, p_sim, rho, n, n_sim):
    oc = sr.operating_characteristics(p_real, p_sim, rho, n, n_sim)
    alpha = 0.05

    def via(method):
        def f(n11, n10, n01, n00, ks):
            real, twin = naive.lists(n11, n10, n01, n00)
            sims = _sim_list(ks, n_sim)
            if method == "ppi":
                return naive.ppi(real, twin, sims, alpha, False)[:2]
            if method == "ppi_plus":
                return naive.ppi(real, twin, sims, alpha, True)[:2]
            if method == "clopper_pearson":
                return naive.cp(n11 + n10, n, alpha)
            return naive.stratified(
                real, twin, ks, n_sim, alpha, sr.DEFAULT_REAL_SHARE, sr.STRATUM_SHARE, sr.SIM_SHARE
            )

        return f

    for m in ("clopper_pearson", "ppi", "ppi_plus", "stratified_exact"):
        cov, wid = naive.exact_oc(via(m), p_real, p_sim, rho, n, n_sim)
        assert oc.coverage[m] == pytest.approx(cov, abs=1e-12), m
        assert oc.width[m] == pytest.approx(wid, abs=1e-12), m
    assert oc.skipped_mass < 1e-12


def test_oc_agrees_with_monte_carlo():
    p_real, p_sim, rho, n, n_sim = 0.8, 0.7, 0.6, 20, 500
    oc = sr.operating_characteristics(p_real, p_sim, rho, n, n_sim)
    rng = np.random.default_rng(20261201)
    cells = np.array(sr.joint_law(p_real, p_sim, rho))
    reps = 2000
    hits = {m: 0 for m in sr.METHODS}
    for _ in range(reps):
        tab = rng.multinomial(n, cells)
        d = sr.SimRealData(*map(int, tab), int(rng.binomial(n_sim, p_sim)), n_sim)
        for m, r in sr.simreal_intervals(d).items():
            hits[m] += r.lower <= p_real <= r.upper
    for m in sr.METHODS:
        c = oc.coverage[m]
        se = math.sqrt(c * (1 - c) / reps)
        assert abs(hits[m] / reps - c) <= 4 * se + 1e-3, m


@pytest.mark.parametrize("n", [5, 10, 20])
def test_stratified_exact_coverage_holds_on_a_grid(n):
    worst = 1.0
    for p_real in (0.1, 0.5, 0.8, 0.95):
        for bias in (-0.3, 0.0, 0.04):
            p_sim = min(max(p_real + bias, 0.02), 0.98)
            for rho in (-0.3, 0.0, 0.5, 0.95):
                try:
                    oc = sr.operating_characteristics(p_real, p_sim, rho, n, 2 * n)
                except ValueError:
                    continue  # infeasible law
                worst = min(worst, oc.coverage["stratified_exact"])
    assert worst >= 0.95 - 1e-9
    assert worst < 0.999  # the enumeration measures something: not a trivially full interval


def test_width_adapts_at_zero_correlation_and_gains_at_high_correlation():
    oc0 = sr.operating_characteristics(0.8, 0.8, 0.0, 50, 2000, joint=False)
    oc9 = sr.operating_characteristics(0.8, 0.8, 0.9, 100, 10000, joint=False)
    assert "joint_exact" not in oc9.width
    ratio0 = oc0.width["stratified_exact"] / oc0.width["clopper_pearson"]
    ratio9 = oc9.width["stratified_exact"] / oc9.width["clopper_pearson"]
    assert 1.0 < ratio0 <= 1.10
    assert ratio9 < 0.95


def test_joint_law_marginals_and_correlation():
    p11, p10, p01, p00 = sr.joint_law(0.8, 0.7, 0.5)
    assert p11 + p10 == pytest.approx(0.8)
    assert p11 + p01 == pytest.approx(0.7)
    assert p11 + p10 + p01 + p00 == pytest.approx(1.0)
    phi = (p11 * p00 - p10 * p01) / math.sqrt(0.8 * 0.2 * 0.7 * 0.3)
    assert phi == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"correlation must be in \[.*got 0.99"):
        sr.joint_law(0.95, 0.5, 0.99)


@pytest.mark.parametrize(
    "args,match",
    [
        (([1, 0, 2], [1, 0, 1], 5, 10), r"real must hold 0/1 outcomes, got 2 at index 2"),
        (([1, 0], [1, 0, 1], 5, 10), r"same length, got 2 and 3"),
        (([], [], 5, 10), r"n = 0"),
        (([1, 0, 1], [1, 0, 1], 2, 2), r"n_sim must be >= n = 3"),
        (([1, 0, 1], [1, 0, 1], 12, 10), r"k_sim must be in \[0, n_sim = 10\], got 12"),
        (([1, 0, 1], [1, 0, 0.5], 5, 10), r"twin must hold 0/1 outcomes, got 0.5"),
    ],
)
def test_bad_data_raises(args, match):
    with pytest.raises(ValueError, match=match):
        sr.simreal_data(*args)


def test_bad_arguments_raise():
    _, _, d = _data((14, 2, 3, 1), (1500, 2000))
    with pytest.raises(ValueError, match=r"method must be one of .*got 'betting'"):
        sr.simreal_interval(d, "betting")
    with pytest.raises(ValueError, match=r"real_share must be a number in \(0, 1\), got 1.0"):
        sr.simreal_interval(d, real_share=1.0)
    with pytest.raises(ValueError, match=r"n must be in \[1, 400\]"):
        sr.operating_characteristics(0.8, 0.8, 0.0, 401, 1000)
