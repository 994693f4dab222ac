"""The CLI's MDE numbers bracketed by brute-force Fisher power (issue 17).

A band such as 0.25 < mde < 0.36 cannot tell the exact MDE from the normal approximation
(0.295 at n = 45). Here the MDE the CLI prints is bracketed by the plain-Python power of the
document's double loop (``tests/naive_fisher.py``, exact integer p-values): power at the MDE
reaches 80%, power at the MDE minus 0.001 does not, and the value is away from the normal
approximation.
"""

from __future__ import annotations

import math

import naive_fisher
import pandas as pd
from cli_run import run_json
from scipy import stats


def _power(n: int, centre: float, gap: float) -> float:
    p1, p2 = centre - gap / 2, centre + gap / 2
    return naive_fisher.power(p1, n, p2, n, pvalue=naive_fisher.fisher_p_exact)


def _normal_mde(n: int, pbar: float) -> float:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    return z * math.sqrt(2 * pbar * (1 - pbar) / n)


def test_plan_mde_is_bracketed_by_brute_force_power(capsys):
    out = run_json(capsys, "plan", "--p1", "0.5", "--p2", "0.7", "--n", "30")
    mde = out["mde"]
    assert _power(30, 0.6, mde) >= 0.8 > _power(30, 0.6, mde - 1e-3)
    assert abs(mde - _normal_mde(30, 0.6)) > 0.01  # not the normal approximation
    want = naive_fisher.power(0.5, 30, 0.7, 30, pvalue=naive_fisher.fisher_p_exact)
    assert math.isclose(out["power_at_n"], want, rel_tol=1e-9)


def test_compare_mde_is_bracketed_by_brute_force_power(tmp_path, capsys):
    rows = [{"policy": "a", "success": int(i < 19)} for i in range(30)]
    rows += [{"policy": "b", "success": int(i < 16)} for i in range(30)]
    path = tmp_path / "log.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = run_json(capsys, "compare", path, "--a", "a", "--b", "b")
    mde, centre = out["mde_80"], 35 / 60  # centred on the pooled rate
    assert _power(30, centre, mde) >= 0.8 > _power(30, centre, mde - 1e-3)
    assert abs(mde - _normal_mde(30, centre)) > 0.01
