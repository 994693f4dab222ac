"""The ``evalsim`` command: the study's statistics applied to a lab's own trial logs.

Subcommands::

    evalsim interval K N [--confidence 0.95]
    evalsim summarize FILE [FILE ...] [--confidence 0.95] [--max-half-width 0.10]
    evalsim compare FILE [FILE ...] --a X --b Y [--task T] [--alpha 0.05] [--unpaired]
    evalsim plan --p1 P --p2 P [--alpha 0.05] [--power 0.8] [--paired --discordance D]
                 [--minutes-per-trial M] [--n N]
    evalsim peek --n N [--p 0.7] [--looks every|K|n1,n2,...] [--alpha 0.05]

Each prints aligned tables, or with ``--json`` one JSON object (keys documented in the README,
section "The evalsim command"). Bad input -- a missing or unreadable file, missing columns,
a success value that is not 0/1, an unknown policy, k > n, a probability outside [0, 1] --
prints one line on stderr and exits with status 2, without a traceback.

This module only parses, reads, formats and explains; every number comes from
:mod:`evalsim.stats` (intervals, fisher, power, design, paired, peeking) or, for Boschloo's
test, from :func:`scipy.stats.boschloo_exact`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys
import textwrap
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalsim.trial_logs import TrialLogError, pairing_key, read_trial_logs

__all__ = ["main", "build_parser", "BOSCHLOO_MAX_TOTAL_N", "PRECISION_HALF_WIDTH"]

#: Boschloo's test (SciPy, a numerical supremum over the nuisance parameter) runs only when
#: n_a + n_b is at most this. Measured on the build machine: 0.02 s at 45 + 45, 0.2 s at
#: 200 + 200, 0.6 s at 300 + 300, 1.2 s at 400 + 400, growing about as (n_a * n_b).
BOSCHLOO_MAX_TOTAL_N = 600

#: summarize warns when the Wilson interval's half-width, (upper - lower) / 2, exceeds this:
#: a rate printed as "70%" is read as good to about +/-10 points, and at n = 20 it is not.
PRECISION_HALF_WIDTH = 0.10

#: Exact McNemar power (evalsim.stats.design.mcnemar_power_exact) costs O(n^2) per call:
#: 0.05 s at 100 pairs, 0.26 s at 300, 1.5 s at 1000 on the build machine. The exact paired
#: n (a scan upward from 0.8 x the normal-approximation n, ~5 s at 200) and the paired MDE
#: (a bisection, ~10 calls) are computed only up to this many pairs; above it plan reports
#: the normal approximation alone and compare falls back to the unpaired Fisher MDE.
PAIRED_EXACT_MAX_N = 200

EXIT_BAD_INPUT = 2
EXIT_MISSING_LIBRARY = 3


class BadInput(Exception):
    """A user error: reported as one line on stderr, exit status 2."""


class MissingLibrary(Exception):
    """A statistics function this command needs is not installed (exit status 3)."""


def _lib(module: str, name: str):
    """``evalsim.stats.<module>.<name>``, imported when a subcommand first needs it."""
    try:
        mod = importlib.import_module(f"evalsim.stats.{module}")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("evalsim"):
            raise MissingLibrary(
                f"evalsim.stats.{module} is not available in this install"
            ) from None
        raise
    try:
        return getattr(mod, name)
    except AttributeError:
        raise MissingLibrary(f"evalsim.stats.{module}.{name} is not available") from None


# --------------------------------------------------------------------------- argument types


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block) and exit status 2."""

    def error(self, message: str):  # noqa: D102 - argparse API
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a probability in [0, 1], got {text!r}"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"probability must be in [0, 1], got {text}")
    return value


def _open_unit(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _positive_int(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _looks(text: str):
    """``every``, a number of equally spaced looks K, or explicit look sizes ``10,20,30``."""
    text = text.strip().lower()
    if text == "every":
        return "every"
    try:
        if "," in text:
            sizes = [int(t) for t in text.split(",") if t.strip()]
            if not sizes or any(s < 1 for s in sizes) or sizes != sorted(set(sizes)):
                raise ValueError
            return sizes
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'every', a number of looks, or increasing sizes like 10,20,30; got {text!r}"
        ) from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"number of looks must be >= 1, got {text}")
    return k


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``evalsim`` command (exposed for the docs and the tests)."""
    parser = _Parser(
        prog="evalsim",
        description="Exact statistics for binary robot-evaluation trials, on your own logs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="print one JSON object instead")

    p = sub.add_parser("interval", help="k successes out of n: five confidence intervals")
    p.add_argument("k", type=_count, help="number of successes")
    p.add_argument("n", type=_positive_int, help="number of trials")
    p.add_argument("--confidence", type=_open_unit, default=0.95, help="default 0.95")
    common(p)

    p = sub.add_parser("summarize", help="per-policy success rates of a trial log")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log")
    p.add_argument("--confidence", type=_open_unit, default=0.95, help="default 0.95")
    p.add_argument(
        "--max-half-width",
        type=_open_unit,
        default=PRECISION_HALF_WIDTH,
        help="warn when the Wilson interval's half-width exceeds this (default 0.10)",
    )
    p.add_argument("--policy", help="policy name for a LeRobot JSON log (default: its folder)")
    common(p)

    p = sub.add_parser("compare", help="is policy B different from policy A?")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log")
    p.add_argument("--a", required=True, metavar="X", help="reference policy")
    p.add_argument("--b", required=True, metavar="Y", help="policy compared with it")
    p.add_argument("--task", help="use only the trials of this task")
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")
    p.add_argument("--unpaired", action="store_true", help="ignore condition ids")
    p.add_argument("--policy", help=argparse.SUPPRESS)
    common(p)

    p = sub.add_parser("plan", help="trials per arm to detect p1 vs p2")
    p.add_argument("--p1", type=_probability, required=True, help="success rate of A")
    p.add_argument("--p2", type=_probability, required=True, help="success rate of B")
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")
    p.add_argument("--power", type=_open_unit, default=0.8, help="default 0.8")
    p.add_argument("--paired", action="store_true", help="both policies run each condition")
    p.add_argument(
        "--discordance",
        type=_probability,
        help="with --paired: share of conditions where exactly one policy succeeds",
    )
    p.add_argument("--minutes-per-trial", type=_positive_float, help="bench minutes per trial")
    p.add_argument("--n", type=_positive_int, help="also: MDE and power at this n per arm")
    common(p)

    p = sub.add_parser("peek", help="false-win rate of looking at the results repeatedly")
    p.add_argument("--n", type=_positive_int, required=True, help="final trials per arm")
    p.add_argument("--p", type=_probability, default=0.7, help="common true rate (default 0.7)")
    p.add_argument(
        "--looks",
        type=_looks,
        default="every",
        help="'every' trial (default), K equally spaced looks, or sizes like 10,20,30",
    )
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")
    common(p)
    return parser


# --------------------------------------------------------------------------- output


@dataclass
class Report:
    """What a subcommand found: text blocks for people, one dict for ``--json``."""

    data: dict
    blocks: list = field(default_factory=list)

    def table(self, title: str, headers: Sequence[str], rows: Sequence[Sequence]) -> None:
        self.blocks.append(("table", title, list(headers), [list(r) for r in rows]))

    def line(self, text: str) -> None:
        self.blocks.append(("line", text))

    def render(self) -> str:
        out: list[str] = []
        for block in self.blocks:
            if block[0] == "line":
                # Long sentences wrap at 100 columns; continuation lines are indented.
                out.extend(
                    textwrap.wrap(block[1], 100, subsequent_indent="  ", break_on_hyphens=False)
                    or [""]
                )
                continue
            _, title, headers, rows = block
            if out and out[-1] != "":
                out.append("")
            if title:
                out.append(title)
            out.extend(format_table(headers, rows))
            out.append("")
        while out and out[-1] == "":
            out.pop()
        return "\n".join(out) + "\n"


def format_table(headers: Sequence[str], rows: Sequence[Sequence]) -> list[str]:
    """Align columns: text left, numbers (and intervals, percents) right."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [
        all(_looks_numeric(r[i]) for r in cells[1:]) and len(cells) > 1 for i in range(len(headers))
    ]

    def fmt(row):
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(row, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    lines = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in cells[1:]]
    return lines


def _looks_numeric(text: str) -> bool:
    t = text.strip()
    return t == "" or t[0] in "0123456789-+.[<≥≤" or t in {"n/a", "—"}


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.{digits}f}%"


def _ci_pct(lo: float, hi: float, digits: int = 1) -> str:
    return f"[{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"


def _p(x: float | None) -> str:
    if x is None or x != x:
        return "n/a"
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def _jsonable(obj):
    """Plain JSON types: numpy scalars to Python, NaN/inf to null, tuples to lists."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


_SCALAR = r"(?:-?[0-9][0-9.eE+-]*|null|true|false)"
_SCALAR_LIST = re.compile(rf"\[\s+({_SCALAR}(?:,\s+{_SCALAR})*)\s+\]")


def _dump_json(data: dict) -> str:
    """Indented JSON with lists of numbers kept on one line ([lower, upper], look sizes)."""
    text = json.dumps(_jsonable(data), indent=2)
    return _SCALAR_LIST.sub(lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


def _interval_pair(iv) -> list[float]:
    return [float(iv.lower), float(iv.upper)]


# --------------------------------------------------------------------------- interval

_METHOD_LABELS = {
    "wald": "Wald",
    "wilson": "Wilson",
    "clopper_pearson": "Clopper-Pearson",
    "jeffreys": "Jeffreys",
    "agresti_coull": "Agresti-Coull",
}


def _check_k_le_n(k: int, n: int) -> None:
    if k > n:
        raise BadInput(f"k must be <= n, got k = {k} > n = {n}")


def cmd_interval(args) -> Report:
    _check_k_le_n(args.k, args.n)
    interval = _lib("intervals", "interval")
    methods = _lib("intervals", "METHODS")
    ivs = {
        m: _interval_pair(interval(args.k, args.n, method=m, confidence=args.confidence))
        for m in methods
    }
    rate = args.k / args.n
    rep = Report({"k": args.k, "n": args.n, "rate": rate, "intervals": ivs})
    level = f"{100 * args.confidence:g}%"
    rows = [
        [_METHOD_LABELS.get(m, m), f"{lo:.4f}", f"{hi:.4f}", f"{hi - lo:.4f}"]
        for m, (lo, hi) in ivs.items()
    ]
    rep.line(f"k/n = {args.k}/{args.n}, rate = {rate:.4f}")
    rep.table(f"{level} confidence intervals", ["method", "lower", "upper", "width"], rows)
    notes = []
    if "wald" in ivs and (args.k in (0, args.n) or ivs["wald"][0] < 0 or ivs["wald"][1] > 1):
        notes.append("Wald is degenerate or leaves [0, 1] here; do not report it")
    if notes:
        rep.line("note: " + "; ".join(notes) + ".")
    rep.line("Report Wilson (or Clopper-Pearson when a guaranteed minimum coverage is required).")
    return rep


# --------------------------------------------------------------------------- summarize


def _rate_row(k: int, n: int, confidence: float) -> dict:
    wilson = _lib("intervals", "wilson_interval")(k, n, confidence=confidence)
    cp = _lib("intervals", "clopper_pearson_interval")(k, n, confidence=confidence)
    w = _interval_pair(wilson)
    return {
        "k": int(k),
        "n": int(n),
        "rate": k / n,
        "wilson": w,
        "clopper_pearson": _interval_pair(cp),
        "half_width": (w[1] - w[0]) / 2,
    }


def _trials_for(rate: float, half_width: float, confidence: float) -> int | None:
    """n for a Wilson half-width of ``half_width`` at ``rate``, or None if unavailable."""
    try:
        fn = _lib("budget", "trials_for_half_width")
    except MissingLibrary:
        return None
    try:
        return int(fn(rate, half_width, confidence=confidence))
    except ValueError:  # e.g. a rate of exactly 0 or 1, where the budget is not defined
        return None


def _group_rows(df, keys: list[str], confidence: float, max_hw: float) -> list[dict]:
    rows = []
    for values, g in df.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        row = dict(zip(keys, values, strict=True))
        row.update(_rate_row(int(g["success"].sum()), len(g), confidence))
        row["imprecise"] = row["half_width"] > max_hw
        rows.append(row)
    # Seeds 2 before 10: numeric-looking ids sort as numbers.
    rows.sort(key=lambda r: tuple(_natural(r[k]) for k in keys))
    return rows


def _natural(value) -> tuple:
    text = str(value)
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def _failure_breakdown(df) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for policy, g in df.groupby("policy", sort=True):
        # A failed trial whose failure is blank or "none" has no failure mode recorded.
        failed = g.loc[~g["success"], "failure"].replace(
            {"": "(unlabelled)", "none": "(unlabelled)"}
        )
        out[policy] = {str(k): int(v) for k, v in failed.value_counts().sort_index().items()}
    return out


def cmd_summarize(args) -> Report:
    df = read_trial_logs(args.files, policy=args.policy)
    conf, max_hw = args.confidence, args.max_half_width
    level = f"{100 * conf:g}%"
    by_policy = _group_rows(df, ["policy"], conf, max_hw)
    sub_keys = [c for c in ("task", "seed") if c in df.columns]
    by_group = _group_rows(df, ["policy", *sub_keys], conf, max_hw) if sub_keys else None
    failures = _failure_breakdown(df) if "failure" in df.columns else None

    warnings = []
    for r in by_policy:
        if r["imprecise"]:
            need = _trials_for(r["rate"], max_hw, conf)
            needed = f"; about {need} trials would give +/-{100 * max_hw:g}" if need else ""
            warnings.append(
                f"warning: {r['policy']}: n = {r['n']} gives a {level} Wilson interval of "
                f"+/-{100 * r['half_width']:.0f} points, wider than the +/-{100 * max_hw:g} a "
                f"reader would assume from '{_pct(r['rate'], 0)}'{needed}"
            )
        if r["k"] in (0, r["n"]):
            lo, hi = r["wilson"]
            bound = f"as low as {_pct(lo)}" if r["k"] else f"as high as {_pct(hi)}"
            warnings.append(
                f"note: {r['policy']}: {r['k']}/{r['n']} has a one-sided interval; the rate "
                f"could be {bound} ({level} Wilson)"
            )
    if by_group:
        bad = [r for r in by_group if r["imprecise"]]
        if bad:
            warnings.append(
                f"warning: {len(bad)} of {len(by_group)} {' x '.join(['policy', *sub_keys])} "
                f"cells have a Wilson half-width above +/-{100 * max_hw:g} points "
                f"(smallest n = {min(r['n'] for r in bad)}); read them as rough"
            )
    if "failure" in df.columns:
        odd = int((df["success"] & ~df["failure"].isin(["", "none"])).sum())
        if odd:
            warnings.append(f"warning: {odd} successful trial(s) also name a failure mode")

    data = {
        "files": list(args.files),
        "n_trials": len(df),
        "confidence": conf,
        "max_half_width": max_hw,
        "by_policy": [{k: v for k, v in r.items()} for r in by_policy],
        "by_group": by_group,
        "group_keys": ["policy", *sub_keys] if sub_keys else None,
        "failures": failures,
        "warnings": warnings,
    }
    rep = Report(data)
    rep.line(f"{len(df)} trials, {len(by_policy)} policies ({', '.join(args.files)})")
    headers = ["k/n", "rate", f"Wilson {level}", f"Clopper-Pearson {level}", "+/-"]

    def cells(r):
        return [
            f"{r['k']}/{r['n']}",
            _pct(r["rate"]),
            _ci_pct(*r["wilson"]),
            _ci_pct(*r["clopper_pearson"]),
            f"{100 * r['half_width']:.0f} pts" + (" !" if r["imprecise"] else ""),
        ]

    rep.table("By policy", ["policy", *headers], [[r["policy"], *cells(r)] for r in by_policy])
    if by_group:
        rep.table(
            f"By {' x '.join(['policy', *sub_keys])}",
            ["policy", *sub_keys, *headers],
            [[r["policy"], *[r[c] for c in sub_keys], *cells(r)] for r in by_group],
        )
    if failures is not None:
        rows = []
        for r in by_policy:
            fails = failures.get(r["policy"], {})
            n_fail = r["n"] - r["k"]
            for mode, count in sorted(fails.items(), key=lambda kv: (-kv[1], kv[0])):
                rows.append(
                    [r["policy"], mode, count, _pct(count / n_fail, 0), _pct(count / r["n"])]
                )
        if rows:
            rep.table(
                "Failure breakdown",
                ["policy", "failure", "count", "of failures", "of trials"],
                rows,
            )
    rep.line(
        f"'+/-' is half the Wilson interval's width; '!' marks more than "
        f"+/-{100 * max_hw:g} points."
    )
    for w in warnings:
        rep.line(w)
    return rep


# --------------------------------------------------------------------------- compare


def _boschloo(k_a: int, n_a: int, k_b: int, n_b: int) -> tuple[float | None, str]:
    if n_a + n_b > BOSCHLOO_MAX_TOTAL_N:
        return None, f"skipped: n_a + n_b = {n_a + n_b} > {BOSCHLOO_MAX_TOTAL_N} (slow)"
    from scipy.stats import boschloo_exact

    t0 = time.perf_counter()
    res = boschloo_exact([[k_a, k_b], [n_a - k_a, n_b - k_b]], alternative="two-sided")
    p = float(res.pvalue)
    if not math.isfinite(p):  # SciPy returns NaN when both arms are all-success or all-fail
        p = 1.0
    return p, f"{time.perf_counter() - t0:.2f} s"


def _pair_up(a, b, keys: list[str]):
    """Matched (success_a, success_b) arrays on shared keys, or a reason why not paired."""
    if not keys:
        return None, "no condition column: unpaired analysis"
    for name, g in (("A", a), ("B", b)):
        dup = g.duplicated(keys)
        if dup.any():
            first = g.loc[dup, keys].iloc[0].tolist()
            return None, (
                f"policy {name} ran {'/'.join(keys)} = {'/'.join(map(str, first))} more than "
                "once: cannot pair, unpaired analysis"
            )
    merged = a[[*keys, "success"]].merge(b[[*keys, "success"]], on=keys, suffixes=("_a", "_b"))
    if len(merged) == 0:
        return None, "the two policies share no condition ids: unpaired analysis"
    return merged, None


def _mde_80(n_a: int, n_b: int, alpha: float, pbar: float) -> tuple[float | None, str]:
    """Smallest gap Fisher's test detects with 80% power at this n (exact power).

    Rule: ``evalsim.stats.design.mde_exact`` at ``min(n_a, n_b)`` per arm (the smaller arm
    bounds what can be seen), two rates centred on the pooled observed rate; when a gap that
    large cannot fit around that centre (pooled rate near 0 or 1), centred on 0.5 instead,
    the worst case.
    """
    mde_exact = _lib("design", "mde_exact")
    n = min(n_a, n_b)
    centre = min(max(pbar, 0.0), 1.0)
    res = None
    if 0.0 < centre < 1.0:
        res = mde_exact(n, alpha=alpha, power=0.8, baseline=centre, convention="centered")
    if res is None or not math.isfinite(res.mde):
        centre = 0.5
        res = mde_exact(n, alpha=alpha, power=0.8, baseline=0.5, convention="centered")
    if not math.isfinite(res.mde):
        return None, f"no gap reaches 80% power at n = {n} per arm"
    return float(res.mde), (
        f"exact Fisher power at n = {n} per arm, alpha = {alpha:g}, the two rates centred "
        f"on {centre:.2f}"
    )


def cmd_compare(args) -> Report:
    df = read_trial_logs(args.files, policy=args.policy)
    if args.task is not None:
        if "task" not in df.columns:
            raise BadInput("--task given but the log has no 'task' column")
        if args.task not in set(df["task"]):
            raise BadInput(
                f"task {args.task!r} not in the log (tasks: {', '.join(sorted(set(df['task'])))})"
            )
        df = df[df["task"] == args.task]
    policies = sorted(set(df["policy"]))
    for flag, name in (("--a", args.a), ("--b", args.b)):
        if name not in policies:
            raise BadInput(
                f"{flag} {name!r} is not a policy in the log (policies: {', '.join(policies)})"
            )
    if args.a == args.b:
        raise BadInput(f"--a and --b name the same policy {args.a!r}")
    a = df[df["policy"] == args.a]
    b = df[df["policy"] == args.b]
    k_a, n_a, k_b, n_b = int(a["success"].sum()), len(a), int(b["success"].sum()), len(b)
    alpha = args.alpha
    level = f"{100 * (1 - alpha):g}%"

    fisher_p = float(_lib("fisher", "fisher_pvalue")(k_a, n_a, k_b, n_b))
    boschloo_p, boschloo_note = _boschloo(k_a, n_a, k_b, n_b)
    diff = _lib("paired", "diff_interval")(
        k_b, n_b, k_a, n_a, method="newcombe", confidence=1 - alpha
    )
    diff_ci = _interval_pair(diff)

    merged, pair_note = (
        (None, "--unpaired given") if args.unpaired else _pair_up(a, b, pairing_key(df))
    )
    paired = merged is not None
    mcn = None
    if paired:
        sa, sb = merged["success_a"].to_numpy(), merged["success_b"].to_numpy()
        b_only_a = int((sa & ~sb).sum())  # A succeeded, B failed
        c_only_b = int((~sa & sb).sum())  # B succeeded, A failed
        res = _lib("paired", "mcnemar_exact")(b_only_a, c_only_b)
        mcn = {
            "pairs": len(merged),
            "a_only": b_only_a,
            "b_only": c_only_b,
            "both": int((sa & sb).sum()),
            "neither": int((~sa & ~sb).sum()),
            "pvalue": float(res.pvalue),
            "midp": float(res.midp_pvalue),
        }
        unmatched = n_a + n_b - 2 * len(merged)
        if unmatched:
            pair_note = f"{unmatched} trial(s) without a partner are left out of McNemar"

    pbar = (k_a + k_b) / (n_a + n_b)
    mde = None
    if paired:
        disc = (mcn["a_only"] + mcn["b_only"]) / mcn["pairs"]
        mde = _paired_mde(mcn["pairs"], disc, alpha, 0.8)
        mde_rule = (
            f"exact McNemar power at {mcn['pairs']} pairs, alpha = {alpha:g}, at the observed "
            f"discordance {disc:.2f}"
        )
    if mde is None:
        mde, mde_rule = _mde_80(n_a, n_b, alpha, pbar)

    primary_p = mcn["pvalue"] if paired else fisher_p
    test_name = "exact McNemar" if paired else "Fisher's exact"
    rate_a, rate_b = k_a / n_a, k_b / n_b
    n_text = f"n = {n_a} per arm" if n_a == n_b else f"n = {n_a} (A) and {n_b} (B)"
    if paired:
        n_text = f"{mcn['pairs']} paired conditions"
    mde_text = (
        f"; at this n the smallest gap detectable with 80% power is about {100 * mde:.0f} points"
        if mde is not None
        else ""
    )
    if primary_p < alpha:
        better, worse = (args.b, args.a) if rate_b > rate_a else (args.a, args.b)
        verdict = (
            f"{better} beats {worse}: {_pct(max(rate_a, rate_b), 0)} vs "
            f"{_pct(min(rate_a, rate_b), 0)} at {n_text} ({test_name} p = {_p(primary_p)} "
            f"< {alpha:g}); the gap B-A is between {100 * diff_ci[0]:.0f} and "
            f"{100 * diff_ci[1]:.0f} points ({level} CI)"
        )
    else:
        verdict = (
            f"{args.a} and {args.b} are not detectably different at {n_text} "
            f"({test_name} p = {_p(primary_p)}){mde_text}; the data allow a gap B-A "
            f"anywhere from {100 * diff_ci[0]:.0f} to {100 * diff_ci[1]:.0f} points ({level} CI)"
        )

    data = {
        "a": args.a,
        "b": args.b,
        "n_a": n_a,
        "k_a": k_a,
        "n_b": n_b,
        "k_b": k_b,
        "fisher_p": fisher_p,
        "boschloo_p": boschloo_p,
        "paired": paired,
        "mcnemar_p": mcn["pvalue"] if paired else None,
        "mcnemar_midp": mcn["midp"] if paired else None,
        "discordant": {"a_only": mcn["a_only"], "b_only": mcn["b_only"]} if paired else None,
        "n_pairs": mcn["pairs"] if paired else None,
        "diff": rate_b - rate_a,
        "diff_ci": diff_ci,
        "diff_ci_method": "newcombe",
        "confidence": 1 - alpha,
        "alpha": alpha,
        "mde_80": mde,
        "mde_rule": mde_rule,
        "verdict": verdict,
    }
    rep = Report(data)
    rep.table(
        "Success rates",
        ["policy", "k/n", "rate"],
        [
            [args.a + " (A)", f"{k_a}/{n_a}", _pct(rate_a)],
            [args.b + " (B)", f"{k_b}/{n_b}", _pct(rate_b)],
        ],
    )
    tests = [
        ["Fisher's exact (unpaired)", _p(fisher_p), "two-sided"],
        [
            "Boschloo's exact (unpaired)",
            _p(boschloo_p),
            "SciPy, two-sided = 2 x smaller one-sided" if boschloo_p is not None else boschloo_note,
        ],
    ]
    if paired:
        tests += [
            ["exact McNemar (paired)", _p(mcn["pvalue"]), f"on {mcn['pairs']} pairs"],
            ["McNemar mid-p (paired)", _p(mcn["midp"]), "less conservative"],
        ]
    rep.table("Tests of 'A and B have the same success rate'", ["test", "p", "note"], tests)
    if paired:
        rep.table(
            f"Paired outcomes (same {'/'.join(pairing_key(df))})",
            ["", "B succeeded", "B failed"],
            [
                ["A succeeded", mcn["both"], mcn["a_only"]],
                ["A failed", mcn["b_only"], mcn["neither"]],
            ],
        )
        rep.line(f"discordant pairs: A only = {mcn['a_only']}, B only = {mcn['b_only']}")
        rep.line(
            "The tests marked (unpaired) ignore the pairing; with paired data read exact McNemar."
        )
    if pair_note:
        rep.line(f"note: {pair_note}")
    rep.table(
        "Difference B - A",
        ["estimate", f"{level} CI", "method"],
        [
            [
                f"{100 * (rate_b - rate_a):+.1f} pts",
                f"[{100 * diff_ci[0]:+.1f}, {100 * diff_ci[1]:+.1f}]",
                "Newcombe hybrid score (unpaired)",
            ]
        ],
    )
    if paired:
        rep.line(
            "Newcombe's interval treats the arms as independent: with positively correlated "
            "pairs it is wider than it needs to be (conservative)."
        )
    if mde is not None:
        rep.line(f"MDE at 80% power: {100 * mde:.1f} points ({mde_rule})")
    rep.line("")
    rep.line(f"verdict: {verdict}")
    return rep


# --------------------------------------------------------------------------- plan


def _discordant_split(p1: float, p2: float, discordance: float) -> tuple[float, float]:
    """(P(A only), P(B only)) of a pair: they differ by p1 - p2 and sum to the discordance."""
    d = p1 - p2
    if not abs(d) < discordance <= min(p1 + p2, 2.0 - p1 - p2) + 1e-12:
        raise BadInput(
            f"--discordance must be in ({abs(d):g}, {min(p1 + p2, 2 - p1 - p2):g}] for "
            f"p1 = {p1:g}, p2 = {p2:g} (the share of pairs where exactly one succeeds), "
            f"got {discordance:g}"
        )
    return (discordance + d) / 2.0, (discordance - d) / 2.0


def _mcnemar_n_exact(p10: float, p01: float, alpha: float, power: float, start: int) -> int | None:
    """Smallest number of pairs, scanning up from ``start``, whose exact McNemar power
    (``evalsim.stats.design.mcnemar_power_exact``) reaches ``power``; None past
    :data:`PAIRED_EXACT_MAX_N`."""
    mcnemar_power_exact = _lib("design", "mcnemar_power_exact")
    n = max(1, start)
    while mcnemar_power_exact(n, p10, p01, alpha) < power:
        n += 1
        if n > PAIRED_EXACT_MAX_N:
            return None
    return n


def cmd_plan(args) -> Report:
    p1, p2, alpha, power = args.p1, args.p2, args.alpha, args.power
    if p1 == p2:
        raise BadInput(f"--p1 and --p2 must differ (both {p1:g}): no gap to detect")
    if args.paired and args.discordance is None:
        raise BadInput(
            "--paired needs --discordance D (share of conditions where exactly one policy succeeds)"
        )
    if args.discordance is not None and not args.paired:
        raise BadInput("--discordance applies only with --paired")
    for name, v in (("--p1", p1), ("--p2", p2)):
        if v in (0.0, 1.0):
            raise BadInput(f"{name} must be strictly between 0 and 1 for planning, got {v:g}")
    rows, notes = [], []
    if args.paired:
        p10, p01 = _discordant_split(p1, p2, args.discordance)
        normal = _lib("design", "paired_n")(
            p1, p2, discordance=args.discordance, alpha=alpha, power=power
        )
        n_normal = int(normal.n)
        n_exact = None
        if n_normal <= PAIRED_EXACT_MAX_N:
            n_exact = _mcnemar_n_exact(p10, p01, alpha, power, start=max(1, int(0.8 * n_normal)))
        if n_exact is None:
            notes.append(
                f"exact McNemar n not searched above {PAIRED_EXACT_MAX_N} pairs (slow); "
                "the normal approximation is close at that size"
            )
        n_first = n_exact
        unit = "pairs: each condition run by both policies"
        exact_label = "exact McNemar (first n reaching target)"
        normal_label = "Connor (1987) normal approx."
    else:
        res = _lib("power", "n_for_fisher_power")(p1, p2, power=power, alpha=alpha)
        n_exact, n_first = int(res.n), int(res.n_first)
        n_normal = int(_lib("design", "n_per_arm_normal")(p1, p2, alpha=alpha, power=power).n)
        unit = "trials per arm"
        exact_label = f"exact Fisher (power stays >= target up to n + {res.window})"
        normal_label = "normal approx. (Fleiss, no c.c.)"
        if n_first != n_exact:
            notes.append(
                f"exact Fisher power is saw-toothed in n: it first reaches "
                f"{_pct(power, 0)} at n = {n_first} per arm but dips below again before "
                f"n = {n_exact}"
            )
    hours_fn = _lib("design", "bench_hours") if args.minutes_per_trial else None

    def hours(n_per_arm: int | None):
        if n_per_arm is None:
            return None
        return None if hours_fn is None else float(hours_fn(2 * n_per_arm, args.minutes_per_trial))

    def h_text(n_per_arm: int | None) -> str:
        h = hours(n_per_arm)
        return "n/a" if h is None else f"{h:.1f}"

    if n_exact is None:
        rows.append([exact_label, "n/a", "n/a", "n/a"])
    else:
        rows.append([exact_label, n_exact, 2 * n_exact, h_text(n_exact)])
    rows.append([normal_label, n_normal, 2 * n_normal, h_text(n_normal)])

    mde = power_at_n = None
    if args.n is not None:
        if args.paired:
            power_at_n = float(_lib("design", "mcnemar_power_exact")(args.n, p10, p01, alpha))
            mde = _paired_mde(args.n, args.discordance, alpha, power)
        else:
            power_at_n = float(_lib("power", "fisher_power")(p1, args.n, p2, args.n, alpha=alpha))
            res = _lib("design", "mde_exact")(
                args.n, alpha=alpha, power=power, baseline=(p1 + p2) / 2, convention="centered"
            )
            mde = float(res.mde) if math.isfinite(res.mde) else None

    data = {
        "p1": p1,
        "p2": p2,
        "alpha": alpha,
        "power": power,
        "paired": bool(args.paired),
        "discordance": args.discordance,
        "n_per_arm_exact": n_exact,
        "n_per_arm_exact_first": n_first,
        "n_per_arm_normal": n_normal,
        "minutes_per_trial": args.minutes_per_trial,
        "hours": hours(n_exact if n_exact is not None else n_normal),
        "n": args.n,
        "mde": mde,
        "power_at_n": power_at_n,
    }
    rep = Report(data)
    design = "paired" if args.paired else "unpaired"
    extra = f", discordance {args.discordance:g}" if args.paired else ""
    rep.line(
        f"Detect {_pct(p1, 0)} vs {_pct(p2, 0)} ({design}{extra}) with {_pct(power, 0)} power, "
        f"two-sided alpha = {alpha:g}"
    )
    rep.table(
        f"Sample size ({unit})",
        ["method", "n per arm", "total trials", "bench hours"],
        rows,
    )
    if args.minutes_per_trial:
        rep.line(f"bench hours at {args.minutes_per_trial:g} min per trial, both arms")
    else:
        rep.line("add --minutes-per-trial M for the bench hours")
    if args.n is not None:
        test = "exact McNemar" if args.paired else "Fisher's exact"
        where = (
            f"discordance {args.discordance:g}"
            if args.paired
            else f"rates centred on {(p1 + p2) / 2:.2f}"
        )
        rep.table(
            f"At n = {args.n} per arm ({test})",
            ["quantity", "value"],
            [
                [f"power to detect {_pct(p1, 0)} vs {_pct(p2, 0)}", _pct(power_at_n)],
                [
                    f"MDE at {_pct(power, 0)} power ({where})",
                    "n/a" if mde is None else f"{100 * mde:.1f} pts",
                ],
            ],
        )
    for note in notes:
        rep.line(f"note: {note}")
    return rep


def _paired_mde(n: int, discordance: float, alpha: float, power: float) -> float | None:
    """Smallest |p_A - p_B| the exact McNemar test detects with ``power`` at ``n`` pairs,
    for a fixed discordance (bisection on the gap; power grows with it at fixed discordance)."""
    mcnemar_power_exact = _lib("design", "mcnemar_power_exact")

    def pw(d: float) -> float:
        return mcnemar_power_exact(n, (discordance + d) / 2, (discordance - d) / 2, alpha)

    if n > PAIRED_EXACT_MAX_N or discordance <= 0 or pw(discordance) < power:
        return None
    lo, hi = 0.0, discordance
    while hi - lo > 5e-4:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if pw(mid) >= power else (mid, hi)
    return hi


# --------------------------------------------------------------------------- peek


def cmd_peek(args) -> Report:
    res = _lib("peeking", "false_win_rate_exact")(
        args.n, p=args.p, alpha=args.alpha, looks=args.looks
    )
    sizes = list(res.look_sizes)
    fixed, peeked = float(res.fixed_rate), float(res.false_win_rate)
    if args.looks == "every":
        schedule = f"after every trial pair ({len(sizes)} looks)"
    elif isinstance(args.looks, int):
        schedule = f"{len(sizes)} equally spaced looks"
    else:
        schedule = f"{len(sizes)} looks"
    shown = (
        ", ".join(map(str, sizes))
        if len(sizes) <= 12
        else (", ".join(map(str, sizes[:5])) + ", ..., " + ", ".join(map(str, sizes[-2:])))
    )
    data = {
        "n": args.n,
        "p": args.p,
        "alpha": args.alpha,
        "look_sizes": sizes,
        "false_win_rate_exact": peeked,
        "false_win_rate_fixed": fixed,
        "inflation": peeked / fixed if fixed > 0 else None,
    }
    rep = Report(data)
    rep.line(
        f"Two equally good policies (true rate {_pct(args.p, 0)} each), up to {args.n} trials "
        f"per arm; stop and declare a winner the first time Fisher p < {args.alpha:g}"
    )
    rep.line(f"looks at n per arm = {shown}")
    rep.table(
        "Probability of a false win (exact)",
        ["schedule", "looks", "false-win rate", "vs once"],
        [
            [
                f"peek: {schedule}",
                len(sizes),
                _pct(peeked, 2),
                "n/a" if fixed == 0 else f"x{peeked / fixed:.1f}",
            ],
            [f"test once at n = {args.n}", 1, _pct(fixed, 2), "x1.0"],
        ],
    )
    rep.line(
        "Testing once is below alpha because Fisher's test is conservative; each extra look "
        "adds chances to stop on noise."
    )
    return rep


# --------------------------------------------------------------------------- main

COMMANDS = {
    "interval": cmd_interval,
    "summarize": cmd_summarize,
    "compare": cmd_compare,
    "plan": cmd_plan,
    "peek": cmd_peek,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``evalsim`` command; return its exit status (0 ok, 2 bad input, 3 no library)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2, already printed)
        return int(exc.code or 0)
    prog = f"evalsim {args.command}"
    try:
        with warnings.catch_warnings():
            # numba's typeof warns (once, while compiling) about broadcast arrays; a user of
            # the command can do nothing about it.
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"numba\.")
            report = COMMANDS[args.command](args)
    except (BadInput, TrialLogError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as err:  # a library check (they quote the bad value)
        msg = str(err).strip().splitlines()[0] if str(err).strip() else "invalid value"
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MissingLibrary as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return EXIT_MISSING_LIBRARY
    except ModuleNotFoundError as err:  # a library module that another one imports lazily
        if not (err.name or "").startswith("evalsim"):
            raise
        print(f"{prog}: error: {err.name} is not available in this install", file=sys.stderr)
        return EXIT_MISSING_LIBRARY
    text = _dump_json(report.data) if args.json else report.render()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `evalsim ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
