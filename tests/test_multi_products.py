"""T34/T35/F08/F09 builders on small synthetic pools, and the `multi` config section.

Expected values are recomputed here from the synthetic trials with SciPy / plain counting.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, fisher_exact
from statsmodels.stats.multitest import multipletests

from evalsim.config import ConfigError, check_config, load_config
from evalsim.products.multi import (
    per_task_figure,
    per_task_table,
    ranking_figure,
    ranking_table,
)
from evalsim.products.settings import Bootstrap
from evalsim.stats.multi.tasks import CORRECTIONS

matplotlib.use("Agg")


def synthetic_pools(seed=0, n=60):
    rng = np.random.default_rng(seed)
    rows = []
    for task, base in (("cube30", 0.7), ("cube25", 0.55), ("cube40", 0.8)):
        for policy, sigma, lift in (("A", 9.0, 0.0), ("B", 6.0, 0.12)):
            for s in range(3):
                for trial in range(n):
                    rows.append(
                        {
                            "task": task,
                            "policy": policy,
                            "sigma_mm": sigma,
                            "seed": s,
                            "trial": trial,
                            "success": bool(rng.random() < base + lift),
                        }
                    )
    return pd.DataFrame(rows)


def synthetic_sweep(seed=1, n=150):
    rng = np.random.default_rng(seed)
    rows = []
    for sigma, rate in ((0.0, 1.0), (3.0, 0.99), (6.0, 0.95), (9.0, 0.75), (20.0, 0.2)):
        for trial in range(n):
            rows.append(
                {
                    "task": "cube30",
                    "policy": "sweep",
                    "sigma_mm": sigma,
                    "seed": 0,
                    "trial": trial,
                    "success": bool(rng.random() < rate),
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("paired", [True, False])
def test_per_task_table_contents(paired):
    pools = synthetic_pools()
    t = per_task_table(pools, Bootstrap(0.95, 300, 7), "A", "B", paired, 0.05)
    tasks = t[t.section == "task"].set_index("row")
    assert list(tasks.index) == ["cube30", "cube25", "cube40"]
    for task, row in tasks.iterrows():
        a = pools[(pools.task == task) & (pools.policy == "A")].sort_values(["seed", "trial"])
        b = pools[(pools.task == task) & (pools.policy == "B")].sort_values(["seed", "trial"])
        assert (row.k_a, row.n_a) == (a.success.sum(), len(a))
        if paired:
            sa, sb = a.success.to_numpy(), b.success.to_numpy()
            a_only, b_only = int((sa & ~sb).sum()), int((~sa & sb).sum())
            want = binomtest(min(a_only, b_only), a_only + b_only).pvalue
            assert row.test == "exact McNemar"
        else:
            want = fisher_exact([[row.k_a, row.n_a - row.k_a], [row.k_b, row.n_b - row.k_b]]).pvalue
            assert row.test == "Fisher exact"
        assert row.pvalue == pytest.approx(want, rel=1e-9)
        for m in CORRECTIONS:
            assert row[f"p_{m}"] >= row.pvalue
    # one column per correction of the registry, statsmodels' multipletests by its name
    cols = list(t.columns)
    assert cols[cols.index("pvalue") + 1 :][: len(CORRECTIONS)] == [f"p_{m}" for m in CORRECTIONS]
    for m, c in CORRECTIONS.items():
        want = multipletests(tasks.pvalue.to_numpy(), method=c.statsmodels)[1]
        assert tasks[f"p_{m}"].to_numpy() == pytest.approx(want, rel=1e-12)
    assert " / ".join(f"p_{m}" for m in CORRECTIONS) + ": adjusted" in t.attrs["note"]
    pooled = t[t.section == "pooled"].set_index("row")
    assert {"CMH", "exact stratified", "Breslow-Day"} <= set(pooled.index)
    ex = pooled.loc["exact stratified"]
    assert ex.or_lower < ex.odds_ratio < ex.or_upper
    agg = t[t.section == "aggregate"].set_index("row")
    assert agg.loc["micro", "rate_b"] == pytest.approx(pools[pools.policy == "B"].success.mean())
    assert agg.loc["macro", "rate_a"] == pytest.approx(
        pools[pools.policy == "A"].groupby("task").success.mean().mean()
    )
    assert agg.loc["micro", "stratified_to_this_width_a"] == pytest.approx(1.0)
    fig = per_task_figure(t)
    assert len(fig.axes[0].get_xticklabels()) == 3 + 4
    matplotlib.pyplot.close(fig)


def test_ranking_of_the_sweep_adjacent_sigmas_share_letters():
    t = ranking_table(synthetic_pools(), synthetic_sweep(), Bootstrap(0.95, 300, 3), "auto", 0.05)
    assert list(t["policy"]) == ["0 mm", "3 mm", "6 mm", "9 mm", "20 mm"]
    letters = dict(zip(t["policy"], t["letters"], strict=True))
    assert set(letters["0 mm"]) & set(letters["3 mm"])
    assert not set(letters["0 mm"]) & set(letters["20 mm"])
    assert not set(letters["9 mm"]) & set(letters["20 mm"])
    assert (t["simultaneous_lower"] <= t["macro"]).all() and (t["macro"] <= 1).all()
    assert t["iqm"].isna().all()  # the sweep has no training seeds
    fig = ranking_figure(t)
    ticks = {
        lab.get_text(): y
        for y, lab in zip(fig.axes[0].get_yticks(), fig.axes[0].get_yticklabels(), strict=True)
    }
    assert max(ticks, key=ticks.get) == "0 mm"  # the best at the top
    matplotlib.pyplot.close(fig)


def test_ranking_of_configured_policies_has_iqm():
    t = ranking_table(
        synthetic_pools(), synthetic_sweep(), Bootstrap(0.95, 300, 3), "policies", 0.05
    )
    assert list(t["policy"]) == ["B", "A"]
    assert t["letters"].tolist() == ["a", "b"]
    assert t["iqm"].notna().all() and math.isfinite(t["p_improve_over_next"].iloc[0])


def test_multi_config_section(repo):
    cfg = load_config(repo / "config" / "config.yaml")
    assert cfg["multi"]["ranking_source"] in ("auto", "policies", "sweep")
    bad = dict(cfg)
    bad["multi"] = {**cfg["multi"], "ranking_source": "seeds"}
    with pytest.raises(ConfigError, match=r"multi.ranking_source.*allowed values"):
        check_config(bad)
    bad["multi"] = {**cfg["multi"], "policy_b": "Z"}
    with pytest.raises(ConfigError, match=r"multi.policy_b.*unknown policy 'Z'"):
        check_config(bad)
    bad["multi"] = {**cfg["multi"], "bootstrap": 5}
    with pytest.raises(ConfigError, match="unknown key"):
        check_config(bad)
