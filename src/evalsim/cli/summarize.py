"""``evalsim summarize FILE ...``: per-policy success rates of a trial log.

The command reads the log, computes one :class:`~evalsim.answers.summarize.RateSummary`
(:func:`evalsim.answers.summarize.summarize_trials`) and renders it here (:func:`_report`).
"""

from __future__ import annotations

from evalsim.answers.summarize import PRECISION_HALF_WIDTH, RateSummary, points_above
from evalsim.cli import _clusters, _independence
from evalsim.cli._common import (
    Report,
    _ci_pct,
    _open_unit,
    _pct,
    _plural,
    _pts,
    add_confidence_flag,
    add_format_flags,
    check_plot_path,
    passed_on,
    plot_rates,
)
from evalsim.cli._log_hooks import add_log_hook_flags, apply_log_hooks
from evalsim.cli._reading import add_reading_flags, reading_options
from evalsim.small_logs import TrialTable, read_small_logs

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).


def _read(args):
    """The trials of ``args.files``: a small-log table where it will do, else pandas'."""
    order = _independence.order_columns(args)  # --order's column, kept for its log hook
    order += tuple(c for c in _clusters.cluster_columns(args) if c not in order)  # --cluster
    df = None
    options = reading_options(args)
    if not order and not args.by:  # the options that need pandas; else a small log without it
        df = read_small_logs(args.files, policy=args.policy, options=options)
        if df is not None and _clusters.seeds_are_clusters(df):
            df = None  # the per-seed tables of the cluster hook use pandas
    if df is None:
        from evalsim.trial_logs import read_trial_logs  # heavy (pandas): large or unusual logs

        df = read_trial_logs(args.files, policy=args.policy, extra_columns=order, options=options)
    return df


def cmd_summarize(args) -> Report:
    check_plot_path(args.plot, args.force)
    df = _read(args)
    from evalsim.answers.summarize import summarize_trials

    s = summarize_trials(df, **passed_on(args, "files", "confidence", "max_half_width", "by"))
    rep = _report(s)
    if not isinstance(df, TrialTable):  # a small-log table has no hook to run (see above)
        apply_log_hooks(args, df, rep)
    if args.plot:
        rows = [
            {
                "label": r["policy"],
                "rate": r["rate"],
                "lower": r["wilson"][0],
                "upper": r["wilson"][1],
            }
            for r in s.by_policy
        ]
        plot_rates(rows, args.plot, "Success rate by policy", s.confidence)
    rep.line(
        f"'+/-' is half the Wilson interval's width; '!' marks more than "
        f"+/-{100 * s.max_half_width:g} points."
    )
    for w in s.warnings:
        rep.line(w)
    return rep


def _report(s: RateSummary) -> Report:
    """The summary's first line and tables (the command adds its hooks' blocks and notes)."""
    rep = Report(s.to_dict())
    rep.line(
        f"{_plural(s.n_trials, 'trial')}, {_plural(len(s.by_policy), 'policy')} "
        f"({', '.join(s.files)})"
    )
    level, max_hw = s.level, s.max_half_width
    headers = ["k/n", "rate", f"Wilson {level}", f"Clopper-Pearson {level}", "+/-"]

    def cells(r):
        return [
            f"{r['k']}/{r['n']}",
            _pct(r["rate"]),
            _ci_pct(*r["wilson"]),
            _ci_pct(*r["clopper_pearson"]),
            f"{points_above(r['half_width'], max_hw)} pts !"
            if r["imprecise"]
            else _pts(r["half_width"]),
        ]

    rep.table("By policy", ["policy", *headers], [[r["policy"], *cells(r)] for r in s.by_policy])
    if s.by_group:
        sub_keys = list(s.group_keys[1:])
        rep.table(
            f"By {' x '.join(s.group_keys)}",
            ["policy", *sub_keys, *headers],
            [[r["policy"], *[r[c] for c in sub_keys], *cells(r)] for r in s.by_group],
        )
    if s.task_groups:
        rep.table(
            "By task group (LeRobot per_group)",
            ["group", "policy", *headers],
            [[r["group"], r["policy"], *cells(r)] for r in s.task_groups],
        )
    if s.failures is not None:
        _failure_table(s, rep)
    if s.by is not None:
        _by_table(s.by, rep)
    return rep


def _failure_table(s: RateSummary, rep: Report) -> None:
    rows = []
    for r in s.by_policy:
        fails = s.failures.get(r["policy"], {})
        n_fail = r["n"] - r["k"]
        for mode, count in sorted(fails.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append([r["policy"], mode, count, _pct(count / n_fail, 0), _pct(count / r["n"])])
    if rows:
        rep.table(
            "Failure breakdown",
            ["policy", "failure", "count", "of failures", "of trials"],
            rows,
        )


def _by_table(by: dict, rep: Report) -> None:
    table_rows = []
    for r in by["rows"]:
        cells = []
        for pol in by["policies"]:
            c = r["policies"].get(pol)
            if c is None:
                cells.append("-")
            else:
                mark = " x" if c["k"] == 0 else ""
                cells.append(f"{c['k']}/{c['n']}{mark}")
        table_rows.append([r["value"], *cells])
    rep.table(
        f"By {by['column']} (successes/trials; x = never succeeded)",
        [by["column"], *by["policies"]],
        table_rows,
    )


def register(sub) -> None:
    """Add the ``summarize`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("summarize", help="per-policy success rates of a trial log")
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log; PATH=NAME"
    )
    add_confidence_flag(p)
    p.add_argument(
        "--max-half-width",
        type=_open_unit,
        default=PRECISION_HALF_WIDTH,
        help="warn when the Wilson interval's half-width exceeds this (default 0.10)",
    )
    p.add_argument("--policy", help="policy name for a LeRobot JSON log (default: its folder)")
    p.add_argument(
        "--by",
        metavar="COLUMN",
        help="also list every policy's k/n at each value of COLUMN (e.g. condition)",
    )
    add_format_flags(p)
    add_log_hook_flags(p)
    add_reading_flags(p)
    p.set_defaults(run=cmd_summarize)
