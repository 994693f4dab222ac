"""The whole-session independence check of ``--order``, across tasks (issue 24, item 19).

:mod:`evalsim.cli._independence` checks each policy's trials per task. When tasks run in
blocks (all of task 1, then all of task 2, ...), a drift over the session (servo heating, a
worn cube) shows up as a difference between the tasks, which no per-task check can see.
This log hook (:data:`evalsim.cli._log_hooks.LOG_HOOKS`) of ``summarize`` and ``compare``
(and ``compare --by task``) adds, when the log has several tasks, the same three exact checks
on each policy's whole session in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalsim.cli import _independence
from evalsim.cli._common import Report, _p, _pct

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["apply_session_hook", "session_checks"]


def session_checks(
    df: pd.DataFrame, column: str, alpha: float, dayfirst: bool | None = None
) -> list[dict]:
    """Each policy's whole session in ``column`` order, across tasks: the three exact
    independence checks (runs, trend, halves) on its success sequence.

    Beside the per-task checks of :mod:`evalsim.cli._independence`: when tasks run in
    blocks, a drift over the session (servo heating, a worn cube) shows up as a difference
    between the tasks, which no per-task check can see. Here a policy's task mix changes
    along the session too, so a flag says "the success rate moves over the session", from
    drift or from the task order; the report says which tasks ran in which order.
    """
    from evalsim.stats.independence.checks import independence_checks

    checks_of = independence_checks
    key = _independence._order_key(df[column], column, dayfirst)
    success = df["success"].to_numpy()
    tasks = df["task"].to_numpy()
    out = []
    for policy, rows in sorted(df.groupby("policy", sort=True).indices.items()):
        order = np.argsort(key[rows], kind="stable")
        x = success[rows][order]
        seq = tasks[rows][order]
        switches = int((seq[1:] != seq[:-1]).sum())
        starts = np.flatnonzero(seq[1:] != seq[:-1]) + 1
        blocks = [str(seq[0])] + [str(seq[i]) for i in starts]
        row = {
            "policy": str(policy),
            "n": int(x.size),
            "task_switches": switches,
            "blocked": switches == len(set(seq)) - 1,
            "task_order": blocks if len(blocks) <= 12 else None,
        }
        if x.size < 4:
            row.update({"checked": False, "dependent": False})
            out.append(row)
            continue
        c = checks_of(x, alpha)
        row.update(
            {
                "checked": True,
                "runs_pvalue": c.runs.pvalue,
                "trend_pvalue": c.trend.pvalue,
                "halves": [c.halves.rate_first, c.halves.rate_second],
                "halves_pvalue": c.halves.pvalue,
                "flagged": list(c.flagged),
                "dependent": c.dependent,
            }
        )
        out.append(row)
    return out


def apply_session_hook(args, df: pd.DataFrame, rep: Report) -> None:
    """Log hook of ``summarize`` and ``compare`` (and ``compare --by task``): with
    ``--order`` and more than one task, the session-wide check of every policy."""
    cols = _independence.order_columns(args)
    if not cols or "task" not in df.columns or df["task"].nunique() < 2:
        return
    pair = (getattr(args, "a", None), getattr(args, "b", None))
    if pair[0] is not None and pair[1] is not None:
        df = df[df["policy"].isin(pair)]
        alpha = args.alpha
    else:
        alpha = 1 - args.confidence
    groups = session_checks(df, cols[0], alpha, getattr(args, "dayfirst", None))
    rep.data["session_independence"] = {"order_column": cols[0], "alpha": alpha, "groups": groups}
    rows = []
    for g in groups:
        blocks = "blocked" if g["blocked"] else f"{g['task_switches']} task switches"
        if not g["checked"]:
            rows.append([g["policy"], g["n"], blocks, "—", "—", "—", "too few trials (< 4)"])
            continue
        rows.append(
            [
                g["policy"],
                g["n"],
                blocks,
                _p(g["runs_pvalue"]),
                _p(g["trend_pvalue"]),
                f"{_pct(g['halves'][0], 0)} -> {_pct(g['halves'][1], 0)}",
                "MOVES (" + ", ".join(g["flagged"]) + ")" if g["dependent"] else "steady",
            ]
        )
    rep.table(
        f"Whole session per policy, across tasks (--order {cols[0]}; flagged below "
        f"alpha/3 = {alpha / 3:.3g})",
        ["policy", "n", "tasks", "runs p", "trend p", "1st -> 2nd half", "verdict"],
        rows,
    )
    for g in groups:
        if g["dependent"]:
            order = " -> ".join(g["task_order"]) if g["task_order"] else "many blocks"
            rep.line(
                f"warning: {g['policy']}: its success rate moves over the whole session "
                f"({', '.join(g['flagged'])}; task order {order}); with the tasks run in "
                "blocks, drift over the session and differences between tasks cannot be told "
                "apart: interleave tasks and policies"
                if g["blocked"]
                else f"warning: {g['policy']}: its success rate moves over the whole session "
                f"({', '.join(g['flagged'])}) across its tasks: look for drift (servo "
                "heating, a worn cube, resets)"
            )
