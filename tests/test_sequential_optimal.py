"""The optimal paired design and the anytime-valid tests (issue 44).

References are plain Python (tests/naive_optimal.py), SciPy (quad, binom, linprog) and a
Monte Carlo check; never the modules' own intermediate values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from naive_optimal import brute_force_best, lp_lower_bound, walk_oc, worst_null_size
from scipy.integrate import quad
from scipy.stats import binom

from evalsim.stats.sequential.anytime import (
    log_e_one_arm,
    log_e_paired,
    log_e_unpaired,
    one_arm_anytime,
    one_arm_fixed,
    paired_anytime_design,
    unpaired_anytime_design,
)
from evalsim.stats.sequential.designs import (
    operating_characteristics,
    type1_curve,
    unpaired_family_design,
)
from evalsim.stats.sequential.optimal import optimal_paired_design
from evalsim.stats.sequential.paired import paired_design

pytestmark = pytest.mark.xdist_group("sequential_optimal")


def _rows(design):
    r = design.rows
    return list(map(int, r["upper"])), list(map(int, r["final_upper"])), list(map(int, r["fut_hi"]))


# ------------------------------------------------------------------------- optimal design


@pytest.mark.parametrize(
    ("p_a", "p_b", "n_max", "alpha", "power"),
    [(0.1, 0.9, 5, 0.1, 0.5), (0.2, 0.8, 5, 0.15, 0.4), (0.3, 0.95, 5, 0.1, 0.35)],
)
def test_no_brute_force_design_beats_the_optimal(p_a, p_b, n_max, alpha, power):
    opt = optimal_paired_design(p_a, p_b, alpha, power, n_max)
    p10, p01 = p_a * (1 - p_b), (1 - p_a) * p_b
    best = brute_force_best(n_max, p10, p01, alpha, power)
    assert best is not None
    oc = operating_characteristics(opt.design, p_a, p_b)
    assert oc.power >= power
    assert opt.design.certificate.upper <= alpha
    assert oc.ess <= best[0] + 1e-12


@pytest.fixture(scope="module")
def opt30():
    return optimal_paired_design(0.6, 0.9, 0.05, 0.7, 30)


def test_optimal_oc_matches_plain_pair_time_dp_and_all_patterns(opt30):
    up, fin, fh = _rows(opt30.design)
    ess, pw = walk_oc(up, fin, fh, 30, 0.06, 0.36)
    oc = operating_characteristics(opt30.design, 0.6, 0.9)
    assert oc.ess == pytest.approx(ess, abs=1e-11)
    assert oc.power == pytest.approx(pw, abs=1e-11)
    assert opt30.ess == pytest.approx(ess, abs=1e-9)  # the walk-time DP agrees with pair time
    small = optimal_paired_design(0.2, 0.9, 0.1, 0.6, 10)
    u, f, h = _rows(small.design)
    worst = worst_null_size(u, f, h, 10)  # every 0/1 discordance pattern of 10 pairs
    assert worst <= 0.1 + 1e-12
    assert small.design.certificate.upper == pytest.approx(worst, abs=2e-10)


def test_lagrangian_bound_equals_the_linear_programme(opt30):
    # the randomised-design LP (HiGHS) and the backward induction's dual bound agree: the
    # induction solves the Lagrangian exactly; the deterministic design lies above both
    lp = lp_lower_bound(30, 0.06, 0.36, 0.05, 0.7)
    assert opt30.lower_bound == pytest.approx(lp, rel=1e-7)
    assert lp <= opt30.ess + 1e-9
    small = optimal_paired_design(0.1, 0.9, 0.1, 0.5, 5)
    best = brute_force_best(5, 0.09, 0.81, 0.1, 0.5)
    assert small.lower_bound <= best[0] + 1e-12


@pytest.mark.parametrize(("p_a", "p_b"), [(0.6, 0.9), (0.737, 0.877), (0.5, 0.7)])
def test_no_other_family_beats_the_optimal(p_a, p_b):
    n_max = 200
    opt = optimal_paired_design(p_a, p_b, 0.05, 0.8, n_max)
    ess_opt = operating_characteristics(opt.design, p_a, p_b).ess
    for fam, rho in (("pocock", None), ("obrien-fleming", None), ("power", 1.0), ("power", 2.0)):
        for n in (40, 80, 120, 200):
            d = paired_design(0.05, n, "one-sided", fam, rho=rho)
            oc = operating_characteristics(d, p_a, p_b)
            if oc.power >= 0.8:
                assert oc.ess >= ess_opt
    any_d = paired_anytime_design(0.05, n_max)
    oc = operating_characteristics(any_d, p_a, p_b)
    assert oc.power < 0.8 or oc.ess >= ess_opt


def test_optimal_monte_carlo_check(opt30):
    rng = np.random.default_rng(44)
    e = 20_000
    u = rng.random((e, 30))
    disc_b = u < 0.36
    disc_a = (u >= 0.36) & (u < 0.42)
    up, fin, fh = _rows(opt30.design)
    stops = np.empty(e)
    rej = np.zeros(e, dtype=bool)
    for i in range(e):
        d = w = 0
        for t in range(1, 31):
            if disc_b[i, t - 1]:
                d += 1
                w += 1
            elif disc_a[i, t - 1]:
                d += 1
            if t == 30 or d == 30:
                rej[i] = w >= fin[d]
                break
            if w >= up[d]:
                rej[i] = True
                break
            if w <= fh[d]:
                break
        stops[i] = t
    oc = operating_characteristics(opt30.design, 0.6, 0.9)
    se_n = stops.std() / math.sqrt(e)
    assert abs(stops.mean() - oc.ess) < 4 * se_n
    assert abs(rej.mean() - oc.power) < 4 * math.sqrt(oc.power * (1 - oc.power) / e)


# ------------------------------------------------------------------------- anytime tests


def test_paired_e_value_matches_quadrature():
    for d, w in ((10, 8), (25, 12), (3, 0)):
        num = quad(lambda t, d=d, w=w: t**w * (1 - t) ** (d - w), 0.5, 1.0, epsabs=0)[0]
        assert log_e_paired(d, w) == pytest.approx(math.log(2 * num / 0.5**d), rel=1e-9)
    num = quad(lambda t: t**15 * (1 - t) ** 5, 0.8, 1.0, epsabs=0)[0]
    ref = math.log(num / 0.2 / (0.8**15 * 0.2**5))
    assert log_e_one_arm(20, 15, 0.8) == pytest.approx(ref, rel=1e-9)


def test_unpaired_e_value_is_an_e_variable_for_every_common_rate():
    # one block: E[e] <= 1 for every p (the mixture of e-variables), by enumeration
    for p in np.linspace(0.0, 1.0, 41):
        mean = sum(
            (p if ya else 1 - p) * (p if yb else 1 - p) * math.exp(log_e_unpaired(1, ya, yb))
            for ya in (0, 1)
            for yb in (0, 1)
        )
        assert mean <= 1.0 + 1e-12


@pytest.fixture(scope="module")
def anytime_paired():
    return paired_anytime_design(0.05, 200)


def test_paired_anytime_type1_at_most_alpha_for_every_nuisance(anytime_paired):
    c = anytime_paired.certificate
    assert c.upper <= 0.05 + 1e-12
    # plain reference: P_{1/2}(walk ever crosses the rows by d = 200)
    up = anytime_paired.rows["upper"]
    dist = {0: 1.0}
    crossed = 0.0
    for d in range(1, 201):
        new: dict = {}
        for w, m in dist.items():
            for ww in (w, w + 1):
                new[ww] = new.get(ww, 0.0) + 0.5 * m
        dist = {}
        for w, m in new.items():
            if w >= up[d]:
                crossed += m
            else:
                dist[w] = m
    assert c.attained == pytest.approx(crossed, abs=1e-12)
    # 201 nuisance rates, all the same exact value (the walk does not depend on them)
    assert np.all(type1_curve(anytime_paired, np.linspace(0, 1, 201)) <= 0.05 + 1e-12)


def test_unpaired_anytime_type1_certified_over_every_rate():
    d = unpaired_family_design("anytime", 0.05, 40)
    assert d.certificate.upper <= 0.05 + 1e-12
    grid = np.concatenate([np.linspace(0, 1, 201), [1e-6, 0.5 - 1e-9, 0.999999]])
    assert np.all(type1_curve(d, grid) <= d.certificate.upper + 1e-12)


def test_one_arm_anytime_and_fixed_against_scipy():
    t = one_arm_anytime(0.8, 0.05, 60)
    assert t.certificate.upper <= 0.05 + 1e-12
    # worst null is p0: the claim rate rises with p (checked on 201 rates below p0)
    for p in np.linspace(0.0, 0.8, 201):
        assert t.oc(p)["power"] <= t.certificate.attained + 1e-12
    f = one_arm_fixed(0.8, 0.05, 50)
    k = f.upper[50]
    assert binom.sf(k - 1, 50, 0.8) <= 0.05 < binom.sf(k - 2, 50, 0.8)
    assert f.oc(0.9)["power"] == pytest.approx(binom.sf(k - 1, 50, 0.9), abs=1e-12)


# ------------------------------------------------------------------------- commands


def test_cli_designs_the_new_families_and_checks_a_log(tmp_path, capsys):
    from cli_run import run, run_json

    from evalsim.stats.sequential.io import load_design

    out = tmp_path / "opt.json"
    paired_family = "sequential design --kind paired --family".split()
    rep = run_json(
        capsys, *paired_family, "optimal", *"--pa 0.6 --pb 0.9 --n-max 60 --out".split(), out
    )
    d = load_design(out)
    assert d.boundary["family"] == "optimal" and d.futility["binding"] is True
    assert rep["certificate"]["max_type1_upper"] <= 0.05
    # the reloaded file is certified the same way (binding futility read back)
    assert d.certificate.upper == pytest.approx(rep["certificate"]["max_type1_upper"])
    any_out = tmp_path / "any.json"
    run_json(capsys, *paired_family, "anytime", "--n-max", "60", "--out", any_out)
    log = tmp_path / "log.csv"
    lines = ["policy,condition,success"]
    for c in range(12):
        lines += [f"A,{c},0", f"B,{c},1"]
    log.write_text("\n".join(lines) + "\n")
    chk = run_json(capsys, "sequential", "check", any_out, log, "--a", "A", "--b", "B")
    # E after 12 B-only pairs: 2^12 * P(theta >= 1/2 ...) >= 20 well before 12
    assert chk["verdict"] == "B better"
    rc, _, err = run(capsys, *paired_family, "optimal", "--out", tmp_path / "x.json")
    assert rc == 2 and "--pa" in err and "Traceback" not in err
    assert not (tmp_path / "x.json").exists()


def test_peek_prices_the_valid_alternatives(capsys):
    from cli_run import run_json

    rep = run_json(capsys, "peek", "--n", "40", "--p", "0.6", "--vs", "0.9")
    inst = rep["instead"]
    assert inst["anytime"]["false_win_rate"] <= 0.05
    assert inst["optimal"]["false_win_rate_max"] <= 0.05
    assert inst["optimal"]["ess"] < 40
    assert rep["false_win_rate_exact"] > 0.05  # naive peeking, beside them


# ------------------------------------------------------------------------- non-inferiority


def test_ni_block_e_variable_has_mean_at_most_one_on_the_whole_null():
    from evalsim.stats.sequential.noninferiority import ni_null_point

    for ta, tb, margin in ((0.5, 0.45, 0.1), (0.8, 0.9, 0.05), (0.3, 0.25, 0.2)):
        qa, qb = ni_null_point(ta, tb, margin)
        assert qb == pytest.approx(qa - margin)
        for pa in np.linspace(margin, 1.0, 41):
            for pb in np.linspace(0.0, pa - margin, 5):  # edge and interior of the null
                mean = (pa * ta / qa + (1 - pa) * (1 - ta) / (1 - qa)) * (
                    pb * tb / qb + (1 - pb) * (1 - tb) / (1 - qb)
                )
                assert mean <= 1.0 + 1e-12


def test_ni_designs_type1_exact_on_201_null_rates_and_adversarial_ones():
    from evalsim.stats.sequential.noninferiority import ni_anytime_design, ni_z_design

    margin = 0.1
    fixed = ni_z_design(margin, 0.05, 30, 1)
    # plain reference for the fixed rule: sum of binomial pmfs over its rejection region
    up = fixed.upper[0]

    def ref(pa):
        pb = pa - margin
        fa = binom.pmf(np.arange(31), 30, pa)
        return sum(fa[ka] * binom.sf(up[ka] - 1, 30, pb) for ka in range(31))

    rng = np.random.default_rng(7)
    for pa in np.concatenate([np.linspace(margin, 1, 201), rng.uniform(margin, 1, 20)]):
        assert fixed.rejection(pa, pa - margin) == pytest.approx(ref(pa), abs=1e-12)
        assert ref(pa) <= 0.05 + 1e-12
    for d in (ni_z_design(margin, 0.05, 30, 3), ni_anytime_design(margin, 0.05, 30)):
        assert d.type1 <= 0.05 + 1e-12
        for pa in np.concatenate([np.linspace(margin, 1, 201), [d.p_a_at]]):
            assert d.rejection(pa, pa - margin) <= 0.05 + 1e-12
    zero = ni_anytime_design(0.0, 0.05, 20)
    assert np.array_equal(zero.upper, unpaired_anytime_design(0.05, 20).rows["upper"])


def test_unpaired_lower_bound_against_the_lp_and_real_designs():
    from naive_optimal import unpaired_lp

    from evalsim.stats.sequential.designs import unpaired_design
    from evalsim.stats.sequential.optimal import unpaired_lower_bound

    lp = unpaired_lp(6, 0.2, 0.9, 0.1, 0.7)
    bound = unpaired_lower_bound(0.2, 0.9, 0.1, 0.7, 6)
    assert bound <= lp + 1e-9  # weak duality
    assert bound >= lp * (1 - 1e-3)  # the multiplier search reaches the LP optimum
    b = unpaired_lower_bound(0.6, 0.9, 0.05, 0.8, 31)
    for n in (31, 28, 25):  # certified designs of max n <= 31 and power >= 0.8 stay above it
        d = unpaired_design(0.05, n)
        oc = operating_characteristics(d, 0.6, 0.9)
        if oc.power >= 0.8:
            assert oc.ess >= b


# ------------------------------------------------------------------------- T41


def test_t41_rows_at_the_lesson_rate():
    from evalsim.products.sequential.stopping_rules import (
        stopping_rules_figure,
        stopping_rules_table,
    )

    t = stopping_rules_table(0.05, 60, [], [(0.6, 0.9)], 0.8, 5, 41)
    paired = t[(t["kind"] == "paired") & (t["exact power"] >= 0.8)]
    assert (paired["ess_ratio_to_optimal"] >= 1.0 - 1e-12).all()
    assert (t.loc[t["rule"].str.startswith("anytime"), "exact type I"] <= 0.05).all()
    peer = t[t["rule"].str.startswith("fieldtrial")].iloc[0]
    assert peer["exact type I"] > 0.05  # normal boundaries on a discrete statistic
    # the peer rule's power from a plain Monte Carlo of the McNemar z at its looks
    from evalsim.stats.sequential.zlooks import look_pairs, peer_bounds

    n = int(peer["max n"])
    looks = look_pairs(n, 5)
    bounds = peer_bounds(n, 5, 0.05)
    rng = np.random.default_rng(3)
    u = rng.random((20_000, n))
    b = np.cumsum(u < 0.36, axis=1)
    a = np.cumsum((u >= 0.36) & (u < 0.42), axis=1)
    hit = np.zeros(len(u), dtype=bool)
    for k, m in enumerate(looks):
        d = a[:, m - 1] + b[:, m - 1]
        z = np.where(d > 0, (b[:, m - 1] - a[:, m - 1]) / np.sqrt(np.maximum(d, 1)), 0.0)
        hit |= z >= bounds[k]
    se = math.sqrt(peer["exact power"] * (1 - peer["exact power"]) / len(u))
    assert abs(hit.mean() - peer["exact power"]) < 4 * se
    stopping_rules_figure(t)


def test_normal_boundaries_against_scipy_bivariate_normal():
    from scipy.stats import multivariate_normal, norm

    from evalsim.stats.sequential.core import spending
    from evalsim.stats.sequential.zlooks import normal_boundaries

    t = np.array([0.4, 1.0])
    b = normal_boundaries(t, 0.05)
    spent = spending(t, 0.05, "obrien-fleming")
    assert norm.sf(b[0]) == pytest.approx(spent[0], abs=1e-9)
    rho = math.sqrt(t[0] / t[1])
    mvn = multivariate_normal([0, 0], [[1, rho], [rho, 1]], seed=0)
    # P(Z1 < b1, Z2 >= b2) = P(Z1 < b1) - P(Z1 < b1, Z2 < b2)
    second = norm.cdf(b[0]) - mvn.cdf([b[0], b[1]])
    assert second == pytest.approx(spent[1] - spent[0], abs=2e-6)
