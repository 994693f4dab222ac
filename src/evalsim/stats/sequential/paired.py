"""Paired sequential designs: boundaries on B's solo wins over the discordant pairs.

Both policies run on the same condition; a pair where only one succeeds is *discordant*.
Under "no difference" (on every condition the two policies have the same success chance,
and the two outcomes of a pair are independent given the condition) a discordant pair is a
fair coin -- "B only" or "A only" with probability 1/2 each -- whatever the success rate,
even when it drifts from condition to condition [1]_. The signs of the discordant pairs are
then independent of when discordant pairs occur, so a design whose verdicts depend on the
walk ``w`` (B-only pairs) over ``d`` (discordant pairs), stopped at a time that depends only
on the concordant/discordant pattern, has false-win rate ``E[P_{1/2}(crossing by D)]`` with
D the number of discordant pairs at the stop -- at most the largest over D, which
:func:`paired_certificate` computes exactly. This is the sequential form of the exact
McNemar test.

The boundaries spend alpha in the information fraction ``d / d_max`` (Lan-DeMets); when the
maximum number of pairs is reached first, with d discordant pairs, a final boundary spends
what is left of alpha at that d.

References
----------
.. [1] McNemar, Q. (1947), "Note on the sampling error of the difference between correlated
   proportions or percentages", Psychometrika 12, 153-157.
.. [2] Lan, K. K. G. & DeMets, D. L. (1983), "Discrete sequential boundaries for clinical
   trials", Biometrika 70(3), 659-663.
"""

from __future__ import annotations

import math
import time

import numpy as np

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.boundaries import kind_problem
from evalsim.stats.sequential import _paired_kernels as _pk
from evalsim.stats.sequential.core import (
    ALTERNATIVES,
    ROUNDING_ALLOWANCE,
    Certificate,
    OperatingCharacteristics,
    SequentialDesign,
    _check_choice,
    _check_futility,
    _verdict_dict,
    spending,
    spending_boundary,
)

__all__ = ["paired_certificate", "paired_design", "paired_oc", "paired_type1", "sign_z"]


def sign_z(w, d):
    """z of the sign test: ``(2 w - d) / sqrt(d)`` (0 when d = 0)."""
    w = np.asarray(w, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d > 0, (2.0 * w - d) / np.sqrt(np.maximum(d, 1.0)), 0.0)


def _futility_rows(d_max: int, futility: dict | None, two_sided: bool):
    lo = np.zeros(d_max + 1, dtype=np.int64)
    hi = np.full(d_max + 1, -1, dtype=np.int64)
    if futility is None:
        return lo, hi
    zf = futility["z"]
    for d in range(1, d_max + 1):
        w = np.arange(d + 1)
        z = sign_z(w, d)
        inside = np.abs(z) <= zf if two_sided else z <= zf
        if inside.any():
            lo[d] = int(w[inside].min())
            hi[d] = int(w[inside].max())
    return lo, hi


def paired_design(
    alpha=0.05,
    n_max=200,
    alternative="one-sided",
    spending_family="pocock",
    rho=None,
    d_max=None,
    futility=None,
) -> SequentialDesign:
    """A paired sequential design (sequential exact McNemar test).

    Parameters
    ----------
    alpha : float
        Worst-case false-win rate, for every nuisance rate.
    n_max : int
        Maximum number of pairs.
    alternative : {"one-sided", "two-sided"}
    spending_family : str
        A boundary family that paired designs take
        (:func:`evalsim.stats.boundaries.families_for`), all of them spending families:
        alpha is spent in the fraction ``d / d_max`` of discordant pairs.
    rho : float
        The family's parameter, when it has one (the exponent of the power family).
    d_max : int, optional
        Stop at this many discordant pairs (default ``n_max``).
    futility : dict, optional
        ``{"z": z_f, "from": t}``: stop for futility when the sign-test z of the discordant
        pairs is <= z_f (|z| <= z_f two-sided) from pair t on. Non-binding.

    Returns
    -------
    SequentialDesign
        With its exact certificate.
    """
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    d_max = n_max if d_max is None else check_n(d_max, "d_max")
    if d_max > n_max:
        raise ValueError(f"d_max must be at most n_max={n_max}, got {d_max!r}")
    _check_choice(alternative, "alternative", ALTERNATIVES)
    problem = kind_problem(spending_family, "paired")
    if problem is not None:
        raise ValueError(f"spending {spending_family!r} {problem}")
    futility = _check_futility(futility, n_max)
    two_sided = alternative == "two-sided"
    boundary = spending_boundary(spending_family, alpha, rho)
    tau = np.arange(d_max + 1) / d_max
    targets = spending(tau, alpha, spending_family, rho) * (1.0 - 1e-9)
    upper, lower, f_upper, f_lower, _, _ = _pk.sign_walk_spending(d_max, targets, two_sided)
    fut_lo, fut_hi = _futility_rows(d_max, futility, two_sided)
    design = SequentialDesign(
        kind="paired",
        alternative=alternative,
        alpha=alpha,
        n_max=n_max,
        boundary=boundary,
        look_sizes=np.arange(1, n_max + 1, dtype=np.int64),
        rows={
            "upper": upper,
            "lower": lower,
            "final_upper": f_upper,
            "final_lower": f_lower,
            "fut_lo": fut_lo,
            "fut_hi": fut_hi,
        },
        futility=futility,
        d_max=d_max,
    )
    return SequentialDesign(**{**design.__dict__, "certificate": paired_certificate(design)})


def _null_sizes(design: SequentialDesign) -> np.ndarray:
    """Worst P_{1/2}(false win) when the pair limit stops the walk at D = d, for d = 0..d_max.

    Futility stops are ignored (non-binding) unless the design's futility says
    ``"binding": true`` from the first pair (the optimal design,
    :mod:`evalsim.stats.sequential.optimal`); then they end the walk.
    When the last pair is discordant the walk meets d for the first time at the final look
    (interim rows at d' < d, final rows at d); otherwise it was checked at d earlier too
    (interim rows at d' <= d, then final rows at d). The larger of the two is kept. Computed
    from the design's own rows, so files edited by hand are checked too.
    """
    r = design.rows
    d_max = design.d_max
    two = design.two_sided
    # binding futility (the optimal design's, from the first pair): its stops end the walk
    binding = bool((design.futility or {}).get("binding")) and design.futility["from"] <= 1
    dist = np.zeros(d_max + 1)
    dist[0] = 1.0
    cum = 0.0
    out = np.zeros(d_max + 1)
    for d in range(d_max + 1):
        if d > 0:
            nxt = np.zeros(d_max + 1)
            nxt[: d + 1] += 0.5 * dist[: d + 1]
            nxt[1 : d + 1] += 0.5 * dist[:d]
            dist = nxt
        w = np.arange(d + 1)
        cur = dist[: d + 1]
        final = (w >= r["final_upper"][d]) | (two & (w <= r["final_lower"][d]))
        first_time = cum + float(cur[final].sum())
        if d == d_max:
            out[d] = first_time
            break
        hit = (w >= r["upper"][d]) | (two & (w <= r["lower"][d]))
        cum += float(cur[hit].sum())
        cur[hit] = 0.0
        if binding:
            cur[(w >= r["fut_lo"][d]) & (w <= r["fut_hi"][d])] = 0.0
        out[d] = max(first_time, cum + float(cur[final].sum()))
    return out


def paired_type1(design: SequentialDesign) -> float:
    """Worst-case false-win rate of a paired design over every nuisance (exact)."""
    return float(_null_sizes(design).max())


def paired_certificate(design: SequentialDesign) -> Certificate:
    """Exact worst case over the number of discordant pairs at the stop.

    Under "no difference" the false-win rate is the average of ``_null_sizes[D]`` over the
    law of D, whatever the nuisance; its supremum over nuisances is the largest entry.
    """
    start = time.perf_counter()
    sizes = _null_sizes(design)
    i = int(np.argmax(sizes))
    return Certificate(
        upper=float(sizes[i]) + ROUNDING_ALLOWANCE,
        attained=float(sizes[i]),
        p_at=None,
        method="exact: largest false-win rate over the number of discordant pairs at the stop",
        intervals=0,
        seconds=time.perf_counter() - start,
        discordant_at=i,
    )


def paired_oc(
    design: SequentialDesign, p_a=None, p_b=None, p10=None, p01=None
) -> OperatingCharacteristics:
    """Exact operating characteristics of a paired design (see ``operating_characteristics``)."""
    if p10 is None and p01 is None:
        if p_a is None or p_b is None:
            raise ValueError("a paired design needs p_a and p_b, or p10 and p01")
        p_a = check_probability(p_a, "p_a")
        p_b = check_probability(p_b, "p_b")
        p10, p01 = p_a * (1.0 - p_b), (1.0 - p_a) * p_b
    elif p10 is None or p01 is None:
        raise ValueError("give both p10 and p01 (A-only and B-only pair probabilities)")
    else:
        p10 = check_probability(p10, "p10")
        p01 = check_probability(p01, "p01")
        if p10 + p01 > 1.0 + 1e-12:
            raise ValueError(f"p10 + p01 must be at most 1, got {p10!r} + {p01!r}")
    r = design.rows
    fut_start = design.futility["from"] if design.futility else design.n_max + 1
    by = _pk.paired_oc(
        float(p10),
        float(p01),
        design.n_max,
        design.d_max,
        r["upper"],
        r["lower"],
        r["fut_lo"],
        r["fut_hi"],
        fut_start,
        r["final_upper"],
        r["final_lower"],
    )
    by = by[1:]
    stop = by.sum(axis=1)
    sizes = np.arange(1, design.n_max + 1, dtype=np.int64)
    return OperatingCharacteristics(
        p_a=p_a,
        p_b=p_b,
        stop_sizes=sizes,
        stop_prob=stop,
        verdicts=_verdict_dict(by),
        ess=float(stop @ sizes),
        p10=float(p10),
        p01=float(p01),
    )


def paired_walk_z(design: SequentialDesign, d: int) -> tuple[float, float]:
    """The sign-test z of the interim boundaries at d discordant pairs (upper, lower)."""
    r = design.rows
    up = r["upper"][d]
    lo = r["lower"][d]
    zu = float(sign_z(up, d)) if up <= d else math.inf
    zl = float(sign_z(lo, d)) if lo >= 0 else -math.inf
    return zu, zl
