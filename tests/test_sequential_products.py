"""Builders of T31-T33 on small designs and a synthetic pool (contents, not existence)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact

from evalsim.products.sequential.designs import designs_table, oc_table, pools_table
from evalsim.stats.sequential.designs import operating_characteristics, unpaired_design
from evalsim.stats.sequential.paired import paired_design


@pytest.fixture(scope="module")
def designs():
    return {
        "paired": paired_design(0.05, 24, "one-sided", "pocock"),
        "unpaired": unpaired_design(
            0.05, 24, "one-sided", "obrien-fleming", futility={"z": 0.0, "from": 12}
        ),
    }


def test_designs_table_reports_certificates(designs):
    t = designs_table(designs)
    assert list(t["design"]) == ["paired", "unpaired"]
    for name, row in t.set_index("design").iterrows():
        assert float(row["certified max type-I"]) == pytest.approx(
            designs[name].certificate.upper, abs=1e-7
        )
        assert float(row["certified max type-I"]) <= 0.05 and row["certified <= alpha"]
    assert t.set_index("design").loc["unpaired", "futility"] == "z <= 0 from 12"


def test_oc_table_fixed_n_matches_a_scipy_scan(designs):
    t = oc_table(
        {"unpaired": designs["unpaired"]},
        [(0.3, 0.8), (0.6, 0.6)],
        step=[{"p_a": 0.3, "p_b": 0.8, "power": 0.9, "ess": 15.0}],
    )
    alt = t[t.p_B == 0.8].iloc[0]
    power = alt["power"]
    assert power == pytest.approx(operating_characteristics(designs["unpaired"], 0.3, 0.8).power)

    def fisher_power(n):  # one-sided Fisher "B better", by enumeration with SciPy
        from scipy.stats import binom

        tot = 0.0
        for ka in range(n + 1):
            for kb in range(n + 1):
                if fisher_exact([[kb, n - kb], [ka, n - ka]], alternative="greater").pvalue < 0.05:
                    tot += binom.pmf(ka, n, 0.3) * binom.pmf(kb, n, 0.8)
        return tot

    n = int(alt["fixed-n of same power"])
    assert all(fisher_power(m) >= power for m in range(n, n + 11))
    assert fisher_power(n - 1) < power
    assert alt["ESS saving vs fixed n"] == pytest.approx(1 - alt["ESS"] / n)
    assert alt["STEP power"] == 0.9 and "ESS x" in alt["vs STEP"]
    null = t[t.p_B == 0.6].iloc[0]
    assert null["type-I (p_A = p_B)"] <= 0.05 and np.isnan(null["power"])


def test_pools_table_agrees_with_exact_values(designs):
    rng = np.random.default_rng(5)
    n = 300
    rows = []
    pose_difficulty = rng.random(n)
    for policy, rate, seed in (("A", 0.55, 0), ("B", 0.8, 0), ("A", 0.55, 1)):
        ok = rng.random(n) < np.clip(rate + 0.3 * (pose_difficulty - 0.5), 0, 1)
        rows.append(
            pd.DataFrame(
                {"task": "t", "policy": policy, "seed": seed, "trial": np.arange(n), "success": ok}
            )
        )
    pools = pd.concat(rows, ignore_index=True)
    t = pools_table(pools, designs, [{"name": "A"}, {"name": "B"}], None, 0, 3000, 7)
    assert set(t["case"]) == {"A vs B", "A vs A", "A vs A (seeds 0 and 1)"}
    assert (t["z"].abs() <= 4).all()
    a = pools[(pools.policy == "A") & (pools.seed == 0)].success.to_numpy()
    b = pools[pools.policy == "B"].success.to_numpy()
    row = t[(t.design == "unpaired") & (t.case == "A vs B") & (t.quantity == "ESS")].iloc[0]
    assert row["exact"] == pytest.approx(
        operating_characteristics(designs["unpaired"], a.mean(), b.mean()).ess
    )
    row = t[(t.design == "paired") & (t.quantity == "P(B better)")].iloc[0]
    oc = operating_characteristics(designs["paired"], p10=(a & ~b).mean(), p01=(~a & b).mean())
    assert row["exact"] == pytest.approx(oc.verdicts["B better"])
