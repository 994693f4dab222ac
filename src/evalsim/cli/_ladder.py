"""``rank --ordered COLUMN``: the policies as an ordered ladder of
checkpoints -- the exact trend test across them and the first checkpoint from which no later
one is detectably better (:func:`evalsim.stats.selection.ksample.ladder_test`).

COLUMN is a log column that gives each policy one position on the ladder (a training step,
an epoch); ``policy`` orders the names themselves (naturally: ``step2`` before ``step10``).
"""

from __future__ import annotations

import math

from evalsim.answers.paired_log import condition_keys, paired_table
from evalsim.answers.rank import natural_key as _natural
from evalsim.cli._common import BadInput, Report, _p

__all__ = ["ladder_order", "ladder_report"]


def _position(value: str):
    try:
        v = float(value)
    except ValueError:
        return (1, _natural(value))
    return (0, v) if math.isfinite(v) else (1, _natural(value))


def ladder_order(df, policies, column: str) -> list[str]:
    """The policies in ladder order by ``column`` (one value per policy, or BadInput)."""
    if column == "policy":
        return sorted(policies, key=_natural)
    if column not in df.columns:
        raise BadInput(f"--ordered {column}: the log has no such column")
    pos = {}
    for p in policies:
        vals = sorted({str(v) for v in df.loc[df["policy"] == p, column]})
        if len(vals) != 1 or vals[0] == "":
            raise BadInput(
                f"--ordered {column}: policy {p!r} must have one value of {column}, got "
                f"{', '.join(vals) or 'none'}"
            )
        pos[p] = vals[0]
    return sorted(policies, key=lambda p: _position(pos[p]))


def ladder_report(df, policies, column: str, alpha: float, unpaired: bool, rep: Report) -> dict:
    """Run the ladder test on the log and add its block to ``rep``; return its JSON dict."""
    from evalsim.stats.selection.ksample import ladder_test

    order = ladder_order(df, policies, column)
    keys = [] if unpaired else condition_keys(df)
    if keys:
        table, _ = paired_table(df, order, keys)
        res = ladder_test(order, alpha, table=table)
    else:
        k = [int(df.loc[df["policy"] == p, "success"].sum()) for p in order]
        n = [int((df["policy"] == p).sum()) for p in order]
        res = ladder_test(order, alpha, k=k, n=n)
    how = (
        "paired: permutation within conditions; pairs by exact one-sided McNemar"
        if res.paired
        else "unpaired: exact conditional Cochran-Armitage; pairs by exact one-sided Fisher"
    )
    rep.table(
        f"Ladder by {column} (scores 0..{len(order) - 1}; {how}, Holm over all j < l)",
        ["test", "statistic", "p"],
        [
            ["trend, later better", res.trend_statistic, _p(res.trend_pvalue_increasing)],
            ["trend, later worse", res.trend_statistic, _p(res.trend_pvalue_decreasing)],
        ],
    )
    beaten = ", ".join(f"{a} < {b} (Holm p {_p(p)})" for a, b, p in res.later_better)
    rep.line(
        f"Plateau: from {res.plateau} on, no later checkpoint is detectably better "
        f"(alpha {alpha:g})" + (f"; detectably better later: {beaten}." if beaten else ".")
    )
    out = res.to_dict()
    out["column"] = column
    return out
