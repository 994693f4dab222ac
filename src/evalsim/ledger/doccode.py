"""The documents' own Python, executed: does it print what they print, and is it right?

The documents stay outside the repository (``$EVALSIM_DOCUMENTS``, else ``../shared/seeds``
beside it). :func:`extract_snippets` finds each block of Python in a document's text at run
time (a line opening with ``import``/``from``/``def``/``class`` and the code lines that
follow, trimmed to what :mod:`ast` parses). :func:`run_document` runs a document's snippets
in order, as a student typing them into one file would, in a subprocess (``-I``, a timeout,
sockets disabled), and records

- whether each line it prints appears in the document (the document's printed output);
- for every interval function it defines (a name containing one of
  :data:`evalsim.stats.proportion.intervals.METHODS`), the largest difference from evalsim's exact
  interval on a grid of n = 1, 5, 10, 20 and every k = 0..n, edges included;
- for every other function it defines that :data:`FUNCTION_CHECKS` knows by name (lesson
  25's ``binom_pmf``, ``coverage``, ``trials_needed``, ``fisher_p`` and ``power``; document
  001's ``mde`` and ``n_per_arm``), the largest difference from evalsim's exact library on
  that entry's grid, edges (p = 0 and 1, k = 0 and n) included.

Reference for the intervals: Brown, Cai & DasGupta (2001), Statistical Science 16(2).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalsim.io import atomic_path
from evalsim.lesson import trials_needed
from evalsim.stats.proportion.binomial import binom_pmf
from evalsim.stats.proportion.coverage import exact_coverage
from evalsim.stats.proportion.intervals import METHODS, interval
from evalsim.stats.two_sample.design import mde_normal, n_per_arm_normal
from evalsim.stats.two_sample.fisher import fisher_pvalue
from evalsim.stats.two_sample.power import fisher_power

TIMEOUT_S = 60
GRID_N = (1, 5, 10, 20)
TOLERANCE = 1e-9  # evalsim's intervals vs the document's, computed with the same z / alpha
COLUMNS = ["doc", "lines", "ran", "printed_lines", "printed_in_document", "function",
           "grid", "max_abs_error", "worst_case", "right"]  # fmt: skip
_START = re.compile(r"^(import |from \S+ import |def |class |@)")
_CODE = re.compile(r"^(\s+\S|#|[A-Za-z_][\w.,\s\[\]]*\s*=|[A-Za-z_][\w.]*\(|for |if |print\()")
_NO_NET = (
    "import socket as _s\n"
    "def _blocked(*a, **k):\n    raise OSError('network disabled by evalsim.ledger')\n"
    "_s.socket = _blocked; _s.create_connection = _blocked\n"
    "import math\n"  # the lesson's snippets use math.* ('plain Python with math.comb')
)


def documents_dir(repo: str | os.PathLike = ".") -> Path:
    """``$EVALSIM_DOCUMENTS``, else ``../shared/seeds`` beside the repository."""
    env = os.environ.get("EVALSIM_DOCUMENTS")
    return Path(env) if env else Path(repo).resolve().parent / "shared" / "seeds"


def extract_snippets(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, code) of each Python block of ``text`` (1-based lines)."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        if not _START.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and (
            not lines[j].strip() or _CODE.match(lines[j]) or _START.match(lines[j])
        ):
            j += 1
        while j > i:
            code = "\n".join(lines[i:j]).rstrip()
            try:
                ast.parse(code)
                break
            except SyntaxError:
                j -= 1
        if j > i:
            last = i + len(code.splitlines())
            out.append((i + 1, last, code))
            i = last
        else:
            i += 1
    return out


@dataclass(frozen=True)
class FunctionCheck:
    """A document function checked by name: its calls, evalsim's value for each, the
    tolerance (absolute; 0 for integer answers) and the grid in words.

    An argument ``{"fn": name}`` is the document's own function of that name (``coverage``
    takes the document's interval function)."""

    calls: tuple[tuple, ...]
    reference: Callable
    tolerance: float
    grid: str


_P_EDGES = (0.0, 0.1, 0.5, 221 / 300, 1.0)
_TABLES = tuple((a, n, b, n) for n in (5, 10, 20) for a in range(n + 1) for b in range(n + 1))

#: Document functions checked against evalsim by name (registry: name -> check).
FUNCTION_CHECKS: dict[str, FunctionCheck] = {
    # lesson 25 (000), Build it step 2: math.comb(n, k) p^k (1-p)^(n-k)
    "binom_pmf": FunctionCheck(
        tuple((k, n, p) for n in GRID_N for k in range(n + 1) for p in _P_EDGES),
        lambda k, n, p: binom_pmf(k, n, p),
        1e-12,
        f"n in {GRID_N}, k = 0..n, p in (0, 0.1, 0.5, 221/300, 1)",
    ),
    # step 2: the binomial sum over the k whose interval (the document's own) contains p
    "coverage": FunctionCheck(
        tuple(
            ({"fn": m}, n, p)
            for m in ("wald", "wilson")
            for n in (1, 5, 10, 20, 50)
            for p in (0.1, 0.5, 221 / 300, 0.9)
        ),
        lambda iv, n, p: exact_coverage(iv["fn"], n, p, z=1.96),
        1e-9,
        "its wald and wilson, n in (1, 5, 10, 20, 50), p in (0.1, 0.5, 221/300, 0.9), z = 1.96",
    ),
    # step 3: the smallest n whose Wilson half-width at k = round(p n) reaches the target
    "trials_needed": FunctionCheck(
        tuple((p, h) for p in (0.5, 0.7, 0.9, 0.95) for h in (0.1, 0.05, 0.02)),
        lambda p, h: trials_needed(p, h, z=1.96),
        0.0,
        "p in (0.5, 0.7, 0.9, 0.95), half-width in (0.1, 0.05, 0.02)",
    ),
    # step 4: two-sided Fisher (SciPy's definition; the document's tie tolerance is 1e-7)
    "fisher_p": FunctionCheck(
        _TABLES + ((14, 20, 18, 20), (74, 100, 88, 100)),
        lambda k1, n1, k2, n2: fisher_pvalue(k1, n1, k2, n2),
        1e-9,
        "every k_A/n vs k_B/n at n in (5, 10, 20); 14/20 vs 18/20; 74/100 vs 88/100",
    ),
    # step 5: exact power of Fisher's test, n per arm
    "power": FunctionCheck(
        tuple((0.737, 0.877, n) for n in (5, 10, 20, 50)) + ((0.5, 0.5, 10), (0.2, 0.9, 20)),
        lambda p1, p2, n: fisher_power(p1, n, p2, n),
        1e-9,
        "0.737 vs 0.877 at n in (5, 10, 20, 50); 0.5 vs 0.5 at 10; 0.2 vs 0.9 at 20",
    ),
    # document 001: the worst-case MDE and the n per arm of the two-proportion z-test
    "mde": FunctionCheck(
        tuple((n, pbar) for n in (10, 20, 50, 100, 350) for pbar in (0.1, 0.5, 0.9)),
        lambda n, pbar: mde_normal(n, pbar),
        1e-12,
        "n in (10, 20, 50, 100, 350), pbar in (0.1, 0.5, 0.9)",
    ),
    "n_per_arm": FunctionCheck(
        tuple((a, b) for a, b in ((0.4, 0.7), (0.8, 0.9), (0.5, 0.6), (0.9, 0.95), (0.7, 0.4))),
        lambda p1, p2: n_per_arm_normal(p1, p2, variance="fleiss").n,
        0.0,
        "0.4 vs 0.7, 0.8 vs 0.9, 0.5 vs 0.6, 0.9 vs 0.95, 0.7 vs 0.4",
    ),
}


def _checked_functions(code: str) -> list[str]:
    """The functions a snippet defines that :data:`FUNCTION_CHECKS` knows, in order."""
    return [
        node.name
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.FunctionDef) and node.name in FUNCTION_CHECKS
    ]


def _interval_functions(code: str) -> list[tuple[str, str]]:
    """(function name, evalsim method) for each interval function a snippet defines."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef):
            for m in sorted(METHODS, key=len, reverse=True):
                if m.replace("_", "") in node.name.replace("_", "").lower():
                    found.append((node.name, m))
                    break
    return found


_HARNESS = """
import json as _json
_grid = {{}}
for _name in {names!r}:
    _rows = []
    for _n in {grid!r}:
        for _k in range(_n + 1):
            try:
                _lo, _hi = globals()[_name](_k, _n)
                _rows.append([_k, _n, float(_lo), float(_hi)])
            except Exception as _e:
                _rows.append([_k, _n, None, repr(_e)])
    _grid[_name] = _rows
print("@@GRID@@" + _json.dumps(_grid))
_checked = {{}}
for _name, _calls in {calls!r}.items():
    _rows = []
    for _args in _calls:
        _args = [globals()[a["fn"]] if isinstance(a, dict) else a for a in _args]
        try:
            _rows.append(float(globals()[_name](*_args)))
        except Exception as _e:
            _rows.append(repr(_e))
    _checked[_name] = _rows
print("@@CHECK@@" + _json.dumps(_checked))
"""


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("\u2212", "-")).strip()


def _reference(method: str, k: int, n: int, code: str, name: str) -> tuple[float, float]:
    # The document's defaults: z = 1.96 for the normal intervals, alpha = 0.05 otherwise.
    if method in ("wald", "wilson", "agresti_coull") and "z=1.96" in code.replace(" ", ""):
        iv = interval(k, n, method, z=1.96)
    else:
        iv = interval(k, n, method, confidence=0.95)
    return tuple(iv.bounds())


def run_document(path: str | os.PathLike) -> list[dict]:
    """One row per interval function (or one per document without any) of ``path``."""
    text = Path(path).read_text(encoding="utf-8")
    snippets = extract_snippets(text)
    name = Path(path).name
    if not snippets:
        return [dict.fromkeys(COLUMNS, "") | {"doc": name, "ran": "no Python in the document"}]
    code = "\n\n".join(c for _, _, c in snippets)
    funcs = _interval_functions(code)
    # Each snippet in turn, in one namespace; a failing one (e.g. a usage template with
    # undefined names) is reported and the next still runs.
    runs = "".join(
        f"try:\n    exec({c!r}, globals())\nexcept Exception as _e:\n"
        f"    print('@@ERR@@ lines {a}-{b}: ' + type(_e).__name__ + ': ' + str(_e))\n"
        for a, b, c in snippets
    )
    checked = _checked_functions(code)
    calls = {f: [list(a) for a in FUNCTION_CHECKS[f].calls] for f in checked}
    harness = _HARNESS.format(names=[f for f, _ in funcs], grid=GRID_N, calls=calls)
    program = _NO_NET + runs + harness
    env = {"PATH": os.environ.get("PATH", ""), "NUMBA_DISABLE_JIT": "1"}
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-c", program],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=env,
            check=False,
        )
        ran = "ok" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]
        stdout = proc.stdout
    except subprocess.TimeoutExpired:
        ran, stdout = f"timeout after {TIMEOUT_S} s", ""
    grid_line = [ln for ln in stdout.splitlines() if ln.startswith("@@GRID@@")]
    errors = [ln[len("@@ERR@@ ") :] for ln in stdout.splitlines() if ln.startswith("@@ERR@@")]
    if errors and ran == "ok":
        ran = "ok except " + "; ".join(errors)
    printed = [ln for ln in stdout.splitlines() if ln.strip() and not ln.startswith("@@")]
    # The document's prose and comments outside its code (a printed line is trivially in the
    # code that prints it).
    inside = {i for a, b, _ in snippets for i in range(a, b + 1)}
    doc_text = _norm(" ".join(ln for i, ln in enumerate(text.splitlines(), 1) if i not in inside))
    found = sum(_norm(ln) in doc_text for ln in printed)
    base = {
        "doc": name,
        "lines": ",".join(f"{a}-{b}" for a, b, _ in snippets),
        "ran": ran,
        "printed_lines": len(printed),
        "printed_in_document": found,
    }
    check_line = [ln for ln in stdout.splitlines() if ln.startswith("@@CHECK@@")]
    if not (funcs or checked) or not grid_line:
        return [
            base
            | {"function": "", "grid": "", "max_abs_error": np.nan, "worst_case": "", "right": ""}
        ]
    grid = json.loads(grid_line[0][len("@@GRID@@") :])
    rows = []
    for fname, method in funcs:
        worst, where = 0.0, ""
        for k, n, lo, hi in grid[fname]:
            ref = _reference(method, k, n, code, fname)
            if lo is None:
                err, got = np.inf, hi
            else:
                err, got = max(abs(lo - ref[0]), abs(hi - ref[1])), f"({lo:.4g}, {hi:.4g})"
            if err > worst:
                worst = err
                where = f"{k}/{n}: {got}, evalsim {method} ({ref[0]:.4g}, {ref[1]:.4g})"
        rows.append(
            base
            | {
                "function": fname,
                "grid": f"n in {GRID_N}, k = 0..n",
                "max_abs_error": worst,
                "worst_case": where,
                "right": bool(worst <= TOLERANCE),
            }
        )
    values = json.loads(check_line[0][len("@@CHECK@@") :]) if check_line else {}
    for fname in checked:
        rows.append(base | _function_row(fname, values.get(fname)))
    return rows


def _show_args(args: tuple) -> str:
    return ", ".join(a["fn"] if isinstance(a, dict) else f"{a:.4g}" for a in args)


def _function_row(fname: str, got: list | None) -> dict:
    """The row of one :data:`FUNCTION_CHECKS` function: its largest difference from evalsim
    on the grid (inf where the document's call raised) and where it is."""
    check = FUNCTION_CHECKS[fname]
    worst, where = 0.0, ""
    for i, args in enumerate(check.calls):
        ref = float(check.reference(*args))
        value = None if got is None else got[i]
        if isinstance(value, float):
            err, shown = abs(value - ref), f"{value:.6g}"
        else:  # an exception's repr, or no value at all (the harness did not run)
            err, shown = np.inf, str(value)
        if err > worst:
            worst, where = err, f"{fname}({_show_args(args)}) = {shown}, evalsim {ref:.6g}"
    return {
        "function": fname,
        "grid": check.grid,
        "max_abs_error": worst,
        "worst_case": where,
        "right": bool(worst <= check.tolerance),
    }


def document_code_table(folder: str | os.PathLike) -> pd.DataFrame:
    """Every document of ``folder`` (``*.txt``), run: the rows of :func:`run_document`."""
    files = sorted(Path(folder).glob("*.txt"))
    if not files:
        # The documents are not part of the repository: without them the table says so and
        # the claims that read it are "missing source" (the pipeline still runs).
        # no path in the row: the table must be the same bytes wherever the run happens
        missing = "no documents (*.txt) found; set EVALSIM_DOCUMENTS"
        return pd.DataFrame([dict.fromkeys(COLUMNS, "") | {"ran": missing}], columns=COLUMNS)
    return pd.DataFrame([r for f in files for r in run_document(f)], columns=COLUMNS)


def write_document_code(folder, csv_path) -> pd.DataFrame:
    """Write :func:`document_code_table` as CSV, atomically."""
    df = document_code_table(folder)
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
    return df
