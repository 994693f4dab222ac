"""The result of ``evalsim compare``: one frozen :class:`Comparison`, computed once.

:func:`compare_trials` runs the stated decision rule on the selected trials (exact McNemar
with the Tango interval when they pair up, else Fisher's test, or a certified unconditional
test of the registry, with the Newcombe interval), adds the secondary rows and the MDE, and
returns the :class:`Comparison` whose verdict sentence (:attr:`Comparison.verdict`) and JSON
record (:meth:`Comparison.as_json`) the renderers of :mod:`evalsim.cli.compare` read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from evalsim._log_files import pairing_key
from evalsim.cli import _tests
from evalsim.cli._common import (
    FISHER_MDE_EXACT_MAX_N,
    BadInput,
    _p,
    _paired_mde,
    _pct,
)
from evalsim.cli.compare_input import pair_trials
from evalsim.stats.decision import rejects
from evalsim.stats.names import TWO_SAMPLE_TESTS
from evalsim.stats.rates import TwoArmRates

if TYPE_CHECKING:
    from evalsim.stats.two_sample.paired import PairedCounts

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).


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
    )

    p = float(mcnemar_pvalue(b_only, a_only, alternative))
    midp = float(mcnemar_exact(a_only, b_only).midp_pvalue)
    counts_b_first = PairedCounts(both, b_only, a_only, neither)
    intervals = {
        m: counts_b_first.difference_interval(m, conf).bounds()
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
    all read this object (:func:`evalsim.cli.compare._report`, :meth:`as_json`).

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
        ra, rb = role_labels(d.a, d.b)
        return (
            f"{d.test_name} test of '{_in_roles(ALTERNATIVE_WORDS[d.alternative], ra, rb)}', "
            "reject when p < "
            f"{d.alpha:g} (a p within 1e-9 of alpha counts as equal); a winner is declared only "
            f"when the {d.method_label} {'one-sided bound' if d.one_sided else 'interval'} for "
            f"{rb} - {ra} ({100 * (1 - d.alpha):g}%) agrees"
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
    (k_a, n_a, k_b, n_b): the registry's ``test`` (its certificate when it has one), and the
    Newcombe interval."""
    k_a, n_a, k_b, n_b = counts
    p, certificate = TWO_SAMPLE_TESTS[test].pvalue(k_b, n_b, k_a, n_a, alternative)
    from evalsim.stats.two_sample.paired import diff_interval

    ci = diff_interval(k_b, n_b, k_a, n_a, method="newcombe", confidence=conf).bounds()
    return TWO_SAMPLE_TESTS[test].label, p, ci, certificate


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


class _Primary(NamedTuple):
    """The analysis that decides (:func:`_primary_analysis`): the paired analysis or None,
    the counts (k_a, n_a, k_b, n_b) it uses, its test and its B - A interval."""

    pairs: PairedAnalysis | None
    counts: tuple[int, int, int, int]
    test_name: str
    pvalue: float
    interval: tuple[float, float]
    method: str
    method_label: str
    certificate: object


def _primary_analysis(args, df, a, b, all_counts, conf: float, notes: list) -> _Primary:
    """Exact McNemar with the Tango interval on the pairs when the trials ``a`` and ``b``
    pair up, else the unpaired test ``args.test`` with the Newcombe interval on
    ``all_counts`` = (k_a, n_a, k_b, n_b); its notes are appended to ``notes``."""
    merged, pair_note = pair_trials(args, df, a, b)
    if pair_note:
        notes.append(f"note: {pair_note}")
    if merged is None:
        test_name, p, ci, certificate = _unpaired_test(
            args.test, all_counts, args.alternative, conf
        )
        label = "Newcombe hybrid score (independent)"
        return _Primary(None, all_counts, test_name, p, ci, "newcombe", label, certificate)
    pa = _paired_analysis(merged, args.alternative, conf)
    pairs = pa.counts
    unmatched = all_counts[1] + all_counts[3] - 2 * pairs.n
    if unmatched:
        notes.append(
            f"note: {unmatched} trial(s) without a partner are left out of the test, the "
            "interval and the verdict (all three use the same paired trials)"
        )
    if args.test != _tests.DEFAULT_TEST:
        notes.append(
            f"note: --test {args.test} applies to unpaired trials; these pair up by "
            f"{'/'.join(pairing_key(df))}, so exact McNemar decides (give --unpaired to "
            f"decide by {TWO_SAMPLE_TESTS[args.test].label} on all trials instead)"
        )
    counts = (pairs.k_a, pairs.n, pairs.k_b, pairs.n)
    ci, label = pa.intervals["tango"], "Tango score (paired)"
    return _Primary(pa, counts, "exact McNemar", pa.pvalue, ci, "tango", label, None)


def compare_trials(args, df, a, b) -> Comparison:
    """Compare B with A on the trials ``a`` and ``b`` of the log ``df`` (as
    :func:`evalsim.cli.compare_input.select_trials` returns them), by the options in ``args``:
    the one result every output reads."""
    alpha, alternative = args.alpha, args.alternative
    one_sided = alternative != "two-sided"
    # The interval that goes with the test: two-sided 1 - alpha, or for a one-sided test the
    # matching one-sided bound (the 1 - 2 alpha two-sided interval's end).
    conf = 1 - 2 * alpha if one_sided else 1 - alpha
    if conf <= 0:
        raise BadInput(f"--alpha {alpha:g} is too large for a one-sided test (needs < 0.5)")
    all_counts = (int(a["success"].sum()), len(a), int(b["success"].sum()), len(b))
    k_a_all, n_a_all, k_b_all, n_b_all = all_counts
    notes = list(df.attrs["warnings"])  # both readers set it
    primary = _primary_analysis(args, df, a, b, all_counts, conf, notes)
    k_a, n_a, k_b, n_b = primary.counts
    p, ci = primary.pvalue, primary.interval
    from evalsim.stats.two_sample.fisher import fisher_pvalue

    fisher_p = float(fisher_pvalue(k_a_all, n_a_all, k_b_all, n_b_all))
    boschloo_p, boschloo_note = _tests.boschloo_secondary(k_a_all, n_a_all, k_b_all, n_b_all)
    reject, excludes = _decide(p, ci[0], ci[1], alpha, alternative)
    pbar = (k_a + k_b) / (n_a + n_b)
    mde, mde_rule = _mde(primary.pairs, n_a, n_b, alpha, pbar)  # at 80% power
    decision = Decision(
        a=args.a,
        b=args.b,
        k_a=k_a,
        n_a=n_a,
        k_b=k_b,
        n_b=n_b,
        paired=primary.pairs is not None,
        test_name=primary.test_name,
        pvalue=p,
        alpha=alpha,
        alternative=alternative,
        reject=reject,
        interval_agrees=excludes,
        interval=(ci[0], ci[1]),
        confidence=conf,
        method_label=primary.method_label,
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
        certificate=primary.certificate,
        pairs=primary.pairs,
        pairing_columns=tuple(pairing_key(df)) if primary.pairs is not None else (),
        interval_method=primary.method,
        mde_rule=mde_rule,
        notes=tuple(notes),
    )


def role_labels(a: str, b: str) -> tuple[str, str]:
    """The words for the roles ``--a`` and ``--b`` in the report: "A" and "B", or the
    policies' own names when a name is the other role's letter (a policy "B" run as ``--a``),
    where "B - A" would read backwards (issue 45, item 22)."""
    if a.strip().casefold() == "b" or b.strip().casefold() == "a":
        return a, b
    return "A", "B"


def _in_roles(text: str, ra: str, rb: str) -> str:
    """``text`` about roles "A" and "B" (:data:`ALTERNATIVE_WORDS`) in the report's role words."""
    if (ra, rb) == ("A", "B"):
        return text
    return re.sub(r"\b[AB]\b", lambda m: ra if m.group() == "A" else rb, text)


def ci_points(lo: float, hi: float) -> str:
    return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"


def _verdict(d: Decision) -> tuple[str, str | None]:
    """The verdict sentence and the decision ("A", "B" or None)."""
    rate_a, rate_b, n_a, n_b, alpha = d.rate_a, d.rate_b, d.n_a, d.n_b, d.alpha
    alternative, ci, p = d.alternative, d.interval, d.pvalue
    ra, rb = role_labels(d.a, d.b)
    diff = f"{rb} - {ra}"
    if d.paired:
        n_text = f"on {n_a} paired conditions"
    else:
        n_text = f"at n = {n_a} per arm" if n_a == n_b else f"at n = {n_a} ({ra}) and {n_b} ({rb})"
    if rate_b > rate_a:
        better, hi_r, lo_r = d.b, rate_b, rate_a
    elif rate_a > rate_b:
        better, hi_r, lo_r = d.a, rate_a, rate_b
    else:
        better = None
    one_sided = alternative != "two-sided"
    if one_sided:
        bound = (
            f"{diff} >= {100 * ci[0]:+.1f} points"
            if alternative == "greater"
            else f"{diff} <= {100 * ci[1]:+.1f} points"
        )
        iv = f"{d.method_label} {100 * (1 - alpha):g}% one-sided bound: {bound}"
    else:
        level = f"{100 * d.confidence:g}%"
        iv = f"{d.method_label} {level} interval for {diff}: {ci_points(*ci)} points"
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
