"""K policies (checkpoints) on the conditions of a paired log: the conditions x policies 0/1
table, and the per-task discordant counts of every pair, for ``evalsim select`` and
``evalsim rank``.

A log is paired when it has a ``condition`` column (``compare``'s and ``compare --by task``'s
rule: the key of a trial's starting state is its task, its seed when the log has one, and its
condition). Then every policy must have run every condition of each task exactly once:
conditions that the policies do not share, or a condition run twice by one policy, are bad
input (a ValueError: one line, exit 2 in the command) -- never a silent fallback to
unpaired tests. ``--unpaired`` asks for the unpaired analysis explicitly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["condition_keys", "paired_table", "rank_discordant_counts"]


def condition_keys(df: pd.DataFrame) -> list[str]:
    """The columns that name a trial's starting state ([] for an unpaired log)."""
    if "condition" not in df.columns:
        return []
    return [c for c in ("task", "seed", "condition") if c in df.columns]


def _key(df: pd.DataFrame, keys: list[str]) -> pd.Series:
    out = df[keys[0]].astype(str)
    for c in keys[1:]:
        out = out + "\x1f" + df[c].astype(str)
    return out


def paired_table(df: pd.DataFrame, policies, keys: list[str]):
    """(table, condition ids): one row per condition (sorted), one 0/1 column per policy.

    Raises
    ------
    ValueError
        A condition run twice by one policy, or conditions not shared by every policy.
    """
    sub = df[df["policy"].isin(list(policies))]
    key = _key(sub, keys)
    dup = key.groupby(sub["policy"]).apply(lambda s: s.duplicated().any())
    if dup.any():
        who = str(dup[dup].index[0])
        raise ValueError(
            f"{who!r} ran a condition ({'/'.join(keys)}) more than once: the trials do not pair "
            "up; give --unpaired to treat them as independent samples"
        )
    sets = {p: set(key[sub["policy"] == p]) for p in policies}
    common = set.intersection(*sets.values())
    for p in policies:
        extra = sets[p] - common
        if extra:
            example = sorted(extra)[0].replace("\x1f", "/")
            raise ValueError(
                f"conditions not shared by every policy: {p!r} ran {len(extra)} the others "
                f"lack (e.g. {example}); pair them up or give --unpaired"
            )
    order = sorted(common)
    pos = {c: i for i, c in enumerate(order)}
    table = np.zeros((len(order), len(policies)), dtype=np.int64)
    col = {p: j for j, p in enumerate(policies)}
    rows = key.map(pos).to_numpy()
    cols = sub["policy"].map(col).to_numpy()
    table[rows, cols] = sub["success"].to_numpy(dtype=bool).astype(np.int64)
    return table, [c.replace("\x1f", "/") for c in order]


def rank_discordant_counts(df: pd.DataFrame, policies, tasks, unpaired: bool = False):
    """For ``rank``: ``{(i, j): (first_only per task, second_only per task)}`` for every
    pair of policies i < j, or None for an unpaired log (or with ``unpaired``).

    Every policy must share each task's conditions (:func:`paired_table`, per task)."""
    keys = [] if unpaired else condition_keys(df)
    if not keys:
        return None
    per_task = [paired_table(df[df["task"] == t], policies, keys)[0] for t in tasks]
    out = {}
    m = len(policies)
    for i in range(m):
        for j in range(i + 1, m):
            x = [int((tab[:, i] & (1 - tab[:, j])).sum()) for tab in per_task]
            y = [int((tab[:, j] & (1 - tab[:, i])).sum()) for tab in per_task]
            out[(i, j)] = (x, y)
    return out
