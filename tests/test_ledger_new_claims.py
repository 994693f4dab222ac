"""The claims issue 23 (item 6) and issue 28 (item 5) add, each against its product.

References are computed here (SciPy, statsmodels, plain Python), not read from the ledger.
"""

from __future__ import annotations

import math

import naive_fisher
import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom, norm
from statsmodels.stats.proportion import proportion_confint

from evalsim.ledger import build_ledger, load_claims
from evalsim.products.design.intervals import cp_vs_wilson, width_at_rate
from evalsim.products.design.sizing import estimation_vs_detection
from evalsim.products.settings import Sizing


@pytest.fixture(scope="module")
def claims(repo):
    return {c.id: c for c in load_claims(repo / "config" / "claims.yaml")}


def _row(claims, cid, **tables):
    return build_ledger([claims[cid]], "/nonexistent", overrides=tables).iloc[0]


def _disjoint(p_a, p_b, n):
    lo, hi = proportion_confint(np.arange(n + 1), n, alpha=0.05, method="wilson")
    pa, pb = binom.pmf(np.arange(n + 1), n, p_a), binom.pmf(np.arange(n + 1), n, p_b)
    dis = (hi[:, None] < lo[None, :]) | (hi[None, :] < lo[:, None])
    return float(pa @ dis.astype(float) @ pb)


def test_disjoint_intervals_are_the_stricter_test(claims):
    # 000 l.106 "disjoint 95% intervals are a stricter test than a direct comparison".
    ns = [10, 20]
    d = [_disjoint(0.737, 0.877, n) for n in ns]
    f = [naive_fisher.power(0.737, n, 0.877, n) for n in ns]
    t10 = pd.DataFrame(
        {"policy_a": "A", "policy_b": "B", "n": ns, "wilson_disjoint_exact": d}
        | {"fisher_power_exact": f, "wilson_disjoint": d, "fisher_p_lt_alpha": f}
    )
    row = _row(claims, "000-50", T10=t10)
    assert row.verdict == "matches", row.reason
    assert float(row.reproduced) == pytest.approx(
        max(a / b for a, b in zip(d, f, strict=True)), rel=1e-5
    )
    assert float(row.reproduced) < 0.5
    t10["wilson_disjoint_exact"] = [x * 10 for x in f]  # a test that rejects more often
    assert _row(claims, "000-50", T10=t10).verdict == "document error"


def test_paired_trials_correlate_on_our_pools(claims):
    # 001 l.11 "Since rho > 0 for paired trials (shared difficulty)": phi's SE is 1/sqrt(n)
    # when rho = 0, so every seed's phi must clear 2/sqrt(n).
    def t18(rho):
        return pd.DataFrame(
            {"policy_a": "A", "policy_b": "B", "rho_same_pose": rho, "n_pairs": [300] * len(rho)}
        )

    row = _row(claims, "001-30", T18=t18([0.30, 0.25]))
    assert row.verdict == "matches", row.reason
    assert float(row.reproduced) == pytest.approx(0.25 - 2 / math.sqrt(300), rel=1e-5)
    # Our simulation's outcomes uncorrelated: the simulation differs, the document is not wrong.
    row = _row(claims, "001-30", T18=t18([0.30, 0.05]))
    assert row.verdict == "simulation differs", row.reason
    assert _row(claims, "001-31", T18=t18([0.3])).verdict == "ambiguous"


def _connor_n(p1, p2, rho, alpha=0.05, power=0.8):
    """McNemar pairs (Connor 1987) at the discordance that correlation rho gives."""
    both = p1 * p2 + rho * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    psi, d = p1 + p2 - 2 * both, abs(p2 - p1)
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return math.ceil(((za * math.sqrt(psi) + zb * math.sqrt(psi - d * d)) / d) ** 2)


def _fleiss_n(p1, p2, alpha=0.05, power=0.8):
    za, zb, pbar = norm.ppf(1 - alpha / 2), norm.ppf(power), (p1 + p2) / 2
    a = za * math.sqrt(2 * pbar * (1 - pbar))
    b = zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil(((a + b) / (p2 - p1)) ** 2)


def test_paired_designs_with_low_discordance_need_fewer_not_more(claims):
    # 004 l.98 "This number increases further when working with paired designs and low
    # discordant rates": T26 refutes it.
    t26 = estimation_vs_detection(
        Sizing(alpha=0.05, power=0.8, exact_fisher=False), paired_rhos=[0.0, 0.5]
    )
    ref = _connor_n(0.90, 0.92, 0.5) / _fleiss_n(0.90, 0.92)
    assert _fleiss_n(0.90, 0.92) == 3213 and ref < 0.6
    row = _row(claims, "004-12", T26=t26)
    assert row.verdict == "document error", row.reason
    assert float(row.reproduced) == pytest.approx(ref, rel=2e-3)


def test_wilson_is_narrower_than_clopper_pearson(claims):
    # 004 l.51: Wilson "delivers better statistical coverage and narrower interval width".
    t23, t25 = cp_vs_wilson(63, 70), width_at_rate(0.9, [10, 100])
    ratios = []
    for k, n in [(63, 70), (9, 10), (90, 100)]:
        wl, wh = proportion_confint(k, n, alpha=0.05, method="wilson")
        cl, ch = beta.ppf(0.025, k, n - k + 1), beta.ppf(0.975, k + 1, n - k)
        ratios.append((wh - wl) / (ch - cl))
    row = _row(claims, "004-13", T23=t23, T25=t25)
    assert row.verdict == "matches", row.reason
    assert float(row.reproduced) == pytest.approx(max(ratios), rel=1e-4)


def test_treating_episodes_as_independent_inflates_n(claims):
    # 004 l.81 "Treating every episode as an independent sample artificially inflates
    # effective sample size": the design effect (hierarchical SE / naive SE)^2 on our pools.
    def t28(ratios):
        return pd.DataFrame({"policy": ["A", "B"], "cluster_by": "task", "se_ratio": ratios})

    row = _row(claims, "004-14", T28=t28([1.4, 1.2]))
    assert row.verdict == "matches" and float(row.reproduced) == pytest.approx(1.44)
    assert _row(claims, "004-14", T28=t28([0.9, 1.2])).verdict == "simulation differs"


def test_the_exact_test_sizing_states_boschloos_saving(claims):
    # 002 l.31 "Run the exact test ... around two hundred trials per policy" (issue 28).
    t38 = pd.DataFrame({"p_a": [0.8], "n_per_arm": [10], "n_fisher": [214], "n_boschloo": [205]})
    row = _row(claims, "002-11", T38=t38)
    assert row.verdict == "document rounding", row.reason
    assert "Boschloo saves over Fisher at 80% power (T38) = 9" in row.reason
    t38["n_fisher"] = 260  # printed to the hundred, 260 is "three hundred"
    assert _row(claims, "002-11", T38=t38).verdict == "document error"
