"""Mutation testing of the modules that produce verdicts (``make mutants``, issue 17).

Runs mutmut (pinned in requirements.txt) once per *group* of modules in a scratch copy of
the repository (``.mutmut/<group>/``), then writes ``results/mutants.json``: per module the
number of mutants, killed, survived, timeouts and other outcomes, the score
``killed / (mutants - not run)`` and the diff of every survivor. Explanations of the kept
survivors are in ``docs/MUTANTS.md``.

Why groups: mutmut 3 replaces each function by a *trampoline* that dispatches to the
original or to a mutant, and leaves decorated functions alone. The numba kernels are
therefore written as plain functions compiled by ``njit(cache=True)(fn)``; a group that
mutates kernels runs with ``NUMBA_DISABLE_JIT=1`` (numba then returns the plain function,
and the trampoline runs as Python) and selects only the tests that compare the kernels
draw-for-draw with plain-Python references, which are fast without the JIT. The other
groups keep the JIT on, so their tests run at normal speed.

Each mutant runs only the tests that cover it (mutmut records which tests reach which
function in a first, unmutated run).

String literals: mutmut mutates each plain string three ways ("XX" + s + "XX", lower case,
upper case). This runner keeps only the "XX" mutant per literal (see ``_LAUNCH``): one
mutant per string still tests that the string matters (a dictionary key, a rule name, a
message a test reads), and the ledger's several hundred message strings would otherwise
triple its run time. Strings inside f-strings and docstrings are never mutated by mutmut.

Usage::

    python tools/mutants.py                 # every group, then the report
    python tools/mutants.py ledger kernels  # some groups (the report keeps the others)
    python tools/mutants.py --report-only   # rebuild results/mutants.json from .mutmut/
    python tools/mutants.py --list          # the groups and their modules
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRATCH = REPO / ".mutmut"
OUT = REPO / "results" / "mutants.json"
MUTMUT = str(Path(sys.executable).parent / "mutmut")

# group -> modules (paths under src/) to mutate, the tests that may kill them, extra env.
GROUPS: dict[str, dict] = {
    "ledger": {
        "modules": [
            "evalsim/ledger/claims.py",
            "evalsim/ledger/readings.py",
            "evalsim/ledger/verdicts.py",
            "evalsim/ledger/output.py",
            "evalsim/ledger/cli.py",
            "evalsim/safe_expr.py",
        ],
        "skip_help": True,
        "tests": ["tests/test_ledger.py"],
    },
    "resample": {
        "modules": ["evalsim/stats/resample/draws.py"],
        "tests": ["tests/test_resample.py", "tests/test_experiment.py"],
    },
    "hierarchy": {
        "modules": ["evalsim/stats/multi/hierarchy.py"],
        "tests": ["tests/test_hierarchy.py"],
    },
    "kernels": {
        "modules": ["evalsim/stats/multi/_hierarchy_kernels.py"],
        # the kernel's own tests (draw for draw against a plain loop): fast without the JIT
        "tests": [
            "tests/test_hierarchy.py::test_kernel_draw_for_draw_against_a_plain_loop",
            "tests/test_hierarchy.py::test_public_function_uses_the_kernel_on_sorted_clusters",
        ],
        "env": {"NUMBA_DISABLE_JIT": "1"},
    },
    "paired": {
        "modules": ["evalsim/stats/two_sample/paired.py"],
        "tests": ["tests/test_paired.py", "tests/test_paired_values.py"],
    },
    "simreal-joint": {
        "modules": ["evalsim/stats/simreal/joint.py"],
        "tests": ["tests/test_simreal_joint.py", "tests/test_simreal_exact_methods.py"],
    },
    "simreal-full-joint": {
        "modules": ["evalsim/stats/simreal/full_joint.py"],
        "tests": ["tests/test_simreal_full_joint.py", "tests/test_simreal_exact_methods.py"],
    },
    "calibrate-so101": {
        # the SO-101 rule's response-surface model, on the rule's simulated simulator
        "modules": ["evalsim/sim/calibration_model.py"],
        "tests": ["tests/test_calibrate_so101.py"],
    },
    "calibrate": {
        "modules": ["evalsim/sim/calibrate.py"],
        # the rule on a simulated simulator, and test_sim's calibration tests without MuJoCo
        # (its MuJoCo sweep, test_calibration_rule_on_a_tiny_grid, takes minutes per mutant)
        "tests": [
            "tests/test_calibrate.py",
            "tests/test_sim.py::test_prob_inside_counts_the_binomial",
            "tests/test_sim.py::test_calibration_score_prefers_margin_on_both_sides",
            "tests/test_sim.py::test_paired_correlation_is_phi",
        ],
    },
    # The CLI tests call evalsim.cli.main in-process, so the trampolines see them.
    "cli-compare": {
        "modules": [
            "evalsim/cli/compare.py",
            "evalsim/cli/compare_result.py",
            "evalsim/cli/compare_input.py",
        ],
        "skip_help": True,  # argparse help= texts are not mutated (see _PATCH)
        "tests": [
            "tests/test_cli_compare_values.py",
            "tests/test_cli.py",
            "tests/test_cli_lab.py",
            "tests/test_cli_mde.py",
            # compare's later options and limits: --test, the size budget, --cluster, --order
            "tests/test_unconditional_cli.py",
            "tests/test_cli_large_n.py",
            "tests/test_cli_defects.py",
            "tests/test_cli_multi_defects.py",
            "tests/test_small_logs.py",
        ],
    },
    "cli-plan": {
        "modules": ["evalsim/cli/plan.py"],
        "skip_help": True,
        "tests": ["tests/test_cli_plan_values.py", "tests/test_cli.py", "tests/test_cli_mde.py"],
    },
}
# mutmut's operators with the string operator reduced to the "XX" wrap (see above), and, in
# groups with "skip_help", no mutant of an argparse ``help=`` text (its value, or the
# argument dropped or set to None): help texts are not verdicts. ``_help_excluded`` counts
# what that leaves out, per module.
_PATCH = """
import libcst as cst
import libcst.matchers as cm
from mutmut.mutation import file_mutation as fm, mutators as m
_orig = m.operator_string
def _xx_only(node):
    for i, mutant in enumerate(_orig(node)):
        if i == 0:
            yield mutant
import os
_HELP_FILTER = [os.environ.get("MUTANTS_SKIP_HELP") == "1"]
def _is_help(node):
    return (_HELP_FILTER[0] and isinstance(node, cst.Arg) and node.keyword is not None
            and node.keyword.value == "help")
_orig_removal = m.operator_arg_removal
def _removal_keeping_help(node):
    helps = sum(map(_is_help, node.args))
    for mutant in _orig_removal(node):
        kept = [a for a in mutant.args if _is_help(a) and not cm.matches(a.value, cm.Name("None"))]
        if len(kept) == helps:
            yield mutant
_swap = {_orig: _xx_only, _orig_removal: _removal_keeping_help}
m.mutation_operators[:] = [(t, _swap.get(f, f)) for t, f in m.mutation_operators]
_skip = fm.MutationVisitor._skip_node_and_children
fm.MutationVisitor._skip_node_and_children = lambda self, node: _is_help(node) or _skip(self, node)
"""
_LAUNCH = (
    _PATCH
    + """
import sys
from mutmut.__main__ import cli
sys.argv = ["mutmut", *sys.argv[1:]]
cli()
"""
)
NOT_RUN = {"not checked", "skipped", "check was interrupted by user"}
# docs/: the walkthrough tests (tests/test_cli.py, test_cli_lab.py) read docs/guide/cli.md
COPY = [
    "src",
    "tests",
    "config",
    "workflow",
    "examples",
    "benchmarks",
    "README.md",
    "docs",
    "Snakefile",
]


def _pyproject(group: dict, work: Path) -> str:
    """The repository's pyproject.toml with a [tool.mutmut] section for ``group`` (its test
    files that exist in the copy ``work``, which may be an older commit's)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    text = re.sub(r"\n\[tool\.mutmut\].*?(?=\n\[|\Z)", "\n", text, flags=re.S)
    only = [f"src/{m}" for m in group["modules"]]
    tests = [t for t in group["tests"] if (work / t.split("::")[0]).exists()]
    return text + (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {json.dumps(only)}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist"]\n'
        "also_copy = " + json.dumps(COPY[2:]) + "\n"
    )


def _copy_tree(work: Path, rev: str | None) -> None:
    """The files mutmut needs, from the work tree or (``rev``) from a commit."""
    if rev:
        items = [i for i in COPY if (REPO / i).exists()]
        archive = subprocess.run(
            ["git", "archive", rev, "--", *items], cwd=REPO, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
        return
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
    for item in COPY:
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, work / item, ignore=ignore)
        elif src.exists():
            shutil.copy2(src, work / item)


def _dirty() -> bool:
    out = subprocess.run(
        ["git", "status", "--porcelain", "--", *COPY], cwd=REPO, capture_output=True, text=True
    ).stdout
    return bool(out.strip())


def run_group(
    name: str, max_children: int, scratch: Path, rev: str | None = None, sample: str = ""
) -> float:
    """Run mutmut for one group in a fresh scratch copy; return the seconds it took."""
    group = GROUPS[name]
    work = scratch / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    _copy_tree(work, rev)
    present = [m for m in group["modules"] if (work / "src" / m).exists()]
    if not present:
        print(f"[mutants] {name}: none of {group['modules']} exists here, skipped")
        shutil.rmtree(work)
        return 0.0
    (work / "pyproject.toml").write_text(_pyproject(group, work), encoding="utf-8")
    head = subprocess.run(
        ["git", "rev-parse", "--short", rev or "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = "" if rev or not _dirty() else "+work tree"
    (work / "commit.txt").write_text(head + dirty + "\n")
    env = dict(os.environ, **group.get("env", {}))
    env["MUTANTS_SKIP_HELP"] = "1" if group.get("skip_help") else "0"
    env.setdefault("NUMBA_CACHE_DIR", str(work / ".cache" / "numba"))
    env.setdefault("MPLBACKEND", "Agg")
    print(f"[mutants] {name}: mutating {present}", flush=True)
    t0 = time.time()
    cmd = [sys.executable, "-c", _LAUNCH, "run", "--max-children", str(max_children)]
    if sample:  # mutant numbers ending in these digits, e.g. "05" -> a fifth of each function's
        cmd.append(f"*__mutmut_*[{sample}]")
    with open(work / "mutmut.log", "w") as log:
        rc = subprocess.call(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.time() - t0
    print(f"[mutants] {name}: mutmut exit {rc} after {seconds:.0f} s (log {work}/mutmut.log)")
    (work / "seconds.txt").write_text(f"{seconds:.0f}\n")
    return seconds


def _results(work: Path) -> dict[str, str]:
    """mutant name -> status, from ``mutmut results --all true`` in ``work``."""
    out = subprocess.run(
        [MUTMUT, "results", "--all", "true"], cwd=work, capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+__mutmut_\d+): (.+)$", line)
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


_DIFFS = """
import json, sys
from mutmut.__main__ import find_mutant, get_diff_for_mutant
out = {}
for name in json.loads(sys.stdin.read()):
    try:
        out[name] = get_diff_for_mutant(name, path=find_mutant(name).path).strip()
    except Exception as err:  # e.g. a group interrupted while writing its mutants
        out[name] = f"(no diff: {type(err).__name__}: {err})"
print(json.dumps(out))
"""


_HELP_COUNT = (
    _PATCH
    + """
import json, sys
from mutmut.mutation.file_mutation import create_mutations
out = {}
for path in json.loads(sys.stdin.read()):
    code = open(path, encoding="utf-8").read()
    counts = []
    for on in (True, False):
        _HELP_FILTER[0] = on
        counts.append(len(create_mutations(path, code)[1]))
    out[path] = counts[1] - counts[0]
print(json.dumps(out))
"""
)


def _help_excluded(work: Path, modules: list[str]) -> dict[str, int]:
    """Per module: the mutants of argparse ``help=`` texts that the runner does not make."""
    paths = [f"src/{m}" for m in modules if (work / "src" / m).exists()]
    res = subprocess.run(
        [sys.executable, "-c", _HELP_COUNT], cwd=work, input=json.dumps(paths),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {k.removeprefix("src/"): v for k, v in json.loads(res.stdout).items()}


def _diffs(work: Path, names: list[str]) -> dict[str, str]:
    """The diff of each named mutant (what ``mutmut show`` prints), in one process."""
    res = subprocess.run(
        [sys.executable, "-c", _DIFFS], cwd=work, input=json.dumps(names), capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    return json.loads(res.stdout)


def _module_of(mutant: str, modules: list[str]) -> str:
    dotted = {m.removesuffix(".py").replace("/", "."): m for m in modules}
    best = max((d for d in dotted if mutant.startswith(d + ".")), key=len)
    return dotted[best]


def report(scratch: Path, out: Path, rev: str | None = None) -> dict:
    """Collect every group's outcome from ``scratch`` into ``out`` (JSON)."""
    data = json.loads(out.read_text()) if out.exists() else {}
    modules = data.setdefault("modules", {})
    for name, group in GROUPS.items():
        work = scratch / name
        if not (work / "mutants").is_dir():
            continue
        statuses = _results(work)
        diffs = _diffs(work, [m for m, st in statuses.items() if st == "survived"])
        stamp = work / "commit.txt"
        commit = stamp.read_text().strip() if stamp.exists() else "?"
        seconds = (
            (work / "seconds.txt").read_text().strip() if (work / "seconds.txt").exists() else ""
        )
        per: dict[str, dict] = {}
        for mutant, status in sorted(statuses.items()):
            module = _module_of(mutant, group["modules"])
            entry = per.setdefault(
                module,
                {"group": name, "commit": commit, "group_seconds": seconds, "mutants": 0,
                 "killed": 0, "survived": 0, "timeouts": 0, "other": {}, "surviving": {}},
            )  # fmt: skip
            entry["mutants"] += 1
            if status == "killed":
                entry["killed"] += 1
            elif status == "survived":
                entry["survived"] += 1
                entry["surviving"][mutant] = diffs.get(mutant, "")
            elif status == "timeout":
                entry["timeouts"] += 1
            else:  # "no tests" (no selected test reaches it) counts as not killed
                entry["other"][status] = entry["other"].get(status, 0) + 1
        excluded = _help_excluded(work, group["modules"]) if group.get("skip_help") else {}
        for module, entry in per.items():
            entry["excluded (help text)"] = excluded.get(module, 0)
            not_run = sum(n for k, n in entry["other"].items() if k in NOT_RUN)
            entry["not_run"] = not_run
            tried = entry["mutants"] - not_run
            entry["score"] = round(entry["killed"] / tried, 4) if tried else None
            modules[module] = entry
    data["note"] = (
        "score = killed / (mutants - not run); timeouts count as not killed. "
        "Survivors are explained in docs/MUTANTS.md."
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(out)
    return data


def print_table(data: dict) -> None:
    print(
        f"{'module':38s} {'mutants':>7s} {'run':>5s} {'killed':>6s} {'surv':>5s} "
        f"{'t/o':>4s} {'no test':>7s} {'score':>6s}"
    )
    for module, e in sorted(data["modules"].items()):
        score = "" if e["score"] is None else f"{100 * e['score']:.1f}%"
        print(
            f"{module:38s} {e['mutants']:7d} {e['mutants'] - e['not_run']:5d} {e['killed']:6d} "
            f"{e['survived']:5d} {e['timeouts']:4d} {e['other'].get('no tests', 0):7d} {score:>6s}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"groups to run (default all: {list(GROUPS)})")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument(
        "--sample",
        default="",
        help="run only mutants whose number ends in one of these digits (e.g. 05: about a "
        "fifth); the others stay 'not checked' and are left out of the score",
    )
    parser.add_argument(
        "--rev",
        help="mutate the files of this commit instead of the work tree (a 'before' score); "
        "writes results/mutants_<rev>.json",
    )
    args = parser.parse_args(argv)
    if args.list:
        for name, group in GROUPS.items():
            print(f"{name:10s} {', '.join(group['modules'])}  <- {' '.join(group['tests'])}")
        return 0
    unknown = sorted(set(args.groups) - set(GROUPS))
    if unknown:
        print(f"unknown group(s) {unknown}; allowed: {list(GROUPS)}", file=sys.stderr)
        return 2
    scratch = SCRATCH / args.rev if args.rev else SCRATCH / "work"
    out = OUT.with_name(f"mutants_{args.rev}.json") if args.rev else OUT
    if not args.report_only:
        for name in args.groups or GROUPS:
            run_group(name, args.max_children, scratch, args.rev, args.sample)
    print_table(report(scratch, out, args.rev))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
