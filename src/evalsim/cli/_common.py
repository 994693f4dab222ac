"""Shared parts of the ``evalsim`` subcommands: errors, argument types, the report object
and its text/JSON rendering, lazy access to :mod:`evalsim.stats`."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

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


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """The ``--json`` switch every subcommand takes."""
    p.add_argument("--json", action="store_true", help="print one JSON object instead")


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


def _check_k_le_n(k: int, n: int) -> None:
    if k > n:
        raise BadInput(f"k must be <= n, got k = {k} > n = {n}")


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
