"""``evalsim plan --p1 P --p2 P``: trials per arm to detect p1 vs p2, bench hours, MDE."""

from __future__ import annotations

import math
from statistics import NormalDist

from evalsim.cli import _tests
from evalsim.cli._common import (
    FISHER_MDE_EXACT_MAX_N,
    BadInput,
    Report,
    _open_unit,
    _paired_mde,
    _pct,
    _positive_float,
    _positive_int,
    _prob_pct,
    _probability,
    add_json_flag,
)
from evalsim.stats.names import TWO_SAMPLE_TESTS

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

#: The exact paired n is a scan upward over n (one O(n) exact power each); it runs only when
#: the normal-approximation n is at most this many pairs.
PAIRED_SCAN_MAX_N = 2000


def _given_pct(x: float) -> str:
    """A rate the user gave, in percent with the digits it was given with (0.737 -> "73.7%",
    0.8 -> "80%"; at most 4 decimals), never rounded into another rate (issue 45, item 22)."""
    for digits in range(5):
        text = f"{100 * x:.{digits}f}"
        if abs(float(text) - 100 * x) < 1e-9:
            return f"{text}%"
    return f"{100 * x:.4f}%"


def _discordant_split(p1: float, p2: float, discordance: float) -> tuple[float, float]:
    """(P(A only), P(B only)) of a pair: they differ by p1 - p2 and sum to the discordance."""
    d = p1 - p2
    if not abs(d) < discordance <= min(p1 + p2, 2.0 - p1 - p2) + 1e-12:
        raise BadInput(
            f"--discordance must be in ({abs(d):g}, {min(p1 + p2, 2 - p1 - p2):g}] for "
            f"p1 = {p1:g}, p2 = {p2:g} (the share of pairs where exactly one succeeds), "
            f"got {discordance:g}"
        )
    return (discordance + d) / 2.0, (discordance - d) / 2.0


def _mcnemar_n_exact(p10: float, p01: float, alpha: float, power: float, start: int) -> int | None:
    """Smallest number of pairs, scanning up from ``start``, whose exact McNemar power
    (``evalsim.stats.two_sample.design.mcnemar_power_exact``) reaches ``power``; None past
    :data:`PAIRED_SCAN_MAX_N`."""
    from evalsim.stats.two_sample.design import mcnemar_power_exact

    n = max(1, start)
    while mcnemar_power_exact(n, p10, p01, alpha) < power:
        n += 1
        if n > PAIRED_SCAN_MAX_N:
            return None
    return n


def cmd_plan(args) -> Report:
    p1, p2, alpha, power = args.p1, args.p2, args.alpha, args.power
    if p1 == p2:
        raise BadInput(f"--p1 and --p2 must differ (both {p1:g}): no gap to detect")
    if args.paired and args.discordance is None:
        raise BadInput(
            "--paired needs --discordance D (share of conditions where exactly one policy succeeds)"
        )
    if args.discordance is not None and not args.paired:
        raise BadInput("--discordance applies only with --paired")
    if args.paired and args.test != _tests.DEFAULT_TEST:
        raise BadInput(
            f"--test {args.test} applies to unpaired designs; a paired design is planned for the "
            "exact McNemar test"
        )
    for name, v in (("--p1", p1), ("--p2", p2)):
        if v in (0.0, 1.0):
            raise BadInput(f"{name} must be strictly between 0 and 1 for planning, got {v:g}")
    rows, notes = [], []
    if args.paired:
        p10, p01 = _discordant_split(p1, p2, args.discordance)
        from evalsim.stats.two_sample.design import paired_n

        normal = paired_n(p1, p2, discordance=args.discordance, alpha=alpha, power=power)
        n_normal = int(normal.n)
        n_exact = None
        if n_normal <= PAIRED_SCAN_MAX_N:
            n_exact = _mcnemar_n_exact(p10, p01, alpha, power, start=max(1, int(0.8 * n_normal)))
        if n_exact is None:
            notes.append(
                f"exact McNemar n not searched above {PAIRED_SCAN_MAX_N} pairs (slow); "
                "the normal approximation is close at that size"
            )
        n_first = n_exact
        unit = "pairs: each condition run by both policies"
        exact_label = "exact McNemar (first n reaching target)"
        normal_label = "Connor (1987) normal approx."
    else:
        res = _tests.plan_n(args.test, p1, p2, power, alpha)
        n_exact, n_first = int(res.n), int(res.n_first)
        from evalsim.stats.two_sample.design import n_per_arm_normal

        n_normal = int(n_per_arm_normal(p1, p2, alpha=alpha, power=power).n)
        unit = "trials per arm"
        short = TWO_SAMPLE_TESTS[args.test].short
        exact_label = f"exact {short} (power stays >= target up to n + {res.window})"
        normal_label = "normal approx. (Fleiss, no c.c.)"
        if n_first != n_exact:
            notes.append(
                f"exact {short} power is saw-toothed in n: it first reaches "
                f"{_pct(power, 0)} at n = {n_first} per arm but dips below again before "
                f"n = {n_exact}"
            )
    from evalsim.stats.two_sample.design import bench_hours

    hours_fn = bench_hours if args.minutes_per_trial else None

    def hours(n_per_arm: int | None):
        if n_per_arm is None:
            return None
        return None if hours_fn is None else float(hours_fn(2 * n_per_arm, args.minutes_per_trial))

    def h_text(n_per_arm: int | None) -> str:
        h = hours(n_per_arm)
        return "n/a" if h is None else f"{h:.1f}"

    if n_exact is None:
        rows.append([exact_label, "n/a", "n/a", "n/a"])
    else:
        rows.append([exact_label, n_exact, 2 * n_exact, h_text(n_exact)])
    rows.append([normal_label, n_normal, 2 * n_normal, h_text(n_normal)])

    mde = power_at_n = None
    at_n_method = "exact"
    if args.n is not None:
        if args.paired:
            from evalsim.stats.two_sample.design import mcnemar_power_exact

            power_at_n = float(mcnemar_power_exact(args.n, p10, p01, alpha))
            mde = _paired_mde(args.n, args.discordance, alpha, power)
        elif args.n > FISHER_MDE_EXACT_MAX_N:  # the fast path: normal approximations, labelled
            power_at_n, mde = _normal_power_mde(p1, p2, args.n, alpha, power)
            at_n_method = "normal approximation"
        else:
            power_at_n, mde = _exact_power_mde(args.test, p1, p2, args.n, alpha, power)

    data = {
        "p1": p1,
        "p2": p2,
        "alpha": alpha,
        "power": power,
        "paired": bool(args.paired),
        "test": "mcnemar" if args.paired else args.test,
        "discordance": args.discordance,
        "n_per_arm_exact": n_exact,
        "n_per_arm_exact_first": n_first,
        "n_per_arm_normal": n_normal,
        "minutes_per_trial": args.minutes_per_trial,
        "hours": hours(n_exact if n_exact is not None else n_normal),
        "n": args.n,
        "at_n_method": at_n_method if args.n is not None else None,
        "mde": mde,
        "power_at_n": power_at_n,
    }
    rep = Report(data)
    design = "paired" if args.paired else "unpaired"
    extra = f", discordance {args.discordance:g}" if args.paired else ""
    rep.line(
        f"Detect {_given_pct(p1)} vs {_given_pct(p2)} ({design}{extra}) with "
        f"{_given_pct(power)} power, "
        f"two-sided alpha = {alpha:g}"
    )
    rep.table(
        f"Sample size ({unit})",
        ["method", "n per arm", "total trials", "bench hours"],
        rows,
    )
    if args.minutes_per_trial:
        rep.line(f"bench hours at {args.minutes_per_trial:g} min per trial, both arms")
    else:
        rep.line("add --minutes-per-trial M for the bench hours")
    if args.n is not None:
        test = "exact McNemar" if args.paired else TWO_SAMPLE_TESTS[args.test].label
        if at_n_method != "exact":
            test = f"{at_n_method}: n above {FISHER_MDE_EXACT_MAX_N} per arm"
        where = (
            f"discordance {args.discordance:g}"
            if args.paired
            else f"rates centred on {(p1 + p2) / 2:.2f}"
        )
        rep.table(
            f"At n = {args.n} per arm ({test})",
            ["quantity", "value"],
            [
                [f"power to detect {_given_pct(p1)} vs {_given_pct(p2)}", _prob_pct(power_at_n)],
                [
                    f"MDE at {_given_pct(power)} power ({where})",
                    "n/a" if mde is None else f"{100 * mde:.1f} pts",
                ],
            ],
        )
    for note in notes:
        rep.line(f"note: {note}")
    return rep


def _exact_power_mde(test: str, p1: float, p2: float, n: int, alpha: float, power: float):
    """Exact power of ``test`` at n per arm, and its MDE at the mean rate (from the registry's
    rejection region of the test, built once and read by both, or Fisher's own path)."""
    from evalsim.stats.two_sample.design import mde_exact

    spec = TWO_SAMPLE_TESTS[test]
    power_at_n = float(spec.power(p1, n, p2, n, alpha))
    res = mde_exact(
        n,
        alpha=alpha,
        power=power,
        baseline=(p1 + p2) / 2,
        convention="centered",
        region=spec.region(n, n, alpha),
    )
    return power_at_n, (float(res.mde) if math.isfinite(res.mde) else None)


def _normal_power_mde(p1: float, p2: float, n: int, alpha: float, power: float):
    """Power of the two-sided two-proportion z test at n per arm, and its MDE at the mean
    rate (the fast path above :data:`FISHER_MDE_EXACT_MAX_N`, where exact Fisher and the
    normal approximation agree to well under a point)."""
    z = NormalDist()
    za, zb = z.inv_cdf(1 - alpha / 2), z.inv_cdf(power)
    se = math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
    d = abs(p2 - p1)
    pw = 1.0 if se == 0 and d > 0 else (z.cdf(d / se - za) + z.cdf(-d / se - za) if se else alpha)
    b = (p1 + p2) / 2
    return float(pw), (za + zb) * math.sqrt(2 * b * (1 - b) / n)


def register(sub) -> None:
    """Add the ``plan`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("plan", help="trials per arm to detect p1 vs p2")
    p.add_argument("--p1", type=_probability, required=True, help="success rate of A")
    p.add_argument("--p2", type=_probability, required=True, help="success rate of B")
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")
    p.add_argument("--power", type=_open_unit, default=0.8, help="default 0.8")
    p.add_argument("--paired", action="store_true", help="both policies run each condition")
    _tests.add_test_option(p)
    p.add_argument(
        "--discordance",
        type=_probability,
        help="with --paired: share of conditions where exactly one policy succeeds",
    )
    p.add_argument("--minutes-per-trial", type=_positive_float, help="bench minutes per trial")
    p.add_argument("--n", type=_positive_int, help="also: MDE and power at this n per arm")
    add_json_flag(p)
    p.set_defaults(run=cmd_plan)
