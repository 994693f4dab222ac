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
from pathlib import Path
from typing import TYPE_CHECKING

from evalsim.answers.by_task import ALT_WORDS, TaskComparison
from evalsim.cli import _independence
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
    passed_on,
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


#: The success table of each ``tasks_as``: its name, its columns after policy and k/n as
#: (header, rate attribute or None, interval attribute prefix: ``<prefix>_lower/_upper``), and
#: the note under it (``{reps}``: the bootstrap replicates).
_SUCCESS_TABLES = {
    "fixed": (
        "tasks fixed",
        (
            ("micro [episodes]", "micro", "naive"),
            ("macro [episodes]", "macro", "macro_fixed"),
            ("macro [MOVER]", None, "mover"),
        ),
        "Tasks fixed (these tasks are the benchmark, as for the exact tests): micro: "
        "bootstrap of all episodes ({reps} replicates); macro: bootstrap of the episodes "
        "within each task; MOVER: from the tasks' Wilson intervals. --tasks-as-sample "
        "gives the intervals that treat the tasks as a sample of a population of tasks "
        "(wider by the spread between tasks).",
    ),
    "sample": (
        "tasks as a sample",
        (
            ("micro [sampled]", "micro", "micro"),
            ("macro [sampled]", "macro", "macro"),
            ("micro [tasks fixed]", None, "naive"),
            ("ratio", "width_ratio", None),
        ),
        "Tasks as a sample (--tasks-as-sample) of a population of tasks: bootstrap of tasks, "
        "then episodes ({reps} replicates); tasks fixed: all episodes as one sample; ratio = "
        "sampled micro width / tasks-fixed width, the widening the task spread adds when the "
        "tasks stand for other tasks (for these tasks the tasks-fixed interval is the one).",
    ),
}


def _success_cell(agg, rate: str | None, interval: str | None) -> str:
    """A rate as a percentage followed by its interval; the interval alone (``rate`` None);
    or, with no interval, the plain ratio."""
    if interval is None:
        return f"{getattr(agg, rate):.2f}"
    ci = _ci_pct(getattr(agg, f"{interval}_lower"), getattr(agg, f"{interval}_upper"))
    return ci if rate is None else f"{_pct(getattr(agg, rate))} {ci}"


def _success_table(rep: Report, aggs, level: str, reps: int, tasks_as: str) -> None:
    """Micro and macro success over the tasks, with the intervals of ``tasks_as``.

    Issue 45, item 19: "tasks fixed" (the default, as ``rank`` and the exact tests: these
    tasks are the benchmark) and "tasks as a sample" (of a population of tasks) answer
    different questions; the table shows the intervals of the one chosen and says which.
    """
    name, columns, note = _SUCCESS_TABLES["fixed" if tasks_as == "fixed" else "sample"]
    rows = [
        [a.policy, f"{a.k}/{a.n}", *(_success_cell(a, *column[1:]) for column in columns)]
        for a in aggs
    ]
    headers = ["policy", "k/n", *(column[0] for column in columns)]
    rep.table(f"Success over tasks ({level}; {name})", headers, rows)
    rep.line(note.format(reps=reps))


#: The options :func:`~evalsim.answers.by_task.compare_by_task` takes as they are parsed.
_PASSED_ON = (
    "alpha",
    "alternative",
    "unpaired",
    "bootstrap_reps",
    "bootstrap_seed",
    "tasks_as_sample",
    "test",
)


def cmd_compare_by_task(args) -> Report:
    from evalsim.answers.by_task import compare_by_task

    if args.task is not None:
        raise BadInput("--task and --by task do not go together (--by task uses every task)")
    check_plot_path(args.plot, args.force)
    order_cols = _independence.order_columns(args)
    df = read_task_logs(
        args.files, args.policy, extra_columns=order_cols, options=reading_options(args)
    )
    policies = sorted(str(p) for p in df["policy"].unique())
    check_policy_pair(policies, args.a, args.b)
    df = df[df["policy"].isin([args.a, args.b])].reset_index(drop=True)  # for the log hooks
    c = compare_by_task(df, args.a, args.b, **passed_on(args, *_PASSED_ON))
    rep = Report(c.to_dict(args.plot))
    gate = None
    if args.fail_on is not None:  # the CI gate's rule, before the result (issue 45, item 26)
        gate = Gate(args.fail_on, c.better)
        rep.line(gate.rule)
    _per_task_table(c, rep)
    _across_table(c, rep)
    _success_table(rep, c.aggregates, c.level, c.bootstrap_reps, c.tasks_as)
    apply_log_hooks(args, df, rep)  # --order: per-task checks, interleaving, whole session
    rep.data["notes"] = list(c.notes)
    for note in c.notes:
        rep.line(note)
    if args.plot:
        plot_rates(_plot_rows(c), args.plot, f"{args.a} vs {args.b}, by task", c.confidence)
        rep.line(f"figure: {args.plot}")
    rep.line("")
    rep.line(_independence.qualify_verdict(rep, c.verdict))
    if gate is not None:
        rep.data["gate"] = gate.to_dict()
        rep.line(gate.outcome)
        rep.exit_status = gate.exit_status
    return rep


def _plot_rows(c: TaskComparison) -> list[dict]:
    """Each task's two rates with their Wilson intervals, for ``--plot``."""
    rows = []
    for t in c.tasks:
        for who in ("a", "b"):
            rows.append(
                {
                    "label": f"{t['task']}: {c.a if who == 'a' else c.b}",
                    "rate": t[f"rate_{who}"],
                    "lower": t[f"wilson_{who}"][0],
                    "upper": t[f"wilson_{who}"][1],
                }
            )
    return rows


def _per_task_table(c: TaskComparison, rep: Report) -> None:
    """Per task: rates with Wilson intervals, B - A, the test, raw and adjusted p."""
    from evalsim.stats.multi.tasks import CORRECTIONS

    rep.table(
        f"Per task: {c.b} (B) vs {c.a} (A), Wilson {c.level}; p {ALT_WORDS[c.alternative]}",
        [
            "task",
            "A k/n",
            "A rate",
            "B k/n",
            "B rate",
            "B-A",
            "test",
            "p",
            *(corr.short for corr in CORRECTIONS.values()),
        ],
        [
            [
                t["task"],
                f"{t['k_a']}/{t['n_a']}",
                _pct(t["rate_a"]) + " " + _ci_pct(*t["wilson_a"], 0),
                f"{t['k_b']}/{t['n_b']}",
                _pct(t["rate_b"]) + " " + _ci_pct(*t["wilson_b"], 0),
                f"{100 * t['diff']:+.1f}",
                f"McNemar {t['a_only']}:{t['b_only']}" if t["a_only"] is not None else "Fisher",
                _p(t["pvalue"]),
                *(_p(t[f"p_{m}"]) for m in CORRECTIONS),
            ]
            for t in c.tasks
        ],
    )
    if any(t["a_only"] is not None for t in c.tasks):  # a paired task: its test is McNemar's
        rep.line(
            "McNemar a:b = pairs where only A / only B succeeded (trials paired by "
            f"{'/'.join(c.pairing_keys)} within each task)."
        )
    unpaired = [t["task"] for t in c.tasks if t["a_only"] is None]  # no pairs: Fisher
    if c.pairing_keys and unpaired:
        rep.line(f"note: not pairable, Fisher used: {', '.join(unpaired)}")


def _or_cell(o, lo, hi) -> str:
    return f"{o:.2f} [{lo:.2f}, {hi:.2f}]"


def _across_table(c: TaskComparison, rep: Report) -> None:
    """The across-task tests: the deciding one first, then the secondary ones."""
    smc, ex, cmh, d = c.mcnemar, c.exact, c.cmh, c.decision
    side = ALT_WORDS[c.alternative]
    across = []
    if smc is not None:
        across.append(
            [
                "exact stratified McNemar",
                _p(smc.pvalue),
                _or_cell(d.odds_ratio, d.odds_ratio_lower, d.odds_ratio_upper),
                f"paired, decides; {side}; {smc.statistic}:{smc.n_discordant - smc.statistic} "
                "B-only:A-only pairs over the tasks",
            ]
        )
    across += [
        [
            "exact stratified",
            _p(c.exact_pvalue),
            _or_cell(ex.odds_ratio, ex.odds_ratio_lower, ex.odds_ratio_upper),
            ("unpaired, secondary" if smc is not None else "decides")
            + f"; {side}; conditional MLE, exact interval",
        ],
        [
            "CMH",
            _p(cmh.pvalue),
            _or_cell(cmh.odds_ratio, cmh.odds_ratio_lower, cmh.odds_ratio_upper),
            f"unpaired, secondary; two-sided; corrected p = {_p(cmh.pvalue_corrected)}",
        ],
        ["Breslow-Day", _p(cmh.breslow_day_pvalue), "—", "are the odds ratios equal across tasks?"],
    ]
    rep.table(
        "Across tasks (odds ratio B vs A)",
        ["test", "p", f"odds ratio [{c.level}]", "note"],
        across,
    )
