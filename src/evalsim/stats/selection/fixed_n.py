"""Picking the best of K checkpoints after n trials each: the exact probability of a correct
selection (PCS), the winner's curse, and the n per checkpoint for a stated PCS.

Each checkpoint (arm) ``i`` runs ``n`` trials; its count ``X_i ~ Binomial(n, p_i)``,
independent across arms (the planning model; see :func:`pcs_any_dependence` for a paired
design's least-favourable dependence). The pick is the arm with the most successes. A tie at
the top is settled by one of two stated rules (:data:`TIE_RULES`): ``"random"`` -- a uniform
draw among the tied arms, from a recorded seed -- or ``"no-pick"`` -- no checkpoint is chosen.

For an arm ``j`` and a count ``x``, ``P(j picked | X_j = x)`` is, under ``"no-pick"``,
``prod_{i != j} P(X_i < x)``; under ``"random"``, ``E[1 / (1 + T)]`` over the others with
``T`` the number tied at ``x`` (the others all at most ``x``), which is
``int_0^1 prod_{i != j} (P(X_i < x) + P(X_i = x) z) dz`` and is summed exactly from the
polynomial's coefficients. ``P(S = j) = sum_x P(X_j = x) P(j picked | X_j = x)`` (the PCS when
``j`` is the best arm), and the same sum weighted by ``x / n`` gives the expected reported
rate of the picked arm, whence the winner's-curse bias ``E[X_S / n - p_S]`` [3]_.

The indifference-zone formulation is Bechhofer's [1]_ (the best arm at ``p*``, the others
at most ``p* - delta``; for binomial arms, Sobel and Huyett [2]_): the least favourable
configuration puts every other arm at ``p* - delta``, since raising a rival's rate raises
its count stochastically and lowers the PCS.

References
----------
.. [1] Bechhofer, R. E. (1954). A single-sample multiple decision procedure for ranking
   means of normal populations with known variances. Ann. Math. Statist. 25, 16-39.
.. [2] Sobel, M. and Huyett, M. J. (1957). Selecting the best one of several binomial
   populations. Bell System Tech. J. 36, 537-576.
.. [3] Putter, J. and Rubinstein, D. (1968). On estimating the mean of a selected
   population. Technical report 165, University of Wisconsin; see also Sarkadi (1967) and
   the "winner's curse" literature (e.g. Zollner and Pritchard 2007, Am. J. Hum. Genet. 80).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from evalsim._records import record
from evalsim.stats._validate import check_n, check_open_interval, check_probability
from evalsim.stats.selection import _kernels as _k

__all__ = [
    "PLANNING_MODELS",
    "TIE_RULES",
    "PlanResult",
    "SelectionResult",
    "check_indifference_zone",
    "lfc_rates",
    "n_for_pcs",
    "pcs_any_dependence",
    "pcs_lfc",
    "selection_probabilities",
    "worst_pcs_over_range",
]

#: Tie rules at the top of the ranking: id -> (kernel code, words).
TIE_RULES = {
    "random": (_k.TIE_RANDOM, "a tie at the top is broken uniformly at random (recorded seed)"),
    "no-pick": (_k.TIE_NO_PICK, "a tie at the top picks no checkpoint (counted as not correct)"),
}

#: Planning models of a paired design (trials of every checkpoint on the same conditions).
PLANNING_MODELS = {
    "independent": "the checkpoints' outcomes are independent within a condition (exact PCS)",
    "any-dependence": (
        "least favourable over every within-condition dependence with these marginal rates: "
        "PCS >= 1 - sum_i max_dependence P(X_i >= X_best) (Bonferroni; each pairwise term "
        "bounded above rigorously on a partition of the joint success probability)"
    ),
}

#: Pieces of the joint-success-probability range in :func:`pcs_any_dependence`.
DEPENDENCE_PIECES = 256

#: The largest n per checkpoint the planners search.
N_MAX = 20000


def _tie(tie_rule: str) -> int:
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {sorted(TIE_RULES)}, got {tie_rule!r}")
    return TIE_RULES[tie_rule][0]


def _rates(rates) -> np.ndarray:
    p = np.atleast_1d(np.asarray(check_probability(rates, "rates"), dtype=np.float64))
    if p.ndim != 1 or p.size < 2:
        raise ValueError(f"selection needs at least 2 checkpoints (K >= 2), got rates {rates!r}")
    return np.ascontiguousarray(p)


@dataclass(frozen=True)
class SelectionResult:
    """Result of :func:`selection_probabilities`.

    Attributes
    ----------
    rates : tuple of float
        True success rates of the K checkpoints.
    n : int
        Trials per checkpoint.
    tie_rule : str
    best : int
        Index of the arm whose pick counts as correct.
    p_select : tuple of float
        ``P(S = j)`` for every arm.
    p_no_pick : float
        Probability that no checkpoint is picked (0 under ``"random"``).
    pcs : float
        ``P(S = best)``.
    expected_reported : float
        ``E[X_S / n | a pick]``: the picked checkpoint's reported rate, on average.
    expected_true : float
        ``E[p_S | a pick]``: the picked checkpoint's true rate, on average.
    bias : float
        ``expected_reported - expected_true``: the winner's curse (points = 100 x bias).
    bias_vs_best : float
        ``expected_reported - max(rates)``.
    """

    rates: tuple
    n: int
    tie_rule: str
    best: int
    p_select: tuple
    p_no_pick: float
    pcs: float
    expected_reported: float
    expected_true: float
    bias: float
    bias_vs_best: float

    @property
    def k(self) -> int:
        """The number of checkpoints."""
        return len(self.rates)

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        return {**record(self), "k": self.k}


def selection_probabilities(rates, n: int, tie_rule: str = "random", best=None):
    """Exact PCS and winner's-curse bias of picking the highest of K binomial counts.

    Parameters
    ----------
    rates : array_like of float, shape (K,)
        True success rates, K >= 2.
    n : int
        Trials per checkpoint (>= 1).
    tie_rule : {"random", "no-pick"}
    best : int, optional
        The arm whose pick is correct; default the first arm with the highest rate.

    Returns
    -------
    SelectionResult
    """
    p = _rates(rates)
    n = check_n(n, "n")
    code = _tie(tie_rule)
    if best is None:
        best = int(np.argmax(p))
    best = int(best)
    if not 0 <= best < p.size:
        raise ValueError(f"best must index one of the {p.size} arms, got {best!r}")
    pmf, below = _k.pmf_below_table(n, p)
    p_sel, e_count = _k.selection_sums(pmf, below, code)
    picked = float(p_sel.sum())
    e_rep = float(e_count.sum()) / n
    e_true = float((p_sel * p).sum())
    if picked > 0:
        e_rep, e_true = e_rep / picked, e_true / picked
    else:
        e_rep = e_true = math.nan
    return SelectionResult(
        rates=tuple(float(x) for x in p),
        n=n,
        tie_rule=tie_rule,
        best=best,
        p_select=tuple(float(x) for x in p_sel),
        p_no_pick=max(0.0, 1.0 - picked) if code == _k.TIE_NO_PICK else 0.0,
        pcs=float(p_sel[best]),
        expected_reported=e_rep,
        expected_true=e_true,
        bias=e_rep - e_true,
        bias_vs_best=e_rep - float(p.max()),
    )


def check_indifference_zone(k, p_star, delta, target=None) -> tuple[int, float, float]:
    """Validate (K, p*, delta[, P*]): K >= 2, 0 < delta <= p* <= 1, 1/K < P* < 1."""
    k = check_n(k, "k")
    if k < 2:
        raise ValueError(f"selection needs at least 2 checkpoints (K >= 2), got K = {k}")
    p_star = float(check_probability(p_star, "p_star"))
    if isinstance(delta, bool) or not isinstance(delta, int | float | np.floating):
        raise ValueError(f"delta must be a number in (0, p*], got {delta!r}")
    delta = float(delta)
    if not (0.0 < delta <= p_star):
        raise ValueError(f"delta must be in (0, p*] = (0, {p_star:g}], got {delta!r}")
    if target is not None:
        check_open_interval(target, "target PCS")
        if not target > 1.0 / k:
            raise ValueError(
                f"the target PCS P* must exceed 1/K = {1.0 / k:.4g} (a random pick), got {target!r}"
            )
    return k, p_star, delta


def lfc_rates(k: int, p_star: float, delta: float) -> np.ndarray:
    """The least favourable configuration: the best at ``p*``, the K - 1 others at
    ``p* - delta``."""
    k, p_star, delta = check_indifference_zone(k, p_star, delta)
    out = np.full(k, p_star - delta)
    out[0] = p_star
    return out


def pcs_lfc(k: int, n: int, p_star: float, delta: float, tie_rule: str = "random") -> float:
    """PCS at the least favourable configuration (O(n K), the rivals being exchangeable)."""
    k, p_star, delta = check_indifference_zone(k, p_star, delta)
    return float(_k.lfc_pcs(check_n(n, "n"), k, p_star, p_star - delta, _tie(tie_rule)))


def _grid(p_range, delta, points) -> np.ndarray:
    lo, hi = (float(check_probability(v, "p_star range")) for v in p_range)
    if not (delta <= lo <= hi):
        raise ValueError(f"the p* range must satisfy delta <= low <= high, got {p_range!r}")
    return np.unique(np.linspace(lo, hi, check_n(points, "points")))


def worst_pcs_over_range(
    k: int, n: int, delta: float, p_range=(0.5, 1.0), tie_rule="random", points: int = 201
) -> tuple[float, float]:
    """The smallest LFC PCS over ``p*`` on a grid of ``points`` values spanning ``p_range``.

    Returns ``(pcs, p_star_at_minimum)``. A grid minimum, not a certified infimum (the PCS
    is smooth in p*; the grid includes both ends).
    """
    check_indifference_zone(k, max(p_range), delta)
    code = _tie(tie_rule)
    grid = _grid(p_range, delta, points)
    vals = np.array([_k.lfc_pcs(check_n(n, "n"), int(k), g, g - delta, code) for g in grid])
    i = int(np.argmin(vals))
    return float(vals[i]), float(grid[i])


@dataclass(frozen=True)
class PlanResult:
    """Result of :func:`n_for_pcs`: the n per checkpoint and what it achieves."""

    k: int
    p_star: float
    delta: float
    target: float
    tie_rule: str
    model: str
    n: int
    pcs: float
    p_star_worst: float
    total_trials: int

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        return asdict(self)


def n_for_pcs(
    k: int,
    p_star: float,
    delta: float,
    target: float = 0.9,
    tie_rule: str = "random",
    p_range=None,
    model: str = "independent",
    n_max: int = N_MAX,
) -> PlanResult:
    """The smallest n per checkpoint with PCS >= ``target`` at the least favourable
    configuration (``p*`` fixed, or the worst ``p*`` over ``p_range``).

    Parameters
    ----------
    k, p_star, delta, target
        K >= 2 checkpoints, the best at ``p*``, the others at ``p* - delta``; P* in (1/K, 1).
    tie_rule : {"random", "no-pick"}
    p_range : (float, float), optional
        Plan for every ``p*`` in this range (a 201-point grid); ``p_star`` is then ignored.
    model : {"independent", "any-dependence"}
        :data:`PLANNING_MODELS`: the exact PCS of independent arms, or the any-dependence
        lower bound of :func:`pcs_any_dependence` (a paired design, least favourable).
    n_max : int
        Search limit; a ValueError beyond it.

    Returns
    -------
    PlanResult

    Notes
    -----
    Independent arms: the first n (scanning 1, 2, ...) at which the PCS reaches ``target``
    -- at every grid ``p*`` for a range (the largest of the per-p* answers, then raised
    until the whole grid holds). Discreteness can make the PCS dip by tiny amounts as n
    grows; the n returned is the first that reaches the target, as a sample size is read.
    ``"any-dependence"``: the bound rises with n; its n is found by doubling and bisection.
    """
    k, p_star, delta = check_indifference_zone(
        k, p_star if p_range is None else max(p_range), delta, target
    )
    code = _tie(tie_rule)
    if model not in PLANNING_MODELS:
        raise ValueError(f"model must be one of {sorted(PLANNING_MODELS)}, got {model!r}")
    n_max = check_n(n_max, "n_max")
    grid = np.array([p_star]) if p_range is None else _grid(p_range, delta, 201)
    if model == "independent":
        n = 0
        for g in grid:
            ng, _ = _k.lfc_first_n(k, g, g - delta, code, target, n_max)
            if ng == 0:
                raise ValueError(f"no n <= {n_max} reaches PCS {target:g} at p* = {g:g}")
            n = max(n, int(ng))

        def pcs_at(m):
            vals = [_k.lfc_pcs(m, k, g, g - delta, code) for g in grid]
            i = int(np.argmin(vals))
            return float(vals[i]), float(grid[i])

        val, worst = pcs_at(n)
        while val < target:
            n += 1
            if n > n_max:
                raise ValueError(f"no n <= {n_max} reaches PCS {target:g} over the p* range")
            val, worst = pcs_at(n)
    else:

        def pcs_at(m):
            vals = [pcs_any_dependence(lfc_rates(k, g, delta), m) for g in grid]
            i = int(np.argmin(vals))
            return float(vals[i]), float(grid[i])

        hi = 1
        while pcs_at(hi)[0] < target:
            hi *= 2
            if hi > n_max:
                raise ValueError(f"no n <= {n_max} reaches PCS {target:g} (any dependence)")
        lo = hi // 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if pcs_at(mid)[0] >= target:
                hi = mid
            else:
                lo = mid
        n = hi
        val, worst = pcs_at(n)
    return PlanResult(
        k=k,
        p_star=float(p_star) if p_range is None else math.nan,
        delta=delta,
        target=float(target),
        tie_rule=tie_rule,
        model=model,
        n=int(n),
        pcs=val,
        p_star_worst=worst,
        total_trials=int(n) * k,
    )


def pcs_any_dependence(rates, n: int, best=None, pieces: int = DEPENDENCE_PIECES) -> float:
    """A lower bound on the PCS of a paired design that holds for every within-condition
    dependence of the arms' outcomes (conditions independent, marginal rates fixed).

    ``1 - sum_{i != best} max P(X_i >= X_best)``: the union bound over the rivals, each term
    the largest over the two arms' joint law in a condition (the joint success probability
    ``pi`` in its Frechet range), bounded above on ``pieces`` sub-intervals of ``pi``
    (:func:`_kernels.pair_any_dependence_bound`). Ties count as wrong, so the bound holds
    under both tie rules. Returns a value in [0, 1].
    """
    p = _rates(rates)
    n = check_n(n, "n")
    best = int(np.argmax(p)) if best is None else int(best)
    total = 0.0
    for i in range(p.size):
        if i != best:
            total += _k.pair_any_dependence_bound(n, p[best], p[i], check_n(pieces, "pieces"))
    return max(0.0, 1.0 - total)
