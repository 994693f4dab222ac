"""``evalsim compare FILE ... --a X --b Y --by task``: A vs B on every task, and across tasks.

Prints the per-task table (rates with Wilson intervals, the exact test used -- exact McNemar
when the task's trials pair up by condition id, else Fisher's -- the raw p and one column per
multiplicity correction of :data:`evalsim.stats.multi.CORRECTIONS`), the pooled verdicts (CMH,
exact stratified, Breslow-Day) and micro/macro success with stratified-bootstrap, MOVER and
naive intervals. Every number comes from :mod:`evalsim.stats.multi.tasks` and
:mod:`evalsim.stats.multi.aggregate`. The ``--by`` help names the corrections in words, as
parsing the options must not load the statistics (a test checks it against the registry).

:func:`read_task_logs` is shared with ``evalsim rank``: several files at once, each read by
:func:`evalsim.trial_logs.read_trial_log`. A single-task LeRobot file (``per_episode``) names
neither its task nor its policy: its policy is its folder and its task the folder above
(``TASK/POLICY/eval_info.json``).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evalsim.cli import _independence, _tests
from evalsim.cli._common import (
    BadInput,
    Report,
    _ci_pct,
    _count,
    _p,
    _pct,
    _positive_int,
    check_plot_path,
    check_policy_pair,
    plot_rates,
)
from evalsim.cli._gate import Gate
from evalsim.cli._log_hooks import apply_log_hooks
from evalsim.cli._reading import reading_options

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "add_arguments",
    "cmd_compare_by_task",
    "read_task_logs",
    "task_pairs",
]


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
    p.add_argument(
        "--tasks-as-sample",
        action="store_true",
        help="with --by task: intervals over tasks that treat the tasks as a sample of a "
        "population of tasks; default: tasks fixed (these tasks are the benchmark), as rank",
    )


def read_task_logs(
    files, policy: str | None = None, need_task: bool = True, extra_columns=(), options=None
) -> pd.DataFrame:
    """Read and stack several logs; every trial gets a task.

    A file without a ``task`` column: a LeRobot ``.json`` takes its task from the folder
    above its policy's folder; any other file is an error when ``need_task`` (else its
    trials form one task, ``"all"``). ``options``: the reading flags
    (:class:`evalsim._log_options.LogOptions`). A file given twice, or two files with the
    same trials (a CSV and its Parquet copy), are refused.
    """
    import pandas as pd  # heavy: compare --by task and rank read with pandas

    from evalsim._log_options import refuse_repeated_paths, refuse_same_trials
    from evalsim.trial_logs import read_trial_log

    if policy is not None and len(files) > 1:
        raise BadInput("--policy names the policy of a single file; give one file per call")
    # the same file twice; equal bytes only through the trials (below): a LeRobot file's
    # task comes from its folder, so two task folders may hold equal files
    refuse_repeated_paths(files, content=False)
    frames = []
    for path in files:
        df = read_trial_log(path, policy=policy, extra_columns=extra_columns, options=options)
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
    refuse_same_trials(list(zip(files, frames, strict=True)))
    warnings = [w for f in frames for w in f.attrs.get("warnings", [])]
    df = pd.concat(frames, ignore_index=True)
    df.attrs = {"warnings": warnings}
    empty = df["task"] == ""
    if empty.any():
        raise BadInput(f"task is empty in {int(empty.sum())} trial(s)")
    return df


def _pairing_keys(df: pd.DataFrame) -> list[str]:
    """Columns besides task that name a trial's starting state (as compare's pairing)."""
    if "condition" not in df.columns:
        return []
    return [c for c in ("seed", "condition") if c in df.columns]


def task_pairs(df: pd.DataFrame, a: str, b: str, keys: list[str]) -> dict:
    """Per task, A and B's trials paired on ``keys`` (vectorised: one factorisation of the
    key columns over the whole log, no per-task merge).

    Returns
    -------
    dict
        task -> ``(a_only, b_only, n_pairs)``, or None for a task whose trials cannot be
        paired (a key repeated within a policy there, or no key shared by A and B).
    """
    import pandas as pd  # heavy: compare --by task reads the log with pandas

    tasks_all = sorted(str(t) for t in df["task"].unique())
    if not keys:
        return {t: None for t in tasks_all}
    code = np.zeros(len(df), dtype=np.int64)
    size = 1
    for col in ["task", *keys]:
        c, uniq = pd.factorize(df[col], sort=False)
        m = max(len(uniq), 1)
        if size * m >= 2**62:  # the combined code would overflow: number the key tuples
            code = df.groupby(["task", *keys], sort=False).ngroup().to_numpy(dtype=np.int64)
            break
        code = code * m + c
        size *= m
    task_codes, task_names = pd.factorize(df["task"], sort=False)
    pol = df["policy"].to_numpy()
    succ = df["success"].to_numpy(dtype=bool)
    out = {}
    sides = {}
    bad_task = np.zeros(len(task_names), dtype=bool)
    for name, sel in (("a", pol == a), ("b", pol == b)):
        codes = code[sel]
        order = np.argsort(codes, kind="stable")
        sc = codes[order]
        dup = np.flatnonzero(sc[1:] == sc[:-1])
        if dup.size:
            bad_task[np.unique(task_codes[sel][order][dup])] = True
        sides[name] = (codes, succ[sel], task_codes[sel])
    ca, sa, ta = sides["a"]
    cb, sb, _ = sides["b"]
    # keys that repeat are removed from the intersection (their task is marked unpairable)
    _, ia, ib = np.intersect1d(ca, cb, assume_unique=False, return_indices=True)
    t = ta[ia]
    a_only = np.bincount(t, weights=(sa[ia] & ~sb[ib]), minlength=len(task_names))
    b_only = np.bincount(t, weights=(~sa[ia] & sb[ib]), minlength=len(task_names))
    n_pairs = np.bincount(t, minlength=len(task_names))
    for i, name in enumerate(task_names):
        if bad_task[i] or n_pairs[i] == 0:
            out[str(name)] = None
        else:
            out[str(name)] = (int(a_only[i]), int(b_only[i]), int(n_pairs[i]))
    return out


ALT_WORDS = {
    "two-sided": "two-sided",
    "greater": "one-sided, B > A",
    "less": "one-sided, B < A",
}


def across_decision(alternative: str, decide, alpha: float) -> str | None:
    """The policy the across-task verdict declares better: "A", "B" or None (the rule of
    :func:`_verdict`: the deciding test's p below alpha; two-sided, the side of its odds
    ratio B vs A)."""
    if not decide.pvalue < alpha:
        return None
    if alternative == "two-sided":
        return "B" if decide.odds_ratio > 1 else "A"
    return "B" if alternative == "greater" else "A"


def _verdict(args, tasks, alpha, level, decide, name, n_diff, cmh) -> str:
    """The verdict sentence from the deciding across-task test ``decide`` (its p-value is
    for ``args.alternative``; its odds ratio is B vs A)."""
    a, b, alt = args.a, args.b, args.alternative
    ci = f"{level} CI {decide.odds_ratio_lower:.2f} to {decide.odds_ratio_upper:.2f}"
    orr = f"common odds ratio B vs A {decide.odds_ratio:.2f} ({ci})"
    p = f"{name} p = {_p(decide.pvalue)}"
    nt = len(tasks)
    decided = across_decision(alt, decide, alpha)
    if decided is not None:
        better = b if decided == "B" else a
        worse = a if better == b else b
        side = "" if alt == "two-sided" else f", {ALT_WORDS[alt]}"
        verdict = f"across {nt} tasks {better} does better than {worse}: {p}{side} < {alpha:g}"
        verdict += f", {orr}"
    else:
        claim = {
            "two-sided": f"{a} and {b} are not detectably different",
            "greater": f"{b} is not shown better than {a}",
            "less": f"{b} is not shown worse than {a}",
        }[alt]
        verdict = f"across {nt} tasks {claim} ({p}, {ALT_WORDS[alt]}); the {orr}"
    verdict += f"; {n_diff} of {nt} tasks differ on their own after Holm"
    if math.isfinite(cmh.breslow_day_pvalue) and cmh.breslow_day_pvalue < alpha:
        verdict += (
            f"; the odds ratio is not the same in every task (Breslow-Day p = "
            f"{_p(cmh.breslow_day_pvalue)}), so read the tasks one by one"
        )
    return verdict


class _OneSided:
    """An exact stratified result seen through one alternative (p-value swapped in)."""

    def __init__(self, res, pvalue):
        self.pvalue = pvalue
        self.odds_ratio = res.odds_ratio
        self.odds_ratio_lower = res.odds_ratio_lower
        self.odds_ratio_upper = res.odds_ratio_upper


def _success_table(rep: Report, aggs, level: str, reps: int, tasks_as: str) -> None:
    """Micro and macro success over the tasks, with the intervals of ``tasks_as``.

    Issue 45, item 19: "tasks fixed" (the default, as ``rank`` and the exact tests: these
    tasks are the benchmark) and "tasks as a sample" (of a population of tasks) answer
    different questions; the table shows the intervals of the one chosen and says which.
    """
    if tasks_as == "fixed":
        rows = [
            [
                a.policy,
                f"{a.k}/{a.n}",
                _pct(a.micro) + " " + _ci_pct(a.naive_lower, a.naive_upper),
                _pct(a.macro) + " " + _ci_pct(a.macro_fixed_lower, a.macro_fixed_upper),
                _ci_pct(a.mover_lower, a.mover_upper),
            ]
            for a in aggs
        ]
        rep.table(
            f"Success over tasks ({level}; tasks fixed)",
            ["policy", "k/n", "micro [episodes]", "macro [episodes]", "macro [MOVER]"],
            rows,
        )
        rep.line(
            "Tasks fixed (these tasks are the benchmark, as for the exact tests): micro: "
            f"bootstrap of all episodes ({reps} replicates); macro: bootstrap of the episodes "
            "within each task; MOVER: from the tasks' Wilson intervals. --tasks-as-sample "
            "gives the intervals that treat the tasks as a sample of a population of tasks "
            "(wider by the spread between tasks)."
        )
        return
    rows = [
        [
            a.policy,
            f"{a.k}/{a.n}",
            _pct(a.micro) + " " + _ci_pct(a.micro_lower, a.micro_upper),
            _pct(a.macro) + " " + _ci_pct(a.macro_lower, a.macro_upper),
            _ci_pct(a.naive_lower, a.naive_upper),
            f"{a.width_ratio:.2f}",
        ]
        for a in aggs
    ]
    rep.table(
        f"Success over tasks ({level}; tasks as a sample)",
        ["policy", "k/n", "micro [sampled]", "macro [sampled]", "micro [tasks fixed]", "ratio"],
        rows,
    )
    rep.line(
        "Tasks as a sample (--tasks-as-sample) of a population of tasks: bootstrap of tasks, "
        f"then episodes ({reps} replicates); tasks fixed: all episodes as one sample; ratio = "
        "sampled micro width / tasks-fixed width, the widening the task spread adds when the "
        "tasks stand for other tasks (for these tasks the tasks-fixed interval is the one)."
    )


def cmd_compare_by_task(args) -> Report:
    from evalsim.stats.multi.aggregate import aggregate_success, outcome_grid
    from evalsim.stats.multi.paired import stratified_mcnemar_test
    from evalsim.stats.multi.tasks import (
        CORRECTIONS,
        cmh_test,
        exact_stratified_test,
        per_task_tests,
    )
    from evalsim.stats.proportion.intervals import wilson_interval as wilson

    if args.task is not None:
        raise BadInput("--task and --by task do not go together (--by task uses every task)")
    check_plot_path(args.plot, args.force)
    order_cols = _independence.order_columns(args)
    df = read_task_logs(
        args.files, args.policy, extra_columns=order_cols, options=reading_options(args)
    )
    policies = sorted(str(p) for p in df["policy"].unique())
    check_policy_pair(policies, args.a, args.b)
    df = df[df["policy"].isin([args.a, args.b])].reset_index(drop=True)
    tasks = sorted(str(t) for t in df["task"].unique())
    try:
        grid = outcome_grid(df, tasks=tasks, policies=[args.a, args.b])
    except ValueError as err:
        raise BadInput(str(err)) from None
    alpha, alt = args.alpha, args.alternative
    conf = 1 - alpha
    level = f"{100 * conf:g}%"
    keys = [] if args.unpaired else _pairing_keys(df)
    pairs_by_task = task_pairs(df, args.a, args.b, keys) if keys else {}
    pairs = [pairs_by_task.get(t) for t in grid.tasks]
    k_a, n_a, k_b, n_b = grid.k[:, 0], grid.n[:, 0], grid.k[:, 1], grid.n[:, 1]
    rows = per_task_tests(
        grid.tasks,
        k_a,
        n_a,
        k_b,
        n_b,
        pairs=[p[:2] if p else None for p in pairs],
        alpha=alpha,
        alternative=alt,
    )
    cmh = cmh_test(k_a, n_a, k_b, n_b, conf)
    ex = exact_stratified_test(k_a, n_a, k_b, n_b, conf)
    ex_p = {"two-sided": ex.pvalue, "greater": ex.pvalue_greater, "less": ex.pvalue_less}[alt]
    all_paired = bool(pairs) and all(p is not None for p in pairs)
    smc = None
    if all_paired:
        # B first: "greater" = B's rate is the higher; odds ratio = A-only / B-only inverted
        smc = stratified_mcnemar_test(
            [p[1] for p in pairs], [p[0] for p in pairs], alt, confidence=conf
        )
    aggs, _ = aggregate_success(grid, args.bootstrap_reps, conf, args.bootstrap_seed)
    tasks_as = "sample" if args.tasks_as_sample else "fixed"

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
                **{f"p_{m}": r.adjusted[m] for m in CORRECTIONS},
            }
        )
    n_diff = sum(t["p_holm"] < alpha for t in task_data)
    if smc is not None:
        # the paired test's odds ratio is B-only / A-only, B vs A as everywhere here
        decide = _OneSided(smc, smc.pvalue)
        decide.odds_ratio = 1.0 / smc.odds_ratio if smc.odds_ratio else math.inf
        decide.odds_ratio_lower = 1.0 / smc.odds_ratio_upper if smc.odds_ratio_upper else math.inf
        decide.odds_ratio_upper = 1.0 / smc.odds_ratio_lower if smc.odds_ratio_lower else math.inf
        decide_name = "exact stratified McNemar (paired)"
    else:
        decide, decide_name = _OneSided(ex, ex_p), "exact stratified"
    verdict = _verdict(args, tasks, alpha, level, decide, decide_name, n_diff, cmh)

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
        "alternative": alt,
        "confidence": conf,
        "tasks": task_data,
        "paired": all_paired,
        "decided_by": decide_name,
        "cmh": {
            "statistic": cmh.statistic,
            "pvalue": cmh.pvalue,
            "pvalue_corrected": cmh.pvalue_corrected,
            "odds_ratio": cmh.odds_ratio,
            "odds_ratio_ci": [cmh.odds_ratio_lower, cmh.odds_ratio_upper],
            "informative_tasks": cmh.n_informative,
            "alternative": "two-sided",
        },
        "breslow_day": {
            "statistic": cmh.breslow_day_statistic,
            "pvalue": cmh.breslow_day_pvalue,
        },
        "exact_stratified": {
            "statistic": ex.statistic,
            "support": list(ex.support),
            "pvalue": ex_p,
            "pvalue_two_sided": ex.pvalue,
            "odds_ratio": ex.odds_ratio,
            "odds_ratio_ci": [ex.odds_ratio_lower, ex.odds_ratio_upper],
            "two_sided_rule": "R mantelhaen.test(exact=TRUE): P(S=s) <= P(S=s_obs)(1+1e-7)",
        },
        "stratified_mcnemar": None
        if smc is None
        else {
            "b_only": smc.statistic,
            "discordant": smc.n_discordant,
            "pvalue": smc.pvalue,
            "odds_ratio": decide.odds_ratio,
            "odds_ratio_ci": [decide.odds_ratio_lower, decide.odds_ratio_upper],
            "informative_tasks": smc.n_informative,
        },
        "aggregates": {args.a: agg_dict(aggs[0]), args.b: agg_dict(aggs[1])},
        "bootstrap_reps": args.bootstrap_reps,
        "bootstrap_seed": args.bootstrap_seed,
        "tasks_as": tasks_as,
        "plot": args.plot,
        "verdict": verdict,
    }
    rep = Report(data)
    gate = None
    if args.fail_on is not None:  # the CI gate's rule, before the result (issue 45, item 26)
        gate = Gate(args.fail_on, across_decision(alt, decide, alpha))
        rep.line(gate.rule)
    side = ALT_WORDS[alt]
    rep.table(
        f"Per task: {args.b} (B) vs {args.a} (A), Wilson {level}; p {side}",
        [
            "task",
            "A k/n",
            "A rate",
            "B k/n",
            "B rate",
            "B-A",
            "test",
            "p",
            *(c.short for c in CORRECTIONS.values()),
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
                *(_p(t[f"p_{m}"]) for m in CORRECTIONS),
            ]
            for t in task_data
        ],
    )
    if any(t["test"] == "mcnemar" for t in task_data):
        rep.line(
            "McNemar a:b = pairs where only A / only B succeeded (trials paired by "
            f"{'/'.join(keys)} within each task)."
        )
    unpaired = [t["task"] for t in task_data if t["a_only"] is None]  # no pairs: Fisher
    if keys and unpaired:
        rep.line(f"note: not pairable, Fisher used: {', '.join(unpaired)}")

    def or_cell(o, lo, hi):
        return f"{o:.2f} [{lo:.2f}, {hi:.2f}]"

    across = []
    if smc is not None:
        across.append(
            [
                "exact stratified McNemar",
                _p(smc.pvalue),
                or_cell(decide.odds_ratio, decide.odds_ratio_lower, decide.odds_ratio_upper),
                f"paired, decides; {side}; {smc.statistic}:{smc.n_discordant - smc.statistic} "
                "B-only:A-only pairs over the tasks",
            ]
        )
    across += [
        [
            "exact stratified",
            _p(ex_p),
            or_cell(ex.odds_ratio, ex.odds_ratio_lower, ex.odds_ratio_upper),
            ("unpaired, secondary" if smc is not None else "decides")
            + f"; {side}; conditional MLE, exact interval",
        ],
        [
            "CMH",
            _p(cmh.pvalue),
            or_cell(cmh.odds_ratio, cmh.odds_ratio_lower, cmh.odds_ratio_upper),
            f"unpaired, secondary; two-sided; corrected p = {_p(cmh.pvalue_corrected)}",
        ],
        [
            "Breslow-Day",
            _p(cmh.breslow_day_pvalue),
            "—",
            "are the odds ratios equal across tasks?",
        ],
    ]
    rep.table(
        "Across tasks (odds ratio B vs A)", ["test", "p", f"odds ratio [{level}]", "note"], across
    )
    _success_table(rep, aggs, level, args.bootstrap_reps, tasks_as)
    apply_log_hooks(args, df, rep)  # --order: per-task checks, interleaving, whole session
    rep.data["notes"] = list(df.attrs.get("warnings", []))  # the reader's notes and warnings
    if args.test != _tests.DEFAULT_TEST:  # issue 45, item 10: never ignored silently
        rep.data["notes"].append(
            f"note: --test {args.test} is not used with --by task: each task gets its exact "
            "McNemar or Fisher test, and the exact stratified tests decide across tasks"
        )
    for note in rep.data["notes"]:
        rep.line(note)
    if args.plot:
        plot_rows = []
        for t in task_data:
            for who in ("a", "b"):
                plot_rows.append(
                    {
                        "label": f"{t['task']}: {args.a if who == 'a' else args.b}",
                        "rate": t[f"rate_{who}"],
                        "lower": t[f"wilson_{who}"][0],
                        "upper": t[f"wilson_{who}"][1],
                    }
                )
        plot_rates(plot_rows, args.plot, f"{args.a} vs {args.b}, by task", conf)
        rep.line(f"figure: {args.plot}")
    rep.line("")
    rep.line(_independence.qualify_verdict(rep, verdict))
    if gate is not None:
        rep.data["gate"] = gate.to_dict()
        rep.line(gate.outcome)
        rep.exit_status = gate.exit_status
    return rep
