"""``evalsim compare FILE ... --a X --b Y``: is policy B different from policy A?"""

from __future__ import annotations

import argparse
import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    check_policy_pair,
    plot_rates,
)
from evalsim.small_logs import TrialTable, read_small_logs
from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.stats.rates import TwoArmRates

if TYPE_CHECKING:
    from evalsim.stats.two_sample.paired import PairedCounts

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).


def _boschloo(k_a: int, n_a: int, k_b: int, n_b: int) -> tuple[float | None, str]:
    return _tests.boschloo_secondary(
        k_a, n_a, k_b, n_b
    )  # evalsim.stats.two_sample.unconditional, no cap


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

    Rule: ``evalsim.stats.two_sample.design.mde_exact`` at ``min(n_a, n_b)`` per arm (the smaller
    arm
    bounds what can be seen), two rates centred on the pooled observed rate; when a gap that
    large cannot fit around that centre (pooled rate near 0 or 1), centred on 0.5 instead,
    the worst case.
    """
    from evalsim.stats.two_sample.design import mde_exact

    n = min(n_a, n_b)
    centre = min(max(pbar, 0.0), 1.0)
    if n > FISHER_MDE_EXACT_MAX_N:
        centre = centre if 0.0 < centre < 1.0 else 0.5
        from evalsim.stats.two_sample.design import mde_normal

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
    check_policy_pair(policies, args.a, args.b)
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


@dataclass(frozen=True)
class PairedAnalysis:
    """McNemar's test and the paired intervals of B - A on the matched conditions.

    Attributes
    ----------
    counts : evalsim.stats.two_sample.paired.PairedCounts
        The matched conditions (each run by A and by B) where both policies, only A, only B
        or neither succeeded; ``counts.n`` pairs, ``counts.k_a`` and ``counts.k_b`` successes.
    pvalue : float
        Exact McNemar p-value under the stated alternative (B as the first arm, so "greater"
        means B's rate is the higher).
    midp_two_sided : float
        Two-sided mid-p McNemar p-value (a secondary row).
    intervals : dict
        B - A interval ``[lower, upper]`` per paired method: "tango" (goes with the verdict),
        "newcombe" (method 10) and "wald".
    """

    counts: PairedCounts
    pvalue: float
    midp_two_sided: float
    intervals: dict


def _paired_analysis(merged, alternative: str, conf: float) -> PairedAnalysis:
    """McNemar (with the stated alternative) and the paired intervals of B - A on the pairs
    ``merged`` = (A's successes, B's successes), matched."""
    sa, sb = merged
    a_only, b_only = int((sa & ~sb).sum()), int((~sa & sb).sum())
    both, neither = int((sa & sb).sum()), int((~sa & ~sb).sum())
    # B against A: B plays McNemar's first arm, so "greater" means B's rate is the higher.
    from evalsim.stats.two_sample.paired import (
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
    return PairedAnalysis(
        counts=PairedCounts(both, a_only, b_only, neither),
        pvalue=p,
        midp_two_sided=midp,
        intervals=intervals,
    )


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


@dataclass(frozen=True)
class Decision(TwoArmRates):
    """What ``compare`` decided and on what: the inputs of its verdict sentence.

    ``k_a``/``n_a`` and ``k_b``/``n_b`` are the trials the test uses (the pairs when paired;
    ``rate_a``, ``rate_b``: their ratios, from :class:`~evalsim.stats.rates.TwoArmRates`).
    ``interval`` is the B - A interval (or, one-sided, the interval whose end is the bound)
    at ``confidence``; ``interval_agrees``: it excludes 0 on the tested side; ``mde``: the
    smallest gap detectable with 80% power at these n (None when not computed).
    """

    a: str
    b: str
    k_a: int
    n_a: int
    k_b: int
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

    @property
    def one_sided(self) -> bool:
        """The test asks a one-sided question (``greater`` or ``less``)."""
        return self.alternative != "two-sided"


@dataclass(frozen=True)
class Comparison:
    """Everything ``compare`` found, computed once: the text, markdown, LaTeX and JSON outputs
    all read this object (:func:`_report`, :meth:`as_json`).

    Attributes
    ----------
    decision : Decision
        The deciding test, its interval and the verdict's other inputs.
    k_a_all, n_a_all, k_b_all, n_b_all : int
        Successes and trials of all of A's and B's trials (a paired analysis uses only the
        matched ones).
    fisher_p : float
        Two-sided Fisher p-value on all trials (a secondary row).
    boschloo_p : float or None
        Two-sided Boschloo p-value on all trials (a secondary row); None when not computed.
    boschloo_note : str
        The Boschloo row's note: its certificate, or why it was not computed.
    certificate : dict or None
        The certified p-value's record of an unconditional ``--test`` (None otherwise).
    pairs : PairedAnalysis or None
        The paired analysis, when the trials pair up by condition.
    pairing_columns : tuple of str
        The columns the trials were paired on (empty when unpaired).
    interval_method : str
        The id of the interval that goes with the verdict ("tango" or "newcombe").
    mde_rule : str
        How the MDE was computed, or why there is none.
    notes : tuple of str
        The reader's and the analysis' notes, printed before the verdict.
    """

    decision: Decision
    k_a_all: int
    n_a_all: int
    k_b_all: int
    n_b_all: int
    fisher_p: float
    boschloo_p: float | None
    boschloo_note: str
    certificate: dict | None
    pairs: PairedAnalysis | None
    pairing_columns: tuple[str, ...]
    interval_method: str
    mde_rule: str
    notes: tuple[str, ...]

    @property
    def verdict(self) -> str:
        """The verdict sentence."""
        return _verdict(self.decision)[0]

    @property
    def decided(self) -> str | None:
        """The policy the verdict declares better: "A", "B" or None."""
        return _verdict(self.decision)[1]

    @property
    def rule(self) -> str:
        """The decision rule, stated before the data."""
        d = self.decision
        return (
            f"{d.test_name} test of '{ALTERNATIVE_WORDS[d.alternative]}', reject when p < "
            f"{d.alpha:g} (a p within 1e-9 of alpha counts as equal); a winner is declared only "
            f"when the {d.method_label} {'one-sided bound' if d.one_sided else 'interval'} for "
            f"B - A ({100 * (1 - d.alpha):g}%) agrees"
        )

    @property
    def shown_interval(self) -> list[float]:
        """The B - A interval as reported: one-sided, the bound with the other end at -+1."""
        d = self.decision
        if d.alternative == "greater":
            return [d.interval[0], 1.0]
        if d.alternative == "less":
            return [-1.0, d.interval[1]]
        return list(d.interval)

    def as_json(self) -> dict:
        """The ``--json`` record (its keys and their order are the command's JSON contract)."""
        d, pa = self.decision, self.pairs
        return {
            "a": d.a,
            "b": d.b,
            "n_a": d.n_a,
            "k_a": d.k_a,
            "n_b": d.n_b,
            "k_b": d.k_b,
            "n_a_all": self.n_a_all,
            "k_a_all": self.k_a_all,
            "n_b_all": self.n_b_all,
            "k_b_all": self.k_b_all,
            "alternative": d.alternative,
            "alpha": d.alpha,
            "test": d.test_name,
            "pvalue": d.pvalue,
            "reject": d.reject,
            "interval_agrees": d.interval_agrees,
            "decision": self.decided,
            "rule": self.rule,
            "fisher_p": self.fisher_p,
            "boschloo_p": self.boschloo_p,
            "test_certificate": self.certificate,
            "paired": d.paired,
            "mcnemar_p": pa.pvalue if pa else None,
            "mcnemar_midp": pa.midp_two_sided if pa else None,
            "discordant": {"a_only": pa.counts.a_only, "b_only": pa.counts.b_only} if pa else None,
            "n_pairs": pa.counts.n if pa else None,
            "diff": d.rate_b - d.rate_a,
            "diff_ci": self.shown_interval,
            "diff_ci_method": self.interval_method,
            "paired_intervals": pa.intervals if pa else None,
            "confidence": 1 - d.alpha,
            "mde_80": d.mde,
            "mde_rule": self.mde_rule,
            "notes": list(self.notes),
            "verdict": self.verdict,
        }


def _unpaired_test(test: str, counts: tuple[int, int, int, int], alternative: str, conf: float):
    """(test name, p, B - A interval, certificate) of the unpaired analysis of ``counts`` =
    (k_a, n_a, k_b, n_b): Fisher's test, or the certified ``test`` of the registry, and the
    Newcombe interval."""
    k_a, n_a, k_b, n_b = counts
    if alternative != "two-sided":
        from evalsim.stats.two_sample.fisher import fisher_pvalue_one_sided

        p = float(fisher_pvalue_one_sided(k_b, n_b, k_a, n_a, alternative))
    else:
        from evalsim.stats.two_sample.fisher import fisher_pvalue

        p = float(fisher_pvalue(k_b, n_b, k_a, n_a))
    from evalsim.stats.two_sample.paired import diff_interval

    ci = _interval_pair(diff_interval(k_b, n_b, k_a, n_a, method="newcombe", confidence=conf))
    test_name, certificate = TWO_SAMPLE_TESTS["fisher"].label, None
    if TWO_SAMPLE_TESTS[test].certified:
        certificate = _tests.unconditional(test, k_b, n_b, k_a, n_a, alternative)
        test_name, p = TWO_SAMPLE_TESTS[test].label, certificate["pvalue"]
    return test_name, p, ci, certificate


def _mde(pa: PairedAnalysis | None, n_a: int, n_b: int, alpha: float, pbar: float):
    """(MDE at 80% power or None, its rule): exact McNemar at the observed discordance when
    paired, else (or when that has none) Fisher's (:func:`_mde_80`)."""
    if pa is not None:
        disc = (pa.counts.a_only + pa.counts.b_only) / pa.counts.n
        mde = _paired_mde(pa.counts.n, disc, alpha, 0.8)
        if mde is not None:
            return mde, (
                f"exact McNemar power at {pa.counts.n} pairs, alpha = {alpha:g} two-sided, at "
                f"the observed discordance {disc:.2f}"
            )
    return _mde_80(n_a, n_b, alpha, pbar)


def compare_trials(args, df, a, b) -> Comparison:
    """Compare B with A on the trials ``a`` and ``b`` of the log ``df`` (as :func:`_select`
    returns them), by the options in ``args``: the one result every output reads."""
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
    notes = list(df.attrs.get("warnings", []))
    if pair_note:
        notes.append(f"note: {pair_note}")
    if merged is not None:
        pa = _paired_analysis(merged, alternative, conf)
        pairs = pa.counts
        k_a, n_a, k_b, n_b = pairs.k_a, pairs.n, pairs.k_b, pairs.n
        unmatched = n_a_all + n_b_all - 2 * pairs.n
        if unmatched:
            notes.append(
                f"note: {unmatched} trial(s) without a partner are left out of the test, the "
                "interval and the verdict (all three use the same paired trials)"
            )
        test_name, method, p = "exact McNemar", "tango", pa.pvalue
        ci = pa.intervals["tango"]
        method_label = "Tango score (paired)"
    else:
        pa = None
        k_a, n_a, k_b, n_b = k_a_all, n_a_all, k_b_all, n_b_all
        method, method_label = "newcombe", "Newcombe hybrid score (independent)"
        test_name, p, ci, certificate = _unpaired_test(
            args.test, (k_a, n_a, k_b, n_b), alternative, conf
        )
    from evalsim.stats.two_sample.fisher import fisher_pvalue

    fisher_p = float(fisher_pvalue(k_a_all, n_a_all, k_b_all, n_b_all))
    boschloo_p, boschloo_note = _boschloo(k_a_all, n_a_all, k_b_all, n_b_all)
    reject, excludes = _decide(p, ci[0], ci[1], alpha, alternative)
    mde, mde_rule = _mde(pa, n_a, n_b, alpha, (k_a + k_b) / (n_a + n_b))  # at 80% power
    decision = Decision(
        a=args.a,
        b=args.b,
        k_a=k_a,
        n_a=n_a,
        k_b=k_b,
        n_b=n_b,
        paired=pa is not None,
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
    return Comparison(
        decision=decision,
        k_a_all=k_a_all,
        n_a_all=n_a_all,
        k_b_all=k_b_all,
        n_b_all=n_b_all,
        fisher_p=fisher_p,
        boschloo_p=boschloo_p,
        boschloo_note=boschloo_note,
        certificate=certificate,
        pairs=pa,
        pairing_columns=tuple(pairing_key(df)) if pa is not None else (),
        interval_method=method,
        mde_rule=mde_rule,
        notes=tuple(notes),
    )


#: The sidedness column of the tests table, by --alternative.
_SIDE = {"two-sided": "two-sided", "greater": "one-sided, B > A", "less": "one-sided, B < A"}

#: The paired intervals' rows of the difference table, by method id.
_PAIRED_INTERVAL_LABELS = {
    "tango": "Tango score (paired): goes with the verdict",
    "newcombe": "Newcombe hybrid score (paired, method 10)",
    "wald": "Wald (paired), reference",
}


def _tests_rows(c: Comparison) -> list[list]:
    """The tests table: the deciding test first, then the secondary rows."""
    d, pa = c.decision, c.pairs
    fisher = TWO_SAMPLE_TESTS["fisher"].label
    rows = [
        [
            f"{d.test_name} ({'paired' if d.paired else 'unpaired'})",
            _p(d.pvalue),
            _SIDE[d.alternative],
        ]
    ]
    if pa is not None:
        rows.append(["McNemar mid-p (paired)", _p(pa.midp_two_sided), "secondary; two-sided"])
        rows.append([f"{fisher} (unpaired)", _p(c.fisher_p), "secondary; ignores pairing"])
    elif d.one_sided:
        rows.append([fisher, _p(c.fisher_p), "secondary; two-sided"])
    rows.append(
        [
            f"{TWO_SAMPLE_TESTS['boschloo'].label} (unpaired)",
            _p(c.boschloo_p),
            "secondary; two-sided" if c.boschloo_p is not None else c.boschloo_note,
        ]
    )
    return rows


def _difference_table(c: Comparison, rep: Report) -> None:
    """The B - A table: the paired intervals, or the unpaired one that goes with the verdict."""
    d, pa = c.decision, c.pairs
    estimate = f"{100 * (d.rate_b - d.rate_a):+.1f}"
    if pa is not None:
        rows = [
            [_PAIRED_INTERVAL_LABELS[m], estimate, _ci_pts(lo, hi)]
            for m, (lo, hi) in pa.intervals.items()
        ]
    else:
        rows = [[f"{d.method_label}: goes with the verdict", estimate, _ci_pts(*d.interval)]]
    level = f"{100 * d.confidence:g}%"
    if d.one_sided:
        end = "lower" if d.alternative == "greater" else "upper"
        title = (
            f"Difference B - A (points; {level} two-sided interval, its {end} end the "
            f"{100 * (1 - d.alpha):g}% one-sided bound)"
        )
    else:
        title = f"Difference B - A (points, {level} interval)"
    rep.table(title, ["method", "estimate", "interval"], rows)


def _report(c: Comparison, log_hooks=None) -> Report:
    """The report of ``c``: its JSON record and, for text, markdown and LaTeX, its blocks.

    ``log_hooks(report)``, when given, adds the log hooks' tables and lines (and JSON keys)
    after the MDE and before the notes.
    """
    d, pa = c.decision, c.pairs
    rep = Report(c.as_json())
    rep.line(f"decision rule (stated before the data): {c.rule}")
    rows = [
        [d.a + " (A)", f"{d.k_a}/{d.n_a}", _pct(d.rate_a)],
        [d.b + " (B)", f"{d.k_b}/{d.n_b}", _pct(d.rate_b)],
    ]
    title = "Success rates" + (" on the paired conditions" if d.paired else "")
    rep.table(title, ["policy", "k/n", "rate"], rows)
    if d.paired and (c.n_a_all != d.n_a or c.n_b_all != d.n_b):
        rep.line(
            f"all trials: A {c.k_a_all}/{c.n_a_all} ({_pct(c.k_a_all / c.n_a_all)}), "
            f"B {c.k_b_all}/{c.n_b_all} ({_pct(c.k_b_all / c.n_b_all)}); not used for the verdict"
        )
    rep.table(
        "Tests of 'A and B have the same success rate'", ["test", "p", "note"], _tests_rows(c)
    )
    rep.line("Only the first test decides; the rows marked secondary are for reference.")
    if pa is not None:
        rep.table(
            f"Paired outcomes (same {'/'.join(c.pairing_columns)})",
            ["", "B succeeded", "B failed"],
            [
                ["A succeeded", pa.counts.both_succeed, pa.counts.a_only],
                ["A failed", pa.counts.b_only, pa.counts.both_fail],
            ],
        )
    _difference_table(c, rep)
    if d.mde is not None:
        rep.line(f"MDE at 80% power: {100 * d.mde:.1f} points ({c.mde_rule})")
    if log_hooks is not None:
        log_hooks(rep)
    for note in c.notes:
        rep.line(note)
    rep.line("")
    rep.line(f"verdict: {c.verdict}")
    return rep


def _plot(c: Comparison, path: str) -> None:
    """Draw A's and B's rates with their Wilson intervals to ``path``."""
    from evalsim.stats.proportion.intervals import wilson_interval

    d = c.decision
    plot_rows = []
    for name, k, n in ((d.a, d.k_a, d.n_a), (d.b, d.k_b, d.n_b)):
        w = wilson_interval(k, n, confidence=1 - d.alpha)
        plot_rows.append({"label": name, "rate": k / n, "lower": w.lower, "upper": w.upper})
    plot_rates(plot_rows, path, f"{d.a} vs {d.b}", 1 - d.alpha)


def cmd_compare(args) -> Report:
    if args.by == "task":  # per-task tables and pooled verdicts: cli/by_task.py
        return by_task.cmd_compare_by_task(args)
    check_plot_path(args.plot)
    df, a, b = _select(args)
    result = compare_trials(args, df, a, b)
    hooks = None
    if not isinstance(df, TrialTable):  # a small-log table has no hook to run (see _select)
        hooks = functools.partial(apply_log_hooks, args, df)
    rep = _report(result, hooks)
    if args.plot:
        _plot(result, args.plot)
    return rep


def _ci_pts(lo: float, hi: float) -> str:
    return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"


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
