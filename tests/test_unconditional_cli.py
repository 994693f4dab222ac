"""``evalsim compare --test boschloo|barnard``: values, certificate and bad input."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats
from test_cli_lab import run, run_json  # the CLI run helpers


def write(path, rows):
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def arm(policy, k, n):
    return [{"policy": policy, "success": int(i < k)} for i in range(n)]


@pytest.mark.parametrize("test", ["boschloo", "barnard"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_compare_test_option(tmp_path, capsys, test, alternative):
    path = write(tmp_path / "l.csv", arm("base", 11, 30) + arm("new", 21, 30))
    out = run_json(
        capsys, "compare", path, "--a", "base", "--b", "new", "--unpaired",
        "--test", test, "--alternative", alternative,
    )  # fmt: skip
    fn = stats.boschloo_exact if test == "boschloo" else stats.barnard_exact
    # arm 1 = B (new), arm 2 = A (base); "greater": B's rate above A's
    want = fn([[21, 11], [9, 19]], alternative=alternative, n=100).pvalue
    assert out["pvalue"] == pytest.approx(want, rel=1e-9)
    cert = out["test_certificate"]
    assert cert["test"] == test and cert["pvalue"] == out["pvalue"]
    assert out["pvalue"] <= cert["pvalue_upper_bound"] <= out["pvalue"] * (1 + 1e-6)
    assert out["test"].startswith("Boschloo" if test == "boschloo" else "Barnard")


def test_compare_default_stays_fisher_and_bad_test(tmp_path, capsys):
    path = write(tmp_path / "l.csv", arm("base", 11, 30) + arm("new", 21, 30))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    assert out["test"] == "Fisher's exact" and out["test_certificate"] is None
    rc, so, err = run(capsys, "compare", path, "--a", "base", "--b", "new", "--test", "x")
    assert rc == 2 and so == "" and err.count("\n") == 1


def test_plan_test_option(capsys):
    from evalsim.stats.unconditional_power import n_for_power

    out = run_json(capsys, "plan", "--p1", "0.737", "--p2", "0.877", "--test", "boschloo")
    assert out["n_per_arm_exact"] == n_for_power("boschloo", 0.737, 0.877).n
    fisher = run_json(capsys, "plan", "--p1", "0.737", "--p2", "0.877")
    assert fisher["n_per_arm_exact"] > out["n_per_arm_exact"]
