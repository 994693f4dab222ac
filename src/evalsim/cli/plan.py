"""``evalsim plan --p1 P --p2 P``: trials per arm to detect p1 vs p2, bench hours, MDE.

The command computes one :class:`~evalsim.answers.plan.Plan`
(:func:`evalsim.answers.plan.plan_comparison`) and renders it here (:func:`_report`).
"""

from __future__ import annotations

from evalsim.answers import plan as planning
from evalsim.answers.plan import Plan
from evalsim.cli import _tests
from evalsim.cli._common import (
    Report,
    _open_unit,
    _positive_float,
    _positive_int,
    _prob_pct,
    _probability,
    add_alpha_flag,
    add_json_flag,
    passed_on,
)
from evalsim.stats.names import TWO_SAMPLE_TESTS

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).


def _given_pct(x: float) -> str:
    """A rate the user gave, in percent with the digits it was given with (0.737 -> "73.7%",
    0.8 -> "80%"; at most 4 decimals), never rounded into another rate (issue 45, item 22)."""
    for digits in range(5):
        text = f"{100 * x:.{digits}f}"
        if abs(float(text) - 100 * x) < 1e-9:
            return f"{text}%"
    return f"{100 * x:.4f}%"


def cmd_plan(args) -> Report:
    plan = planning.plan_comparison(
        args.p1,
        args.p2,
        **passed_on(
            args, "alpha", "power", "paired", "discordance", "test", "minutes_per_trial", "n"
        ),
    )
    return _report(plan)


def _sample_size_rows(plan: Plan) -> tuple[str, list[list]]:
    """The unit of n, and the sample-size table's rows (exact, then normal)."""
    if plan.paired:
        unit = "pairs: each condition run by both policies"
        exact_label = "exact McNemar (first n reaching target)"
        normal_label = "Connor (1987) normal approx."
    else:
        unit = "trials per arm"
        short = TWO_SAMPLE_TESTS[plan.test].short
        exact_label = f"exact {short} (power stays >= target up to n + {plan.exact_window})"
        normal_label = "normal approx. (Fleiss, no c.c.)"

    def h_text(n_per_arm: int | None) -> str:
        h = plan.hours_at(n_per_arm)
        return "n/a" if h is None else f"{h:.1f}"

    n_exact, n_normal = plan.n_per_arm_exact, plan.n_per_arm_normal
    rows = [
        [exact_label, "n/a", "n/a", "n/a"]
        if n_exact is None
        else [exact_label, n_exact, 2 * n_exact, h_text(n_exact)],
        [normal_label, n_normal, 2 * n_normal, h_text(n_normal)],
    ]
    return unit, rows


def _report(plan: Plan) -> Report:
    """The plan as text blocks (and its dict for ``--json``)."""
    p1, p2, power = plan.p1, plan.p2, plan.power
    rep = Report(plan.to_dict())
    design = "paired" if plan.paired else "unpaired"
    extra = f", discordance {plan.discordance:g}" if plan.paired else ""
    rep.line(
        f"Detect {_given_pct(p1)} vs {_given_pct(p2)} ({design}{extra}) with "
        f"{_given_pct(power)} power, "
        f"two-sided alpha = {plan.alpha:g}"
    )
    unit, rows = _sample_size_rows(plan)
    rep.table(f"Sample size ({unit})", ["method", "n per arm", "total trials", "bench hours"], rows)
    if plan.minutes_per_trial:
        rep.line(f"bench hours at {plan.minutes_per_trial:g} min per trial, both arms")
    else:
        rep.line("add --minutes-per-trial M for the bench hours")
    if plan.n is not None:
        test = "exact McNemar" if plan.paired else TWO_SAMPLE_TESTS[plan.test].label
        if plan.at_n_method != "exact":
            test = f"{plan.at_n_method}: n above {planning.FISHER_MDE_EXACT_MAX_N} per arm"
        where = (
            f"discordance {plan.discordance:g}"
            if plan.paired
            else f"rates centred on {(p1 + p2) / 2:.2f}"
        )
        mde = "n/a" if plan.mde is None else f"{100 * plan.mde:.1f} pts"
        rep.table(
            f"At n = {plan.n} per arm ({test})",
            ["quantity", "value"],
            [
                [
                    f"power to detect {_given_pct(p1)} vs {_given_pct(p2)}",
                    _prob_pct(plan.power_at_n),
                ],
                [f"MDE at {_given_pct(power)} power ({where})", mde],
            ],
        )
    for note in plan.notes:
        rep.line(f"note: {note}")
    return rep


def register(sub) -> None:
    """Add the ``plan`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("plan", help="trials per arm to detect p1 vs p2")
    p.add_argument("--p1", type=_probability, required=True, help="success rate of A")
    p.add_argument("--p2", type=_probability, required=True, help="success rate of B")
    add_alpha_flag(p)
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
