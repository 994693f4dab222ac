"""``evalsim rank FILE ...``: two or more policies ranked over the tasks, with letters.

Every pair of policies is compared by the exact stratified test over the tasks, the pairwise
p-values Holm-adjusted together; the compact letter display says which policies are not
detectably different (they share a letter). Beside it: macro success with the stratified
bootstrap interval and a simultaneous (max-|t|) interval, micro success, rliable's IQM of
per-seed task rates (when the log has seeds) and P(this > next-ranked). ``--plot out.png``
draws the ranking (F09's figure). Numbers: :mod:`evalsim.stats.multi.rank`.
"""

from __future__ import annotations

import argparse
import math
import re

import numpy as np

from evalsim.cli._common import (
    BadInput,
    Report,
    _ci_pct,
    _count,
    _open_unit,
    _pct,
    _positive_int,
    add_json_flag,
)
from evalsim.cli.by_task import read_task_logs
from evalsim.io import atomic_path

__all__ = ["MAX_PAIRS_SHOWN", "MIN_TASKS_AS_SAMPLE", "cmd_rank", "ranking_axes", "register"]

#: The text output lists at most this many differing pairs (JSON has them all).
MAX_PAIRS_SHOWN = 15

#: ``--tasks-as-sample`` warns below this many tasks: a bootstrap over T tasks draws from T
#: values, and with a handful of tasks its percentiles say little about a population of
#: tasks (Davison and Hinkley 1997, section 2.4: the bootstrap needs the sample to stand
#: in for the population).
MIN_TASKS_AS_SAMPLE = 10


def _natural(text: str) -> tuple:
    """Sort key: 'sigma2' before 'sigma10'."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text))


def cmd_rank(args) -> Report:
    from evalsim.stats.multi.aggregate import outcome_grid
    from evalsim.stats.multi.rank import compact_letter_display, rank_policies, ranking_frame

    df = read_task_logs(args.files, args.policy, need_task=False)
    policies = sorted(set(df["policy"]), key=_natural)
    if len(policies) < 2:
        raise BadInput(f"rank needs at least 2 policies, the log has {', '.join(policies)}")
    tasks = sorted(set(df["task"]), key=_natural)
    try:
        grid = outcome_grid(df, tasks=tasks, policies=policies)
    except ValueError as err:
        raise BadInput(str(err)) from None
    runs = None
    if "seed" in df.columns and (df["seed"] != "").all():
        runs = [
            [df[(df["task"] == t) & (df["policy"] == p)]["seed"].to_numpy() for p in policies]
            for t in tasks
        ]
    conf = 1 - args.alpha
    level = f"{100 * conf:g}%"
    mode = "sample" if args.tasks_as_sample else "fixed"
    if args.plot:
        _check_plot(args.plot)
    r = rank_policies(
        grid, runs, args.alpha, conf, args.bootstrap_reps, args.bootstrap_seed, tasks=mode
    )
    frame = ranking_frame(r)
    notes = []
    if mode == "fixed":
        # the per-policy interval with the tasks fixed too (episodes redrawn, tasks kept)
        frame["macro_lower"] = [r.aggregates[p].macro_fixed_lower for p in frame["policy"]]
        frame["macro_upper"] = [r.aggregates[p].macro_fixed_upper for p in frame["policy"]]
        odd = [q for q in r.pairs if q.differ == (q.diff_lower <= 0.0 <= q.diff_upper)]
        if odd:
            notes.append(
                "note: the exact test and the simultaneous interval disagree on "
                + ", ".join(f"{q.first} vs {q.second}" for q in odd)
                + " (both treat the tasks as fixed; the test compares odds, the interval the "
                "macro rates): read these pairs as borderline"
            )
    else:
        # letters from the same task-bootstrap intervals: a pair differs when its
        # simultaneous interval of the macro difference excludes 0
        idx = {p: i for i, p in enumerate(grid.policies)}
        differ = np.zeros((len(policies), len(policies)), dtype=bool)
        for q in r.pairs:
            d = not (q.diff_lower <= 0.0 <= q.diff_upper)
            differ[idx[q.first], idx[q.second]] = differ[idx[q.second], idx[q.first]] = d
        order_idx = [idx[p] for p in r.order]
        letters = compact_letter_display(grid.policies, differ, order_idx)
        frame["letters"] = [letters[p] for p in frame["policy"]]
        if len(tasks) < MIN_TASKS_AS_SAMPLE:
            notes.append(
                f"warning: --tasks-as-sample with {len(tasks)} task(s): a bootstrap over "
                f"{len(tasks)} tasks cannot support 'tasks as a sample' of a larger population "
                f"(fewer than {MIN_TASKS_AS_SAMPLE}); its intervals and letters are rough; "
                "the default (tasks fixed) answers for these tasks"
            )
    if args.plot:
        _plot(frame, args.plot, conf, mode)

    def nan_none(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    data = {
        "alpha": args.alpha,
        "confidence": conf,
        "tasks": list(tasks),
        "ranking": [
            {k: nan_none(v) for k, v in row.items() if k != "sigma_mm"}
            for row in frame.to_dict(orient="records")
        ],
        "pairs": [
            {
                "first": q.first,
                "second": q.second,
                "pvalue": q.pvalue,
                "pvalue_holm": q.pvalue_holm,
                "differ": q.differ,
                "interval_excludes_0": not (q.diff_lower <= 0.0 <= q.diff_upper),
                "odds_ratio": q.odds_ratio,
                "odds_ratio_ci": [q.odds_ratio_lower, q.odds_ratio_upper],
                "diff_macro": q.diff_macro,
                "diff_macro_simultaneous_ci": [q.diff_lower, q.diff_upper],
                "prob_improvement": nan_none(q.prob_improvement),
                "prob_improvement_ci": [
                    nan_none(q.prob_improvement_lower),
                    nan_none(q.prob_improvement_upper),
                ],
            }
            for q in r.pairs
        ],
        "critical_value": r.critical_value,
        "tasks_as": mode,
        "notes": notes,
        "bootstrap_reps": args.bootstrap_reps,
        "bootstrap_seed": args.bootstrap_seed,
        "plot": args.plot,
    }
    rep = Report(data)
    has_iqm = bool(r.iqm)
    headers = ["rank", "policy", "letters", "k/n", "macro", f"{level} CI", "simultaneous", "micro"]
    if has_iqm:
        headers += ["IQM [CI]"]
    headers += ["P(> next) [CI]"]
    rows = []
    for row in frame.to_dict(orient="records"):
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
    rep.line(
        f"{len(policies)} policies, {len(tasks)} task(s): {', '.join(tasks)}; "
        f"{int(grid.n.sum())} trials"
    )
    rep.table("Ranking by macro success (mean of task rates)", headers, rows)
    if mode == "fixed":
        rep.line(
            "Tasks fixed (these tasks, not a sample of tasks). Policies that share a letter are "
            "not detectably different: every pair compared by the exact stratified test over "
            f"the tasks, Holm-adjusted over {len(r.pairs)} pairs, p < {args.alpha:g}. {level} "
            "CI: bootstrap of the episodes within each task; simultaneous: max-|t| bootstrap "
            f"of the same, all rows jointly at {level}."
        )
    else:
        rep.line(
            "Tasks as a sample (--tasks-as-sample). Policies that share a letter are not "
            "detectably different: their simultaneous interval of the macro difference holds "
            f"0. {level} CI: stratified bootstrap (tasks, then episodes); simultaneous: "
            f"max-|t| bootstrap, all rows jointly at {level}. Holm p: exact stratified test, "
            "tasks fixed."
        )
    if has_iqm:
        rep.line("IQM: interquartile mean of per-seed task rates (rliable's stratified bootstrap).")
    elif runs is None:
        rep.line("IQM needs a seed column (per-run scores); P(> next) then uses the episodes.")
    else:
        rep.line("IQM skipped: the seeds differ in number between tasks or policies.")
    rank_of = {p: i for i, p in enumerate(r.order)}
    diff = []
    for q in r.pairs:
        excludes = not (q.diff_lower <= 0.0 <= q.diff_upper)
        if not (q.differ if mode == "fixed" else excludes):
            continue
        flip = rank_of[q.second] < rank_of[q.first]  # show the better-ranked policy first
        better, worse = (q.second, q.first) if flip else (q.first, q.second)
        sign = 1.0 if flip else -1.0  # diff_macro is second - first
        lo, hi = sorted((sign * q.diff_lower, sign * q.diff_upper))
        gap_rank = rank_of[worse] - rank_of[better]
        diff.append((gap_rank, rank_of[better], better, worse, q, sign * q.diff_macro, lo, hi))
    diff.sort(key=lambda d: d[:2])  # nearest in rank first: the informative separations
    if diff:
        shown = diff[:MAX_PAIRS_SHOWN]
        rep.table(
            "Pairs that differ "
            + ("(Holm)" if mode == "fixed" else "(simultaneous interval)")
            + ", nearest in rank first",
            ["pair", "p", "Holm p", "macro gap [simultaneous]"],
            [
                [
                    f"{b} vs {w}",
                    f"{q.pvalue:.2g}",
                    f"{q.pvalue_holm:.2g}",
                    f"{100 * gap:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]",
                ]
                for _, _, b, w, q, gap, lo, hi in shown
            ],
        )
        if len(diff) > len(shown):
            rep.line(f"... and {len(diff) - len(shown)} more pairs (all in --json).")
    else:
        rep.line("No pair differs after Holm.")
    for note in notes:
        rep.line(note)
    if args.plot:
        rep.line(f"figure: {args.plot}")
    return rep


def _check_plot(path: str) -> None:
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix not in ("png", "pdf", "svg"):
        raise BadInput(f"--plot must end in .png, .pdf or .svg, got {path!r}")


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


def _plot(frame, path: str, confidence: float, tasks: str) -> None:
    import matplotlib.pyplot as plt

    from evalsim.figures import set_style

    suffix = path.rsplit(".", 1)[-1].lower()
    set_style()
    fig = ranking_axes(frame, confidence, tasks)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=suffix)
    except OSError as err:
        raise BadInput(f"--plot {path}: cannot write ({err.strerror or err})") from None
    finally:
        plt.close(fig)


def register(sub) -> None:
    """Add the ``rank`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("rank", help="rank two or more policies over the tasks, with letters")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log")
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")
    p.add_argument("--plot", metavar="OUT.png", help="also draw the ranking to this file")
    p.add_argument("--bootstrap-reps", type=_positive_int, default=2000, help="default 2000")
    p.add_argument("--bootstrap-seed", type=_count, default=0, help="default 0")
    p.add_argument(
        "--tasks-as-sample",
        action="store_true",
        help="intervals and letters from the bootstrap over tasks (the tasks as a sample of "
        f"a population; warned below {MIN_TASKS_AS_SAMPLE} tasks); default: tasks fixed, as "
        "the exact tests",
    )
    p.add_argument("--policy", help=argparse.SUPPRESS)
    add_json_flag(p)
    p.set_defaults(run=cmd_rank)
