"""The log hooks: options that ``summarize`` and ``compare`` share, run after the log is read.

Each hook declares its options on a subcommand's parser and, once the log is read and the
main tables are built, adds its lines, tables and JSON keys to the report. They run in the
order of :data:`LOG_HOOKS`, which is also the order of their options in ``--help`` and of
their blocks in the report: a new hook is one module and one entry here.
"""

from __future__ import annotations

import argparse

from evalsim.cli import _clusters, _independence, _session


def _no_options(parser: argparse.ArgumentParser) -> None:
    """The whole-session check adds no option: it runs with ``--order``."""


#: ``(add_arguments(parser), apply(args, df, report))`` per hook, in order: the cluster
#: check (``--cluster``), the order check (``--order``), the whole-session order check.
LOG_HOOKS = (
    (_clusters.add_cluster_argument, _clusters.apply_hook),
    (_independence.add_order_argument, _independence.apply_hook),
    (_no_options, _session.apply_session_hook),
)


def add_log_hook_flags(p: argparse.ArgumentParser) -> None:
    """Declare the options of every log hook on ``p``."""
    for add_arguments, _ in LOG_HOOKS:
        add_arguments(p)


def apply_log_hooks(args, df, report) -> None:
    """Run every log hook on the log ``df`` read for this report."""
    for _, apply in LOG_HOOKS:
        apply(args, df, report)
