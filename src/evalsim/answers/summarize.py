"""The answer of ``evalsim summarize``: per-policy success rates of a trial table, with their
Wilson and Clopper-Pearson intervals, per-group and per-column tables, the failure breakdown
and the warnings a reader needs (:func:`summarize_trials` -> :class:`RateSummary`).

References
----------
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
JASA 22(158), 209-212. Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or
fiducial limits illustrated in the case of the binomial. Biometrika 26(4), 404-413.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalsim._records import record
from evalsim.answers._format import pct
from evalsim.small_logs import TrialTable

#: summarize warns when the Wilson interval's half-width, (upper - lower) / 2, exceeds this:
#: a rate printed as "70%" is read as good to about +/-10 points, and at n = 20 it is not.
PRECISION_HALF_WIDTH = 0.10


@dataclass(frozen=True)
class RateSummary:
    """What ``summarize`` found in a trial table.

    Attributes
    ----------
    files : tuple of str
        The logs read, as given.
    n_trials : int
        Trials in the table.
    confidence, max_half_width : float
        Level of the intervals; the Wilson half-width above which a rate is flagged.
    by_policy : tuple of dict
        One row per policy: k, n, rate, wilson and clopper_pearson [lower, upper],
        half_width, imprecise.
    by_group, task_groups : tuple of dict or None
        The same rows per policy x task x seed (``group_keys``), and per LeRobot task group.
    group_keys : tuple of str or None
    failures : dict or None
        Failure mode -> count, per policy (None without a failure column).
    by : dict or None
        k/n of every policy at every value of the ``by`` column.
    warnings : tuple of str
        The notes and warnings, in the order they are printed.
    """

    files: tuple
    n_trials: int
    confidence: float
    max_half_width: float
    by_policy: tuple
    by_group: tuple | None
    group_keys: tuple | None
    task_groups: tuple | None
    failures: dict | None
    by: dict | None
    warnings: tuple

    @property
    def level(self) -> str:
        """The confidence level as printed ("95%")."""
        return f"{100 * self.confidence:g}%"

    def to_dict(self) -> dict:
        """The JSON record of ``summarize --json`` (plain lists and dicts)."""
        out = record(self)
        out["by_policy"] = [dict(r) for r in self.by_policy]
        return out


def rate_row(k: int, n: int, confidence: float) -> dict:
    """k/n with its Wilson and Clopper-Pearson intervals and the Wilson half-width."""
    from evalsim.stats.proportion.intervals import clopper_pearson_interval, wilson_interval

    w = wilson_interval(k, n, confidence=confidence).bounds()
    return {
        "k": int(k),
        "n": int(n),
        "rate": k / n,
        "wilson": w,
        "clopper_pearson": clopper_pearson_interval(k, n, confidence=confidence).bounds(),
        "half_width": (w[1] - w[0]) / 2,
    }


def trials_for(rate: float, half_width: float, confidence: float) -> tuple[int, int] | None:
    """(first n, n from which it holds for good) for a Wilson half-width of ``half_width`` at
    ``rate`` (:func:`evalsim.stats.proportion.budget.half_width_budget`, table D's two
    columns); None where the budget is not defined."""
    from evalsim.stats.proportion.budget import half_width_budget

    try:
        res = half_width_budget(rate, half_width, confidence=confidence)
    except ValueError:  # e.g. a rate of exactly 0 or 1, where the budget is not defined
        return None
    return int(res.first_n), int(res.stays_below_from)


def points_above(half_width: float, limit: float) -> str:
    """A half-width in points, printed with the digits that show it exceeds ``limit``.

    Issue 45, item 20: 10.44 points printed "+/-10" beside a "+/-10" threshold read as
    equal; the fewest decimals (up to 3) at which the printed half-width is larger than the
    printed limit are used, so the comparison holds as the reader sees it.
    """
    points, lim = 100 * half_width, 100 * limit
    for digits in range(4):
        if round(points, digits) > round(lim, digits):
            return f"{points:.{digits}f}"
    return f"{points:.3f}"


def _natural(value) -> tuple:
    text = str(value)
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def _group_counts(df, keys: list[str]) -> list[tuple[tuple, int, int]]:
    """(values of ``keys``, successes, trials) of every group, in pandas' sorted order."""
    if isinstance(df, TrialTable):
        counts: dict[tuple, list[int]] = {}
        columns = [df[k].tolist() for k in keys]
        for values, ok in zip(zip(*columns, strict=True), df["success"].tolist(), strict=True):
            kn = counts.setdefault(values, [0, 0])
            kn[0] += ok
            kn[1] += 1
        return [(values, k, n) for values, (k, n) in sorted(counts.items())]
    out = []
    for values, g in df.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        out.append((values, int(g["success"].sum()), len(g)))
    return out


def _group_rows(df, keys: list[str], confidence: float, max_hw: float) -> list[dict]:
    rows = []
    for values, k, n in _group_counts(df, keys):
        row = dict(zip(keys, values, strict=True))
        row.update(rate_row(k, n, confidence))
        row["imprecise"] = row["half_width"] > max_hw
        rows.append(row)
    # Seeds 2 before 10: numeric-looking ids sort as numbers.
    rows.sort(key=lambda r: tuple(_natural(r[k]) for k in keys))
    return rows


def task_group_rows(df, confidence: float, max_hw: float) -> list[dict] | None:
    """k/n of every policy in every LeRobot task group (``per_group``; issue 45, item 23),
    from the task -> group map the reader keeps in ``attrs["task_groups"]``; None without."""
    groups = df.attrs.get("task_groups")
    if not groups or "task" not in df.columns:
        return None
    counts: dict[tuple[str, str], list[int]] = {}
    for policy, task, ok in zip(
        df["policy"].tolist(), df["task"].tolist(), df["success"].tolist(), strict=True
    ):
        if task in groups:
            kn = counts.setdefault((groups[task], policy), [0, 0])
            kn[0] += bool(ok)
            kn[1] += 1
    rows = []
    for (group, policy), (k, n) in sorted(counts.items()):
        row = {"group": group, "policy": policy, **rate_row(k, n, confidence)}
        row["imprecise"] = row["half_width"] > max_hw
        rows.append(row)
    return rows


def _failure_breakdown(df) -> dict[str, dict[str, int]]:
    if isinstance(df, TrialTable):
        modes: dict[str, dict[str, int]] = {p: {} for p in sorted(set(df["policy"].tolist()))}
        failed = ~df["success"]
        for policy, mode in zip(df["policy"][failed], df["failure"][failed], strict=True):
            mode = "(unlabelled)" if mode in ("", "none") else mode
            modes[policy][mode] = modes[policy].get(mode, 0) + 1
        return {p: dict(sorted(m.items())) for p, m in modes.items()}
    out: dict[str, dict[str, int]] = {}
    for policy, g in df.groupby("policy", sort=True):
        # A failed trial whose failure is blank or "none" has no failure mode recorded.
        failed = g.loc[~g["success"], "failure"].replace(
            {"": "(unlabelled)", "none": "(unlabelled)"}
        )
        out[policy] = {str(k): int(v) for k, v in failed.value_counts().sort_index().items()}
    return out


def _successes_with_failure(df) -> int:
    """Successful trials that also name a failure mode."""
    if isinstance(df, TrialTable):
        named = np.array([f not in ("", "none") for f in df["failure"].tolist()], dtype=bool)
        return int((df["success"] & named).sum())
    return int((df["success"] & ~df["failure"].isin(["", "none"])).sum())


def by_column(df, column: str) -> dict:
    """k/n of every policy at every value of ``column`` (e.g. which conditions fail for whom).

    Raises
    ------
    ValueError
        ``column`` is not a column of the table, or is ``policy``.
    """
    if column not in df.columns:
        raise ValueError(
            f"--by {column!r} is not a column of the log (columns: {', '.join(df.columns)})"
        )
    if column == "policy":
        raise ValueError("--by policy is the default table; give another column, e.g. condition")
    policies = sorted(str(v) for v in df["policy"].unique())
    counts = df.groupby([column, "policy"], sort=False)["success"].agg(["sum", "count"])
    values = sorted((str(v) for v in df[column].unique()), key=_natural)
    rows = []
    for v in values:
        cells = {}
        for pol in policies:
            key = (v, pol)
            if key in counts.index:
                k, n = (int(x) for x in counts.loc[key])
                cells[pol] = {"k": k, "n": n}
        rows.append({"value": v, "policies": cells})
    return {"column": column, "policies": policies, "rows": rows}


def _policy_warnings(r: dict, level: str, max_hw: float, confidence: float) -> list[str]:
    out = []
    if r["imprecise"]:
        need = trials_for(r["rate"], max_hw, confidence)
        needed = ""
        if need:
            first, stays = need
            needed = (
                f"; the first n that gives +/-{100 * max_hw:g} is {first}, and it holds "
                f"for good from n = {stays}"
            )
        out.append(
            f"warning: {r['policy']}: n = {r['n']} gives a {level} Wilson interval of "
            f"+/-{points_above(r['half_width'], max_hw)} points, wider than the "
            f"+/-{100 * max_hw:g} a "
            f"reader would assume from '{pct(r['rate'], 0)}'{needed}"
        )
    if r["k"] in (0, r["n"]):
        lo, hi = r["wilson"]
        bound = f"as low as {pct(lo)}" if r["k"] else f"as high as {pct(hi)}"
        out.append(
            f"note: {r['policy']}: {r['k']}/{r['n']} has a one-sided interval; the rate "
            f"could be {bound} ({level} Wilson)"
        )
    return out


def summarize_trials(
    df,
    *,
    files=(),
    confidence: float = 0.95,
    max_half_width: float = PRECISION_HALF_WIDTH,
    by: str | None = None,
) -> RateSummary:
    """Per-policy success rates of a trial table, and what a reader should know about them.

    Parameters
    ----------
    df : pandas.DataFrame or evalsim.small_logs.TrialTable
        The trials (``policy``, ``success``; optional ``task``, ``seed``, ``failure``), as
        :func:`evalsim.trial_logs.read_trial_logs` or
        :func:`evalsim.small_logs.read_small_logs` return them.
    files : sequence of str
        The logs' names, for the record.
    confidence : float
        Level of the Wilson and Clopper-Pearson intervals.
    max_half_width : float
        A Wilson half-width above this is flagged, with the n that would reach it.
    by : str, optional
        Also tabulate every policy's k/n at each value of this column.

    Returns
    -------
    RateSummary
    """
    by_table = by_column(df, by) if by else None
    conf, max_hw = confidence, max_half_width
    level = f"{100 * conf:g}%"
    by_policy = _group_rows(df, ["policy"], conf, max_hw)
    sub_keys = [c for c in ("task", "seed") if c in df.columns]
    by_group = _group_rows(df, ["policy", *sub_keys], conf, max_hw) if sub_keys else None
    failures = _failure_breakdown(df) if "failure" in df.columns else None
    task_groups = task_group_rows(df, conf, max_hw)

    warnings = list(df.attrs.get("warnings", []))
    for r in by_policy:
        warnings += _policy_warnings(r, level, max_hw, conf)
    if by_group:
        bad = [r for r in by_group if r["imprecise"]]
        if bad:
            warnings.append(
                f"warning: {len(bad)} of {len(by_group)} {' x '.join(['policy', *sub_keys])} "
                f"cells have a Wilson half-width above +/-{100 * max_hw:g} points "
                f"(smallest n = {min(r['n'] for r in bad)}); read them as rough"
            )
    if "failure" in df.columns:
        odd = _successes_with_failure(df)
        if odd:
            warnings.append(f"warning: {odd} successful trial(s) also name a failure mode")
    return RateSummary(
        files=tuple(files),
        n_trials=len(df),
        confidence=conf,
        max_half_width=max_hw,
        by_policy=tuple(by_policy),
        by_group=None if by_group is None else tuple(by_group),
        group_keys=("policy", *sub_keys) if sub_keys else None,
        task_groups=None if task_groups is None else tuple(task_groups),
        failures=failures,
        by=by_table,
        warnings=tuple(warnings),
    )
