"""Every "Regenerate" command the docs print builds its target and nothing else (issue 47).

A newcomer's ``snakemake --forcerun RULE TARGET`` ran the whole study: ``--forcerun`` takes
many values and swallowed the target. Each printed command is read here by Snakemake's own
argument parser (its only target must be the product the line names, and nothing may have
been swallowed), and commands of products with no inputs are dry-run (``snakemake -n``) in a
copy of the workflow: the plan must be that product's one job. No pools are needed for -n.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from conftest import copy_workflow, snakemake
from snakemake.cli import get_argument_parser

from evalsim.products.manifest import PRODUCTS
from evalsim.products.report import regenerate_command

ROOT = Path(__file__).resolve().parents[1]
#: A line that prints a rebuild command: "Regenerate: `command`".
LINE = re.compile(r"\[[^\]]+\]\(([^)]+)\)[^\n]*?Regenerate: `([^`]+)`")
#: Products with no inputs: their dry run is their one job whatever is built already.
NO_INPUTS = ("F12_unconditional_power", "coverage_vs_p")


def printed_commands() -> list[tuple[str, str]]:
    """(linked target, command) of every "Regenerate" line of the hand-written and generated
    Markdown (README and docs/)."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        assert text.count("Regenerate: `") == len(LINE.findall(text)), path
        found += LINE.findall(text)
    return found


def problems(target: str, command: str) -> list[str]:
    """Why ``command`` would not build only ``target`` (empty when it does)."""
    argv = shlex.split(command)
    if not argv or Path(argv[0]).name != "snakemake":
        return [f"not a snakemake command: {command!r}"]
    args = get_argument_parser().parse_args(argv[1:])
    out = []
    if list(args.targets) != [target]:
        out.append(f"targets {list(args.targets)} instead of [{target!r}]")
    for option in ("forcerun", "until", "omit_from"):
        swallowed = set(getattr(args, option, None) or ()) & {target}
        if swallowed:
            out.append(f"--{option.replace('_', '-')} swallowed {target!r}")
    if args.forceall:
        out.append("--forceall reruns the target's whole history")
    return out


def test_the_docs_print_regenerate_commands():
    commands = printed_commands()
    figures = {p.id for p in PRODUCTS if p.kind == "figure"}
    assert len(commands) >= len(figures) - 1  # the README gallery: every declared figure


@pytest.mark.parametrize(("target", "command"), printed_commands())
def test_each_printed_command_builds_only_its_target(target, command):
    assert problems(target, command) == []
    assert command == regenerate_command(target)  # one form, generated


def test_the_check_catches_the_form_that_ran_the_whole_study():
    target = "figures/F12_unconditional_power.png"
    swallowed = f"snakemake --cores 2 --forcerun fisher_F12_unconditional_power {target}"
    assert any("swallowed" in p for p in problems(target, swallowed))
    assert problems(target, f"snakemake --cores 2 --forceall {target}")
    assert problems(target, "snakemake --cores 2") != []
    assert problems(target, regenerate_command(target)) == []


@pytest.mark.xdist_group("regenerate_dry_run")
@pytest.mark.parametrize("product", NO_INPUTS)
def test_dry_run_of_a_printed_command_plans_only_its_targets_job(product, tmp_path):
    entry = next(p for p in PRODUCTS if p.id == product)
    target, command = next((t, c) for t, c in printed_commands() if Path(t).stem == product)
    work = copy_workflow(tmp_path / "work")
    res = snakemake(work, "-n", *shlex.split(command)[1:], timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    text = res.stdout + res.stderr
    stats = text.split("Job stats:", 1)[1].split("Reasons:", 1)[0]
    jobs = dict(re.findall(r"^(\S+)\s+(\d+)$", stats, flags=re.M))
    assert jobs.pop("total") == "1", stats
    assert list(jobs) == [f"{entry.stage}_{product}"], stats
    assert target.endswith(".png")
