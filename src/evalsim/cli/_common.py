"""Shared parts of the ``evalsim`` subcommands: errors, argument types, the report object
and its text/JSON rendering, lazy access to :mod:`evalsim.stats`."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# The number formats live with the answers (one definition); the subcommands import them here.
from evalsim.answers._format import ci_pct as _ci_pct  # noqa: F401
from evalsim.answers._format import p_text as _p  # noqa: F401
from evalsim.answers._format import pct as _pct  # noqa: F401
from evalsim.answers._format import plural as _plural  # noqa: F401
from evalsim.answers._format import prob_pct as _prob_pct  # noqa: F401
from evalsim.answers._format import pts as _pts  # noqa: F401

# The exact limits of plan and compare, and the paired MDE, live with plan's answer.
from evalsim.answers.plan import FISHER_MDE_EXACT_MAX_N, PAIRED_EXACT_MAX_N  # noqa: F401
from evalsim.answers.plan import paired_mde as _paired_mde  # noqa: F401
from evalsim.cli._errors import BadInput  # the one user-error type, re-exported here

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

#: Output formats of summarize and compare (``--format``); ``--json`` is short for json.
FORMATS = ("text", "markdown", "latex", "json")

EXIT_BAD_INPUT = 2
EXIT_MISSING_LIBRARY = 3


# --------------------------------------------------------------------------- argument types


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block) and exit status 2."""

    def error(self, message: str):  # noqa: D102 - argparse API
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _checked_type(convert, expected: str, ok, must: str, name: str):
    """An argparse ``type``: ``convert`` the text, then require ``ok`` of the value.

    Parameters
    ----------
    convert : callable
        ``float`` or ``int``; its ValueError becomes "expected <expected>, got '<text>'".
    expected : str
        What the text should be, for the message of a text that does not convert.
    ok : callable
        True for a value in range.
    must : str
        The message of a value out of range, before ", got <text>".
    name : str
        The function's ``__name__`` (argparse names the type by it).

    Returns
    -------
    callable
        The text-to-value function.
    """

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{must}, got {text}")
        return value

    parse.__name__ = parse.__qualname__ = name
    return parse


_probability = _checked_type(
    float,
    "a probability in [0, 1]",
    lambda v: 0.0 <= v <= 1.0,
    "probability must be in [0, 1]",
    "_probability",
)
_open_unit = _checked_type(
    float,
    "a number in (0, 1)",
    lambda v: 0.0 < v < 1.0,
    "must be strictly between 0 and 1",
    "_open_unit",
)
_count = _checked_type(int, "a whole number", lambda v: v >= 0, "must be >= 0", "_count")
_positive_int = _checked_type(
    int, "a whole number", lambda v: v >= 1, "must be >= 1", "_positive_int"
)
_positive_float = _checked_type(
    float,
    "a number",
    lambda v: v > 0 and math.isfinite(v),
    "must be a positive number",
    "_positive_float",
)


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


def column_flag(args, dest: str, flag: str) -> tuple[str, ...]:
    """The column a log flag names, lower-cased, for the log reader to keep.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    dest : str
        The flag's attribute in ``args`` (absent or None: the flag was not given).
    flag : str
        The flag as typed (``--cluster``), for the error message.

    Returns
    -------
    tuple of str
        ``(column,)``, or ``()`` without the flag.

    Raises
    ------
    BadInput
        The flag names an empty column.
    """
    col = getattr(args, dest, None)
    if col is None:
        return ()
    col = col.strip().lower()
    if not col:
        raise BadInput(f"{flag} needs a column name")
    return (col,)


def add_json_flag(p: argparse.ArgumentParser) -> None:
    """The ``--json`` switch every subcommand takes."""
    p.add_argument("--json", action="store_true", help="print one JSON object instead")


def add_format_flags(p: argparse.ArgumentParser) -> None:
    """``--format text|markdown|latex|json`` (``--json`` = ``--format json``) and ``--plot``."""
    add_json_flag(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (default), markdown, latex (booktabs tables) or json",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="also draw the rates with their intervals to FILE (.png or .pdf)",
    )
    add_force_flag(p)


def add_force_flag(p: argparse.ArgumentParser) -> None:
    """``--force``: replace an existing output file that evalsim did not write."""
    p.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output file that is not an earlier output of evalsim",
    )


def add_alpha_flag(p: argparse.ArgumentParser) -> None:
    """``--alpha``: the significance level of a test (default 0.05)."""
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")


def add_confidence_flag(p: argparse.ArgumentParser) -> None:
    """``--confidence``: the level of an interval (default 0.95)."""
    p.add_argument("--confidence", type=_open_unit, default=0.95, help="default 0.95")


def add_unpaired_flag(p: argparse.ArgumentParser) -> None:
    """``--unpaired``: analyse the trials as independent, whatever their condition ids."""
    p.add_argument("--unpaired", action="store_true", help="ignore condition ids")


def arg(*flags: str, **options) -> tuple[tuple[str, ...], dict]:
    """One argument of a :class:`Subcommand`: what ``add_argument(*flags, **options)`` takes."""
    return flags, options


@dataclass(frozen=True)
class Subcommand:
    """One subcommand, declared once: its name, one-line help, arguments (:func:`arg`, in
    ``--help`` order) and the function that runs it (``run(args) -> Report``).

    ``json`` adds the ``--json`` switch after the arguments.
    """

    name: str
    help: str
    run: Callable
    arguments: tuple = ()
    json: bool = True

    def register(self, subparsers) -> argparse.ArgumentParser:
        """Add this subcommand's parser to ``subparsers``, with ``run`` set; return it."""
        p = subparsers.add_parser(self.name, help=self.help)
        for flags, options in self.arguments:
            p.add_argument(*flags, **options)
        if self.json:
            add_json_flag(p)
        p.set_defaults(run=self.run)
        return p


def add_subcommands(parser: argparse.ArgumentParser, dest: str, metavar: str, commands) -> None:
    """The required subcommands of ``parser``, in ``--help`` order: each of ``commands`` (a
    :class:`Subcommand`, or a module of this package) adds its parser by ``register``."""
    sub = parser.add_subparsers(dest=dest, metavar=metavar, parser_class=_Parser)
    sub.required = True
    for command in commands:
        command.register(sub)


def passed_on(args, *names: str) -> dict:
    """The options ``names`` of the parsed ``args``, as keyword arguments of the same names
    (for a library call that takes them unchanged)."""
    return {name: getattr(args, name) for name in names}


def output_format(args) -> str:
    """The format a subcommand's report is printed in."""
    fmt = getattr(args, "format", None)
    if fmt and getattr(args, "json", False) and fmt != "json":
        raise BadInput(f"--json and --format {fmt} disagree; give one of them")
    return fmt or ("json" if getattr(args, "json", False) else "text")


def check_plot_path(path: str | None, force: bool = False) -> None:
    """Refuse a --plot file before any work is done: a suffix other than .png or .pdf, a path
    that is not a regular file, a file that is not an earlier figure (without ``--force``), a
    folder that is missing or cannot be written (:mod:`evalsim.cli._safe_output`)."""
    if path is None:
        return
    from evalsim.cli._safe_output import FIGURE, check_output_path

    check_output_path(path, "--plot", FIGURE, force)


def check_policy_pair(policies: Sequence[str], a: str, b: str) -> None:
    """Refuse ``--a`` or ``--b`` naming no policy of the log, or both naming the same one.

    Parameters
    ----------
    policies : sequence of str
        The log's policies, sorted (the message lists them).
    a, b : str
        The values of ``--a`` and ``--b``.

    Raises
    ------
    BadInput
        If either is not in ``policies`` (``--a`` checked first) or ``a == b``.
    """
    for flag, name in (("--a", a), ("--b", b)):
        if name not in policies:
            raise BadInput(
                f"{flag} {name!r} is not a policy in the log (policies: {', '.join(policies)})"
            )
    if a == b:
        raise BadInput(f"--a and --b name the same policy {a!r}")


def plot_rates(rows: Sequence[dict], path: str, title: str, confidence: float) -> None:
    """Draw success rates with their intervals (points and bars) to a PNG or PDF file.

    ``rows`` are dicts with ``label``, ``rate``, ``lower``, ``upper`` (fractions). The
    pipeline's figure style (:mod:`evalsim.figures`: Okabe-Ito colors, paper context);
    written atomically, in the format the file's suffix names. The caller has checked the path
    (:func:`check_plot_path`, with its ``--force``) before the work; here it is checked again
    for a special file, and a failure to write names the path.
    """
    import matplotlib.pyplot as plt

    from evalsim.cli._safe_output import FIGURE, output_file
    from evalsim.figures import COLUMN_WIDTH_IN, color_for, set_style

    set_style()
    height = 0.9 + 0.28 * len(rows)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, height))
    ys = list(range(len(rows)))[::-1]
    for i, (y, r) in enumerate(zip(ys, rows, strict=True)):
        x = 100 * r["rate"]
        ax.errorbar(
            x,
            y,
            xerr=[[x - 100 * r["lower"]], [100 * r["upper"] - x]],
            fmt="o",
            color=color_for(i),
            capsize=2.5,
            markersize=4,
            linewidth=1.2,
        )
    ax.set_yticks(ys, [r["label"] for r in rows])
    ax.set_xlim(0, 100)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"success rate (%), {100 * confidence:g}% interval")
    ax.set_title(title)
    ax.grid(axis="x", linewidth=0.4, alpha=0.5)
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    try:
        with output_file(path, "--plot", FIGURE, force=True) as tmp:
            meta = {"Software": None} if suffix == "png" else {"Creator": None, "Producer": None}
            fig.savefig(tmp, format=suffix, metadata=meta)
    finally:
        plt.close(fig)


@dataclass
class Report:
    """What a subcommand found: text blocks for people, one dict for ``--json``."""

    data: dict
    blocks: list = field(default_factory=list)
    #: The command's exit status once the report is printed (1: ``compare --fail-on`` fired).
    exit_status: int = 0

    def table(self, title: str, headers: Sequence[str], rows: Sequence[Sequence]) -> None:
        self.blocks.append(("table", title, list(headers), [list(r) for r in rows]))

    def line(self, text: str, wrap: bool = True) -> None:
        """A sentence; in text, wrapped at 100 columns unless ``wrap`` is False (a one-line
        answer meant for ``grep`` and scripts)."""
        self.blocks.append(("line", text) if wrap else ("line", text, False))

    def render(self, fmt: str = "text") -> str:
        """The report as ``text`` (aligned columns), ``markdown`` or ``latex`` (booktabs)."""
        if fmt == "json":
            return _dump_json(self.data)
        if fmt == "markdown":
            return _render_markdown(self.blocks)
        if fmt == "latex":
            return _render_latex(self.blocks)
        out: list[str] = []
        for block in self.blocks:
            if block[0] == "line" and len(block) > 2:  # not wrapped
                out.append(block[1])
                continue
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


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|")


def _render_markdown(blocks) -> str:
    out: list[str] = []
    for block in blocks:
        if block[0] == "line":
            if block[1]:
                out.extend([block[1], ""])
            continue
        _, title, headers, rows = block
        if title:
            out.extend([f"**{_md_cell(title)}**", ""])
        numeric = _numeric_columns(headers, rows)
        out.append("| " + " | ".join(_md_cell(h) for h in headers) + " |")
        out.append("|" + "|".join("---:" if num else ":---" for num in numeric) + "|")
        out.extend("| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows)
        out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _render_latex(blocks) -> str:
    """Each table as a booktabs ``tabular`` (title as a comment above it, for the caption);
    each sentence as a LaTeX comment, so the output pastes into a paper as it is."""
    from evalsim.tables import latex_escape  # the one escaper (imported late: pandas)

    out: list[str] = ["% generated by the evalsim command; needs \\usepackage{booktabs}"]
    for block in blocks:
        if block[0] == "line":
            if block[1]:
                out.append("% " + block[1])
            continue
        _, title, headers, rows = block
        numeric = _numeric_columns(headers, rows)
        spec = "".join("r" if num else "l" for num in numeric)
        if title:
            out.append(f"% {title}")
        out.append(f"\\begin{{tabular}}{{{spec}}}")
        out.append("\\toprule")
        out.append(" & ".join(latex_escape(h) for h in headers) + " \\\\")
        out.append("\\midrule")
        out.extend(" & ".join(latex_escape(c) for c in r) + " \\\\" for r in rows)
        out.append("\\bottomrule")
        out.append("\\end{tabular}")
        out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _numeric_columns(headers: Sequence[str], rows: Sequence[Sequence]) -> list[bool]:
    return [
        bool(rows) and all(_looks_numeric(str(r[i])) for r in rows) for i in range(len(headers))
    ]


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


def _check_k_le_n(k: int, n: int) -> None:
    if k > n:
        raise BadInput(f"k must be <= n, got k = {k} > n = {n}")
