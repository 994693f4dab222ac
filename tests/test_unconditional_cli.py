"""``evalsim compare --test ...`` and ``evalsim plan --test ...``: the choices are the
two-sample registry's, and each test's values, label and certificate; bad input."""

from __future__ import annotations

import argparse

import pandas as pd
import pytest
from test_cli_lab import run, run_json  # the CLI run helpers
from test_unconditional import CERTIFIED, scipy_p

from evalsim.cli import build_parser
from evalsim.stats.names import TWO_SAMPLE_TESTS


def write(path, rows):
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def arm(policy, k, n):
    return [{"policy": policy, "success": int(i < k)} for i in range(n)]


def _test_option(command: str) -> argparse.Action:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return next(a for a in sub.choices[command]._actions if a.dest == "test")


@pytest.mark.parametrize("command", ["compare", "plan"])
def test_test_choices_are_the_registry(command):
    option = _test_option(command)
    assert tuple(option.choices) == tuple(TWO_SAMPLE_TESTS)
    assert option.default == next(iter(TWO_SAMPLE_TESTS))
    for test in TWO_SAMPLE_TESTS:
        assert test in option.help


@pytest.mark.parametrize("test", list(TWO_SAMPLE_TESTS))
@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_compare_test_option(tmp_path, capsys, test, alternative):
    path = write(tmp_path / "l.csv", arm("base", 11, 30) + arm("new", 21, 30))
    out = run_json(
        capsys, "compare", path, "--a", "base", "--b", "new", "--unpaired",
        "--test", test, "--alternative", alternative,
    )  # fmt: skip
    # arm 1 = B (new), arm 2 = A (base); "greater": B's rate above A's
    want = scipy_p(test, 21, 30, 11, 30, alternative, n=100)
    assert out["pvalue"] == pytest.approx(want, rel=1e-9)
    assert out["test"] == TWO_SAMPLE_TESTS[test].label
    cert = out["test_certificate"]
    if test not in CERTIFIED:
        assert cert is None
        return
    assert cert["test"] == test and cert["pvalue"] == out["pvalue"]
    assert out["pvalue"] <= cert["pvalue_upper_bound"] <= out["pvalue"] * (1 + 1e-6)


def test_compare_default_stays_fisher_and_bad_test(tmp_path, capsys):
    path = write(tmp_path / "l.csv", arm("base", 11, 30) + arm("new", 21, 30))
    out = run_json(capsys, "compare", path, "--a", "base", "--b", "new")
    assert out["test"] == "Fisher's exact" and out["test_certificate"] is None
    rc, so, err = run(capsys, "compare", path, "--a", "base", "--b", "new", "--test", "x")
    assert rc == 2 and so == "" and err.count("\n") == 1


def test_plan_test_option(capsys):
    from evalsim.stats.two_sample.unconditional_power import n_for_power

    out = run_json(capsys, "plan", "--p1", "0.737", "--p2", "0.877", "--test", "boschloo")
    assert out["n_per_arm_exact"] == n_for_power("boschloo", 0.737, 0.877).n
    fisher = run_json(capsys, "plan", "--p1", "0.737", "--p2", "0.877")
    assert fisher["n_per_arm_exact"] > out["n_per_arm_exact"]


@pytest.mark.parametrize("test", list(TWO_SAMPLE_TESTS))
def test_plan_names_each_test_by_its_short_label(capsys, test):
    rc, out, err = run(capsys, "plan", "--p1", "0.3", "--p2", "0.8", "--test", test)
    assert rc == 0, err
    assert f"exact {TWO_SAMPLE_TESTS[test].short} (power stays >= target" in out
