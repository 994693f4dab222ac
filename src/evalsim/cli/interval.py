"""``evalsim interval K N``: k successes out of n, every interval method of the registry."""

from __future__ import annotations

from evalsim.cli._common import (
    Report,
    _check_k_le_n,
    _count,
    _p,
    _positive_int,
    _probability,
    add_confidence_flag,
    add_json_flag,
)

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).


def cmd_interval(args) -> Report:
    _check_k_le_n(args.k, args.n)
    from evalsim.stats.proportion.intervals import REGISTRY, interval

    ivs = {
        m: interval(args.k, args.n, method=m, confidence=args.confidence).bounds() for m in REGISTRY
    }
    rate = args.k / args.n
    rep = Report({"k": args.k, "n": args.n, "rate": rate, "intervals": ivs})
    level = f"{100 * args.confidence:g}%"
    rows = [
        [REGISTRY[m].label, f"{lo:.4f}", f"{hi:.4f}", f"{hi - lo:.4f}"]
        for m, (lo, hi) in ivs.items()
    ]
    rep.line(f"k/n = {args.k}/{args.n}, rate = {rate:.4f}")
    rep.table(f"{level} confidence intervals", ["method", "lower", "upper", "width"], rows)
    notes = []
    if "wald" in ivs and (args.k in (0, args.n) or ivs["wald"][0] < 0 or ivs["wald"][1] > 1):
        notes.append("Wald is degenerate or leaves [0, 1] here; do not report it")
    if notes:
        rep.line("note: " + "; ".join(notes) + ".")
    rep.line("Report Wilson (or Clopper-Pearson when a guaranteed minimum coverage is required).")
    if args.vs is not None:
        _vs_report(rep, args.k, args.n, args.vs, ivs)
    return rep


def _vs_report(rep: Report, k: int, n: int, rate: float, ivs: dict) -> None:
    """``--vs RATE``: the exact binomial test against a stated rate, and whether the rate lies
    in each interval (issue 45, item 25)."""
    from evalsim.stats.proportion.intervals import REGISTRY
    from evalsim.stats.proportion.rate_test import rate_test

    t = rate_test(k, n, rate)
    inside = {m: bool(lo <= rate <= hi) for m, (lo, hi) in ivs.items()}
    rep.data["vs"] = {**t.to_dict(), "in_interval": inside}
    rep.line("")
    rep.line(f"Exact binomial test of {k}/{n} against the stated rate {rate:g}")
    rep.table(
        "",
        ["question", "p", "rule"],
        [
            ["rate differs from it", _p(t.pvalue_two_sided), "two-sided: " + TWO_SIDED_WORDS],
            ["rate is above it", _p(t.pvalue_greater), "one-sided: P(X >= k)"],
            ["rate is below it", _p(t.pvalue_less), "one-sided: P(X <= k)"],
        ],
    )
    ins = [REGISTRY[m].label for m, v in inside.items() if v]
    outs = [REGISTRY[m].label for m, v in inside.items() if not v]
    if ins:
        rep.line(f"{rate:g} lies inside the interval of: {', '.join(ins)}.")
    if outs:
        rep.line(f"{rate:g} lies outside the interval of: {', '.join(outs)}.")


#: The two-sided rule as the table states it.
TWO_SIDED_WORDS = "counts no more likely than k, P(X = j) <= P(X = k)(1 + 1e-7)"


def register(sub) -> None:
    """Add the ``interval`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("interval", help="k successes out of n: an interval by each method")
    p.add_argument("k", type=_count, help="number of successes")
    p.add_argument("n", type=_positive_int, help="number of trials")
    add_confidence_flag(p)
    p.add_argument(
        "--vs",
        type=_probability,
        metavar="RATE",
        help="also test k/n against this stated rate (exact binomial test, two-sided and "
        "one-sided) and say whether it lies in each interval",
    )
    add_json_flag(p)
    p.set_defaults(run=cmd_interval)
