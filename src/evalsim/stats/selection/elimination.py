"""Successive elimination of K checkpoints with a certified error, built from the certified
sequential designs of :mod:`evalsim.stats.sequential`.

Each round runs one trial of every surviving checkpoint, on the same condition. After the
round, the leader is the survivor with the most successes; every other survivor ``j`` that a
certified one-sided sequential test finds worse than the leader is dropped. The study stops
with one survivor, or after ``n_max`` rounds.

The error is split across comparisons (Bonferroni): every pairwise test is a design certified
at ``alpha / (K - 1)``. The best checkpoint ``b`` is eliminated only if, for some rival ``i``,
the test "i better than b" crossed its boundary on the rounds both ran; each such test, on the
full sequence of shared rounds, has false-win probability at most ``alpha / (K - 1)`` when
``p_i <= p_b`` (the crossing probability of a one-sided upper boundary rises with the rival's
rate, and is certified at equal rates over every nuisance), and stopping a pair's walk early
because other arms left can only remove crossings. Hence P(the best is eliminated) <=
alpha at every configuration of rates [1]_ [2]_:

- ``kind="paired"``: :func:`evalsim.stats.sequential.paired.paired_design` (the sign walk of
  the leader-only pairs over the discordant pairs, the sequential exact McNemar test); its
  certificate holds whatever the conditions do to the arms' outcomes, given the condition;
- ``kind="unpaired"``: :func:`evalsim.stats.sequential.designs.unpaired_design` (pooled z at
  every round, certified over every common rate by Bernstein subdivision); its certificate
  is for arms independent within a round.

Operating characteristics: exact by dynamic programming over the success counts for K <= 3
with the unpaired rows (``_elimination_kernels.elimination_dp3``) and over the sign walk for
K = 2 with the paired rows (``_elimination_kernels.elimination_dp2_paired``); by Monte Carlo
otherwise (paired rows at K = 3 need the six discordance counts of the three pairs, a state
space too large to sum), returned with standard errors and labelled as such.

References
----------
.. [1] Even-Dar, E., Mannor, S. and Mansour, Y. (2006). Action elimination and stopping
   conditions for the multi-armed bandit and reinforcement learning problems. JMLR 7,
   1079-1105.
.. [2] Paulson, E. (1964). A sequential procedure for selecting the population with the
   largest mean from k normal populations. Ann. Math. Statist. 35, 174-180.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.selection import _elimination_kernels as _k

__all__ = ["EliminationDesign", "EliminationOC", "elimination_design", "elimination_oc"]

KINDS = ("paired", "unpaired")

#: Exact dynamic programming for K <= this many arms (unpaired rows).
EXACT_MAX_K = 3


@dataclass(frozen=True, eq=False)
class EliminationDesign:
    """K checkpoints, ``n_max`` rounds, each pairwise test a certified design at
    ``alpha / (K - 1)`` (``pair_design``, with its certificate)."""

    k: int
    n_max: int
    alpha: float
    kind: str
    pair_alpha: float
    pair_design: object
    spending: str

    @property
    def certified_error(self) -> float:
        """Upper bound on P(the best checkpoint is eliminated): (K - 1) x the pairwise
        certificate."""
        return (self.k - 1) * float(self.pair_design.certificate.upper)

    def _rows(self):
        r = self.pair_design.rows
        if self.kind == "paired":
            return (
                _k.KIND_PAIRED,
                np.zeros((1, 1), dtype=np.int64),
                np.ascontiguousarray(r["upper"], dtype=np.int64),
                np.ascontiguousarray(r["final_upper"], dtype=np.int64),
            )
        dummy = np.zeros(1, dtype=np.int64)
        return _k.KIND_UNPAIRED, np.ascontiguousarray(r["upper"], dtype=np.int64), dummy, dummy


def elimination_design(
    k: int, alpha: float = 0.05, n_max: int = 100, kind: str = "paired", spending: str = "pocock"
) -> EliminationDesign:
    """Build the elimination rule: the pairwise certified design at ``alpha / (K - 1)``."""
    from evalsim.stats.sequential.designs import unpaired_design
    from evalsim.stats.sequential.paired import paired_design

    k = check_n(k, "k")
    if k < 2:
        raise ValueError(f"elimination needs at least 2 checkpoints (K >= 2), got K = {k}")
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    pair_alpha = alpha / (k - 1)
    if kind == "paired":
        design = paired_design(pair_alpha, n_max, "one-sided", spending)
    else:
        design = unpaired_design(pair_alpha, n_max, "one-sided", spending, looks="every")
    return EliminationDesign(k, n_max, alpha, kind, pair_alpha, design, spending)


@dataclass(frozen=True)
class EliminationOC:
    """Operating characteristics of an elimination design at given rates.

    ``method`` is ``"exact dynamic programming"`` or ``"Monte Carlo (reps)"``; the ``*_se``
    fields are Monte Carlo standard errors (0 when exact)."""

    rates: tuple
    method: str
    p_single_correct: float
    p_single: float
    p_best_eliminated: float
    expected_rounds: float
    expected_trials: float
    p_single_correct_se: float = 0.0
    p_best_eliminated_se: float = 0.0
    expected_rounds_se: float = 0.0
    expected_trials_se: float = 0.0
    median_rounds: float = math.nan

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        out = asdict(self)
        out["rates"] = list(self.rates)
        return out


def elimination_oc(
    design: EliminationDesign, rates, reps: int = 20000, seed: int = 0, exact=None
) -> EliminationOC:
    """P(a single correct survivor), P(a single survivor), P(the best is eliminated), and the
    expected rounds and trials of ``design`` at true ``rates`` (arms independent within a
    round).

    ``exact``: None = exact when possible (unpaired rows and K <= 3, or paired rows and
    K = 2), else Monte Carlo with
    ``reps`` studies from ``seed`` (an int or a ``numpy.random.Generator``); True demands
    exact (ValueError when not possible).
    """
    p = np.ascontiguousarray(np.atleast_1d(check_probability(rates, "rates")), dtype=np.float64)
    if p.size != design.k:
        raise ValueError(f"rates must have K = {design.k} entries, got {p.size}")
    can_exact = design.k <= (EXACT_MAX_K if design.kind == "unpaired" else 2)
    if exact and not can_exact:
        raise ValueError(
            f"exact operating characteristics need K <= {EXACT_MAX_K} (unpaired rows) or "
            "K = 2 (paired rows)"
        )
    kind, up2, up1, fin1 = design._rows()
    if can_exact and exact is not False:
        if design.kind == "unpaired":
            sc, single, out, rounds, trials = _k.elimination_dp3(p, design.n_max, up2)
        else:
            sc, single, out, rounds, trials = _k.elimination_dp2_paired(p, design.n_max, up1, fin1)
        return EliminationOC(
            tuple(float(v) for v in p),
            "exact dynamic programming",
            float(sc),
            float(single),
            float(out),
            float(rounds),
            float(trials),
        )
    reps = check_n(reps, "reps")
    single, correct, lost, rounds, trials = _k.elimination_mc(
        p, design.n_max, kind, up2, up1, fin1, reps, np.random.default_rng(seed)
    )

    def se(x):
        return float(np.std(x, ddof=1) / math.sqrt(reps)) if reps > 1 else math.nan

    return EliminationOC(
        rates=tuple(float(v) for v in p),
        method=f"Monte Carlo ({reps} studies)",
        p_single_correct=float(correct.mean()),
        p_single=float(single.mean()),
        p_best_eliminated=float(lost.mean()),
        expected_rounds=float(rounds.mean()),
        expected_trials=float(trials.mean()),
        p_single_correct_se=se(correct.astype(np.float64)),
        p_best_eliminated_se=se(lost.astype(np.float64)),
        expected_rounds_se=se(rounds.astype(np.float64)),
        expected_trials_se=se(trials.astype(np.float64)),
        median_rounds=float(np.median(rounds)),
    )
