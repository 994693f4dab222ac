"""``evalsim summarize FILE ...``: per-policy success rates of a trial log."""

from __future__ import annotations

import numpy as np

from evalsim.cli import _clusters, _independence
from evalsim.cli._common import (
    BadInput,
    Report,
    _ci_pct,
    _interval_pair,
    _open_unit,
    _pct,
    _plural,
    _pts,
    add_format_flags,
    check_plot_path,
    plot_rates,
)
from evalsim.cli._log_hooks import add_log_hook_flags, apply_log_hooks
from evalsim.cli._reading import add_reading_flags, reading_options
from evalsim.small_logs import TrialTable, read_small_logs

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

#: summarize warns when the Wilson interval's half-width, (upper - lower) / 2, exceeds this:
#: a rate printed as "70%" is read as good to about +/-10 points, and at n = 20 it is not.
PRECISION_HALF_WIDTH = 0.10


def _rate_row(k: int, n: int, confidence: float) -> dict:
    from evalsim.stats.proportion.intervals import clopper_pearson_interval, wilson_interval

    wilson = wilson_interval(k, n, confidence=confidence)
    cp = clopper_pearson_interval(k, n, confidence=confidence)
    w = _interval_pair(wilson)
    return {
        "k": int(k),
        "n": int(n),
        "rate": k / n,
        "wilson": w,
        "clopper_pearson": _interval_pair(cp),
        "half_width": (w[1] - w[0]) / 2,
    }


def _trials_for(rate: float, half_width: float, confidence: float) -> tuple[int, int] | None:
    """(first n, n from which it holds for good) for a Wilson half-width of ``half_width`` at
    ``rate`` (:func:`evalsim.stats.proportion.budget.half_width_budget`, table D's two columns);
    None
    where the budget is not defined."""
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
    pts, lim = 100 * half_width, 100 * limit
    for digits in range(4):
        if round(pts, digits) > round(lim, digits):
            return f"{pts:.{digits}f}"
    return f"{pts:.3f}"


def _group_rows(df, keys: list[str], confidence: float, max_hw: float) -> list[dict]:
    rows = []
    for values, k, n in _group_counts(df, keys):
        row = dict(zip(keys, values, strict=True))
        row.update(_rate_row(k, n, confidence))
        row["imprecise"] = row["half_width"] > max_hw
        rows.append(row)
    # Seeds 2 before 10: numeric-looking ids sort as numbers.
    rows.sort(key=lambda r: tuple(_natural(r[k]) for k in keys))
    return rows


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
        row = {"group": group, "policy": policy, **_rate_row(k, n, confidence)}
        row["imprecise"] = row["half_width"] > max_hw
        rows.append(row)
    return rows


def _natural(value) -> tuple:
    text = str(value)
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


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


def _by_column(df, column: str) -> dict:
    """k/n of every policy at every value of ``column`` (e.g. which conditions fail for whom)."""
    if column not in df.columns:
        raise BadInput(
            f"--by {column!r} is not a column of the log (columns: {', '.join(df.columns)})"
        )
    if column == "policy":
        raise BadInput("--by policy is the default table; give another column, e.g. condition")
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


def cmd_summarize(args) -> Report:
    check_plot_path(args.plot, args.force)
    order = _independence.order_columns(args)  # --order's column, kept for its log hook
    order += tuple(c for c in _clusters.cluster_columns(args) if c not in order)  # --cluster
    df = None
    options = reading_options(args)
    if not order and not args.by:  # the options that need pandas; else a small log without it
        df = read_small_logs(args.files, policy=args.policy, options=options)
        if df is not None and _clusters.seeds_are_clusters(df):
            df = None  # the per-seed tables of the cluster hook use pandas
    if df is None:
        from evalsim.trial_logs import read_trial_logs  # heavy (pandas): large or unusual logs

        df = read_trial_logs(args.files, policy=args.policy, extra_columns=order, options=options)
    by = _by_column(df, args.by) if args.by else None
    conf, max_hw = args.confidence, args.max_half_width
    level = f"{100 * conf:g}%"
    by_policy = _group_rows(df, ["policy"], conf, max_hw)
    sub_keys = [c for c in ("task", "seed") if c in df.columns]
    by_group = _group_rows(df, ["policy", *sub_keys], conf, max_hw) if sub_keys else None
    failures = _failure_breakdown(df) if "failure" in df.columns else None
    task_groups = task_group_rows(df, conf, max_hw)

    warnings = list(df.attrs.get("warnings", []))
    for r in by_policy:
        if r["imprecise"]:
            need = _trials_for(r["rate"], max_hw, conf)
            needed = ""
            if need:
                first, stays = need
                needed = (
                    f"; the first n that gives +/-{100 * max_hw:g} is {first}, and it holds "
                    f"for good from n = {stays}"
                )
            warnings.append(
                f"warning: {r['policy']}: n = {r['n']} gives a {level} Wilson interval of "
                f"+/-{points_above(r['half_width'], max_hw)} points, wider than the "
                f"+/-{100 * max_hw:g} a "
                f"reader would assume from '{_pct(r['rate'], 0)}'{needed}"
            )
        if r["k"] in (0, r["n"]):
            lo, hi = r["wilson"]
            bound = f"as low as {_pct(lo)}" if r["k"] else f"as high as {_pct(hi)}"
            warnings.append(
                f"note: {r['policy']}: {r['k']}/{r['n']} has a one-sided interval; the rate "
                f"could be {bound} ({level} Wilson)"
            )
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

    data = {
        "files": list(args.files),
        "n_trials": len(df),
        "confidence": conf,
        "max_half_width": max_hw,
        "by_policy": [{k: v for k, v in r.items()} for r in by_policy],
        "by_group": by_group,
        "group_keys": ["policy", *sub_keys] if sub_keys else None,
        "task_groups": task_groups,
        "failures": failures,
        "by": by,
        "warnings": warnings,
    }
    rep = Report(data)
    rep.line(
        f"{_plural(len(df), 'trial')}, {_plural(len(by_policy), 'policy')} "
        f"({', '.join(args.files)})"
    )
    headers = ["k/n", "rate", f"Wilson {level}", f"Clopper-Pearson {level}", "+/-"]

    def cells(r):
        return [
            f"{r['k']}/{r['n']}",
            _pct(r["rate"]),
            _ci_pct(*r["wilson"]),
            _ci_pct(*r["clopper_pearson"]),
            f"{points_above(r['half_width'], max_hw)} pts !"
            if r["imprecise"]
            else _pts(r["half_width"]),
        ]

    rep.table("By policy", ["policy", *headers], [[r["policy"], *cells(r)] for r in by_policy])
    if by_group:
        rep.table(
            f"By {' x '.join(['policy', *sub_keys])}",
            ["policy", *sub_keys, *headers],
            [[r["policy"], *[r[c] for c in sub_keys], *cells(r)] for r in by_group],
        )
    if task_groups:
        rep.table(
            "By task group (LeRobot per_group)",
            ["group", "policy", *headers],
            [[r["group"], r["policy"], *cells(r)] for r in task_groups],
        )
    if failures is not None:
        rows = []
        for r in by_policy:
            fails = failures.get(r["policy"], {})
            n_fail = r["n"] - r["k"]
            for mode, count in sorted(fails.items(), key=lambda kv: (-kv[1], kv[0])):
                rows.append(
                    [r["policy"], mode, count, _pct(count / n_fail, 0), _pct(count / r["n"])]
                )
        if rows:
            rep.table(
                "Failure breakdown",
                ["policy", "failure", "count", "of failures", "of trials"],
                rows,
            )
    if by is not None:
        table_rows = []
        for r in by["rows"]:
            cells = []
            for pol in by["policies"]:
                c = r["policies"].get(pol)
                if c is None:
                    cells.append("-")
                else:
                    mark = " x" if c["k"] == 0 else ""
                    cells.append(f"{c['k']}/{c['n']}{mark}")
            table_rows.append([r["value"], *cells])
        rep.table(
            f"By {by['column']} (successes/trials; x = never succeeded)",
            [by["column"], *by["policies"]],
            table_rows,
        )
    if not isinstance(df, TrialTable):  # a small-log table has no hook to run (see above)
        apply_log_hooks(args, df, rep)
    if args.plot:
        plot_rates(
            [
                {
                    "label": r["policy"],
                    "rate": r["rate"],
                    "lower": r["wilson"][0],
                    "upper": r["wilson"][1],
                }
                for r in by_policy
            ],
            args.plot,
            "Success rate by policy",
            conf,
        )
    rep.line(
        f"'+/-' is half the Wilson interval's width; '!' marks more than "
        f"+/-{100 * max_hw:g} points."
    )
    for w in warnings:
        rep.line(w)
    return rep


def register(sub) -> None:
    """Add the ``summarize`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("summarize", help="per-policy success rates of a trial log")
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log; PATH=NAME"
    )
    p.add_argument("--confidence", type=_open_unit, default=0.95, help="default 0.95")
    p.add_argument(
        "--max-half-width",
        type=_open_unit,
        default=PRECISION_HALF_WIDTH,
        help="warn when the Wilson interval's half-width exceeds this (default 0.10)",
    )
    p.add_argument("--policy", help="policy name for a LeRobot JSON log (default: its folder)")
    p.add_argument(
        "--by",
        metavar="COLUMN",
        help="also list every policy's k/n at each value of COLUMN (e.g. condition)",
    )
    add_format_flags(p)
    add_log_hook_flags(p)
    add_reading_flags(p)
    p.set_defaults(run=cmd_summarize)
