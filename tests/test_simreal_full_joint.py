"""``full_joint_exact``: its bound table against a plain SciPy inversion written from the
docstring, the facts its validity rests on (the corner bound of a cell, negative
association, a p-value rising with p0), the issue's gain and adaptivity at pinned laws, and
its edges. Exact coverage on adversarial laws, the enumeration against a brute-force sum
and Monte Carlo: ``test_simreal_exact_methods``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import simreal_exact_checks as checks
from scipy import stats

from evalsim.stats.simreal import _full_joint_kernels as K
from evalsim.stats.simreal import full_joint as fj
from evalsim.stats.simreal import joint
from evalsim.stats.simreal import methods as sr

M = "full_joint_exact"


def finest_cells(p0: float, finest: int):
    """The finest dyadic cells [a, b] of [p0, 1] (the first starts at p0)."""
    size = 1 << finest
    first = min(math.floor(p0 * size), size - 1)
    return [(max(p0, i / size), (i + 1) / size) for i in range(first, size)]


def ref_sup_tail(n, m, n_sim, p0, w, finest) -> np.ndarray:
    """max over the finest cells of sum_j Binomial(n, a - p0)(j) P(K >= w + m j),
    K ~ Binomial(N, b), for every w of the array ``w`` (SciPy's pmf and sf)."""
    best = np.zeros(len(w))
    j = np.arange(n + 1)
    for a, b in finest_cells(p0, finest):
        pj = stats.binom.pmf(j, n, a - p0)
        sf = stats.binom.sf(w[:, None] + m * j[None, :] - 1, n_sim, b)
        best = np.maximum(best, sf @ pj)
    return best


def ref_table(n, n_sim, alpha, grid, finest):
    """The lower bound table from the module docstring, by plain scans of the grid."""
    side = alpha / 2
    m = fj.weight(n, n_sim)
    w = np.arange(-m * n, n_sim + 2)
    sup = {p0: ref_sup_tail(n, m, n_sim, p0, w, finest) for p0 in grid}
    # B(w): the largest grid rate at which W >= w is rejected at side * ORDER_SHARE
    b_w = np.zeros(n_sim + m * n + 1)
    for p0 in grid:
        rejected = sup[p0][:-1] <= side * fj.ORDER_SHARE
        b_w = np.where(rejected, np.maximum(b_w, p0), b_w)
    cp = np.array([stats.beta.ppf(side, y, n - y + 1) if y > 0 else 0.0 for y in range(n + 1)])
    table = np.zeros((n + 1, len(b_w)))
    for y, i in itertools.product(range(n + 1), range(len(b_w))):
        t = max(cp[y], b_w[i])
        y_t = int(np.searchsorted(cp, t, side="left"))
        w_t = int(np.searchsorted(b_w, t, side="left"))  # index into w, len(b_w) = N + 1
        best = 0.0
        for p0 in grid:
            p_y = stats.binom.sf(y_t - 1, n, p0)
            if p_y <= side and sup[p0][w_t] <= 1 - (1 - side) / (1 - p_y):
                best = max(best, p0)
        table[y, i] = best
    return table, b_w


@pytest.fixture
def coarse(monkeypatch):
    grid = np.linspace(0.0, 1.0, 51)
    monkeypatch.setattr(fj, "RATE_GRID", grid)
    monkeypatch.setattr(fj, "FINEST", 7)
    fj._table.cache_clear()
    yield grid
    fj._table.cache_clear()


@pytest.mark.parametrize(("n", "n_sim", "alpha"), [(4, 8, 0.05), (5, 12, 0.1), (3, 20, 0.05)])
def test_table_matches_plain_inversion(coarse, n, n_sim, alpha):
    got = fj.lower_table(n, n_sim, alpha)
    want, b_w = ref_table(n, n_sim, alpha, coarse, 7)
    assert got.shape == want.shape
    assert np.array_equal(got, want)
    # not trivial: the discordant channel bounds something, and the table bounds some
    # outcome above 0.25; more real successes never lower a bound
    assert b_w.max() > 0.2 and want.max() > 0.25
    assert np.all(np.diff(got, axis=0) >= 0) and np.all(np.diff(got, axis=1) >= 0)


@pytest.mark.parametrize(("p0", "w"), [(0.6, 30), (0.85, 36), (0.3, 10)])
def test_cell_corner_bounds_every_rate_inside_it(p0, w):
    """On each cell [a, b], the corner tail (p01 = a - p0, p_S = b) is at least the tail at
    every p_S in the cell with any admissible p01 >= p_S - p0."""
    n, n_sim, m = 10, 40, 8
    j = np.arange(n + 1)
    for a, b in finest_cells(p0, 4):
        corner = stats.binom.pmf(j, n, a - p0) @ stats.binom.sf(w + m * j - 1, n_sim, b)
        for ps in np.linspace(a, b, 5):
            for extra in (0.0, 0.05, 0.2):
                p01 = min(ps - p0 + extra, 1 - p0, ps)
                t = stats.binom.pmf(j, n, p01) @ stats.binom.sf(w + m * j - 1, n_sim, ps)
                assert t <= corner + 1e-12
    # and a rate below p0 (p01 >= 0) is dominated by the first cell
    a, b = finest_cells(p0, 4)[0]
    first = stats.binom.pmf(j, n, a - p0) @ stats.binom.sf(w + m * j - 1, n_sim, b)
    for ps in (0.0, p0 / 2, p0):
        assert stats.binom.sf(w - 1, n_sim, ps) <= first + 1e-12


def test_kernel_certificate_equals_the_finest_partition():
    """sup_tail_le (adaptive) accepts exactly when every finest cell's corner is below."""
    n, n_sim, m, finest = 6, 30, 10, 8
    lo, sf, ready = K.sf_table(n_sim, finest)
    lf = np.cumsum(np.log(np.maximum(np.arange(n + 1), 1)))
    for p0, w in [(0.5, 12), (0.7, 20), (0.2, 0), (0.9, 28), (0.0, -5)]:
        sup = ref_sup_tail(n, m, n_sim, p0, np.array([w]), finest)[0]
        for thr in (0.9 * sup, 1.0001 * sup + 1e-15):
            assert K.sup_tail_le(n, m, w, p0, thr, finest, lf, lo, sf, ready, n_sim) == (sup <= thr)


def test_negative_association_bound_holds():
    """P(Y >= y, W >= w) >= P(Y >= y) P(W >= w) under the trinomial of (Y, n01) and an
    independent simulated count: the step from the exact tail of max(CP, B) to the
    product form the final test uses."""
    n, n_sim, m = 7, 15, 2
    for p0, p01, ps in [(0.5, 0.2, 0.6), (0.8, 0.1, 0.9), (0.3, 0.6, 0.7)]:
        for y_t, w_t in itertools.product(range(0, 8, 2), range(-10, 16, 5)):
            joint_p = p_y = p_w = 0.0
            for y, j in itertools.product(range(n + 1), repeat=2):
                if y + j > n:
                    continue
                pc = stats.multinomial.pmf([y, j, n - y - j], n, [p0, p01, 1 - p0 - p01])
                tail_w = stats.binom.sf(w_t + m * j - 1, n_sim, ps)
                p_y += pc * (y >= y_t)
                p_w += pc * tail_w
                joint_p += pc * (y >= y_t) * tail_w
            assert joint_p >= p_y * p_w - 1e-12


def test_p_value_rises_with_p0():
    """The certified p-value of the final test does not fall as p0 rises (bisection's
    premise), at every statistic value of a table."""
    n, n_sim = 8, 40
    m = fj.weight(n, n_sim)
    lo, sf, ready = K.sf_table(n_sim, 9)
    lf = np.cumsum(np.log(np.maximum(np.arange(n + 1), 1)))
    for y_t, w_t in [(8, 40), (7, 25), (6, 10), (8, -20), (5, 41)]:
        flags = [
            K._rejects(n, m, n_sim, p0, y_t, w_t, 0.025, 9, lf, lo, sf, ready)
            for p0 in np.linspace(0, 1, 81)
        ]
        # rejected rates form a prefix: once accepted, never rejected again
        assert flags == sorted(flags, reverse=True)


@pytest.mark.parametrize(
    ("p", "rho", "n", "n_sim", "limit"),
    [
        (0.9, 0.9, 50, 500, 0.85),  # gain at N = 500, where joint_exact misses it
        (0.95, 0.9, 100, 500, 0.85),
        (0.9, 0.0, 50, 500, 1.10),  # adaptivity
        (0.7, 0.0, 20, 2_000, 1.10),
    ],
)
def test_gain_at_high_correlation_and_adaptivity_at_zero(p, rho, n, n_sim, limit):
    oc = sr.operating_characteristics(p, p, rho, n, n_sim)
    assert oc.width[M] <= limit * checks.cp_width(p, n)
    assert oc.coverage[M] >= 0.95
    if limit < 1:  # narrower than joint_exact here
        assert oc.width[M] < oc.width["joint_exact"]


def test_tables_refuse_n_and_n_sim_out_of_range():
    for bad_n, bad_sim in ((fj.MAX_N + 1, 500), (0, 500), (10, 0)):
        with pytest.raises(ValueError, match="full_joint_exact"):
            fj.lower_table(bad_n, bad_sim, 0.05)


def test_registry():
    assert sr.VALIDITY[M] == "finite-sample" and M in sr.METHODS


def test_twins_contradicting_the_simulation_give_clopper_pearson():
    """Every real trial and twin succeeds while the further simulated trials mostly fail:
    the bounds cross and the interval is Clopper-Pearson's at alpha/2 a side (SciPy)."""
    n, k_sim, n_sim = 30, 100, 1000
    table = fj.lower_table(n, n_sim, 0.05)
    m = fj.weight(n, n_sim)
    lo = table[n, k_sim + m * n]
    hi = 1.0 - table[0, (n_sim - k_sim) + m * n]
    assert lo > hi  # the case is real
    r = sr.simreal_interval(sr.simreal_data([1] * n, [1] * n, k_sim, n_sim), M)
    assert r.lower == pytest.approx(stats.beta.ppf(0.025, n, 1), rel=1e-12)
    assert r.upper == 1.0


def test_tail_table_is_scipys_binomial_tail():
    lo, sf, ready = K.sf_table(300, 5)
    assert not ready.any()  # rows are filled when first read
    for i in (0, 3, 16, 31, 32):
        K.fill_row(300, 5, i, lo, sf, ready)
        b = i / 32
        for x in (-3, 0, 5, int(300 * b), 150, 299, 300, 301, 400):
            want = stats.binom.sf(x - 1, 300, b)
            got = K._sf(lo, sf, i, x)
            assert got >= want - 1e-13  # an upper bound everywhere
            if lo[i] <= x < lo[i] + sf.shape[1]:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_weight_and_tables_at_the_ends():
    assert fj.weight(50, 500) == 20 and fj.weight(50, 10) == 1 and fj.weight(3, 1000) == 667
    t = fj.lower_table(1, 5, 0.05)
    assert t.shape == (2, 5 + fj.weight(1, 5) + 1)
    # one real trial: no outcome bounds p_R above 0.975 (its success alone)
    assert t.max() <= 0.975 + 1e-12
    assert joint.MAX_N >= fj.MAX_N  # the fallback covers the whole range above
    # one simulated trial, and the largest n, are built
    assert fj.lower_table(3, 1, 0.05).shape == (4, 1 + fj.weight(3, 1) * 3 + 1)
    top = fj.lower_table(fj.MAX_N, 200, 0.05)
    assert top.shape == (fj.MAX_N + 1, 200 + fj.weight(fj.MAX_N, 200) * fj.MAX_N + 1)
    # every real trial a success (no discordant pair): at least Clopper-Pearson's bound
    assert top[fj.MAX_N, 200 + fj.weight(fj.MAX_N, 200) * fj.MAX_N] >= 0.025 ** (1 / 200) - 5e-4
