"""Issue 43: T40 and F14 on a small synthetic sigma sweep -- exact PCS and curse against brute
force, the resampled values within their standard errors, and the same bytes twice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from naive_selection import selection_by_enumeration

from evalsim.products.selection import selection_figure, selection_table

# four pools (sigma 6, 8, 9, 12 mm) with known rates 0.85, 0.8, 0.8, 0.5; two share a rate
RATES = {6.0: 0.85, 8.0: 0.8, 9.0: 0.8, 12.0: 0.5, 3.0: 1.0}
N_POOL = 200


@pytest.fixture(scope="module")
def sweep():
    rows = []
    for s, r in RATES.items():
        k = round(r * N_POOL)
        rows += [{"task": "t", "sigma_mm": s, "trial": i, "success": i < k} for i in range(N_POOL)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table(sweep):
    return selection_table(sweep, 6.0, [2, 4, 9], [3, 8], "random", 4000, 43)


def test_t40_exact_columns_match_brute_force(table):
    assert sorted(set(table.k_checkpoints)) == [2, 4]  # K = 9 skipped: 4 pools from 6 mm
    assert "Skipped K = 9" in table.attrs["note"]
    for row in table.itertuples():
        rates = [0.85, 0.8, 0.8, 0.5][: row.k_checkpoints]
        p_sel, _, e_rep, e_true = selection_by_enumeration(rates, row.n_per_checkpoint)
        assert row.pcs_exact == pytest.approx(p_sel[0], abs=1e-12)
        assert row.bias_pts_exact == pytest.approx(100 * (e_rep - e_true), abs=1e-10)
        assert row.reported_minus_best_pts_exact == pytest.approx(100 * (e_rep - 0.85), abs=1e-10)
        # the pools resampled agree with the exact values within 4 standard errors
        assert abs(row.pcs_resampled - row.pcs_exact) < 4 * row.pcs_resampled_se + 1e-12
        assert abs(row.bias_pts_resampled - row.bias_pts_exact) < 4 * row.bias_pts_resampled_se
        assert row.sigmas_mm.startswith("6, 8")


def test_t40_is_deterministic_and_f14_draws(sweep, table):
    again = selection_table(sweep, 6.0, [2, 4, 9], [3, 8], "random", 4000, 43)
    assert again.to_csv(index=False) == table.to_csv(index=False)
    other = selection_table(sweep, 6.0, [2], [3], "no-pick", 4000, 43)
    p_sel, no_pick, _, _ = selection_by_enumeration([0.85, 0.8], 3, "no-pick")
    assert other.pcs_exact.iloc[0] == pytest.approx(p_sel[0], abs=1e-12)
    assert abs(other.pcs_resampled.iloc[0] - p_sel[0]) < 4 * other.pcs_resampled_se.iloc[0]
    fig = selection_figure(table)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) >= 2
    import matplotlib.pyplot as plt

    plt.close(fig)
    assert np.isfinite(table.to_numpy(dtype=object)[:, 3:].astype(float)).all()
