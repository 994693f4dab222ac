"""The reading flags every subcommand that reads trial logs takes (issue 45, items 9, 17,
23): ``--columns ROLE=COLUMN,...`` (the lab's own column names), ``--duplicates
refuse|once|keep`` (exact duplicate trials) and ``--pair-episodes`` (LeRobot runs paired by
episode index). They become one :class:`evalsim._log_options.LogOptions` for the readers.
"""

from __future__ import annotations

import argparse

from evalsim._log_options import COLUMN_ROLES, DUPLICATE_RULES, LogOptions, parse_column_map

__all__ = ["add_reading_flags", "reading_options"]


def add_reading_flags(p: argparse.ArgumentParser) -> None:
    """Add ``--columns``, ``--duplicates`` and ``--pair-episodes`` to a subcommand."""
    g = p.add_argument_group("reading the logs")
    g.add_argument(
        "--columns",
        metavar="ROLE=COLUMN,...",
        help="the log's own column names, e.g. condition=pose_id,failure=failure_type "
        f"(roles: {', '.join(COLUMN_ROLES)})",
    )
    g.add_argument(
        "--duplicates",
        choices=tuple(DUPLICATE_RULES),
        default="refuse",
        help="rows equal in every column, in a log that can tell trials apart: "
        + "; ".join(f"{k}: {v}" for k, v in DUPLICATE_RULES.items()),
    )
    g.add_argument(
        "--pair-episodes",
        action="store_true",
        help="LeRobot per_task eval_info files: pair the runs by episode index, never done "
        "by default; valid only when every run was made with the same lerobot-eval --seed "
        "(episode i uses seed --seed + i)",
    )


def reading_options(args) -> LogOptions:
    """The readers' options from the parsed flags (defaults when a flag is absent)."""
    columns = getattr(args, "columns", None)
    return LogOptions(
        columns=parse_column_map(columns) if columns is not None else (),
        duplicates=getattr(args, "duplicates", "refuse") or "refuse",
        pair_episodes=bool(getattr(args, "pair_episodes", False)),
    )
