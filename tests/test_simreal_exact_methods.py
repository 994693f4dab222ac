"""What every finite-sample sim + real method of the registry must pass: exact coverage on
adversarial laws, its exact enumeration against a brute-force sum over every outcome, and
Monte Carlo against the exact values (``simreal_exact_checks``). A method added to the
registry is checked here without a new test."""

from __future__ import annotations

import numpy as np
import pytest
import simreal_exact_checks as checks
from scipy import stats

from evalsim.stats.simreal import full_joint, joint
from evalsim.stats.simreal import methods as sr
from evalsim.stats.simreal.real_only import cp_each_count

EXACT = [m for m in sr.METHODS if sr.VALIDITY[m] == "finite-sample" and m.endswith("_exact")]


def test_the_registry_has_the_exact_methods():
    assert {"joint_exact", "full_joint_exact", "discordant_exact"} <= set(EXACT)


@pytest.mark.parametrize(("n", "n_sim"), [(5, 40), (12, 12), (30, 500)])
def test_exact_coverage_holds_on_adversarial_laws(n, n_sim):
    checks.assert_coverage_on_adversarial_laws(EXACT, n, n_sim)


@pytest.mark.parametrize(
    ("p_r", "p_s", "rho", "n", "n_sim"), [(0.8, 0.7, 0.5, 4, 9), (0.6, 0.6, 0.0, 5, 6)]
)
def test_oc_matches_brute_force_enumeration(p_r, p_s, rho, n, n_sim):
    checks.assert_oc_matches_brute_force(EXACT, p_r, p_s, rho, n, n_sim)


@pytest.mark.parametrize("method", EXACT)
def test_oc_agrees_with_monte_carlo(method):
    checks.assert_oc_agrees_with_monte_carlo(method, seed=27 + EXACT.index(method))


@pytest.mark.parametrize(
    ("method", "module", "instead"),
    [("joint_exact", joint, "discordant_exact"), ("full_joint_exact", full_joint, "joint_exact")],
)
def test_above_its_tables_a_joint_method_is_its_fallback(method, module, instead):
    """Above the largest n a joint method builds tables for, its interval is the named
    fallback's, exactly."""
    n = module.MAX_N + 10
    real = [1] * (n - 40) + [0] * 40
    twin = [1] * (n - 45) + [0] * 5 + [0] * 38 + [1] * 2
    d = sr.simreal_data(real, twin, 8000, 10_000)
    a, b = sr.simreal_interval(d, method), sr.simreal_interval(d, instead)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    assert a.upper - a.lower > 0.01  # a real interval, not a degenerate one


def test_the_joint_methods_fallback_is_clopper_pearson_at_half_alpha_a_side():
    lo, hi = cp_each_count(12, 0.1)
    k = np.arange(13)
    want_lo = np.where(k > 0, stats.beta.ppf(0.05, k, 13 - k), 0.0)
    want_hi = np.where(k < 12, stats.beta.isf(0.05, k + 1, 12 - k), 1.0)
    assert lo == pytest.approx(want_lo, rel=1e-12, abs=1e-300)
    assert hi == pytest.approx(want_hi, rel=1e-12)
