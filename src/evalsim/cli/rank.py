"""``evalsim rank FILE ...``: two or more policies ranked over the tasks, with letters.

Every pair of policies is compared by the exact stratified test over the tasks (on a paired
log, the exact stratified McNemar test, as ``compare --by task``), the pairwise p-values
Holm-adjusted together; the compact letter display says which policies are not
detectably different (they share a letter). Beside it: macro success with the stratified
bootstrap interval and a simultaneous (max-|t|) interval, micro success, rliable's IQM of
per-seed task rates (when the log has seeds) and P(this > next-ranked). ``--plot out.png``
draws the ranking (F09's figure). Numbers: :mod:`evalsim.stats.multi.rank`.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from evalsim.answers.rank import MIN_TASKS_AS_SAMPLE, Ranking
from evalsim.cli._common import (
    Report,
    _ci_pct,
    _count,
    _pct,
    _positive_int,
    add_alpha_flag,
    add_force_flag,
    add_json_flag,
    add_unpaired_flag,
    passed_on,
)
from evalsim.cli._ladder import ladder_report
from evalsim.cli._reading import add_reading_flags, reading_options
from evalsim.cli._safe_output import FIGURE_OR_SVG, check_output_path, output_file
from evalsim.cli.by_task import read_task_logs

__all__ = ["MAX_PAIRS_SHOWN", "MIN_TASKS_AS_SAMPLE", "cmd_rank", "ranking_axes", "register"]

#: The text output lists at most this many differing pairs (JSON has them all).
MAX_PAIRS_SHOWN = 15


def cmd_rank(args) -> Report:
    from evalsim.answers.rank import rank_log

    if args.plot:  # before any work (issue 45, item 3)
        check_output_path(args.plot, "--plot", FIGURE_OR_SVG, args.force)
    extra = (args.ordered.lower(),) if args.ordered not in (None, "policy") else ()
    df = read_task_logs(
        args.files,
        args.policy,
        need_task=False,
        extra_columns=extra,
        options=reading_options(args),
    )
    ranking = rank_log(
        df,
        **passed_on(
            args, "alpha", "bootstrap_reps", "bootstrap_seed", "tasks_as_sample", "unpaired"
        ),
    )
    if args.plot:
        _plot(ranking.frame, args.plot, ranking.confidence, ranking.mode, args.force)
    rep = _report(ranking, args.plot)
    if args.ordered:
        rep.data["ladder"] = ladder_report(
            df, list(ranking.policies), args.ordered.lower(), args.alpha, args.unpaired, rep
        )
    for note in ranking.notes:
        rep.line(note)
    if args.plot:
        rep.line(f"figure: {args.plot}")
    return rep


def _ranking_rows(ranking: Ranking) -> tuple[list[str], list[list]]:
    """The ranking table's headers and rows."""
    has_iqm = bool(ranking.result.iqm)
    level = f"{100 * ranking.confidence:g}%"
    headers = ["rank", "policy", "letters", "k/n", "macro", f"{level} CI", "simultaneous", "micro"]
    headers += ["IQM [CI]"] if has_iqm else []
    headers += ["P(> next) [CI]"]
    rows = []
    for row in ranking.frame.to_dict(orient="records"):
        cells = [
            row["rank"],
            row["policy"],
            row["letters"],
            f"{row['k']}/{row['n']}",
            _pct(row["macro"]),
            _ci_pct(row["macro_lower"], row["macro_upper"]),
            _ci_pct(row["simultaneous_lower"], row["simultaneous_upper"]),
            _pct(row["micro"]),
        ]
        if has_iqm:
            cells.append(_pct(row["iqm"]) + " " + _ci_pct(row["iqm_lower"], row["iqm_upper"]))
        pi = row["p_improve_over_next"]
        cells.append(
            "—"
            if math.isnan(pi)
            else f"{pi:.2f} [{row['p_improve_lower']:.2f}, {row['p_improve_upper']:.2f}]"
        )
        rows.append(cells)
    return headers, rows


def _reading_lines(ranking: Ranking, rep: Report) -> None:
    """How to read the letters and intervals, and the IQM (or why there is none)."""
    r, level = ranking.result, f"{100 * ranking.confidence:g}%"
    if ranking.mode == "fixed":
        rep.line(
            "Tasks fixed (these tasks, not a sample of tasks). Policies that share a letter are "
            f"not detectably different: every pair compared by the {r.test} over "
            f"the tasks, Holm-adjusted over {len(r.pairs)} pairs, p < {ranking.alpha:g}. {level} "
            "CI: bootstrap of the episodes within each task; simultaneous: max-|t| bootstrap "
            f"of the same, all rows jointly at {level}."
        )
    else:
        rep.line(
            "Tasks as a sample (--tasks-as-sample). Policies that share a letter are not "
            "detectably different: their simultaneous interval of the macro difference holds "
            f"0. {level} CI: stratified bootstrap (tasks, then episodes); simultaneous: "
            f"max-|t| bootstrap, all rows jointly at {level}. Holm p: {r.test}, tasks fixed."
        )
    if r.iqm:
        rep.line("IQM: interquartile mean of per-seed task rates (rliable's stratified bootstrap).")
    elif ranking.seeds == 1:
        rep.line(
            "One seed per policy and task: one seed gives no seed-to-seed interval, so no IQM "
            "over seeds is shown; P(> next) uses the episodes."
        )
    elif ranking.runs is None:
        rep.line("IQM needs a seed column (per-run scores); P(> next) then uses the episodes.")
    else:
        rep.line("IQM skipped: the seeds differ in number between tasks or policies.")


def _report(ranking: Ranking, plot: str | None) -> Report:
    """The ranking's table, its reading and the differing pairs (the command adds the
    ladder, the notes and the figure's line)."""
    rep = Report(ranking.to_dict(plot))
    headers, rows = _ranking_rows(ranking)
    rep.line(
        f"{len(ranking.policies)} policies, {len(ranking.tasks)} task(s): "
        f"{', '.join(ranking.tasks)}; {ranking.n_trials} trials"
    )
    rep.table("Ranking by macro success (mean of task rates)", headers, rows)
    _reading_lines(ranking, rep)
    diff = ranking.differing_pairs()
    if diff:
        shown = diff[:MAX_PAIRS_SHOWN]
        rep.table(
            "Pairs that differ "
            + ("(Holm)" if ranking.mode == "fixed" else "(simultaneous interval)")
            + ", nearest in rank first",
            ["pair", "p", "Holm p", "macro gap [simultaneous]"],
            [
                [
                    f"{b} vs {w}",
                    f"{q.pvalue:.2g}",
                    f"{q.pvalue_holm:.2g}",
                    f"{100 * gap:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]",
                ]
                for q, b, w, gap, lo, hi in shown
            ],
        )
        if len(diff) > len(shown):
            rep.line(f"... and {len(diff) - len(shown)} more pairs (all in --json).")
    else:
        rep.line("No pair differs after Holm.")
    return rep


def ranking_axes(frame, confidence: float, tasks: str):
    """The ranking figure of ``evalsim rank --plot``: macro success in percent (as the
    other subcommands' plots), the simultaneous interval (points and caps), the per-policy
    interval (thick band) and the letters; best policy on top."""
    import matplotlib.pyplot as plt

    from evalsim.figures import COLUMN_WIDTH_IN, ranking_intervals

    df = frame.sort_values("rank")
    fig, ax = plt.subplots(figsize=(2 * COLUMN_WIDTH_IN, 0.9 + 0.22 * len(df)))
    y = np.arange(len(df))[::-1]
    m = 100 * df["macro"].to_numpy(float)
    lo_s, hi_s = (100 * df[c].to_numpy(float) for c in ("simultaneous_lower", "simultaneous_upper"))
    lo, hi = (100 * df[c].to_numpy(float) for c in ("macro_lower", "macro_upper"))
    level = f"{100 * confidence:g}%"
    ranking_intervals(
        ax, m, y, (lo, hi), (lo_s, hi_s), f"per policy {level}", f"simultaneous {level}"
    )
    for yy, letters in zip(y, df["letters"], strict=True):
        ax.text(1.01, yy, letters, va="center", fontsize=7, transform=ax.get_yaxis_transform())
    ax.set_yticks(y, df["policy"])
    ax.set_xlim(0, 100)
    which = "tasks fixed" if tasks == "fixed" else "tasks as a sample"
    ax.set_xlabel(f"macro success (%, mean of task rates), {which}")
    ax.legend(frameon=False, loc="lower left")
    ax.set_title("Ranking; a shared letter = not detectably different")
    ax.grid(axis="x", linewidth=0.4, alpha=0.5)
    return fig


def _plot(frame, path: str, confidence: float, tasks: str, force: bool = False) -> None:
    import matplotlib.pyplot as plt

    from evalsim.figures import set_style

    suffix = path.rsplit(".", 1)[-1].lower()
    set_style()
    fig = ranking_axes(frame, confidence, tasks)
    try:
        with output_file(path, "--plot", FIGURE_OR_SVG, force) as tmp:
            fig.savefig(tmp, format=suffix)
    finally:
        plt.close(fig)


def register(sub) -> None:
    """Add the ``rank`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("rank", help="rank two or more policies over the tasks, with letters")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log")
    add_alpha_flag(p)
    p.add_argument("--plot", metavar="OUT.png", help="also draw the ranking to this file")
    add_force_flag(p)
    p.add_argument("--bootstrap-reps", type=_positive_int, default=2000, help="default 2000")
    p.add_argument("--bootstrap-seed", type=_count, default=0, help="default 0")
    p.add_argument(
        "--tasks-as-sample",
        action="store_true",
        help="intervals and letters from the bootstrap over tasks (the tasks as a sample of "
        f"a population; warned below {MIN_TASKS_AS_SAMPLE} tasks); default: tasks fixed, as "
        "the exact tests",
    )
    add_unpaired_flag(p)
    p.add_argument("--ordered", metavar="COLUMN", help="policies as a ladder ordered by COLUMN")
    p.add_argument("--policy", help=argparse.SUPPRESS)
    add_json_flag(p)
    add_reading_flags(p)
    p.set_defaults(run=cmd_rank)
