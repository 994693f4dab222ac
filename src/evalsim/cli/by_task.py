"""``evalsim compare FILE ... --a X --b Y --by task``: A vs B on every task, and across tasks.

Prints the per-task table (rates with Wilson intervals, the exact test used -- exact McNemar
when the task's trials pair up by condition id, else Fisher's -- raw and Holm / Hochberg /
Benjamini-Hochberg adjusted p), the pooled verdicts (CMH, exact stratified, Breslow-Day) and
micro/macro success with stratified-bootstrap, MOVER and naive intervals. Every number comes
from :mod:`evalsim.stats.multi` and :mod:`evalsim.stats.multi_aggregate`.

:func:`read_task_logs` is shared with ``evalsim rank``: several files at once, each read by
:func:`evalsim.trial_logs.read_trial_log`. A single-task LeRobot file (``per_episode``) names
neither its task nor its policy: its policy is its folder and its task the folder above
(``TASK/POLICY/eval_info.json``).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from evalsim.cli._common import BadInput, Report, _ci_pct, _count, _p, _pct, _positive_int
from evalsim.trial_logs import read_trial_log

__all__ = ["add_arguments", "cmd_compare_by_task", "read_task_logs"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options ``compare`` takes for ``--by task``."""
    p.add_argument(
        "--by",
        choices=["task"],
        help="'task': each task's exact test with Holm/Hochberg/BH-adjusted p, the CMH and "
        "exact stratified verdicts across tasks, micro and macro success",
    )
    p.add_argument(
        "--bootstrap-reps",
        type=_positive_int,
        default=2000,
        help="with --by task: stratified bootstrap replicates (default 2000)",
    )
    p.add_argument(
        "--bootstrap-seed", type=_count, default=0, help="with --by task: seed (default 0)"
    )


def read_task_logs(files, policy: str | None = None, need_task: bool = True) -> pd.DataFrame:
    """Read and stack several logs; every trial gets a task.

    A file without a ``task`` column: a LeRobot ``.json`` takes its task from the folder
    above its policy's folder; any other file is an error when ``need_task`` (else its
    trials form one task, ``"all"``).
    """
    if policy is not None and len(files) > 1:
        raise BadInput("--policy names the policy of a single file; give one file per call")
    frames = []
    for path in files:
        df = read_trial_log(path, policy=policy)
        if "task" not in df.columns or (df["task"] == "").all():
            p = Path(path).resolve()
            if p.suffix.lower() == ".json" and p.parent.parent.name:
                df["task"] = p.parent.parent.name
            elif need_task:
                raise BadInput(
                    f"{path}: no task column; --by task needs the task of every trial (a "
                    "'task' column, LeRobot's multi-task per_task form, or a LeRobot file "
                    "at TASK/POLICY/eval_info.json)"
                )
            else:
                df["task"] = "all"
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    empty = df["task"] == ""
    if empty.any():
        raise BadInput(f"task is empty in {int(empty.sum())} trial(s)")
    return df


def _pairing_keys(df: pd.DataFrame) -> list[str]:
    """Columns besides task that name a trial's starting state (as compare's pairing)."""
    if "condition" not in df.columns:
        return []
    return [c for c in ("seed", "condition") if c in df.columns]


def cmd_compare_by_task(args) -> Report:
    from evalsim.stats.intervals import wilson_interval as wilson
    from evalsim.stats.multi import cmh_test, exact_stratified_test, per_task_tests
    from evalsim.stats.multi_aggregate import aggregate_success, outcome_grid, task_pairs

    if args.task is not None:
        raise BadInput("--task and --by task do not go together (--by task uses every task)")
    df = read_task_logs(args.files, args.policy)
    policies = sorted(set(df["policy"]))
    for flag, name in (("--a", args.a), ("--b", args.b)):
        if name not in policies:
            raise BadInput(
                f"{flag} {name!r} is not a policy in the log (policies: {', '.join(policies)})"
            )
    if args.a == args.b:
        raise BadInput(f"--a and --b name the same policy {args.a!r}")
    df = df[df["policy"].isin([args.a, args.b])]
    tasks = sorted(set(df["task"]))
    try:
        grid = outcome_grid(df, tasks=tasks, policies=[args.a, args.b])
    except ValueError as err:
        raise BadInput(str(err)) from None
    alpha = args.alpha
    conf = 1 - alpha
    level = f"{100 * conf:g}%"
    keys = [] if args.unpaired else _pairing_keys(df)
    pairs_by_task = task_pairs(df, args.a, args.b, keys) if keys else {}
    pairs = [pairs_by_task.get(t) for t in grid.tasks]
    k_a, n_a, k_b, n_b = grid.k[:, 0], grid.n[:, 0], grid.k[:, 1], grid.n[:, 1]
    rows = per_task_tests(
        grid.tasks, k_a, n_a, k_b, n_b, pairs=[p[:2] if p else None for p in pairs], alpha=alpha
    )
    cmh = cmh_test(k_a, n_a, k_b, n_b, conf)
    ex = exact_stratified_test(k_a, n_a, k_b, n_b, conf)
    aggs, _ = aggregate_success(grid, args.bootstrap_reps, conf, args.bootstrap_seed)

    task_data = []
    for r, pr in zip(rows, pairs, strict=True):
        wa, wb = wilson(r.k_a, r.n_a, confidence=conf), wilson(r.k_b, r.n_b, confidence=conf)
        task_data.append(
            {
                "task": r.task,
                "k_a": r.k_a,
                "n_a": r.n_a,
                "rate_a": r.rate_a,
                "wilson_a": [float(wa.lower), float(wa.upper)],
                "k_b": r.k_b,
                "n_b": r.n_b,
                "rate_b": r.rate_b,
                "wilson_b": [float(wb.lower), float(wb.upper)],
                "diff": r.rate_b - r.rate_a,
                "test": r.test,
                "n_pairs": pr[2] if pr else None,
                "a_only": r.a_only,
                "b_only": r.b_only,
                "pvalue": r.pvalue,
                "p_holm": r.adjusted["holm"],
                "p_hochberg": r.adjusted["hochberg"],
                "p_bh": r.adjusted["bh"],
            }
        )
    n_diff = sum(t["p_holm"] < alpha for t in task_data)
    better = args.b if ex.odds_ratio > 1 else args.a
    if ex.pvalue < alpha:
        verdict = (
            f"across {len(tasks)} tasks {better} does better: exact stratified p = "
            f"{_p(ex.pvalue)} < {alpha:g}, common odds ratio B vs A {ex.odds_ratio:.2f} "
            f"({level} CI {ex.odds_ratio_lower:.2f} to {ex.odds_ratio_upper:.2f})"
        )
    else:
        verdict = (
            f"across {len(tasks)} tasks {args.a} and {args.b} are not detectably different "
            f"(exact stratified p = {_p(ex.pvalue)}); the common odds ratio B vs A lies "
            f"between {ex.odds_ratio_lower:.2f} and {ex.odds_ratio_upper:.2f} ({level} CI)"
        )
    verdict += f"; {n_diff} of {len(tasks)} tasks differ on their own after Holm"
    if math.isfinite(cmh.breslow_day_pvalue) and cmh.breslow_day_pvalue < alpha:
        verdict += (
            f"; the odds ratio is not the same in every task (Breslow-Day p = "
            f"{_p(cmh.breslow_day_pvalue)}), so read the tasks one by one"
        )

    def agg_dict(a):
        return {
            "k": a.k,
            "n": a.n,
            "micro": a.micro,
            "micro_ci": [a.micro_lower, a.micro_upper],
            "macro": a.macro,
            "macro_ci": [a.macro_lower, a.macro_upper],
            "macro_tasks_fixed_ci": [a.macro_fixed_lower, a.macro_fixed_upper],
            "macro_mover_ci": [a.mover_lower, a.mover_upper],
            "naive_ci": [a.naive_lower, a.naive_upper],
            "naive_wilson_ci": [a.wilson_lower, a.wilson_upper],
            "width_ratio": a.width_ratio,
        }

    data = {
        "a": args.a,
        "b": args.b,
        "alpha": alpha,
        "confidence": conf,
        "tasks": task_data,
        "cmh": {
            "statistic": cmh.statistic,
            "pvalue": cmh.pvalue,
            "pvalue_corrected": cmh.pvalue_corrected,
            "odds_ratio": cmh.odds_ratio,
            "odds_ratio_ci": [cmh.odds_ratio_lower, cmh.odds_ratio_upper],
            "informative_tasks": cmh.n_informative,
        },
        "breslow_day": {
            "statistic": cmh.breslow_day_statistic,
            "pvalue": cmh.breslow_day_pvalue,
        },
        "exact_stratified": {
            "statistic": ex.statistic,
            "support": list(ex.support),
            "pvalue": ex.pvalue,
            "odds_ratio": ex.odds_ratio,
            "odds_ratio_ci": [ex.odds_ratio_lower, ex.odds_ratio_upper],
            "two_sided_rule": "R mantelhaen.test(exact=TRUE): P(S=s) <= P(S=s_obs)(1+1e-7)",
        },
        "aggregates": {args.a: agg_dict(aggs[0]), args.b: agg_dict(aggs[1])},
        "bootstrap_reps": args.bootstrap_reps,
        "bootstrap_seed": args.bootstrap_seed,
        "verdict": verdict,
    }
    rep = Report(data)
    rep.table(
        f"Per task: {args.b} (B) vs {args.a} (A), Wilson {level}",
        [
            "task",
            "A k/n",
            "A rate",
            "B k/n",
            "B rate",
            "B-A",
            "test",
            "p",
            "Holm",
            "Hochberg",
            "BH",
        ],
        [
            [
                t["task"],
                f"{t['k_a']}/{t['n_a']}",
                _pct(t["rate_a"]) + " " + _ci_pct(*t["wilson_a"], 0),
                f"{t['k_b']}/{t['n_b']}",
                _pct(t["rate_b"]) + " " + _ci_pct(*t["wilson_b"], 0),
                f"{100 * t['diff']:+.1f}",
                f"McNemar {t['a_only']}:{t['b_only']}" if t["test"] == "mcnemar" else "Fisher",
                _p(t["pvalue"]),
                _p(t["p_holm"]),
                _p(t["p_hochberg"]),
                _p(t["p_bh"]),
            ]
            for t in task_data
        ],
    )
    if any(t["test"] == "mcnemar" for t in task_data):
        rep.line(
            "McNemar a:b = pairs where only A / only B succeeded (trials paired by "
            f"{'/'.join(keys)} within each task)."
        )
    unpaired = [t["task"] for t in task_data if t["test"] == "fisher"]
    if keys and unpaired:
        rep.line(f"note: not pairable, Fisher used: {', '.join(unpaired)}")

    def or_cell(o, lo, hi):
        return f"{o:.2f} [{lo:.2f}, {hi:.2f}]"

    rep.table(
        "Across tasks (odds ratio B vs A)",
        ["test", "p", f"odds ratio [{level}]", "note"],
        [
            [
                "exact stratified",
                _p(ex.pvalue),
                or_cell(ex.odds_ratio, ex.odds_ratio_lower, ex.odds_ratio_upper),
                "conditional MLE, exact interval",
            ],
            [
                "CMH",
                _p(cmh.pvalue),
                or_cell(cmh.odds_ratio, cmh.odds_ratio_lower, cmh.odds_ratio_upper),
                f"Mantel-Haenszel; corrected p = {_p(cmh.pvalue_corrected)}",
            ],
            [
                "Breslow-Day",
                _p(cmh.breslow_day_pvalue),
                "—",
                "are the odds ratios equal across tasks?",
            ],
        ],
    )
    agg_rows = []
    for a in aggs:
        agg_rows.append(
            [
                a.policy,
                f"{a.k}/{a.n}",
                _pct(a.micro) + " " + _ci_pct(a.micro_lower, a.micro_upper),
                _pct(a.macro) + " " + _ci_pct(a.macro_lower, a.macro_upper),
                _ci_pct(a.mover_lower, a.mover_upper),
                _ci_pct(a.naive_lower, a.naive_upper),
                f"{a.width_ratio:.2f}",
            ]
        )
    rep.table(
        f"Success over tasks ({level})",
        [
            "policy",
            "k/n",
            "micro [stratified]",
            "macro [stratified]",
            "macro [MOVER]",
            "naive",
            "ratio",
        ],
        agg_rows,
    )
    rep.line(
        f"stratified: bootstrap of tasks, then episodes ({args.bootstrap_reps} replicates); "
        "MOVER: these tasks fixed, from their Wilson intervals; naive: episodes as one sample; "
        "ratio = stratified micro width / naive width (> 1: the naive interval is too narrow)."
    )
    rep.line("")
    rep.line(f"verdict: {verdict}")
    return rep
