"""``evalsim compare 17/20 14/20``: two success counts as papers print them (issue 45, item 24).

Two arguments of the form ``K/N`` (and no file of that name) are the two policies' counts:
two independent samples, so the comparison is unpaired (Fisher's exact test, or ``--test``,
with the Newcombe interval), and the text answer is one line.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from evalsim.cli._common import BadInput
from evalsim.small_logs import TrialTable

__all__ = ["counts_arguments", "counts_table"]

_COUNT = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")

#: Options that need a trial log, refused with counts.
_LOG_ONLY = (("by", "--by"), ("order", "--order"), ("cluster", "--cluster"), ("task", "--task"))


def counts_arguments(files) -> list[tuple[int, int]] | None:
    """The ``K/N`` counts when every FILE argument is one (and no such file exists), else
    None (the arguments are files)."""
    found = [_COUNT.match(str(f)) for f in files]
    if not all(found) or any(Path(str(f)).exists() for f in files):
        return None
    counts = [(int(m.group(1)), int(m.group(2))) for m in found]
    if len(counts) != 2:
        raise BadInput(
            f"give two counts K/N, one per policy (A then B), got {len(counts)}: "
            + " ".join(map(str, files))
        )
    for k, n in counts:
        if n < 1:
            raise BadInput(f"{k}/{n}: a count needs at least one trial")
        if k > n:
            raise BadInput(f"{k}/{n}: {k} successes out of {n} trials")
    return counts


def counts_table(args, counts: list[tuple[int, int]]) -> TrialTable:
    """The trials the counts stand for (policy, success), labelled ``--a``/``--b`` (default
    A and B), for :func:`evalsim.cli.compare_result.compare_trials`."""
    for dest, flag in _LOG_ONLY:
        if getattr(args, dest, None) is not None:
            raise BadInput(f"{flag} needs a trial log; counts K/N carry only successes and trials")
    args.a = args.a or "A"
    args.b = args.b or "B"
    if args.a == args.b:
        raise BadInput(f"--a and --b name the same policy {args.a!r}")
    policy, success = [], []
    for name, (k, n) in zip((args.a, args.b), counts, strict=True):
        policy += [name] * n
        success += [True] * k + [False] * (n - k)
    note = (
        f"note: counts {counts[0][0]}/{counts[0][1]} and {counts[1][0]}/{counts[1][1]}: two "
        "independent samples, unpaired analysis"
    )
    return TrialTable(
        {"policy": np.array(policy, dtype=object), "success": np.array(success, dtype=bool)},
        {"sources": [], "warnings": [note], "counts": counts},
    )
