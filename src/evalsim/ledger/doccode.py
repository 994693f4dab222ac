"""The documents' own Python, executed: does it print what they print, and is it right?

The documents stay outside the repository (``$EVALSIM_DOCUMENTS``, else ``../shared/seeds``
beside it). :func:`extract_snippets` finds each block of Python in a document's text at run
time (a line opening with ``import``/``from``/``def``/``class`` and the code lines that
follow, trimmed to what :mod:`ast` parses). :func:`run_document` runs a document's snippets
in order, as a student typing them into one file would, in a subprocess (``-I``, a timeout,
sockets disabled), and records

- whether each line it prints appears in the document (the document's printed output);
- for every interval function it defines (a name containing one of
  :data:`evalsim.stats.intervals.METHODS`), the largest difference from evalsim's exact
  interval on a grid of n = 1, 5, 10, 20 and every k = 0..n, edges included.

Reference for the intervals: Brown, Cai & DasGupta (2001), Statistical Science 16(2).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from evalsim.io import atomic_path
from evalsim.stats.intervals import METHODS, interval

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
"""


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.replace("\u2212", "-")).strip()


def _reference(method: str, k: int, n: int, code: str, name: str) -> tuple[float, float]:
    # The document's defaults: z = 1.96 for the normal intervals, alpha = 0.05 otherwise.
    if method in ("wald", "wilson", "agresti_coull") and "z=1.96" in code.replace(" ", ""):
        iv = interval(k, n, method, z=1.96)
    else:
        iv = interval(k, n, method, confidence=0.95)
    return float(iv.lower), float(iv.upper)


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
    program = _NO_NET + runs + _HARNESS.format(names=[f for f, _ in funcs], grid=GRID_N)
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
    if not funcs or not grid_line:
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
    return rows


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
