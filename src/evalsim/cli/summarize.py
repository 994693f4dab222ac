"""``evalsim summarize FILE ...``: per-policy success rates of a trial log."""

from __future__ import annotations

from evalsim.cli import _independence
from evalsim.cli._common import (
    MissingLibrary,
    Report,
    _ci_pct,
    _interval_pair,
    _lib,
    _open_unit,
    _pct,
    add_json_flag,
)
from evalsim.trial_logs import read_trial_logs

#: summarize warns when the Wilson interval's half-width, (upper - lower) / 2, exceeds this:
#: a rate printed as "70%" is read as good to about +/-10 points, and at n = 20 it is not.
PRECISION_HALF_WIDTH = 0.10


def _rate_row(k: int, n: int, confidence: float) -> dict:
    wilson = _lib("intervals", "wilson_interval")(k, n, confidence=confidence)
    cp = _lib("intervals", "clopper_pearson_interval")(k, n, confidence=confidence)
    w = _interval_pair(wilson)
    return {
        "k": int(k),
        "n": int(n),
        "rate": k / n,
        "wilson": w,
        "clopper_pearson": _interval_pair(cp),
        "half_width": (w[1] - w[0]) / 2,
    }


def _trials_for(rate: float, half_width: float, confidence: float) -> int | None:
    """n for a Wilson half-width of ``half_width`` at ``rate``, or None if unavailable."""
    try:
        fn = _lib("budget", "trials_for_half_width")
    except MissingLibrary:
        return None
    try:
        return int(fn(rate, half_width, confidence=confidence))
    except ValueError:  # e.g. a rate of exactly 0 or 1, where the budget is not defined
        return None


def _group_rows(df, keys: list[str], confidence: float, max_hw: float) -> list[dict]:
    rows = []
    for values, g in df.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        row = dict(zip(keys, values, strict=True))
        row.update(_rate_row(int(g["success"].sum()), len(g), confidence))
        row["imprecise"] = row["half_width"] > max_hw
        rows.append(row)
    # Seeds 2 before 10: numeric-looking ids sort as numbers.
    rows.sort(key=lambda r: tuple(_natural(r[k]) for k in keys))
    return rows


def _natural(value) -> tuple:
    text = str(value)
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def _failure_breakdown(df) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for policy, g in df.groupby("policy", sort=True):
        # A failed trial whose failure is blank or "none" has no failure mode recorded.
        failed = g.loc[~g["success"], "failure"].replace(
            {"": "(unlabelled)", "none": "(unlabelled)"}
        )
        out[policy] = {str(k): int(v) for k, v in failed.value_counts().sort_index().items()}
    return out


def cmd_summarize(args) -> Report:
    order = _independence.order_columns(args)
    df = read_trial_logs(args.files, policy=args.policy, extra_columns=order)
    conf, max_hw = args.confidence, args.max_half_width
    level = f"{100 * conf:g}%"
    by_policy = _group_rows(df, ["policy"], conf, max_hw)
    sub_keys = [c for c in ("task", "seed") if c in df.columns]
    by_group = _group_rows(df, ["policy", *sub_keys], conf, max_hw) if sub_keys else None
    failures = _failure_breakdown(df) if "failure" in df.columns else None

    warnings = []
    for r in by_policy:
        if r["imprecise"]:
            need = _trials_for(r["rate"], max_hw, conf)
            needed = f"; about {need} trials would give +/-{100 * max_hw:g}" if need else ""
            warnings.append(
                f"warning: {r['policy']}: n = {r['n']} gives a {level} Wilson interval of "
                f"+/-{100 * r['half_width']:.0f} points, wider than the +/-{100 * max_hw:g} a "
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
        odd = int((df["success"] & ~df["failure"].isin(["", "none"])).sum())
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
        "failures": failures,
        "warnings": warnings,
    }
    rep = Report(data)
    rep.line(f"{len(df)} trials, {len(by_policy)} policies ({', '.join(args.files)})")
    headers = ["k/n", "rate", f"Wilson {level}", f"Clopper-Pearson {level}", "+/-"]

    def cells(r):
        return [
            f"{r['k']}/{r['n']}",
            _pct(r["rate"]),
            _ci_pct(*r["wilson"]),
            _ci_pct(*r["clopper_pearson"]),
            f"{100 * r['half_width']:.0f} pts" + (" !" if r["imprecise"] else ""),
        ]

    rep.table("By policy", ["policy", *headers], [[r["policy"], *cells(r)] for r in by_policy])
    if by_group:
        rep.table(
            f"By {' x '.join(['policy', *sub_keys])}",
            ["policy", *sub_keys, *headers],
            [[r["policy"], *[r[c] for c in sub_keys], *cells(r)] for r in by_group],
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
    rep.line(
        f"'+/-' is half the Wilson interval's width; '!' marks more than "
        f"+/-{100 * max_hw:g} points."
    )
    for w in warnings:
        rep.line(w)
    _independence.add_report(rep, df, args, alpha=1 - conf)
    return rep


def register(sub) -> None:
    """Add the ``summarize`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("summarize", help="per-policy success rates of a trial log")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log")
    p.add_argument("--confidence", type=_open_unit, default=0.95, help="default 0.95")
    p.add_argument(
        "--max-half-width",
        type=_open_unit,
        default=PRECISION_HALF_WIDTH,
        help="warn when the Wilson interval's half-width exceeds this (default 0.10)",
    )
    p.add_argument("--policy", help="policy name for a LeRobot JSON log (default: its folder)")
    _independence.add_order_argument(p)
    add_json_flag(p)
    p.set_defaults(run=cmd_summarize)
