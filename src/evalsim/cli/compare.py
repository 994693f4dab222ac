"""``evalsim compare FILE ... --a X --b Y``: is policy B different from policy A?

The command: it selects the trials (:mod:`evalsim.cli.compare_input`), computes one
:class:`~evalsim.cli.compare_result.Comparison` (:mod:`evalsim.cli.compare_result`), and renders
it here as text, markdown, LaTeX or JSON (:func:`_report`), with an optional plot.
"""

from __future__ import annotations

import argparse
import functools

from evalsim.cli import _independence, _tests, by_task
from evalsim.cli._common import (
    BadInput,
    Report,
    _p,
    _pct,
    add_alpha_flag,
    add_format_flags,
    add_unpaired_flag,
    check_plot_path,
    plot_rates,
)
from evalsim.cli._gate import Gate, add_gate_option
from evalsim.cli._log_hooks import add_log_hook_flags, apply_log_hooks
from evalsim.cli._reading import add_reading_flags
from evalsim.cli.compare_counts import counts_arguments, counts_table
from evalsim.cli.compare_input import select_trials
from evalsim.cli.compare_result import (
    ALTERNATIVE_WORDS,
    Comparison,
    ci_points,
    compare_trials,
    role_labels,
)
from evalsim.small_logs import TrialTable
from evalsim.stats.names import TWO_SAMPLE_TESTS

#: The sidedness column of the tests table, by --alternative.
_SIDE = {"two-sided": "two-sided", "greater": "one-sided, B > A", "less": "one-sided, B < A"}

#: The paired intervals' rows of the difference table, by method id.
_PAIRED_INTERVAL_LABELS = {
    "tango": "Tango score (paired): goes with the verdict",
    "newcombe": "Newcombe hybrid score (paired, method 10)",
    "wald": "Wald (paired), reference",
}


def _side(d) -> str:
    """The sidedness note of the deciding test, in the report's role words."""
    ra, rb = role_labels(d.a, d.b)
    return _SIDE[d.alternative].replace("B > A", f"{rb} > {ra}").replace("B < A", f"{rb} < {ra}")


def _tests_rows(c: Comparison) -> list[list]:
    """The tests table: the deciding test first, then the secondary rows."""
    d, pa = c.decision, c.pairs
    fisher = TWO_SAMPLE_TESTS["fisher"].label
    rows = [
        [
            f"{d.test_name} ({'paired' if d.paired else 'unpaired'})",
            _p(d.pvalue),
            _side(d),
        ]
    ]
    if pa is not None:
        rows.append(["McNemar mid-p (paired)", _p(pa.midp_two_sided), "secondary; two-sided"])
        rows.append([f"{fisher} (unpaired)", _p(c.fisher_p), "secondary; ignores pairing"])
    elif d.one_sided:
        rows.append([fisher, _p(c.fisher_p), "secondary; two-sided"])
    boschloo = f"{TWO_SAMPLE_TESTS['boschloo'].label} (unpaired)"
    if rows[0][0] == boschloo and not d.one_sided:
        return rows  # the deciding row is this secondary one (--test boschloo): once
    rows.append(
        [
            boschloo,
            _p(c.boschloo_p),
            "secondary; two-sided" if c.boschloo_p is not None else c.boschloo_note,
        ]
    )
    return rows


def _difference_table(c: Comparison, rep: Report) -> None:
    """The B - A table: the paired intervals, or the unpaired one that goes with the verdict."""
    d, pa = c.decision, c.pairs
    estimate = f"{100 * (d.rate_b - d.rate_a):+.1f}"
    if pa is not None:
        rows = [
            [_PAIRED_INTERVAL_LABELS[m], estimate, ci_points(lo, hi)]
            for m, (lo, hi) in pa.intervals.items()
        ]
    else:
        rows = [[f"{d.method_label}: goes with the verdict", estimate, ci_points(*d.interval)]]
    level = f"{100 * d.confidence:g}%"
    ra, rb = role_labels(d.a, d.b)
    if d.one_sided:
        end = "lower" if d.alternative == "greater" else "upper"
        title = (
            f"Difference {rb} - {ra} (points; {level} two-sided interval, its {end} end the "
            f"{100 * (1 - d.alpha):g}% one-sided bound)"
        )
    else:
        title = f"Difference {rb} - {ra} (points, {level} interval)"
    rep.table(title, ["method", "estimate", "interval"], rows)


def _report(c: Comparison, log_hooks=None, gate: Gate | None = None) -> Report:
    """The report of ``c``: its JSON record and, for text, markdown and LaTeX, its blocks.

    ``log_hooks(report)``, when given, adds the log hooks' tables and lines (and JSON keys)
    after the MDE and before the notes.
    """
    d, pa = c.decision, c.pairs
    rep = Report(c.as_json())
    rep.line(f"decision rule (stated before the data): {c.rule}")
    if gate is not None:
        rep.line(gate.rule)
    ra, rb = role_labels(d.a, d.b)
    tag_a, tag_b = (" (A)", " (B)") if (ra, rb) == ("A", "B") else (" (--a)", " (--b)")
    rows = [
        [d.a + tag_a, f"{d.k_a}/{d.n_a}", _pct(d.rate_a)],
        [d.b + tag_b, f"{d.k_b}/{d.n_b}", _pct(d.rate_b)],
    ]
    title = "Success rates" + (" on the paired conditions" if d.paired else "")
    rep.table(title, ["policy", "k/n", "rate"], rows)
    if d.paired and (c.n_a_all != d.n_a or c.n_b_all != d.n_b):
        rep.line(
            f"all trials: {ra} {c.k_a_all}/{c.n_a_all} ({_pct(c.k_a_all / c.n_a_all)}), "
            f"{rb} {c.k_b_all}/{c.n_b_all} ({_pct(c.k_b_all / c.n_b_all)}); not used for the "
            "verdict"
        )
    rep.table(
        f"Tests of '{ra} and {rb} have the same success rate'",
        ["test", "p", "note"],
        _tests_rows(c),
    )
    rep.line("Only the first test decides; the rows marked secondary are for reference.")
    if pa is not None:
        rep.table(
            f"Paired outcomes (same {'/'.join(c.pairing_columns)})",
            ["", f"{rb} succeeded", f"{rb} failed"],
            [
                [f"{ra} succeeded", pa.counts.both_succeed, pa.counts.a_only],
                [f"{ra} failed", pa.counts.b_only, pa.counts.both_fail],
            ],
        )
    _difference_table(c, rep)
    if d.mde is not None:
        rep.line(f"MDE at 80% power: {100 * d.mde:.1f} points ({c.mde_rule})")
    if log_hooks is not None:
        log_hooks(rep)
    for note in c.notes:
        rep.line(note)
    rep.line("")
    rep.line(_independence.qualify_verdict(rep, c.verdict))
    return rep


def _plot(c: Comparison, path: str) -> None:
    """Draw A's and B's rates with their Wilson intervals to ``path``."""
    from evalsim.stats.proportion.intervals import wilson_interval

    d = c.decision
    plot_rows = []
    for name, k, n in ((d.a, d.k_a, d.n_a), (d.b, d.k_b, d.n_b)):
        w = wilson_interval(k, n, confidence=1 - d.alpha)
        plot_rows.append({"label": name, "rate": k / n, "lower": w.lower, "upper": w.upper})
    plot_rates(plot_rows, path, f"{d.a} vs {d.b}", 1 - d.alpha)


def _counts_report(c: Comparison, gate: Gate | None) -> Report:
    """``compare K/N K/N``: the verdict in one line (with ``--fail-on``, the gate's rule
    before it and its outcome after it); JSON: the whole record."""
    d = c.decision
    rep = Report(c.as_json())
    _independence.qualify_verdict(rep, c.verdict)  # no order known: qualified is false
    if gate is not None:
        rep.line(gate.rule)
    rep.line(
        f"{d.a} {d.k_a}/{d.n_a} vs {d.b} {d.k_b}/{d.n_b}, unpaired (two independent samples): "
        f"{c.verdict}",
        wrap=False,
    )
    return rep


def cmd_compare(args) -> Report:
    counts = counts_arguments(args.files)
    if counts is None:
        for flag in ("a", "b"):
            if getattr(args, flag) is None:
                raise BadInput(
                    f"the following arguments are required: --{flag} (see evalsim compare --help)"
                )
    if args.by == "task" and counts is None:  # per-task tables and pooled verdicts
        return by_task.cmd_compare_by_task(args)
    check_plot_path(args.plot, args.force)
    gate = None
    if counts is not None:
        df = counts_table(args, counts)
        a, b = df[df["policy"] == args.a], df[df["policy"] == args.b]
    else:
        df, a, b = select_trials(args)
    result = compare_trials(args, df, a, b)
    if args.fail_on is not None:
        gate = Gate(args.fail_on, result.decided)
    if counts is not None:
        rep = _counts_report(result, gate)
    else:
        hooks = None
        if not isinstance(df, TrialTable):  # a small-log table has no hook to run
            hooks = functools.partial(apply_log_hooks, args, df)
        rep = _report(result, hooks, gate)
    if gate is not None:
        rep.data["gate"] = gate.to_dict()
        rep.line(gate.outcome)
        rep.exit_status = gate.exit_status
    if args.plot:
        _plot(result, args.plot)
    return rep


def register(sub) -> None:
    """Add the ``compare`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("compare", help="is policy B different from policy A?")
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="CSV, Parquet or LeRobot JSON log; PATH=NAME; or two counts K/N (A, then B)",
    )
    p.add_argument("--a", metavar="X", help="reference policy (required with a log)")
    p.add_argument("--b", metavar="Y", help="policy compared with it (required with a log)")
    p.add_argument("--task", help="use only the trials of this task")
    add_alpha_flag(p)
    p.add_argument(
        "--alternative",
        choices=tuple(ALTERNATIVE_WORDS),
        default="two-sided",
        help="what the test asks: two-sided (default), greater (B > A) or less (B < A)",
    )
    add_unpaired_flag(p)
    _tests.add_test_option(p)
    p.add_argument("--policy", help=argparse.SUPPRESS)
    add_gate_option(p)
    add_format_flags(p)
    add_log_hook_flags(p)
    by_task.add_arguments(p)
    add_reading_flags(p)
    p.set_defaults(run=cmd_compare)
