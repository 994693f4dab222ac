"""Which trials ``evalsim compare`` reads: the log, the two policies, and their pairs.

:func:`select_trials` reads the log (the small-log reader when it can, pandas otherwise) and
picks A's and B's trials; :func:`pair_trials` matches them on the log's condition key
(:func:`evalsim._log_files.pairing_key`), or says why they are analysed unpaired.
"""

from __future__ import annotations

import numpy as np

from evalsim._log_files import pairing_key
from evalsim.cli import _clusters, _independence
from evalsim.cli._common import BadInput, check_policy_pair
from evalsim.cli._reading import reading_options
from evalsim.small_logs import TrialTable, read_small_logs


def _factorize(values) -> tuple[np.ndarray, int]:
    """Codes 0, 1, ... in order of first appearance (``pandas.factorize``) and their count."""
    if isinstance(values, np.ndarray):  # a small log's column: a dict is quick enough
        first: dict = {}
        codes = np.fromiter(
            (first.setdefault(v, len(first)) for v in values.tolist()),
            dtype=np.int64,
            count=len(values),
        )
        return codes, len(first)
    import pandas as pd  # heavy: a log read with pandas is already loaded

    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64, copy=False), len(uniques)


def key_codes(a, b, keys: list[str]):
    """One int64 code per trial of A and of B for its (task, seed, condition), equal codes
    for equal keys (each column factorized over both policies, then combined)."""
    codes_a = np.zeros(len(a), dtype=np.int64)
    codes_b = np.zeros(len(b), dtype=np.int64)
    size = 1
    for col in keys:
        if isinstance(a, TrialTable):
            both = np.concatenate([a[col], b[col]])
        else:
            import pandas as pd  # heavy: a log read with pandas is already loaded

            both = pd.concat([a[col], b[col]], ignore_index=True)
        codes, n_unique = _factorize(both)
        m = max(n_unique, 1)
        if size * m >= 2**62:  # the combined code would overflow: number the key tuples
            import pandas as pd  # heavy: only for logs far beyond the small reader's

            table = pd.DataFrame(
                {k: np.concatenate([np.asarray(a[k]), np.asarray(b[k])]) for k in keys}
            )
            ids = table.groupby(keys, sort=False).ngroup().to_numpy(dtype=np.int64)
            return ids[: len(a)], ids[len(a) :]
        codes_a = codes_a * m + codes[: len(a)]
        codes_b = codes_b * m + codes[len(a) :]
        size *= m
    return codes_a, codes_b


def _pair_up(a, b, keys: list[str]):
    """Matched (success_a, success_b) arrays on shared keys (in no particular order: only their
    counts are read), or a reason why not paired."""
    if not keys:
        return None, "no condition column: unpaired analysis"
    codes_a, codes_b = key_codes(a, b, keys)
    for name, g, codes in (("A", a, codes_a), ("B", b, codes_b)):
        uniq, counts = np.unique(codes, return_counts=True)
        if (counts > 1).any():
            dup_code = uniq[np.argmax(counts > 1)]
            row = int(np.flatnonzero(codes == dup_code)[1])
            first = [np.asarray(g[k])[row] for k in keys]
            return None, (
                f"policy {name} ran {'/'.join(keys)} = {'/'.join(map(str, first))} more than "
                "once: cannot pair, unpaired analysis"
            )
    _, ia, ib = np.intersect1d(codes_a, codes_b, assume_unique=True, return_indices=True)
    if ia.size == 0:
        return None, "the two policies share no condition ids: unpaired analysis"
    return (np.asarray(a["success"])[ia], np.asarray(b["success"])[ib]), None


def select_trials(args, small: bool = True):
    """The log, the two policies' trials, and the file notes (files without conditions)."""
    order = _independence.order_columns(args)  # --order's column, kept for its log hook
    order += tuple(c for c in _clusters.cluster_columns(args) if c not in order)  # --cluster
    df = None
    options = reading_options(args)
    if small and not order:  # --order, --cluster need pandas; else a small log is read without
        df = read_small_logs(args.files, policy=args.policy, options=options)
    if df is None:
        from evalsim.trial_logs import read_trial_logs  # heavy (pandas): large, unusual logs

        df = read_trial_logs(args.files, policy=args.policy, extra_columns=order, options=options)
    if args.task is not None:
        if "task" not in df.columns:
            raise BadInput("--task given but the log has no 'task' column")
        tasks = sorted({str(t) for t in df["task"]})
        if args.task not in tasks:
            raise BadInput(f"task {args.task!r} not in the log (tasks: {', '.join(tasks)})")
        df = df[df["task"] == args.task]
    if isinstance(df, TrialTable) and _clusters.seeds_are_clusters(df):
        return select_trials(args, small=False)  # the cluster hook's per-seed tables use pandas
    policies = sorted({str(v) for v in df["policy"]})
    check_policy_pair(policies, args.a, args.b)
    return df, df[df["policy"] == args.a], df[df["policy"] == args.b]


def pair_trials(args, df, a, b):
    """(merged pairs or None, note): paired when every trial of A and B has a condition."""
    if args.unpaired:
        return None, "--unpaired given: unpaired analysis"
    if "counts" in df.attrs:  # K/N counts (compare_counts): their note says unpaired
        return None, None
    keys = pairing_key(df)
    if keys and ((a["condition"] == "").any() or (b["condition"] == "").any()):
        # both readers list their files in attrs["sources"] and refuse a blank condition, so a
        # trial without one comes from a file without the column
        no_cond = [src["path"] for src in df.attrs["sources"] if "condition" not in src["columns"]]
        return None, (
            f"{', '.join(no_cond)} has no condition column, so its trials cannot "
            "be paired: unpaired analysis of all trials"
        )
    return _pair_up(a, b, keys)
