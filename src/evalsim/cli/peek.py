"""``evalsim peek --n N``: the false-win rate of looking at the results repeatedly."""

from __future__ import annotations

from evalsim.cli._common import (
    BadInput,
    Report,
    _looks,
    _pct,
    _positive_int,
    _probability,
    add_alpha_flag,
    add_json_flag,
)

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

#: Largest --n: the exact false-win rate tracks every (k_A, k_B) state, O(n^2) memory and
#: O(n^2) work per look (n = 2000 is 32 MB); above it the command refuses (at 100000 it ran
#: out of memory).
PEEK_MAX_N = 2000


def cmd_peek(args) -> Report:
    if args.n > PEEK_MAX_N:
        raise BadInput(
            f"--n {args.n} is above the limit {PEEK_MAX_N} of the exact computation "
            "(O(n^2) states); the false-win rate of peeking only grows with more looks"
        )
    if args.discordance is not None and not args.paired:
        raise BadInput("--discordance applies only with --paired")
    if args.paired:
        return _peek_paired(args)
    from evalsim.stats.sequential.peeking import false_win_rate_exact

    res = false_win_rate_exact(args.n, p=args.p, alpha=args.alpha, looks=args.looks)
    rep, sizes, peeked, fixed = _report(res, {"n": args.n, "p": args.p}, args.alpha)
    schedule, shown = _schedule_text(args.looks, sizes, "trial pair")
    rep.line(
        f"Two equally good policies (true rate {_pct(args.p, 0)} each), up to {args.n} trials "
        f"per arm; stop and declare a winner the first time Fisher p < {args.alpha:g}"
    )
    rep.line(f"looks at n per arm = {shown}")
    _false_win_table(rep, "exact", schedule, sizes, peeked, fixed, f"n = {args.n}")
    rep.line(
        "Testing once is below alpha because Fisher's test is conservative; each extra look "
        "adds chances to stop on noise."
    )
    _instead(rep, args, paired=False)
    return rep


#: Largest n for which peek also prices the anytime test and the optimal design.
INSTEAD_MAX_N = 300


def _instead(rep, args, paired: bool) -> None:
    """What stopping validly costs instead: the anytime e-process and the optimal design.

    At B's rate ``--vs`` (default p + 0.2, at most 0.95; paired: outcomes of a pair
    independent given the condition), exact: the anytime test's false-win rate at n and its
    expected trials, and the optimal paired design's (power 0.8, n_max = n).
    """
    if args.n > INSTEAD_MAX_N:
        rep.line(
            f"(valid alternatives are priced up to n = {INSTEAD_MAX_N}: see evalsim "
            "sequential design --family anytime / optimal)"
        )
        return
    from evalsim.stats.sequential.anytime import paired_anytime_design, unpaired_anytime_design
    from evalsim.stats.sequential.designs import operating_characteristics, type1_curve
    from evalsim.stats.sequential.optimal import optimal_paired_design

    p_a = args.p
    p_b = args.vs if args.vs is not None else min(p_a + 0.2, 0.95)
    if p_b <= p_a:
        raise BadInput(f"--vs (B's better rate) must be above --p {p_a:g}, got {p_b:g}")
    unit = "pairs" if paired else "trials per arm"
    rows = []
    data = {"vs": p_b}
    if paired:
        anytime = paired_anytime_design(args.alpha, args.n, certify=False)
    else:
        anytime = unpaired_anytime_design(args.alpha, args.n)
    fw = float(type1_curve(anytime, [p_a])[0])
    oc = operating_characteristics(anytime, p_a, p_b)
    rows.append(
        ["anytime e-process (stop whenever)", _pct(fw, 2), _pct(oc.power, 1), f"{oc.ess:.1f}"]
    )
    data["anytime"] = {"false_win_rate": fw, "power": oc.power, "ess": oc.ess}
    try:
        opt = optimal_paired_design(p_a, p_b, args.alpha, 0.8, args.n).design
        o = operating_characteristics(opt, p_a, p_b)
        cert = opt.certificate.upper
        rows.append(
            ["optimal paired design (power 0.8)", _pct(cert, 2), _pct(o.power, 1), f"{o.ess:.1f}"]
        )
        data["optimal"] = {"false_win_rate_max": cert, "power": o.power, "ess": o.ess}
    except ValueError:
        rows.append(["optimal paired design (power 0.8)", "n/a", "below 80%", "n/a"])
        data["optimal"] = None
    rep.data["instead"] = data
    rep.table(
        f"Instead, valid at any stop (B at {_pct(p_b, 0)}, exact)",
        ["rule", "false-win rate", "power", f"expected {unit}"],
        rows,
    )


def _false_win_table(rep, kind, schedule, sizes, peeked, fixed, once_at) -> None:
    """The table of both subcommand modes: peeking on ``schedule`` vs testing once."""
    rep.table(
        f"Probability of a false win ({kind})",
        ["schedule", "looks", "false-win rate", "vs once"],
        [
            [
                f"peek: {schedule}",
                len(sizes),
                _pct(peeked, 2),
                "n/a" if fixed == 0 else f"x{peeked / fixed:.1f}",
            ],
            [f"test once at {once_at}", 1, _pct(fixed, 2), "x1.0"],
        ],
    )


def _report(res, head: dict, alpha: float) -> tuple[Report, list[int], float, float]:
    """The report of a peeking result, its JSON keys after ``head``.

    Parameters
    ----------
    res : PeekingResult
        The exact false-win rates (:mod:`evalsim.stats.sequential.peeking`).
    head : dict
        The first JSON keys (the design's inputs).
    alpha : float
        The level of each look's test.

    Returns
    -------
    tuple of (Report, list of int, float, float)
        The report, the look sizes, the false-win rate with peeking and when testing once.
    """
    sizes = list(res.look_sizes)
    fixed, peeked = float(res.fixed_rate), float(res.false_win_rate)
    data = {
        **head,
        "alpha": alpha,
        "look_sizes": sizes,
        "false_win_rate_exact": peeked,
        "false_win_rate_fixed": fixed,
        "inflation": peeked / fixed if fixed > 0 else None,
    }
    return Report(data), sizes, peeked, fixed


def _schedule_text(looks, sizes, unit: str) -> tuple[str, str]:
    if looks == "every":
        schedule = f"after every {unit} ({len(sizes)} looks)"
    elif isinstance(looks, int):
        schedule = f"{len(sizes)} equally spaced looks"
    else:
        schedule = f"{len(sizes)} looks"
    shown = (
        ", ".join(map(str, sizes))
        if len(sizes) <= 12
        else (", ".join(map(str, sizes[:5])) + ", ..., " + ", ".join(map(str, sizes[-2:])))
    )
    return schedule, shown


def _peek_paired(args) -> Report:
    """Both policies on the same conditions, exact McNemar at every look."""
    disc = args.discordance
    if disc is None:
        raise BadInput(
            "--paired needs --discordance D (share of conditions where exactly one policy "
            "succeeds; e.g. 0.3)"
        )
    if not 0.0 < disc <= 1.0:
        raise BadInput(f"--discordance must be in (0, 1] for a paired design, got {disc:g}")
    from evalsim.stats.sequential.peeking import sequential_mcnemar_probability

    res = sequential_mcnemar_probability(
        args.n, disc / 2, disc / 2, alpha=args.alpha, looks=args.looks
    )
    head = {"paired": True, "n": args.n, "discordance": disc}
    rep, sizes, peeked, fixed = _report(res, head, args.alpha)
    schedule, shown = _schedule_text(args.looks, sizes, "pair")
    rep.line(
        f"Two equally good policies run on the same conditions, up to {args.n} pairs; in "
        f"{_pct(disc, 0)} of pairs exactly one succeeds (each policy half the time); stop and "
        f"declare a winner the first time the exact McNemar p < {args.alpha:g}"
    )
    rep.line(f"looks at n pairs = {shown}")
    _false_win_table(
        rep, "exact, paired McNemar design", schedule, sizes, peeked, fixed, f"n = {args.n} pairs"
    )
    rep.line(
        "Concordant pairs carry no information for McNemar; only the discordant ones move "
        "the test, and each extra look adds a chance to stop on noise."
    )
    _instead(rep, args, paired=True)
    return rep


def register(sub) -> None:
    """Add the ``peek`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("peek", help="false-win rate of looking at the results repeatedly")
    p.add_argument("--n", type=_positive_int, required=True, help="final trials per arm")
    p.add_argument("--p", type=_probability, default=0.7, help="common true rate (default 0.7)")
    p.add_argument(
        "--looks",
        type=_looks,
        default="every",
        help="'every' trial (default), K equally spaced looks, or sizes like 10,20,30",
    )
    add_alpha_flag(p)
    p.add_argument(
        "--paired",
        action="store_true",
        help="both policies on the same conditions, exact McNemar at each look",
    )
    p.add_argument(
        "--vs",
        type=_probability,
        help="B's rate at which the anytime test and the optimal design are priced "
        "(default p + 0.2, at most 0.95)",
    )
    p.add_argument(
        "--discordance",
        type=_probability,
        help="with --paired: share of conditions where exactly one policy succeeds",
    )
    add_json_flag(p)
    p.set_defaults(run=cmd_peek)
