"""The pick itself on a selection split, and the confirmation plan it hands on.

:func:`pick_checkpoint` picks the highest rate under a stated tie rule (a uniform draw from a
recorded seed, or no pick) and prices the pick: the plug-in winner's-curse inflation (the exact
bias of :func:`evalsim.stats.selection.fixed_n.selection_probabilities` at the observed rates
taken as true) and the PCS at the least favourable configuration for the n used.
:func:`confirmation_plan` is the plan of the confirmation study: the chosen checkpoint against
the baseline on fresh conditions, with n per arm from exact Fisher power; the selection's trials
and conditions are listed as excluded, and the estimate comes from the confirmation only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalsim._records import record
from evalsim.stats._validate import check_alpha, check_counts, check_open_interval
from evalsim.stats.selection.fixed_n import TIE_RULES, pcs_lfc, selection_probabilities

__all__ = [
    "PLAN_KIND",
    "PickResult",
    "check_fresh_conditions",
    "confirmation_plan",
    "pick_checkpoint",
]

#: The ``kind`` of a confirmation plan file (a study file may reference it).
PLAN_KIND = "evalsim-confirmation-plan"


@dataclass(frozen=True)
class PickResult:
    """Result of :func:`pick_checkpoint`.

    Attributes
    ----------
    names : tuple of str
    k, n : tuple of int
        Successes and trials per checkpoint.
    chosen : str or None
        The pick (None under "no-pick" with a tie at the top).
    tied : tuple of str
        The checkpoints that share the top rate.
    tie_rule : str
    tie_seed : int
    plugin_bias : float
        Exact expected inflation of the picked checkpoint's rate if the observed rates
        were the true ones (equal n per checkpoint; nan otherwise).
    pcs_lfc : float
        PCS at the least favourable configuration (best at the chosen rate clipped to
        [delta, 1], others delta lower) for this n; nan with unequal n.
    delta : float
    """

    names: tuple
    k: tuple
    n: tuple
    chosen: str | None
    tied: tuple
    tie_rule: str
    tie_seed: int
    plugin_bias: float
    pcs_lfc: float
    delta: float

    @property
    def rates(self) -> tuple:
        """Observed rates k / n."""
        return tuple(a / b for a, b in zip(self.k, self.n, strict=True))

    def to_dict(self) -> dict:
        """Plain-Python fields (for JSON)."""
        return {**record(self), "rates": list(self.rates)}


def pick_checkpoint(
    names, k, n, tie_rule: str = "random", tie_seed: int = 0, delta: float = 0.1
) -> PickResult:
    """Pick the checkpoint with the highest observed rate.

    Parameters
    ----------
    names : sequence of str
        K >= 2 checkpoints.
    k, n : array_like of int
        Successes and trials (every n >= 1).
    tie_rule : {"random", "no-pick"}
    tie_seed : int
        Seed of the uniform draw among tied checkpoints (``evalsim.seeding.rng_for(seed,
        "select-tie")``), recorded in the result.
    delta : float
        Indifference zone of the reported LFC PCS.
    """
    from evalsim.seeding import rng_for

    names = tuple(str(s) for s in names)
    k_arr, n_arr = check_counts(np.atleast_1d(k), np.atleast_1d(n))
    if len(names) < 2:
        raise ValueError(f"selection needs at least 2 checkpoints (K >= 2), got {list(names)}")
    if k_arr.size != len(names) or n_arr.size != len(names):
        raise ValueError(f"k and n must have one entry per checkpoint ({len(names)})")
    empty = [names[i] for i in range(len(names)) if n_arr[i] < 1]
    if empty:
        raise ValueError(f"checkpoint {empty[0]!r} has no trials")
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {sorted(TIE_RULES)}, got {tie_rule!r}")
    delta = check_open_interval(delta, "delta")
    # compare k_i / n_i exactly: k_i n_j against k_j n_i
    best = [0]
    for i in range(1, len(names)):
        lhs, rhs = int(k_arr[i]) * int(n_arr[best[0]]), int(k_arr[best[0]]) * int(n_arr[i])
        if lhs > rhs:
            best = [i]
        elif lhs == rhs:
            best.append(i)
    tied = tuple(names[i] for i in best)
    if len(best) == 1:
        chosen = names[best[0]]
    elif tie_rule == "no-pick":
        chosen = None
    else:
        draw = int(rng_for(int(tie_seed), "select-tie").integers(len(best)))
        chosen = names[best[draw]]
    equal_n = bool((n_arr == n_arr[0]).all())
    bias = pcs = math.nan
    if equal_n:
        m = int(n_arr[0])
        rates = k_arr / m
        bias = selection_probabilities(rates, m, tie_rule).bias
        top = float(rates.max())
        p_star = min(1.0, max(top, delta))
        pcs = pcs_lfc(len(names), m, p_star, delta, tie_rule)
    return PickResult(
        names=names,
        k=tuple(int(v) for v in k_arr),
        n=tuple(int(v) for v in n_arr),
        chosen=chosen,
        tied=tied,
        tie_rule=tie_rule,
        tie_seed=int(tie_seed),
        plugin_bias=float(bias),
        pcs_lfc=float(pcs),
        delta=delta,
    )


def confirmation_plan(
    pick: PickResult,
    baseline: str,
    baseline_rate: float,
    gap: float,
    alpha: float = 0.05,
    power: float = 0.8,
    excluded_conditions=(),
    sources=(),
) -> dict:
    """The confirmation study's plan, as a plain dict (the command writes it as YAML).

    The chosen checkpoint against ``baseline`` on fresh conditions, unpaired by design
    (interleaved), analysed by the exact two-sided Fisher test at ``alpha``; n per arm is
    the first n whose exact power against ``baseline_rate`` vs ``baseline_rate + gap``
    stays at ``power`` (:func:`evalsim.stats.two_sample.power.n_for_fisher_power`). The
    selection's rate of the chosen checkpoint is not used: it is biased by the pick.
    """
    from evalsim.stats.two_sample.power import n_for_fisher_power

    if pick.chosen is None:
        raise ValueError(
            "no checkpoint was picked (a tie under the no-pick rule): nothing to confirm"
        )
    alpha = check_alpha(alpha)
    power = check_open_interval(power, "power")
    baseline_rate = check_open_interval(baseline_rate, "baseline rate")
    gap = check_open_interval(gap, "gap")
    if baseline_rate + gap >= 1.0:
        raise ValueError(f"baseline rate + gap must stay below 1, got {baseline_rate:g} + {gap:g}")
    sized = n_for_fisher_power(baseline_rate, baseline_rate + gap, power, alpha)
    excluded = sorted({str(c) for c in excluded_conditions})
    return {
        "kind": PLAN_KIND,
        "version": 1,
        "selection": {
            "checkpoints": list(pick.names),
            "successes": list(pick.k),
            "trials": list(pick.n),
            "chosen": pick.chosen,
            "tie_rule": pick.tie_rule,
            "tie_seed": pick.tie_seed,
            "tied": list(pick.tied),
            "selection_rate_of_chosen": pick.rates[pick.names.index(pick.chosen)],
            "plugin_winners_curse_points": None
            if math.isnan(pick.plugin_bias)
            else round(100 * pick.plugin_bias, 3),
            "sources": list(sources),
        },
        "confirmation": {
            "arms": {"candidate": pick.chosen, "baseline": baseline},
            "conditions": "fresh: new positions or a fresh replicate, none of the selection's",
            "excluded_conditions": excluded,
            "design": "unpaired, the two arms interleaved",
            "test": "Fisher exact, two-sided",
            "alpha": alpha,
            "power": power,
            "baseline_rate": baseline_rate,
            "gap": gap,
            "n_per_arm": int(sized.n),
            "n_total": 2 * int(sized.n),
            "estimate_from": "confirmation trials only",
        },
        "statement": (
            "The selection trials never enter the confirmation's estimate: the chosen "
            "checkpoint's rate and the verdict come from the confirmation's fresh trials alone."
        ),
    }


def check_fresh_conditions(plan: dict, conditions) -> None:
    """Refuse confirmation trials that reuse a selection condition.

    ``plan``: a plan from :func:`confirmation_plan` (or its YAML file, loaded);
    ``conditions``: the confirmation trials' condition ids, written as the plan writes them
    (``task/condition``, with the seed between when the log has one). Raises ValueError
    naming the first reused condition, so that no selection trial can enter the
    confirmation's estimate.
    """
    if plan.get("kind") != PLAN_KIND:
        raise ValueError(f"not a confirmation plan (kind {plan.get('kind')!r})")
    used = set(plan["confirmation"]["excluded_conditions"])
    reused = sorted(used.intersection(str(c) for c in conditions))
    if reused:
        raise ValueError(
            f"{len(reused)} confirmation condition(s) were used for the selection (e.g. "
            f"{reused[0]}): the confirmation must run on fresh conditions"
        )
