"""``evalsim rank FILE ...``: two or more policies ranked over the tasks, with letters.

Every pair of policies is compared by the exact stratified test over the tasks, the pairwise
p-values Holm-adjusted together; the compact letter display says which policies are not
detectably different (they share a letter). Beside it: macro success with the stratified
bootstrap interval and a simultaneous (max-|t|) interval, micro success, rliable's IQM of
per-seed task rates (when the log has seeds) and P(this > next-ranked). ``--plot out.png``
draws the ranking (F09's figure). Numbers: :mod:`evalsim.stats.multi_rank`.
"""

from __future__ import annotations

import argparse
import math
import re

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

__all__ = ["MAX_PAIRS_SHOWN", "cmd_rank", "register"]

#: The text output lists at most this many differing pairs (JSON has them all).
MAX_PAIRS_SHOWN = 15


def _natural(text: str) -> tuple:
    """Sort key: 'sigma2' before 'sigma10'."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text))


def cmd_rank(args) -> Report:
    from evalsim.products.multi import ranking_frame
    from evalsim.stats.multi_aggregate import outcome_grid
    from evalsim.stats.multi_rank import rank_policies

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
    r = rank_policies(grid, runs, args.alpha, conf, args.bootstrap_reps, args.bootstrap_seed)
    frame = ranking_frame(r)
    if args.plot:
        _plot(frame, args.plot, conf)

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
    rep.line(
        "Policies that share a letter are not detectably different: every pair compared by the "
        f"exact stratified test over the tasks, Holm-adjusted over {len(r.pairs)} pairs, "
        f"p < {args.alpha:g}. {level} CI: stratified bootstrap (tasks, then episodes); "
        f"simultaneous: max-|t| bootstrap, all rows jointly at {level}."
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
        if not q.differ:
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
            "Pairs that differ (Holm), nearest in rank first",
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
    if args.plot:
        rep.line(f"figure: {args.plot}")
    return rep


def _plot(frame, path: str, confidence: float) -> None:
    import matplotlib.pyplot as plt

    from evalsim.figures import set_style
    from evalsim.io import atomic_path
    from evalsim.products.multi import ranking_figure

    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix not in ("png", "pdf", "svg"):
        raise BadInput(f"--plot must end in .png, .pdf or .svg, got {path!r}")
    set_style()
    fig = ranking_figure(frame, confidence=confidence)
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
    p.add_argument("--policy", help=argparse.SUPPRESS)
    add_json_flag(p)
    p.set_defaults(run=cmd_rank)
