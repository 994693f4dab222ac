"""``evalsim compare FILE ... --a X --b Y``: is policy B different from policy A?"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from evalsim._log_files import pairing_key
from evalsim.cli import _clusters, _independence, _tests, by_task
from evalsim.cli._common import (
    FISHER_MDE_EXACT_MAX_N,
    BadInput,
    Report,
    _interval_pair,
    _open_unit,
    _p,
    _paired_mde,
    _pct,
    add_format_flags,
    add_log_hook_flags,
    apply_log_hooks,
    check_plot_path,
    plot_rates,
)
from evalsim.small_logs import TrialTable, read_small_logs
from evalsim.stats.names import TWO_SAMPLE_TESTS

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).


def _boschloo(k_a: int, n_a: int, k_b: int, n_b: int) -> tuple[float | None, str]:
    return _tests.boschloo_secondary(k_a, n_a, k_b, n_b)  # evalsim.stats.unconditional, no cap


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


def _key_codes(a, b, keys: list[str]):
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

            table = pd.concat([a[keys], b[keys]], ignore_index=True)
            ids = table.groupby(keys, sort=False).ngroup().to_numpy(dtype=np.int64)
            return ids[: len(a)], ids[len(a) :]
        codes_a = codes_a * m + codes[: len(a)]
        codes_b = codes_b * m + codes[len(a) :]
        size *= m
    return codes_a, codes_b


def _pair_up(a, b, keys: list[str]):
    """Matched (success_a, success_b) arrays on shared keys, or a reason why not paired."""
    if not keys:
        return None, "no condition column: unpaired analysis"
    codes_a, codes_b = _key_codes(a, b, keys)
    for name, g, codes in (("A", a, codes_a), ("B", b, codes_b)):
        uniq, first_idx, counts = np.unique(codes, return_index=True, return_counts=True)
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
    order = np.argsort(ia, kind="stable")
    ia, ib = ia[order], ib[order]
    return (np.asarray(a["success"])[ia], np.asarray(b["success"])[ib]), None


def _mde_80(n_a: int, n_b: int, alpha: float, pbar: float) -> tuple[float | None, str]:
    """Smallest gap Fisher's test detects with 80% power at this n (exact power).

    Rule: ``evalsim.stats.design.mde_exact`` at ``min(n_a, n_b)`` per arm (the smaller arm
    bounds what can be seen), two rates centred on the pooled observed rate; when a gap that
    large cannot fit around that centre (pooled rate near 0 or 1), centred on 0.5 instead,
    the worst case.
    """
    from evalsim.stats.design import mde_exact

    n = min(n_a, n_b)
    centre = min(max(pbar, 0.0), 1.0)
    if n > FISHER_MDE_EXACT_MAX_N:
        centre = centre if 0.0 < centre < 1.0 else 0.5
        from evalsim.stats.design import mde_normal

        mde = float(mde_normal(n, pbar=centre, alpha=alpha, power=0.8))
        return mde, (
            f"normal approximation at n = {n} per arm (exact Fisher power is computed up to "
            f"{FISHER_MDE_EXACT_MAX_N}), alpha = {alpha:g}, rates centred on {centre:.2f}"
        )
    res = None
    if 0.0 < centre < 1.0:
        res = mde_exact(n, alpha=alpha, power=0.8, baseline=centre, convention="centered")
    if res is None or not math.isfinite(res.mde):
        centre = 0.5
        res = mde_exact(n, alpha=alpha, power=0.8, baseline=0.5, convention="centered")
    if not math.isfinite(res.mde):
        return None, f"no gap reaches 80% power at n = {n} per arm"
    return float(res.mde), (
        f"exact Fisher power at n = {n} per arm, alpha = {alpha:g}, the two rates centred "
        f"on {centre:.2f}"
    )


#: The decision rules compare can state, by --alternative: what the test asks, in words.
ALTERNATIVE_WORDS = {
    "two-sided": "A and B differ (two-sided)",
    "greater": "B's rate is higher than A's (one-sided)",
    "less": "B's rate is lower than A's (one-sided)",
}


def _select(args, small: bool = True):
    """The log, the two policies' trials, and the file notes (files without conditions)."""
    order = _independence.order_columns(args)  # --order's column, kept for its log hook
    order += tuple(c for c in _clusters.cluster_columns(args) if c not in order)  # --cluster
    df = None
    if small and not order:  # --order, --cluster need pandas; else a small log is read without
        df = read_small_logs(args.files, policy=args.policy)
    if df is None:
        from evalsim.trial_logs import read_trial_logs  # heavy (pandas): large, unusual logs

        df = read_trial_logs(args.files, policy=args.policy, extra_columns=order)
    if args.task is not None:
        if "task" not in df.columns:
            raise BadInput("--task given but the log has no 'task' column")
        tasks = sorted({str(t) for t in df["task"]})
        if args.task not in tasks:
            raise BadInput(f"task {args.task!r} not in the log (tasks: {', '.join(tasks)})")
        df = df[df["task"] == args.task]
    if isinstance(df, TrialTable) and _clusters.seeds_are_clusters(df):
        return _select(args, small=False)  # the cluster hook's per-seed tables use pandas
    policies = sorted({str(v) for v in df["policy"]})
    for flag, name in (("--a", args.a), ("--b", args.b)):
        if name not in policies:
            raise BadInput(
                f"{flag} {name!r} is not a policy in the log (policies: {', '.join(policies)})"
            )
    if args.a == args.b:
        raise BadInput(f"--a and --b name the same policy {args.a!r}")
    return df, df[df["policy"] == args.a], df[df["policy"] == args.b]


def _pairing(args, df, a, b):
    """(merged pairs or None, note): paired when every trial of A and B has a condition."""
    if args.unpaired:
        return None, "--unpaired given: unpaired analysis"
    keys = pairing_key(df)
    if keys and ((a["condition"] == "").any() or (b["condition"] == "").any()):
        no_cond = [
            src["path"] for src in df.attrs.get("sources", []) if "condition" not in src["columns"]
        ]
        return None, (
            f"{', '.join(no_cond) or 'a file'} has no condition column, so its trials cannot "
            "be paired: unpaired analysis of all trials"
        )
    return _pair_up(a, b, keys)


def _paired_analysis(merged, alternative: str, conf: float) -> dict:
    """McNemar (with the stated alternative) and the paired intervals of B - A on the pairs
    ``merged`` = (A's successes, B's successes), matched."""
    sa, sb = merged
    a_only, b_only = int((sa & ~sb).sum()), int((~sa & sb).sum())
    both, neither = int((sa & sb).sum()), int((~sa & ~sb).sum())
    # B against A: B plays McNemar's first arm, so "greater" means B's rate is the higher.
    from evalsim.stats.paired import (
        PairedCounts,
        mcnemar_exact,
        mcnemar_pvalue,
        paired_diff_interval,
    )

    p = float(mcnemar_pvalue(b_only, a_only, alternative))
    midp = float(mcnemar_exact(a_only, b_only).midp_pvalue)
    counts_b_first = PairedCounts(both, b_only, a_only, neither)
    intervals = {
        m: _interval_pair(paired_diff_interval(counts_b_first, m, conf))
        for m in ("tango", "newcombe", "wald")
    }
    n = len(sa)
    return {
        "n_pairs": n,
        "both": both,
        "a_only": a_only,
        "b_only": b_only,
        "neither": neither,
        "k_a": both + a_only,
        "k_b": both + b_only,
        "pvalue": p,
        "midp_two_sided": midp,
        "intervals": intervals,
    }


def _decide(p, lo, hi, alpha, alternative):
    """(test rejects, interval agrees): the stated rule, applied to one p and one interval."""
    from evalsim.stats.decision import rejects

    reject = bool(rejects(p, alpha))
    if alternative == "greater":
        excludes = lo > 0
    elif alternative == "less":
        excludes = hi < 0
    else:
        excludes = lo > 0 or hi < 0
    return reject, excludes


def cmd_compare(args) -> Report:
    if args.by == "task":  # per-task tables and pooled verdicts: cli/by_task.py
        return by_task.cmd_compare_by_task(args)
    check_plot_path(args.plot)
    df, a, b = _select(args)
    alpha, alternative = args.alpha, args.alternative
    one_sided = alternative != "two-sided"
    # The interval that goes with the test: two-sided 1 - alpha, or for a one-sided test the
    # matching one-sided bound (the 1 - 2 alpha two-sided interval's end).
    conf = 1 - 2 * alpha if one_sided else 1 - alpha
    if conf <= 0:
        raise BadInput(f"--alpha {alpha:g} is too large for a one-sided test (needs < 0.5)")
    k_a_all, n_a_all = int(a["success"].sum()), len(a)
    k_b_all, n_b_all = int(b["success"].sum()), len(b)

    certificate = None  # the unconditional test's certified p-value (``--test``)
    merged, pair_note = _pairing(args, df, a, b)
    paired = merged is not None
    notes = list(df.attrs.get("warnings", []))
    if pair_note:
        notes.append(f"note: {pair_note}")
    if paired:
        pa = _paired_analysis(merged, alternative, conf)
        k_a, n_a, k_b, n_b = pa["k_a"], pa["n_pairs"], pa["k_b"], pa["n_pairs"]
        unmatched = n_a_all + n_b_all - 2 * pa["n_pairs"]
        if unmatched:
            notes.append(
                f"note: {unmatched} trial(s) without a partner are left out of the test, the "
                "interval and the verdict (all three use the same paired trials)"
            )
        test_name, method = "exact McNemar", "tango"
        p = pa["pvalue"]
        ci = pa["intervals"]["tango"]
        method_label = "Tango score (paired)"
    else:
        pa = None
        k_a, n_a, k_b, n_b = k_a_all, n_a_all, k_b_all, n_b_all
        test_name, method = TWO_SAMPLE_TESTS["fisher"].label, "newcombe"
        if one_sided:
            from evalsim.stats.fisher import fisher_pvalue_one_sided

            p = float(fisher_pvalue_one_sided(k_b, n_b, k_a, n_a, alternative))
        else:
            from evalsim.stats.fisher import fisher_pvalue

            p = float(fisher_pvalue(k_b, n_b, k_a, n_a))
        from evalsim.stats.paired import diff_interval

        ci = _interval_pair(diff_interval(k_b, n_b, k_a, n_a, method="newcombe", confidence=conf))
        method_label = "Newcombe hybrid score (independent)"
        if TWO_SAMPLE_TESTS[args.test].certified:
            certificate = _tests.unconditional(args.test, k_b, n_b, k_a, n_a, alternative)
            test_name, p = TWO_SAMPLE_TESTS[args.test].label, certificate["pvalue"]
    from evalsim.stats.fisher import fisher_pvalue

    fisher_p = float(fisher_pvalue(k_a_all, n_a_all, k_b_all, n_b_all))
    boschloo_p, boschloo_note = _boschloo(k_a_all, n_a_all, k_b_all, n_b_all)
    rate_a, rate_b = k_a / n_a, k_b / n_b
    reject, excludes = _decide(p, ci[0], ci[1], alpha, alternative)

    # MDE at 80% power on the same trials.
    mde = None
    if paired:
        disc = (pa["a_only"] + pa["b_only"]) / pa["n_pairs"]
        mde = _paired_mde(pa["n_pairs"], disc, alpha, 0.8)
        mde_rule = (
            f"exact McNemar power at {pa['n_pairs']} pairs, alpha = {alpha:g} two-sided, at "
            f"the observed discordance {disc:.2f}"
        )
    if mde is None:
        mde, mde_rule = _mde_80(n_a, n_b, alpha, (k_a + k_b) / (n_a + n_b))

    decision = Decision(
        a=args.a,
        b=args.b,
        rate_a=rate_a,
        rate_b=rate_b,
        n_a=n_a,
        n_b=n_b,
        paired=paired,
        test_name=test_name,
        pvalue=p,
        alpha=alpha,
        alternative=alternative,
        reject=reject,
        interval_agrees=excludes,
        interval=(ci[0], ci[1]),
        confidence=conf,
        method_label=method_label,
        mde=mde,
    )
    verdict, decided = _verdict(decision)
    if one_sided:
        shown_ci = [ci[0], 1.0] if alternative == "greater" else [-1.0, ci[1]]
    else:
        shown_ci = ci
    rule = (
        f"{test_name} test of '{ALTERNATIVE_WORDS[alternative]}', reject when p < {alpha:g} "
        f"(a p within 1e-9 of alpha counts as equal); a winner is declared only when the "
        f"{method_label} {'one-sided bound' if one_sided else 'interval'} for B - A "
        f"({100 * (1 - alpha):g}%) agrees"
    )
    data = {
        "a": args.a,
        "b": args.b,
        "n_a": n_a,
        "k_a": k_a,
        "n_b": n_b,
        "k_b": k_b,
        "n_a_all": n_a_all,
        "k_a_all": k_a_all,
        "n_b_all": n_b_all,
        "k_b_all": k_b_all,
        "alternative": alternative,
        "alpha": alpha,
        "test": test_name,
        "pvalue": p,
        "reject": reject,
        "interval_agrees": excludes,
        "decision": decided,
        "rule": rule,
        "fisher_p": fisher_p,
        "boschloo_p": boschloo_p,
        "test_certificate": certificate,
        "paired": paired,
        "mcnemar_p": pa["pvalue"] if paired else None,
        "mcnemar_midp": pa["midp_two_sided"] if paired else None,
        "discordant": {"a_only": pa["a_only"], "b_only": pa["b_only"]} if paired else None,
        "n_pairs": pa["n_pairs"] if paired else None,
        "diff": rate_b - rate_a,
        "diff_ci": shown_ci,
        "diff_ci_method": method,
        "paired_intervals": pa["intervals"] if paired else None,
        "confidence": 1 - alpha,
        "mde_80": mde,
        "mde_rule": mde_rule,
        "notes": notes,
        "verdict": verdict,
    }
    rep = Report(data)
    rep.line(f"decision rule (stated before the data): {rule}")
    rows = [
        [args.a + " (A)", f"{k_a}/{n_a}", _pct(rate_a)],
        [args.b + " (B)", f"{k_b}/{n_b}", _pct(rate_b)],
    ]
    title = "Success rates" + (" on the paired conditions" if paired else "")
    rep.table(title, ["policy", "k/n", "rate"], rows)
    if paired and (n_a_all != n_a or n_b_all != n_b):
        rep.line(
            f"all trials: A {k_a_all}/{n_a_all} ({_pct(k_a_all / n_a_all)}), "
            f"B {k_b_all}/{n_b_all} ({_pct(k_b_all / n_b_all)}); not used for the verdict"
        )
    side = {"two-sided": "two-sided", "greater": "one-sided, B > A", "less": "one-sided, B < A"}
    tests = [[f"{test_name} ({'paired' if paired else 'unpaired'})", _p(p), side[alternative]]]
    fisher = TWO_SAMPLE_TESTS["fisher"].label
    if paired:
        tests.append(["McNemar mid-p (paired)", _p(pa["midp_two_sided"]), "secondary; two-sided"])
        tests.append([f"{fisher} (unpaired)", _p(fisher_p), "secondary; ignores pairing"])
    else:
        if one_sided:
            tests.append([fisher, _p(fisher_p), "secondary; two-sided"])
    tests.append(
        [
            f"{TWO_SAMPLE_TESTS['boschloo'].label} (unpaired)",
            _p(boschloo_p),
            "secondary; two-sided" if boschloo_p is not None else boschloo_note,
        ]
    )
    rep.table("Tests of 'A and B have the same success rate'", ["test", "p", "note"], tests)
    rep.line("Only the first test decides; the rows marked secondary are for reference.")
    if paired:
        rep.table(
            f"Paired outcomes (same {'/'.join(pairing_key(df))})",
            ["", "B succeeded", "B failed"],
            [["A succeeded", pa["both"], pa["a_only"]], ["A failed", pa["b_only"], pa["neither"]]],
        )
    level = f"{100 * conf:g}%"
    diff_rows = []
    if paired:
        labels = {
            "tango": "Tango score (paired): goes with the verdict",
            "newcombe": "Newcombe hybrid score (paired, method 10)",
            "wald": "Wald (paired), reference",
        }
        for m, (lo, hi) in pa["intervals"].items():
            diff_rows.append([labels[m], f"{100 * (rate_b - rate_a):+.1f}", _ci_pts(lo, hi)])
    else:
        diff_rows.append(
            [
                f"{method_label}: goes with the verdict",
                f"{100 * (rate_b - rate_a):+.1f}",
                _ci_pts(*ci),
            ]
        )
    if one_sided:
        end = "lower" if alternative == "greater" else "upper"
        diff_title = (
            f"Difference B - A (points; {level} two-sided interval, its {end} end the "
            f"{100 * (1 - alpha):g}% one-sided bound)"
        )
    else:
        diff_title = f"Difference B - A (points, {level} interval)"
    rep.table(
        diff_title,
        ["method", "estimate", "interval"],
        diff_rows,
    )
    if mde is not None:
        rep.line(f"MDE at 80% power: {100 * mde:.1f} points ({mde_rule})")
    if not isinstance(df, TrialTable):  # a small-log table has no hook to run (see _select)
        apply_log_hooks(args, df, rep)
    for note in notes:
        rep.line(note)
    if args.plot:
        from evalsim.stats.intervals import wilson_interval

        plot_rows = []
        for name, k, n in ((args.a, k_a, n_a), (args.b, k_b, n_b)):
            w = wilson_interval(k, n, confidence=1 - alpha)
            plot_rows.append({"label": name, "rate": k / n, "lower": w.lower, "upper": w.upper})
        plot_rates(plot_rows, args.plot, f"{args.a} vs {args.b}", 1 - alpha)
    rep.line("")
    rep.line(f"verdict: {verdict}")
    return rep


def _ci_pts(lo: float, hi: float) -> str:
    return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"


@dataclass(frozen=True)
class Decision:
    """What ``compare`` decided and on what: the inputs of its verdict sentence.

    ``interval`` is the B - A interval (or, one-sided, the interval whose end is the bound)
    at ``confidence``; ``interval_agrees``: it excludes 0 on the tested side; ``mde``: the
    smallest gap detectable with 80% power at these n (None when not computed).
    """

    a: str
    b: str
    rate_a: float
    rate_b: float
    n_a: int
    n_b: int
    paired: bool
    test_name: str
    pvalue: float
    alpha: float
    alternative: str
    reject: bool
    interval_agrees: bool
    interval: tuple[float, float]
    confidence: float
    method_label: str
    mde: float | None


def _verdict(d: Decision) -> tuple[str, str | None]:
    """The verdict sentence and the decision ("A", "B" or None)."""
    rate_a, rate_b, n_a, n_b, alpha = d.rate_a, d.rate_b, d.n_a, d.n_b, d.alpha
    alternative, ci, p = d.alternative, d.interval, d.pvalue
    if d.paired:
        n_text = f"on {n_a} paired conditions"
    else:
        n_text = f"at n = {n_a} per arm" if n_a == n_b else f"at n = {n_a} (A) and {n_b} (B)"
    if rate_b > rate_a:
        better, hi_r, lo_r = d.b, rate_b, rate_a
    elif rate_a > rate_b:
        better, hi_r, lo_r = d.a, rate_a, rate_b
    else:
        better = None
    one_sided = alternative != "two-sided"
    if one_sided:
        bound = (
            f"B - A >= {100 * ci[0]:+.1f} points"
            if alternative == "greater"
            else f"B - A <= {100 * ci[1]:+.1f} points"
        )
        iv = f"{d.method_label} {100 * (1 - alpha):g}% one-sided bound: {bound}"
    else:
        iv = f"{d.method_label} {100 * d.confidence:g}% interval for B - A: {_ci_pts(*ci)} points"
    test = f"{d.test_name} p = {_p(p)}, {alternative}"
    looks = (
        f"the better-looking policy is {better} ({_pct(hi_r, 0)} vs {_pct(lo_r, 0)})"
        if better
        else f"both policies score {_pct(rate_a, 0)}"
    )
    if d.reject and d.interval_agrees:
        winner = d.b if (alternative == "greater" or (not one_sided and rate_b > rate_a)) else d.a
        loser = d.a if winner == d.b else d.b
        w_r, l_r = (rate_b, rate_a) if winner == d.b else (rate_a, rate_b)
        return (
            f"{winner} beats {loser}: {_pct(w_r, 0)} vs {_pct(l_r, 0)} {n_text} ({test} "
            f"< {alpha:g}; {iv})",
            "B" if winner == d.b else "A",
        )
    if d.reject != d.interval_agrees:
        return (
            f"no verdict: {looks} {n_text}, but the test and its interval disagree at "
            f"alpha = {alpha:g} ({test}; {iv}); treat the difference as not established",
            None,
        )
    claim = {
        "two-sided": f"{d.a} and {d.b} are not detectably different",
        "greater": f"{d.b} is not shown better than {d.a}",
        "less": f"{d.b} is not shown worse than {d.a}",
    }[alternative]
    mde_text = (
        f"; at this n the smallest gap detectable with 80% power is about {100 * d.mde:.0f} points"
        if d.mde is not None
        else ""
    )
    return f"{claim} {n_text} ({test}){mde_text}; {looks}; {iv}", None


def register(sub) -> None:
    """Add the ``compare`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser("compare", help="is policy B different from policy A?")
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="CSV, Parquet or LeRobot JSON log; PATH=NAME"
    )
    p.add_argument("--a", required=True, metavar="X", help="reference policy")
    p.add_argument("--b", required=True, metavar="Y", help="policy compared with it")
    p.add_argument("--task", help="use only the trials of this task")
    p.add_argument("--alpha", type=_open_unit, default=0.05, help="default 0.05")
    p.add_argument(
        "--alternative",
        choices=tuple(ALTERNATIVE_WORDS),
        default="two-sided",
        help="what the test asks: two-sided (default), greater (B > A) or less (B < A)",
    )
    p.add_argument("--unpaired", action="store_true", help="ignore condition ids")
    _tests.add_test_option(p)
    p.add_argument("--policy", help=argparse.SUPPRESS)
    add_format_flags(p)
    add_log_hook_flags(p)
    by_task.add_arguments(p)
    p.set_defaults(run=cmd_compare)
