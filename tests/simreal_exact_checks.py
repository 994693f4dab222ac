"""Checks every exact sim + real method must pass (``tests/test_simreal_exact_methods.py``
runs them on each finite-sample method of the registry): exact coverage
on adversarial laws, the enumeration against a brute-force sum over every outcome (SciPy's
multinomial and binomial), Monte Carlo against the exact values, and Clopper-Pearson's
expected width computed from SciPy's beta quantiles (the reference of the gain targets)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import stats

from evalsim.stats.simreal import methods as sr

#: Joint laws (p_R, p_S, correlation) chosen to break a method: negative correlation, sim
#: bias of +-0.3, correlation 1, rates near the ends.
LAWS = [
    (0.5, 0.5, 0.0),
    (0.9, 0.9, 0.9),
    (0.95, 0.75, 0.0),
    (0.7, 0.8, 0.5),
    (0.8, 0.6, -0.4),
    (0.3, 0.5, 0.6),
    (0.97, 0.97, 1.0),
    (0.6, 0.9, 0.25),
]


def assert_coverage_on_adversarial_laws(methods, n: int, n_sim: int) -> None:
    """Each method's exact coverage >= 0.95 - 1e-9 at every law of :data:`LAWS` (one
    enumeration per law serves every method)."""
    for p_r, p_s, rho in LAWS:
        oc = sr.operating_characteristics(p_r, p_s, rho, n, n_sim)
        for method in methods:
            assert oc.coverage[method] >= 0.95 - 1e-9, (method, p_r, p_s, rho)
        assert oc.skipped_mass < 1e-9


def _data(n11, n10, n01, n00, k_sim, n_sim):
    real = [1] * (n11 + n10) + [0] * (n01 + n00)
    twin = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
    return sr.simreal_data(real, twin, int(k_sim), n_sim)


def assert_oc_matches_brute_force(methods, p_r, p_s, rho, n: int, n_sim: int) -> None:
    """Every pair table and simulated count, its probability from SciPy's multinomial and
    binomial, each method's interval from simreal_interval: the sums equal the enumeration's."""
    law = sr.joint_law(p_r, p_s, rho)
    cov = dict.fromkeys(methods, 0.0)
    wid = dict.fromkeys(methods, 0.0)
    for k_sim in range(n_sim + 1):
        w_s = stats.binom.pmf(k_sim, n_sim, p_s)
        for t in itertools.product(range(n + 1), repeat=4):
            if sum(t) != n:
                continue
            pr = stats.multinomial.pmf(list(t), n, list(law)) * w_s
            d = _data(*t, k_sim, n_sim)
            for method in methods:
                r = sr.simreal_interval(d, method)
                cov[method] += pr * (r.lower <= p_r <= r.upper)
                wid[method] += pr * (r.upper - r.lower)
    oc = sr.operating_characteristics(p_r, p_s, rho, n, n_sim)
    for method in methods:
        assert abs(oc.coverage[method] - cov[method]) <= 1e-12, method
        assert abs(oc.width[method] - wid[method]) <= 1e-12, method


def assert_oc_agrees_with_monte_carlo(method: str, seed: int, reps: int = 3000) -> None:
    """Coverage and mean width of ``reps`` draws within 4 SE of the exact values."""
    p_r, p_s, rho, n, n_sim = 0.85, 0.8, 0.7, 25, 400
    law = sr.joint_law(p_r, p_s, rho)
    rng = np.random.default_rng(seed)
    tables = rng.multinomial(n, law, size=reps)
    ks = rng.binomial(n_sim, p_s, size=reps)
    hits, widths = [], []
    for t, k in zip(tables, ks, strict=True):
        r = sr.simreal_interval(_data(*t, k, n_sim), method)
        hits.append(r.lower <= p_r <= r.upper)
        widths.append(r.upper - r.lower)
    oc = sr.operating_characteristics(p_r, p_s, rho, n, n_sim)
    c = oc.coverage[method]
    assert abs(np.mean(hits) - c) <= 4 * math.sqrt(c * (1 - c) / reps)
    assert abs(np.mean(widths) - oc.width[method]) <= 4 * np.std(widths) / math.sqrt(reps)


def cp_width(p: float, n: int) -> float:
    """Expected width of the 95% Clopper-Pearson interval at Binomial(n, p)."""
    k = np.arange(n + 1)
    lo = np.where(k > 0, stats.beta.ppf(0.025, k, n - k + 1), 0.0)
    hi = np.where(k < n, stats.beta.isf(0.025, k + 1, n - k), 1.0)
    return float(np.sum(stats.binom.pmf(k, n, p) * (hi - lo)))
