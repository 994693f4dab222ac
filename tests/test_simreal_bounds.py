"""Width lower bounds for issue 27's gain target (``stats.simreal._bounds``): the
deterministic family bound against a brute-force enumeration written here, the lemma it
rests on, and every bound below the exact widths of valid intervals."""

from __future__ import annotations

import math

import naive_simreal as naive
import numpy as np
import pytest
from scipy import stats
from test_simreal_discordant import _level, ref_blaker

from evalsim.stats.simreal import _bounds as sb
from evalsim.stats.simreal import methods as sr


def brute_family_ratio(p_real, p_sim, rho, n, share, alpha=0.05):
    """E[max(0, min(B_hi, p_S + CP(n10)) - max(B_lo, p_S - CP(n01)))] / E[CP width] over
    every pair table (math.comb multinomial), Blaker and one-sided CP by root finding."""
    p11, p10, p01, p00 = naive.joint(p_real, p_sim, rho)
    alpha_r = share * alpha
    beta = (alpha - alpha_r) / 2.0
    blaker = [ref_blaker(k, n, alpha_r) for k in range(n + 1)]
    upper = [_level(y, n, beta) for y in range(n + 1)]
    total = 0.0
    for i in range(n + 1):
        for j in range(n + 1 - i):
            for n11 in range(n - i - j + 1):
                n00 = n - i - j - n11
                prob = (
                    math.factorial(n)
                    / (math.factorial(i) * math.factorial(j))
                    / (math.factorial(n11) * math.factorial(n00))
                    * p10**i
                    * p01**j
                    * p11**n11
                    * p00**n00
                )
                b_lo, b_hi = blaker[n11 + i]
                lo = max(b_lo, p_sim - upper[j])
                hi = min(b_hi, p_sim + upper[i])
                total += prob * max(hi - lo, 0.0)
    cp_w = sum(
        stats.binom.pmf(k, n, p_real) * (naive.cp(k, n, alpha)[1] - naive.cp(k, n, alpha)[0])
        for k in range(n + 1)
    )
    return total / cp_w


@pytest.mark.parametrize(
    "p_real,rho,n,share", [(0.8, 0.5, 8, 0.6), (0.9, 0.9, 11, 0.3), (0.95, 0.9, 12, 0.7)]
)
def test_deterministic_family_bound_matches_brute_force(p_real, rho, n, share):
    got = sb.discordant_family_ratio(p_real, p_real, rho, n, [share])
    assert got["mass"] == pytest.approx(1.0, abs=1e-12)
    assert got["ratio"][share] == pytest.approx(
        brute_family_ratio(p_real, p_real, rho, n, share), rel=1e-7
    )


@pytest.mark.parametrize("n,beta", [(10, 0.0075), (50, 0.0075), (50, 0.02)])
def test_one_sided_cp_is_the_smallest_valid_monotone_upper_bound(n, beta):
    """The lemma of the family bound: any rate r just below CP_beta(j) has
    P_r(N <= j) > beta, so a monotone bound with U(j) < r misses r with probability
    above beta."""
    for j in range(n):
        u = _level(j, n, beta)
        assert sb._cp_upper_one_sided(np.array([j]), n, beta)[0] == pytest.approx(u, abs=1e-12)
        for r in (u * (1 - 1e-6), u - 1e-6):
            assert stats.binom.cdf(j, n, r) > beta


def test_bounds_are_below_the_exact_widths_of_valid_intervals():
    """At a small law, every bound is below the exact expected width (over CP's) of the
    intervals it covers: Pratt's of Clopper-Pearson and ``discordant_exact``; the randomized
    family's of ``discordant_exact`` at its default share (it is a member at every N); the
    randomized family bound is below the deterministic one at the same share, and
    ``discordant_exact`` too."""
    p_real, rho, n, n_sim = 0.9, 0.9, 12, 300
    oc = sr.operating_characteristics(p_real, p_real, rho, n, n_sim)
    cp_w = oc.width["clopper_pearson"]
    method = oc.width["discordant_exact"] / cp_w
    share = sr.DISCORDANT_REAL_SHARE
    rnd = sb.discordant_family_ratio(p_real, p_real, rho, n, [share], randomized=True)
    det = sb.discordant_family_ratio(p_real, p_real, rho, n, [share])
    pratt = sb.pratt_width_bound(p_real, p_real, rho, n, step=0.02)
    assert rnd["cp_width"] == pytest.approx(cp_w, rel=1e-9)
    assert pratt["cp_width"] == pytest.approx(cp_w, rel=1e-9)
    assert 0.0 < rnd["ratio"][share] <= method
    assert rnd["ratio"][share] <= det["ratio"][share] + 1e-9
    # discordant_exact reads n01 at a level set by k_sim: narrower than the deterministic
    # family's bound, so that bound does not cover it
    assert method < det["ratio"][share]
    assert 0.0 < pratt["ratio"] <= min(1.0, method)
    # every exact interval is above Pratt's bound, joint_exact (outside the family) too
    assert pratt["ratio"] <= oc.width["joint_exact"] / cp_w
