"""The answer of ``evalsim rank``: two or more policies ranked over the tasks, with letters
(:func:`rank_log` -> :class:`Ranking`).

Every pair of policies is compared by the exact stratified test over the tasks (on a paired
log, the exact stratified McNemar test), the pairwise p-values Holm-adjusted together; the
compact letter display says which policies are not detectably different. The numbers are
:func:`evalsim.stats.multi.rank.rank_policies`'; this module picks the letters and the notes
that go with the chosen reading of the tasks (fixed, or a sample).

References
----------
Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
comparisons. J. Comput. Graph. Stat. 13(2), 456-466. Davison, A. C., & Hinkley, D. V. (1997).
Bootstrap Methods and their Application, Cambridge University Press, section 2.4.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from evalsim._records import ODDS_RATIO_CI, record
from evalsim.answers.paired_log import rank_discordant_counts

#: ``tasks_as_sample`` warns below this many tasks: a bootstrap over T tasks draws from T
#: values, and with a handful of tasks its percentiles say little about a population of
#: tasks (Davison and Hinkley 1997, section 2.4: the bootstrap needs the sample to stand
#: in for the population).
MIN_TASKS_AS_SAMPLE = 10


def natural_key(text: str) -> tuple:
    """Sort key: 'sigma2' before 'sigma10'."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text))


def seeds_per_cell(df) -> int | None:
    """The most training seeds any policy ran on any task; None without a (full) seed column.

    Issue 45, item 18: with one seed per policy and task the per-seed IQM and its bootstrap
    interval are degenerate (zero width), so ``rank`` says that one seed gives no
    seed-to-seed interval instead of printing them.
    """
    if "seed" not in df.columns or (df["seed"] == "").any():
        return None
    return int(df.groupby(["task", "policy"])["seed"].nunique().max())


def _nan_none(x):
    return None if isinstance(x, float) and math.isnan(x) else x


@dataclass(frozen=True)
class Ranking:
    """What ``rank`` found.

    Attributes
    ----------
    policies, tasks : tuple of str
        In natural order.
    n_trials : int
    result : evalsim.stats.multi.rank.Ranking
        The pairwise tests, intervals and order, with the level (``alpha``, ``confidence``)
        and the reading of the tasks (``tasks``) they were computed at.
    frame : pandas.DataFrame
        One row per policy (:func:`evalsim.stats.multi.rank.ranking_frame`), with the macro
        interval and the letters of the chosen reading of the tasks. Not to be mutated.
    runs : list or None
        The per-seed runs the IQM read (None without two or more seeds per cell).
    seeds : int or None
        :func:`seeds_per_cell`.
    notes : tuple of str
        The reader's notes and warnings, then the ranking's.
    bootstrap_reps, bootstrap_seed : int
    """

    policies: tuple
    tasks: tuple
    n_trials: int
    result: object
    frame: object
    runs: object
    seeds: int | None
    notes: tuple
    bootstrap_reps: int
    bootstrap_seed: int

    @property
    def alpha(self) -> float:
        """The level of the Holm-adjusted pairwise tests."""
        return self.result.alpha

    @property
    def confidence(self) -> float:
        """The level of the intervals, 1 - alpha."""
        return self.result.confidence

    @property
    def mode(self) -> str:
        """``"fixed"`` (tasks fixed, the default) or ``"sample"``: the reading of the tasks."""
        return self.result.tasks

    def differs(self, q) -> bool:
        """Whether the pair ``q`` differs in the chosen reading: Holm (tasks fixed), or its
        simultaneous interval of the macro difference excludes 0 (tasks as a sample)."""
        return q.differ if self.mode == "fixed" else _excludes_0(q)

    def differing_pairs(self) -> list[tuple]:
        """(pair, better, worse, macro gap, lower, upper) of every differing pair, the
        better-ranked policy first, nearest in rank first."""
        rank_of = {p: i for i, p in enumerate(self.result.order)}
        out = []
        for q in self.result.pairs:
            if not self.differs(q):
                continue
            flip = rank_of[q.second] < rank_of[q.first]  # show the better-ranked policy first
            better, worse = (q.second, q.first) if flip else (q.first, q.second)
            sign = 1.0 if flip else -1.0  # diff_macro is second - first
            lo, hi = sorted((sign * q.diff_lower, sign * q.diff_upper))
            key = (rank_of[worse] - rank_of[better], rank_of[better])
            out.append((key, (q, better, worse, sign * q.diff_macro, lo, hi)))
        out.sort(key=lambda d: d[0])  # nearest in rank first: the informative separations
        return [d[1] for d in out]

    def to_dict(self, plot: str | None = None) -> dict:
        """The JSON record of ``rank --json`` (``plot``: the figure's path, if drawn)."""
        return {
            "alpha": self.alpha,
            "confidence": self.confidence,
            "tasks": list(self.tasks),
            "ranking": [
                {k: _nan_none(v) for k, v in row.items() if k != "sigma_mm"}
                for row in self.frame.to_dict(orient="records")
            ],
            "pairs": [_pair_record(q) for q in self.result.pairs],
            "test": self.result.test,
            "critical_value": self.result.critical_value,
            "seeds_per_cell": self.seeds,
            "tasks_as": self.mode,
            "notes": list(self.notes),
            "bootstrap_reps": self.bootstrap_reps,
            "bootstrap_seed": self.bootstrap_seed,
            "plot": plot,
        }


def _excludes_0(q) -> bool:
    """Whether the pair's simultaneous interval of the macro difference excludes 0."""
    return not (q.diff_lower <= 0.0 <= q.diff_upper)


#: ``rank --json``'s record of a pair (:class:`evalsim.stats.multi.rank.PairResult`).
PAIR_KEYS = (
    "first",
    "second",
    "pvalue",
    "pvalue_holm",
    "differ",
    ("interval_excludes_0", _excludes_0),
    "odds_ratio",
    ODDS_RATIO_CI,
    "diff_macro",
    ("diff_macro_simultaneous_ci", "diff_lower", "diff_upper"),
)
#: Its last keys: the probability of improvement, undefined (None) without seeds.
PAIR_PROB_KEYS = (
    "prob_improvement",
    ("prob_improvement_ci", "prob_improvement_lower", "prob_improvement_upper"),
)


def _pair_record(q) -> dict:
    return {**record(q, PAIR_KEYS), **record(q, PAIR_PROB_KEYS, clean=_nan_none)}


def _sample_letters(r, grid, frame, tasks, notes) -> None:
    """Letters from the task-bootstrap intervals: a pair differs when its simultaneous
    interval of the macro difference excludes 0."""
    from evalsim.stats.multi.rank import compact_letter_display

    m = len(grid.policies)
    idx = {p: i for i, p in enumerate(grid.policies)}
    differ = np.zeros((m, m), dtype=bool)
    for q in r.pairs:
        d = _excludes_0(q)
        differ[idx[q.first], idx[q.second]] = differ[idx[q.second], idx[q.first]] = d
    letters = compact_letter_display(grid.policies, differ, [idx[p] for p in r.order])
    frame["letters"] = [letters[p] for p in frame["policy"]]
    if len(tasks) < MIN_TASKS_AS_SAMPLE:
        notes.append(
            f"warning: --tasks-as-sample with {len(tasks)} task(s): a bootstrap over "
            f"{len(tasks)} tasks cannot support 'tasks as a sample' of a larger population "
            f"(fewer than {MIN_TASKS_AS_SAMPLE}); its intervals and letters are rough; "
            "the default (tasks fixed) answers for these tasks"
        )


def _fixed_interval(r, frame, notes) -> None:
    """The per-policy interval with the tasks fixed too (episodes redrawn, tasks kept), and
    a note on the pairs where the exact test and the simultaneous interval disagree."""
    frame["macro_lower"] = [r.aggregates[p].macro_fixed_lower for p in frame["policy"]]
    frame["macro_upper"] = [r.aggregates[p].macro_fixed_upper for p in frame["policy"]]
    odd = [q for q in r.pairs if q.differ != _excludes_0(q)]
    if odd:
        notes.append(
            "note: the exact test and the simultaneous interval disagree on "
            + ", ".join(f"{q.first} vs {q.second}" for q in odd)
            + " (both treat the tasks as fixed; the test compares odds, the interval the "
            "macro rates): read these pairs as borderline"
        )


def rank_log(
    df,
    *,
    alpha: float = 0.05,
    bootstrap_reps: int = 2000,
    bootstrap_seed: int = 0,
    tasks_as_sample: bool = False,
    unpaired: bool = False,
    before_bootstrap=None,
) -> Ranking:
    """Rank the policies of a trial table over its tasks.

    Parameters
    ----------
    df : pandas.DataFrame
        The trials (``policy``, ``task``, ``success``; ``condition`` pairs them, ``seed``
        gives the IQM over seeds).
    alpha : float
        Level of the Holm-adjusted pairwise tests; the intervals are at 1 - alpha.
    bootstrap_reps, bootstrap_seed : int
        The bootstraps' replicates and seed.
    tasks_as_sample : bool
        Intervals and letters from the bootstrap over tasks (default: tasks fixed).
    unpaired : bool
        Ignore condition ids.
    before_bootstrap : callable, optional
        Called once the log has been checked and before the bootstraps run (the command
        checks its ``--plot`` path there).

    Returns
    -------
    Ranking

    Raises
    ------
    ValueError
        Fewer than 2 policies, a policy missing a task, or conditions that do not pair up.
    """
    from evalsim.stats.multi.aggregate import outcome_grid
    from evalsim.stats.multi.rank import rank_policies, ranking_frame

    policies = sorted(set(df["policy"]), key=natural_key)
    if len(policies) < 2:
        raise ValueError(f"rank needs at least 2 policies, the log has {', '.join(policies)}")
    tasks = sorted(set(df["task"]), key=natural_key)
    grid = outcome_grid(df, tasks=tasks, policies=policies)
    paired = rank_discordant_counts(df, policies, tasks, unpaired)
    runs = None
    seeds = seeds_per_cell(df)
    if seeds is not None and seeds >= 2:  # one seed gives no seed-to-seed interval (item 18)
        runs = [
            [df[(df["task"] == t) & (df["policy"] == p)]["seed"].to_numpy() for p in policies]
            for t in tasks
        ]
    conf = 1 - alpha
    mode = "sample" if tasks_as_sample else "fixed"
    if before_bootstrap is not None:
        before_bootstrap()
    r = rank_policies(grid, runs, alpha, conf, bootstrap_reps, bootstrap_seed, mode, paired)
    frame = ranking_frame(r)
    notes = list(df.attrs.get("warnings", []))  # the reader's notes and warnings
    if mode == "fixed":
        _fixed_interval(r, frame, notes)
    else:
        _sample_letters(r, grid, frame, tasks, notes)
    return Ranking(
        policies=tuple(policies),
        tasks=tuple(tasks),
        n_trials=int(grid.n.sum()),
        result=r,
        frame=frame,
        runs=runs,
        seeds=seeds,
        notes=tuple(notes),
        bootstrap_reps=bootstrap_reps,
        bootstrap_seed=bootstrap_seed,
    )
