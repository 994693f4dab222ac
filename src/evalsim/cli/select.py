"""``evalsim select plan`` and ``evalsim select FILE ...``: choosing one of K checkpoints on a
selection split, with an exact probability of being right, and a confirmation it never
touches.

``select plan --k K --p-star P --delta D [--pcs 0.9]``: the n per checkpoint for which the
highest count is the best checkpoint with probability >= P* whenever the best is at p* and
every other at least delta below (the least favourable configuration; with ``--p-range``,
for every p* in a range), under the stated tie rule and planning model; the winner's-curse
inflation at that n beside it.

``select FILE ... --baseline B``: picks the checkpoint with the highest rate among the log's
policies (B excluded), prices the pick (the plug-in winner's curse, the PCS at the least
favourable configuration for the n used; Cochran's Q and pairwise exact McNemar with Holm on
a paired log) and, with ``--plan-out FILE``, writes the confirmation plan: the chosen
checkpoint against B on fresh conditions, n per arm from exact power. The selection trials
never enter the confirmation's estimate. Numbers: :mod:`evalsim.stats.selection`.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from evalsim.cli._common import (
    BadInput,
    Report,
    _ci_pct,
    _count,
    _open_unit,
    _p,
    _pct,
    _positive_int,
    add_alpha_flag,
    add_force_flag,
    add_json_flag,
    add_unpaired_flag,
)
from evalsim.cli._safe_output import OutputKind, check_output_path, output_file

__all__ = ["cmd_select", "register"]

TIE_CHOICES = ("random", "no-pick")
MODEL_CHOICES = ("independent", "any-dependence")


def _range(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected LOW,HIGH such as 0.5,0.95, got {text!r}"
        ) from None
    if not (0.0 < lo <= hi <= 1.0):
        raise argparse.ArgumentTypeError(f"need 0 < LOW <= HIGH <= 1, got {text!r}")
    return lo, hi


def _delta(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"delta must be in (0, 1) (a gap in rate), got {text}")
    return v


def cmd_select(args) -> Report:
    if args.files and args.files[0] == "plan":
        if len(args.files) > 1:
            raise BadInput("select plan takes options only, no files")
        return _cmd_plan(args)
    return _cmd_pick(args)


def _cmd_plan(args) -> Report:
    from evalsim.stats.selection.fixed_n import (
        PLANNING_MODELS,
        TIE_RULES,
        check_indifference_zone,
        lfc_rates,
        n_for_pcs,
        selection_probabilities,
    )

    if args.k is None or args.p_star is None and args.p_range is None:
        raise BadInput("select plan needs --k and --p-star (or --p-range)")
    if args.k < 2:
        raise BadInput(
            f"--k must be at least 2 checkpoints (K = 1 has nothing to choose), got {args.k}"
        )
    p_top = args.p_star if args.p_range is None else args.p_range[1]
    if args.delta > (p_top if args.p_range is None else args.p_range[0]):
        raise BadInput(
            f"--delta {args.delta:g} must not exceed p* (the others' rate p* - delta >= 0)"
        )
    if not args.pcs > 1.0 / args.k:
        raise BadInput(
            f"--pcs must exceed 1/K = {1 / args.k:.3g} (what a random pick achieves), "
            f"got {args.pcs:g}"
        )
    check_indifference_zone(args.k, p_top, args.delta, args.pcs)
    plan = n_for_pcs(args.k, p_top, args.delta, args.pcs, args.tie, args.p_range, args.paired_model)
    p_at = plan.p_star_worst
    sel = selection_probabilities(lfc_rates(args.k, p_at, args.delta), plan.n, args.tie)
    equal = selection_probabilities([p_at] * args.k, plan.n, args.tie)
    data = {
        "mode": "plan",
        **plan.to_dict(),
        "p_range": list(args.p_range) if args.p_range else None,
        "tie_rule_words": TIE_RULES[args.tie][1],
        "model_words": PLANNING_MODELS[args.paired_model],
        "bias_lfc": sel.bias,
        "bias_all_equal": equal.bias,
        "pcs_exact": args.paired_model == "independent",
    }
    rep = Report(data)
    where = (
        f"p* = {p_at:g}"
        if args.p_range is None
        else (f"every p* in [{args.p_range[0]:g}, {args.p_range[1]:g}] (worst at {p_at:.3g})")
    )
    rep.table(
        f"Selecting the best of {args.k} checkpoints: best at {where}, others {args.delta:g} below",
        ["quantity", "value"],
        [
            ["n per checkpoint", plan.n],
            ["total trials", plan.total_trials],
            ["PCS at that n", f"{plan.pcs:.4f}" + ("" if data["pcs_exact"] else " (lower bound)")],
            ["target PCS", f"{args.pcs:g}"],
            ["winner's curse, LFC (points)", f"{100 * sel.bias:+.2f}"],
            ["winner's curse, all equal (points)", f"{100 * equal.bias:+.2f}"],
        ],
    )
    rep.line(
        f"Tie rule: {TIE_RULES[args.tie][1]}. Planning model: {PLANNING_MODELS[args.paired_model]}."
    )
    rep.line(
        "Winner's curse: the expected reported rate of the picked checkpoint minus its true "
        "rate, exact; report the pick's rate from a confirmation on fresh conditions instead."
    )
    if args.sequential:
        data["elimination"] = _elimination_block(args, p_at, rep)
    return rep


def _elimination_block(args, p_star: float, rep: Report) -> dict:
    """``select plan --sequential``: successive elimination at the same configuration."""
    from evalsim.stats.selection.elimination import elimination_design, elimination_oc
    from evalsim.stats.selection.fixed_n import lfc_rates

    design = elimination_design(args.k, args.alpha, args.n_max, args.design)
    oc = elimination_oc(design, lfc_rates(args.k, p_star, args.delta), seed=args.tie_seed)
    se = oc.method != "exact dynamic programming"

    def cell(v, s, fmt):
        return format(v, fmt) + (f" ± {format(s, fmt)}" if se else "")

    rep.table(
        f"Successive elimination ({args.design} pairwise designs at alpha/(K-1) = "
        f"{design.pair_alpha:.4g}, at most {args.n_max} rounds; {oc.method})",
        ["quantity", "value"],
        [
            [
                "certified P(best eliminated), every configuration",
                f"<= {design.certified_error:.4f}",
            ],
            [
                "P(single survivor, the best)",
                cell(oc.p_single_correct, oc.p_single_correct_se, ".4f"),
            ],
            ["expected rounds", cell(oc.expected_rounds, oc.expected_rounds_se, ".1f")],
            ["expected trials", cell(oc.expected_trials, oc.expected_trials_se, ".1f")],
        ],
    )
    out = oc.to_dict()
    out.update(
        certified_error=design.certified_error,
        pair_alpha=design.pair_alpha,
        n_max=args.n_max,
        design=args.design,
    )
    return out


def _read(args):
    from evalsim.cli.by_task import read_task_logs

    df = read_task_logs(args.files, None, need_task=False)
    names = sorted({str(p) for p in df["policy"]})
    if args.baseline is not None and args.baseline not in names:
        raise BadInput(
            f"--baseline {args.baseline!r} is not a policy in the log ({', '.join(names)})"
        )
    if args.checkpoints:
        cands = [c.strip() for c in args.checkpoints.split(",") if c.strip()]
        for c in cands:
            if c not in names:
                raise BadInput(f"checkpoint {c!r} has no trials in the log")
        if len(set(cands)) != len(cands):
            raise BadInput(f"--checkpoints names a checkpoint twice: {args.checkpoints}")
    else:
        cands = [p for p in names if p != args.baseline]
    if args.baseline in cands:
        raise BadInput(f"--baseline {args.baseline!r} cannot also be a checkpoint")
    if len(cands) < 2:
        raise BadInput(
            f"select needs at least 2 checkpoints (K = {len(cands)}: nothing to choose); "
            f"the log has {', '.join(names)}"
        )
    return df, cands


def _cmd_pick(args) -> Report:
    from evalsim.answers.paired_log import condition_keys, paired_table
    from evalsim.stats.selection.fixed_n import TIE_RULES
    from evalsim.stats.selection.ksample import cochran_q_test, pairwise_mcnemar
    from evalsim.stats.selection.pick import confirmation_plan, pick_checkpoint

    if args.plan_out:
        _check_plan_path(args.plan_out, args.force)
    df, cands = _read(args)
    keys = [] if args.unpaired else condition_keys(df)
    cq = pairs = None
    conditions: list[str] = []
    if keys:
        table, conditions = paired_table(df, cands, keys)
        k = [int(v) for v in table.sum(axis=0)]
        n = [table.shape[0]] * len(cands)
        cq = cochran_q_test(table)
        pairs = pairwise_mcnemar(table, cands, args.alpha)
    else:
        k = [int(df.loc[df["policy"] == c, "success"].sum()) for c in cands]
        n = [int((df["policy"] == c).sum()) for c in cands]
    pick = pick_checkpoint(cands, k, n, args.tie, args.tie_seed, args.delta)
    data = {"mode": "select", "paired": bool(keys), **pick.to_dict()}
    rep = Report(data)
    _selection_table(rep, pick, cands, k, n, keys, conditions)
    rep.line(f"Tie rule: {TIE_RULES[args.tie][1]}; seed {args.tie_seed}.")
    if pick.chosen is None:
        rep.line(f"No pick: {', '.join(pick.tied)} tie at the top under the no-pick rule.")
    if not math.isnan(pick.plugin_bias):
        rep.line(
            f"Winner's curse (plug-in, exact at the observed rates taken as true): the picked "
            f"checkpoint's rate here overstates its true rate by {100 * pick.plugin_bias:.1f} "
            f"points on average. PCS if the best were {args.delta:g} ahead of all the others "
            f"(least favourable, n = {n[0]}): {pick.pcs_lfc:.3f}."
        )
    if cq is not None:
        _cochran_block(rep, data, cq, pairs)
    if pick.chosen is not None:
        baseline_rate = args.baseline_rate
        if baseline_rate is None and args.baseline is not None:
            sub = df[df["policy"] == args.baseline]
            baseline_rate = float(sub["success"].mean())
        if args.plan_out and args.baseline is None:
            raise BadInput("--plan-out needs --baseline NAME (the confirmation's reference arm)")
        if args.baseline is not None and baseline_rate is not None:
            if not 0.0 < baseline_rate < 1.0 - args.confirm_gap:
                raise BadInput(
                    f"the baseline rate {baseline_rate:g} leaves no room for a gap of "
                    f"{args.confirm_gap:g}; give --baseline-rate or --confirm-gap"
                )
            plan = confirmation_plan(
                pick,
                args.baseline,
                baseline_rate,
                args.confirm_gap,
                args.alpha,
                args.power,
                excluded_conditions=conditions,
                sources=_sources(args.files),
            )
            data["confirmation_plan"] = plan
            c = plan["confirmation"]
            rep.line(
                f"Confirmation: {pick.chosen} vs {args.baseline} on fresh conditions, "
                f"{c['n_per_arm']} trials per arm ({c['test']}, alpha {c['alpha']:g}, "
                f"power {c['power']:g} for "
                f"{100 * baseline_rate:.1f}% vs {100 * (baseline_rate + args.confirm_gap):.1f}%). "
                + plan["statement"]
            )
            if args.plan_out:
                _write_plan(args.plan_out, plan, args.force)
                data["plan_out"] = args.plan_out
                rep.line(f"plan: {args.plan_out}")
        else:
            rep.line(
                f"Report {pick.chosen}'s rate only from a confirmation on fresh conditions "
                "(give --baseline to plan it)."
            )
    return rep


def _sources(files) -> list[dict]:
    from evalsim._log_files import digest, split_label

    out = []
    for f in files:
        path, label = split_label(f)
        out.append({"path": str(path), "label": label, "sha256": digest(path)})
    return out


_PLAN_MARK = "# evalsim confirmation plan"
#: The confirmation plan ``--plan-out`` writes, recognised by its first line.
PLAN_FILE = OutputKind("confirmation plan", (".yaml", ".yml"), (_PLAN_MARK.encode(),))


def _check_plan_path(path: str, force: bool = False) -> None:
    """Refuse a plan path before any work (:func:`check_output_path`): a device, a FIFO, a
    folder, or someone else's file without ``--force``."""
    check_output_path(path, "--plan-out", PLAN_FILE, force)


def _write_plan(path: str, plan: dict, force: bool = False) -> None:
    import yaml

    text = _PLAN_MARK + "\n" + yaml.safe_dump(plan, sort_keys=False, allow_unicode=True)
    with output_file(path, "--plan-out", PLAN_FILE, force) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def register(sub) -> None:
    """Add the ``select`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser(
        "select",
        help="pick one of K checkpoints (exact PCS, winner's curse) and plan its confirmation; "
        "'select plan': n per checkpoint",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="'plan', or CSV, Parquet or LeRobot JSON logs of the selection split (PATH=NAME)",
    )
    g = p.add_argument_group("select plan")
    g.add_argument("--k", type=_positive_int, help="number of checkpoints K (>= 2)")
    g.add_argument("--p-star", type=_open_unit, help="rate of the best checkpoint p*")
    g.add_argument("--p-range", type=_range, metavar="LOW,HIGH", help="plan for every p* in it")
    g.add_argument("--pcs", type=_open_unit, default=0.9, help="target PCS P* (> 1/K; default 0.9)")
    g.add_argument(
        "--paired-model",
        choices=MODEL_CHOICES,
        default="independent",
        help="planning model of a paired design: independent within a condition (exact), or "
        "any-dependence (least favourable; a lower bound)",
    )
    g.add_argument(
        "--sequential",
        action="store_true",
        help="also successive elimination at the same configuration (certified error)",
    )
    g.add_argument("--n-max", type=_positive_int, default=100, help="rounds (default 100)")
    g.add_argument(
        "--design",
        choices=("paired", "unpaired"),
        default="paired",
        help="pairwise certified design of the elimination (default paired)",
    )
    g = p.add_argument_group("both")
    g.add_argument("--delta", type=_delta, default=0.1, help="indifference zone (default 0.1)")
    g.add_argument("--tie", choices=TIE_CHOICES, default="random", help="tie rule (default random)")
    g = p.add_argument_group("select FILE")
    g.add_argument("--baseline", metavar="NAME", help="the reference policy (not a candidate)")
    g.add_argument(
        "--checkpoints", metavar="A,B,...", help="the candidates (default: all but the baseline)"
    )
    g.add_argument(
        "--tie-seed", type=_count, default=0, help="seed of the random tie-break (default 0)"
    )
    add_unpaired_flag(g)
    add_alpha_flag(g)
    g.add_argument("--power", type=_open_unit, default=0.8, help="confirmation power (default 0.8)")
    g.add_argument(
        "--confirm-gap",
        type=_delta,
        default=0.1,
        help="gap over the baseline to confirm (default 0.1)",
    )
    g.add_argument(
        "--baseline-rate", type=_open_unit, help="default: the baseline's rate in the log"
    )
    g.add_argument("--plan-out", metavar="PLAN.yaml", help="write the confirmation plan here")
    add_json_flag(p)
    add_force_flag(p)
    p.set_defaults(run=cmd_select)


def _selection_table(rep: Report, pick, cands, k, n, keys, conditions) -> None:
    """The selection split: every checkpoint's k/n, rate, Wilson interval and pick mark."""
    from evalsim.stats.proportion.intervals import wilson_interval

    rows = []
    for name, kk, nn in zip(cands, k, n, strict=True):
        w = wilson_interval(kk, nn)
        mark = "chosen" if name == pick.chosen else ("tied" if name in pick.tied else "")
        rows.append([name, f"{kk}/{nn}", _pct(kk / nn), _ci_pct(*w.bounds()), mark])
    rep.table(
        f"Selection split: {len(cands)} checkpoints"
        + (
            f", paired on {len(conditions)} conditions ({'/'.join(keys)})" if keys else ", unpaired"
        ),
        ["checkpoint", "k/n", "rate", "Wilson 95%", "pick"],
        rows,
    )


def _cochran_block(rep: Report, data: dict, cq, pairs) -> None:
    """Cochran's Q over the checkpoints and the Holm-adjusted pairwise exact McNemar tests."""
    data["cochran_q"] = cq.to_dict()
    data["pairwise_mcnemar"] = [q.to_dict() for q in pairs]
    rep.line(
        f"Cochran's Q = {cq.statistic:.3g} ({cq.df} df), p = {_p(cq.pvalue)}, {cq.method} "
        f"({cq.limit})."
    )
    rep.table(
        "Pairwise exact McNemar, Holm-adjusted",
        ["pair", "only first : only second", "p", "Holm p"],
        [
            [
                f"{q.first} vs {q.second}",
                f"{q.first_only}:{q.second_only}",
                _p(q.pvalue),
                _p(q.pvalue_holm),
            ]
            for q in pairs
        ],
    )
