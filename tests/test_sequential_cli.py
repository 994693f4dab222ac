"""Design files (JSON round trips, bad files) and ``evalsim sequential`` on the example logs.

Expected verdicts are recomputed here by walking the log through the design file's integer
rows in plain Python (read with ``json``), not from the library's replay.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_run import run
from naive_sequential_file import paired_file_stop

from evalsim.cli import build_parser
from evalsim.stats.boundaries import (
    BOUNDARY_FAMILIES,
    CLI_BOUNDARY_FAMILIES,
    DESIGN_KINDS,
    families_for,
    or_list,
)
from evalsim.stats.sequential.designs import operating_characteristics, unpaired_design
from evalsim.stats.sequential.io import design_from_dict, design_to_dict, load_design, save_design
from evalsim.stats.sequential.paired import paired_design

REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "examples" / "sequential_trials.csv"


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    d = tmp_path_factory.mktemp("designs")
    paths = {}
    for name, design in {
        "paired": paired_design(0.05, 200, "one-sided", "pocock"),
        "unpaired": unpaired_design(0.05, 200, "one-sided", "pocock"),
        "paired2": paired_design(
            0.05, 60, "two-sided", "obrien-fleming", futility={"z": 0.5, "from": 20}
        ),
        "unpaired2": unpaired_design(
            0.05, 40, "two-sided", "power", rho=1.5, looks=5, futility={"z": 0.3, "from": 10}
        ),
    }.items():
        paths[name] = d / f"{name}.json"
        save_design(design, paths[name])
    return paths


@pytest.mark.parametrize("name", ["paired", "unpaired", "paired2", "unpaired2"])
def test_json_round_trip_keeps_rows_and_oc(designs, name):
    original = load_design(designs[name])
    text = json.loads(Path(designs[name]).read_text())
    again = design_from_dict(json.loads(json.dumps(design_to_dict(original))))
    assert design_to_dict(again) == text
    for key in original.rows:
        np.testing.assert_array_equal(original.rows[key], again.rows[key])
    a = operating_characteristics(original, 0.55, 0.75)
    b = operating_characteristics(again, 0.55, 0.75)
    assert a.verdicts == b.verdicts and a.ess == b.ess
    # every boundary is an integer in the file
    if text["kind"] == "paired":
        assert all(isinstance(v, int) for row in text["rows"].values() for v in row)
    else:
        assert all(
            isinstance(v, int) for look in text["looks"] for v in look["b_better_if_kB_at_least"]
        )


def plain_unpaired_walk(design_json, sa, sb):
    for look in design_json["looks"]:
        m = look["n"]
        if m > min(len(sa), len(sb)):
            return None
        ka, kb = sum(sa[:m]), sum(sb[:m])
        if kb >= look["b_better_if_kB_at_least"][ka]:
            return m, "B better", ka, kb
    return None


def test_check_paired_log_crosses_a_boundary(designs, capsys):
    df = pd.read_csv(LOG)
    a = df[df.policy == "base"].set_index("condition")["success"]
    b = df[df.policy == "new"].set_index("condition")["success"]
    pairs = list(zip(a.to_numpy(), b[a.index].to_numpy(), strict=True))
    expected = paired_file_stop(json.loads(Path(designs["paired"]).read_text()), pairs)
    assert expected is not None and expected[0] < len(pairs)  # the synthetic log stops early
    assert expected[1] == "b-better"  # the synthetic log's B is better
    rc, out, err = run(
        capsys, "sequential", "check", designs["paired"], LOG, "--a", "base", "--b", "new", "--json"
    )
    assert rc == 0, err
    res = json.loads(out)
    assert res["status"] == "stop" and res["verdict"] == "B better"
    assert res["at"] == expected[0]
    sub = pairs[: expected[0]]
    assert res["tallies"]["b_only"] == sum(1 for x, y in sub if y and not x)
    assert res["tallies"]["a_only"] == sum(1 for x, y in sub if x and not y)
    lo, hi = res["interval_diff_b_minus_a"]
    assert lo < hi and lo > 0  # a B-better stop: the interval excludes no difference
    rc, out, _ = run(
        capsys, "sequential", "check", designs["paired"], LOG, "--a", "base", "--b", "new"
    )
    assert out.startswith("stop: B better (pair ")


def test_check_unpaired_log_crosses_and_short_log_continues(designs, capsys, tmp_path):
    df = pd.read_csv(LOG)
    sa = df[df.policy == "base"]["success"].tolist()
    sb = df[df.policy == "new"]["success"].tolist()
    spec = json.loads(Path(designs["unpaired"]).read_text())
    expected = plain_unpaired_walk(spec, sa, sb)
    assert expected is not None
    rc, out, err = run(
        capsys,
        "sequential",
        "check",
        designs["unpaired"],
        LOG,
        "--a",
        "base",
        "--b",
        "new",
        "--json",
    )
    assert rc == 0, err
    res = json.loads(out)
    assert (res["status"], res["verdict"], res["at"]) == ("stop", "B better", expected[0])
    assert (res["tallies"]["k_a"], res["tallies"]["k_b"]) == expected[2:]
    short = tmp_path / "short.csv"
    df.iloc[:10].to_csv(short, index=False)
    assert plain_unpaired_walk(spec, sa[:5], sb[:5]) is None
    rc, out, _ = run(
        capsys, "sequential", "check", designs["unpaired"], short, "--a", "base", "--b", "new"
    )
    assert rc == 0 and out.startswith("continue")


def test_design_oc_and_sheet_commands(tmp_path, capsys):
    out_file = tmp_path / "d.json"
    rc, out, err = run(
        capsys,
        "sequential",
        "design",
        "--kind",
        "unpaired",
        "--n-max",
        "30",
        "--spending",
        "obrien-fleming",
        "--out",
        out_file,
        "--json",
    )
    assert rc == 0, err
    res = json.loads(out)
    assert res["certificate"]["max_type1_upper"] <= 0.05
    d = load_design(out_file)
    rc, out, err = run(capsys, "sequential", "oc", out_file, "--pa", "0.4", "--pb", "0.8", "--json")
    assert rc == 0, err
    res = json.loads(out)
    oc = operating_characteristics(d, 0.4, 0.8)
    assert res["power"] == pytest.approx(oc.power) and res["ess"] == pytest.approx(oc.ess)
    assert sum(res["verdicts"].values()) == pytest.approx(1.0)
    rc, out, err = run(capsys, "sequential", "sheet", out_file, "--out", tmp_path / "sheet")
    assert rc == 0, err
    assert (tmp_path / "sheet.png").stat().st_size > 10_000
    assert (tmp_path / "sheet.pdf").read_bytes()[:4] == b"%PDF"


@pytest.mark.parametrize(
    "argv",
    [
        ["sequential", "oc", "missing.json", "--pa", "0.5", "--pb", "0.6"],
        ["sequential", "oc", "{design}", "--pa", "1.5", "--pb", "0.6"],
        ["sequential", "oc", "{design}", "--pa", "0.5"],
        ["sequential", "oc", "{log}", "--pa", "0.5", "--pb", "0.6"],
        ["sequential", "check", "{design}", "{log}", "--a", "base", "--b", "nope"],
        ["sequential", "check", "{design}", "missing.csv", "--a", "base", "--b", "new"],
        ["sequential", "design", "--out", "{tmp}/x.json", "--spending", "power"],
        ["sequential", "design", "--out", "{tmp}/x.json", "--n-max", "900"],
        [
            "sequential",
            "design",
            "--out",
            "{tmp}/x.json",
            "--kind",
            "paired",
            "--spending",
            "shape",
        ],
        ["sequential", "design", "--out", "{tmp}/x.json", "--futility-z", "0"],
        ["sequential", "bogus"],
    ],
)
def test_bad_input_one_line_exit_2(argv, designs, tmp_path, capsys):
    fill = {"design": str(designs["unpaired"]), "log": str(LOG), "tmp": str(tmp_path)}
    rc, out, err = run(capsys, *[a.format(**fill) for a in argv])
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


def test_bad_design_file_names_the_key(tmp_path, designs, capsys):
    spec = json.loads(Path(designs["paired"]).read_text())
    del spec["rows"]["b_better_if_wB_at_least"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(spec))
    rc, _, err = run(capsys, "sequential", "oc", bad, "--pa", "0.5", "--pb", "0.6")
    assert rc == 2 and "b_better_if_wB_at_least" in err
    spec = json.loads(Path(designs["unpaired"]).read_text())
    spec["looks"][3]["b_better_if_kB_at_least"][0] = 1.5
    bad.write_text(json.dumps(spec))
    rc, _, err = run(capsys, "sequential", "oc", bad, "--pa", "0.5", "--pb", "0.6")
    assert rc == 2 and "integers" in err


# ------------------------------------------------------------------ the boundary-family registry


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    raise KeyError(name)


def test_spending_choices_are_the_registry_cli_families():
    design = _subparser(_subparser(build_parser(), "sequential"), "design")
    (spending,) = [a for a in design._actions if "--spending" in a.option_strings]
    assert tuple(spending.choices) == CLI_BOUNDARY_FAMILIES
    assert CLI_BOUNDARY_FAMILIES == tuple(f.id for f in BOUNDARY_FAMILIES.values() if f.cli)
    assert spending.default in CLI_BOUNDARY_FAMILIES


@pytest.mark.parametrize(
    ("family", "kind"),
    [
        (f, k)
        for f in CLI_BOUNDARY_FAMILIES
        for k in DESIGN_KINDS
        if not BOUNDARY_FAMILIES[f].takes(k)
    ],
)
def test_spending_of_another_kind_names_the_registry_families(family, kind, tmp_path, capsys):
    argv = ["sequential", "design", "--out", tmp_path / "x.json", "--kind", kind]
    argv += (
        ["--spending", family, "--rho", "1"]
        if BOUNDARY_FAMILIES[family].parameter == "rho"
        else ["--spending", family]
    )
    rc, out, err = run(capsys, *argv)
    kinds = or_list(BOUNDARY_FAMILIES[family].kinds)
    takes = or_list(families_for(kind, cli=True))
    assert rc == 2 and out == ""
    assert err.rstrip().endswith(
        f"--spending {family} is for {kinds} designs; {kind} designs take {takes}"
    )


@pytest.mark.parametrize("family", CLI_BOUNDARY_FAMILIES)
def test_rho_only_with_a_family_that_takes_it(family, tmp_path, capsys):
    parameter = BOUNDARY_FAMILIES[family].parameter
    argv = [
        "sequential",
        "design",
        "--out",
        tmp_path / "x.json",
        "--n-max",
        "10",
        "--spending",
        family,
    ]
    if parameter == "rho":
        rc, _, err = run(capsys, *argv)
        assert rc == 2 and err.rstrip().endswith(f"--spending {family} needs --rho")
        return
    rc, _, err = run(capsys, *argv, "--rho", "2")
    takes = "none" if parameter is None else f"--{parameter}"
    assert rc == 2 and err.rstrip().endswith(f"; {family} takes {takes}")
