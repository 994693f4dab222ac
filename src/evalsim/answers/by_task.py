"""The answer of ``evalsim compare --by task``: policy B vs A on every task, and across the
tasks (:func:`compare_by_task` -> :class:`TaskComparison`).

Per task: the rates with Wilson intervals and the exact test (exact McNemar when the task's
trials pair up by condition id, else Fisher's), the raw p and one adjusted p per multiplicity
correction of :data:`evalsim.stats.multi.tasks.CORRECTIONS`. Across tasks: the exact
stratified test (or, on a paired log, the exact stratified McNemar test) decides; CMH and
Breslow-Day are secondary; micro and macro success come with their bootstrap, MOVER and
naive intervals (:mod:`evalsim.stats.multi.aggregate`).

References
----------
Mantel, N., & Haenszel, W. (1959). Statistical aspects of the analysis of data from
retrospective studies of disease. JNCI 22(4), 719-748. Breslow, N. E., & Day, N. E. (1980).
Statistical Methods in Cancer Research I, IARC. Holm, S. (1979). A simple sequentially
rejective multiple test procedure. Scand. J. Statist. 6(2), 65-70.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalsim._records import ODDS_RATIO_CI, record
from evalsim.answers._format import p_text as _p
from evalsim.answers.plan import DEFAULT_TEST

if TYPE_CHECKING:
    import pandas as pd


def _pairing_keys(df: pd.DataFrame) -> list[str]:
    """Columns besides task that name a trial's starting state (as compare's pairing)."""
    if "condition" not in df.columns:
        return []
    return [c for c in ("seed", "condition") if c in df.columns]


#: The sidedness words of the tables, by alternative.
ALT_WORDS = {
    "two-sided": "two-sided",
    "greater": "one-sided, B > A",
    "less": "one-sided, B < A",
}


def across_decision(alternative: str, decide, alpha: float) -> str | None:
    """The policy the across-task verdict declares better: "A", "B" or None (the rule of
    :func:`task_verdict`: the deciding test's p below alpha; two-sided, the side of its odds
    ratio B vs A)."""
    if not decide.pvalue < alpha:
        return None
    if alternative == "two-sided":
        return "B" if decide.odds_ratio > 1 else "A"
    return "B" if alternative == "greater" else "A"


def task_verdict(c: TaskComparison) -> str:
    """The verdict sentence from the comparison's deciding across-task test (its p-value is
    for the comparison's alternative; its odds ratio is B vs A)."""
    a, b, alt, nt, alpha, decide = c.a, c.b, c.alternative, len(c.tasks), c.alpha, c.decision
    ci = f"{c.level} CI {decide.odds_ratio_lower:.2f} to {decide.odds_ratio_upper:.2f}"
    orr = f"common odds ratio B vs A {decide.odds_ratio:.2f} ({ci})"
    p = f"{c.decided_by} p = {_p(decide.pvalue)}"
    decided = across_decision(alt, decide, alpha)
    if decided is not None:
        better = b if decided == "B" else a
        worse = a if better == b else b
        side = "" if alt == "two-sided" else f", {ALT_WORDS[alt]}"
        verdict = f"across {nt} tasks {better} does better than {worse}: {p}{side} < {alpha:g}"
        verdict += f", {orr}"
    else:
        claim = {
            "two-sided": f"{a} and {b} are not detectably different",
            "greater": f"{b} is not shown better than {a}",
            "less": f"{b} is not shown worse than {a}",
        }[alt]
        verdict = f"across {nt} tasks {claim} ({p}, {ALT_WORDS[alt]}); the {orr}"
    verdict += f"; {c.n_differ} of {nt} tasks differ on their own after Holm"
    bd_p = c.cmh.breslow_day_pvalue
    if math.isfinite(bd_p) and bd_p < alpha:
        verdict += (
            f"; the odds ratio is not the same in every task (Breslow-Day p = "
            f"{_p(bd_p)}), so read the tasks one by one"
        )
    return verdict


class _OneSided:
    """An exact stratified result seen through one alternative (p-value swapped in)."""

    def __init__(self, res, pvalue):
        self.pvalue = pvalue
        self.odds_ratio = res.odds_ratio
        self.odds_ratio_lower = res.odds_ratio_lower
        self.odds_ratio_upper = res.odds_ratio_upper


#: The JSON record of a policy's :class:`~evalsim.stats.multi.aggregate.PolicyAggregate`.
AGGREGATE_KEYS = (
    "k",
    "n",
    "micro",
    ("micro_ci", "micro_lower", "micro_upper"),
    "macro",
    ("macro_ci", "macro_lower", "macro_upper"),
    ("macro_tasks_fixed_ci", "macro_fixed_lower", "macro_fixed_upper"),
    ("macro_mover_ci", "mover_lower", "mover_upper"),
    ("naive_ci", "naive_lower", "naive_upper"),
    ("naive_wilson_ci", "wilson_lower", "wilson_upper"),
    "width_ratio",
)
#: The JSON record of the CMH test, as ``compare --by task --json`` writes it.
CMH_KEYS = (
    "statistic",
    "pvalue",
    "pvalue_corrected",
    "odds_ratio",
    ODDS_RATIO_CI,
    ("informative_tasks", "n_informative"),
    ("alternative", lambda _: "two-sided"),
)
#: How the exact stratified test's two-sided p is defined, as the record states it.
EXACT_TWO_SIDED_RULE = "R mantelhaen.test(exact=TRUE): P(S=s) <= P(S=s_obs)(1+1e-7)"


def _mcnemar_record(smc, decision) -> dict:
    """The stratified McNemar test's record, its odds ratio seen B vs A (``decision``)."""
    return {
        **record(smc, (("b_only", "statistic"), ("discordant", "n_discordant"), "pvalue")),
        **record(decision, ("odds_ratio", ODDS_RATIO_CI)),
        "informative_tasks": smc.n_informative,
    }


@dataclass(frozen=True)
class TaskComparison:
    """What ``compare --by task`` found: the tests, and the verdict they give.

    The answers that follow from the tests are properties (``paired``, ``decided_by``,
    ``decision``, ``exact_pvalue``, ``n_differ``, ``verdict``, ``better``), one source each.

    Attributes
    ----------
    a, b : str
        The reference policy A and the policy B compared with it.
    alpha : float
        The level; the intervals are at ``confidence`` = 1 - alpha.
    alternative : str
        ``"two-sided"``, ``"greater"`` (B > A) or ``"less"``.
    tasks : tuple of dict
        One record per task: k/n, rate and Wilson interval of each policy, B - A, the test
        (``"mcnemar"`` or ``"fisher"``), its p and the adjusted p of every correction.
    pairing_keys : tuple of str
        The columns that paired the trials within a task (empty: unpaired).
    cmh, exact, mcnemar : object
        :func:`~evalsim.stats.multi.tasks.cmh_test`,
        :func:`~evalsim.stats.multi.tasks.exact_stratified_test` and (every task paired,
        else None) :func:`~evalsim.stats.multi.paired.stratified_mcnemar_test` results.
    aggregates : tuple
        A's and B's :func:`~evalsim.stats.multi.aggregate.aggregate_success` records.
    notes : tuple of str
    bootstrap_reps, bootstrap_seed : int
    tasks_as : str
        ``"fixed"`` (default) or ``"sample"``: which intervals the success table shows.
    """

    a: str
    b: str
    alpha: float
    alternative: str
    tasks: tuple
    pairing_keys: tuple
    cmh: object
    exact: object
    mcnemar: object
    aggregates: tuple
    notes: tuple
    bootstrap_reps: int
    bootstrap_seed: int
    tasks_as: str

    @property
    def confidence(self) -> float:
        """1 - alpha: the level of the intervals."""
        return 1 - self.alpha

    @property
    def level(self) -> str:
        """The confidence level as printed ("95%")."""
        return f"{100 * self.confidence:g}%"

    @property
    def paired(self) -> bool:
        """Every task paired up: the exact stratified McNemar test decides."""
        return self.mcnemar is not None

    @property
    def decided_by(self) -> str:
        """The deciding across-task test's name."""
        return "exact stratified McNemar (paired)" if self.paired else "exact stratified"

    @property
    def exact_pvalue(self) -> float:
        """The exact stratified p for ``alternative``."""
        ex = self.exact
        return {"two-sided": ex.pvalue, "greater": ex.pvalue_greater, "less": ex.pvalue_less}[
            self.alternative
        ]

    @property
    def decision(self):
        """The deciding test's p-value (for ``alternative``) and odds ratio B vs A with its
        interval (``pvalue``, ``odds_ratio``, ``odds_ratio_lower``, ``odds_ratio_upper``)."""
        if self.paired:
            return _paired_decision(self.mcnemar)
        return _OneSided(self.exact, self.exact_pvalue)

    @property
    def n_differ(self) -> int:
        """Tasks that differ on their own after Holm."""
        return sum(t["p_holm"] < self.alpha for t in self.tasks)

    @property
    def verdict(self) -> str:
        """The across-task verdict in one sentence (:func:`task_verdict`)."""
        return task_verdict(self)

    @property
    def better(self) -> str | None:
        """ "A", "B" or None: the policy the across-task verdict declares better."""
        return across_decision(self.alternative, self.decision, self.alpha)

    def to_dict(self, plot: str | None = None) -> dict:
        """The JSON record of ``compare --by task --json`` before the log hooks' blocks, the
        notes and the gate (the command adds those, in that order)."""
        return {
            **record(self, ("a", "b", "alpha", "alternative", "confidence")),
            "tasks": [dict(t) for t in self.tasks],
            **record(self, ("paired", "decided_by")),
            "cmh": record(self.cmh, CMH_KEYS),
            "breslow_day": record(
                self.cmh, (("statistic", "breslow_day_statistic"), ("pvalue", "breslow_day_pvalue"))
            ),
            "exact_stratified": {
                **record(self.exact, ("statistic", "support")),
                "pvalue": self.exact_pvalue,
                **record(self.exact, (("pvalue_two_sided", "pvalue"), "odds_ratio", ODDS_RATIO_CI)),
                "two_sided_rule": EXACT_TWO_SIDED_RULE,
            },
            "stratified_mcnemar": None
            if self.mcnemar is None
            else _mcnemar_record(self.mcnemar, self.decision),
            "aggregates": {
                policy: record(agg, AGGREGATE_KEYS)
                for policy, agg in zip((self.a, self.b), self.aggregates, strict=True)
            },
            **record(self, ("bootstrap_reps", "bootstrap_seed", "tasks_as")),
            "plot": plot,
            "verdict": self.verdict,
        }


def _task_records(rows, pairs, conf: float) -> list[dict]:
    from evalsim.stats.multi.tasks import CORRECTIONS
    from evalsim.stats.proportion.intervals import wilson_interval as wilson

    out = []
    for r, pr in zip(rows, pairs, strict=True):
        wa, wb = wilson(r.k_a, r.n_a, confidence=conf), wilson(r.k_b, r.n_b, confidence=conf)
        out.append(
            {
                "task": r.task,
                "k_a": r.k_a,
                "n_a": r.n_a,
                "rate_a": r.rate_a,
                "wilson_a": wa.bounds(),
                "k_b": r.k_b,
                "n_b": r.n_b,
                "rate_b": r.rate_b,
                "wilson_b": wb.bounds(),
                "diff": r.rate_b - r.rate_a,
                "test": r.test,
                "n_pairs": pr[2] if pr else None,
                "a_only": r.a_only,
                "b_only": r.b_only,
                "pvalue": r.pvalue,
                **{f"p_{m}": r.adjusted[m] for m in CORRECTIONS},
            }
        )
    return out


def _paired_decision(smc) -> _OneSided:
    """The paired test seen B vs A: its odds ratio is A-only / B-only, inverted here."""
    decide = _OneSided(smc, smc.pvalue)
    decide.odds_ratio = 1.0 / smc.odds_ratio if smc.odds_ratio else math.inf
    decide.odds_ratio_lower = 1.0 / smc.odds_ratio_upper if smc.odds_ratio_upper else math.inf
    decide.odds_ratio_upper = 1.0 / smc.odds_ratio_lower if smc.odds_ratio_lower else math.inf
    return decide


def compare_by_task(
    df,
    a: str,
    b: str,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    unpaired: bool = False,
    bootstrap_reps: int = 2000,
    bootstrap_seed: int = 0,
    tasks_as_sample: bool = False,
    test: str = DEFAULT_TEST,
) -> TaskComparison:
    """Policy ``b`` vs ``a`` on every task of a trial table, and across the tasks.

    Parameters
    ----------
    df : pandas.DataFrame
        The trials (``policy``, ``task``, ``success``; ``condition``, with ``seed``, pairs
        them within a task); rows of other policies are ignored.
    a, b : str
        The reference policy and the policy compared with it.
    alpha : float
        Level of the tests; the intervals are at 1 - alpha.
    alternative : str
        ``"two-sided"``, ``"greater"`` (B > A) or ``"less"``.
    unpaired : bool
        Ignore condition ids.
    bootstrap_reps, bootstrap_seed : int
        The success table's bootstraps.
    tasks_as_sample : bool
        The success table's intervals treat the tasks as a sample of a population of tasks.
    test : str
        The command's ``--test``: not used per task (each task gets exact McNemar or
        Fisher), which a note says when it is not the default.

    Returns
    -------
    TaskComparison

    Raises
    ------
    ValueError
        A policy missing a task (:func:`evalsim.stats.multi.aggregate.outcome_grid`).
    """
    from evalsim.stats.multi.aggregate import aggregate_success, outcome_grid, task_pairs
    from evalsim.stats.multi.paired import stratified_mcnemar_test
    from evalsim.stats.multi.tasks import cmh_test, exact_stratified_test, per_task_tests

    df = df[df["policy"].isin([a, b])].reset_index(drop=True)
    tasks = sorted(str(t) for t in df["task"].unique())
    grid = outcome_grid(df, tasks=tasks, policies=[a, b])
    conf = 1 - alpha
    keys = [] if unpaired else _pairing_keys(df)
    pairs_by_task = task_pairs(df, a, b, keys) if keys else {}
    pairs = [pairs_by_task.get(t) for t in grid.tasks]
    k_a, n_a, k_b, n_b = grid.k[:, 0], grid.n[:, 0], grid.k[:, 1], grid.n[:, 1]
    rows = per_task_tests(
        grid.tasks,
        k_a,
        n_a,
        k_b,
        n_b,
        pairs=[p[:2] if p else None for p in pairs],
        alpha=alpha,
        alternative=alternative,
    )
    all_paired = bool(pairs) and all(p is not None for p in pairs)
    smc = None
    if all_paired:
        # B first: "greater" = B's rate is the higher; odds ratio = A-only / B-only inverted
        smc = stratified_mcnemar_test(
            [p[1] for p in pairs], [p[0] for p in pairs], alternative, confidence=conf
        )
    aggs, _ = aggregate_success(grid, bootstrap_reps, conf, bootstrap_seed)
    notes = list(df.attrs.get("warnings", []))  # the reader's notes and warnings
    if test != DEFAULT_TEST:  # issue 45, item 10: never ignored silently
        notes.append(
            f"note: --test {test} is not used with --by task: each task gets its exact "
            "McNemar or Fisher test, and the exact stratified tests decide across tasks"
        )
    return TaskComparison(
        a=a,
        b=b,
        alpha=alpha,
        alternative=alternative,
        tasks=tuple(_task_records(rows, pairs, conf)),
        pairing_keys=tuple(keys),
        cmh=cmh_test(k_a, n_a, k_b, n_b, conf),
        exact=exact_stratified_test(k_a, n_a, k_b, n_b, conf),
        mcnemar=smc,
        aggregates=tuple(aggs),
        notes=tuple(notes),
        bootstrap_reps=bootstrap_reps,
        bootstrap_seed=bootstrap_seed,
        tasks_as="sample" if tasks_as_sample else "fixed",
    )
