"""Lower bounds on the expected width of exact sim + real intervals, for issue 27's gain
target (at correlation 0.9 and n >= 50, at most 0.85x real-only Clopper-Pearson's expected
width at every grid point).

Two bounds, both at a law where the simulated rate p_S is *known* (N = infinity: the
simulated count then says everything it can):

:func:`discordant_family_ratio`
    The family of ``discordant_exact``: the real-only exact interval of Blaker at level
    1 - alpha_r (alpha_r = real_share alpha) intersected with a lower bound for p_R built
    from the simulated rate and the count n01 of real-fails / twin-succeeds pairs, and an
    upper bound built from p_S and n10 (real-succeeds / twin-fails), each valid at
    beta = (alpha - alpha_r) / 2, non-increasing in n01 (non-decreasing in n10).
    With p_S known the lower end is p_S - U(n01) for a level-beta upper bound U of p01 (it
    must hold at p10 = 0, where p_R = p_S - p01); a monotone U valid at every p01 is at
    least the one-sided Clopper-Pearson bound at every count (if U(j) < CP(j), a rate r in
    between has P_r(U(N01) < r) >= P_r(N01 <= j) > beta). So every member's interval
    contains [max(B_lo, p_S - CP_beta(n01)), min(B_hi, p_S + CP_beta(n10))] at every
    outcome, and its expected width is at least that interval's, enumerated exactly here
    over the pair table. This covers every *deterministic* discordant bound; it does not
    cover ``discordant_exact`` itself, whose combination with the simulated p-value makes
    the level at which n01 is read depend on k_sim, a randomization (it is narrower than
    this bound at p_R = 0.95, n = 50, share 0.7).
:func:`discordant_family_ratio` with ``randomized=True``
    The same family with the discordant bounds allowed to use any independent randomization
    (k_sim's, at any N): with p_S known, the lower end is max(B_lo, p_S - U) with U any
    randomized level-beta upper bound for p01 given n01. An LP over the laws of U given n01
    (placed in the cells of a grid of rates r_m, its value taken at the cell's favourable
    end) under the level constraints at the grid's rates (necessary conditions) gives an
    upper bound on E[lower end]; likewise a lower bound on E[upper end]. E[width] >= their
    difference. This family contains ``discordant_exact`` at every t, g, grid and N.
:func:`pratt_width_bound`
    Every exact interval (any construction, even randomized), by Pratt's identity
    E[width] >= integral over p != p_R of P(p in C) dp, where P(p in C) is at least the
    type-II error of the most powerful level-alpha test of "p_R = p" against the true law.
    That test is an LP over the outcomes (n1 twins succeed, k1 real successes among them, k0
    among the others) with level constraints at ``null_points`` laws on the line
    p_S a + (1 - p_S) b = p (a = P(real | twin succeeds), b = P(real | twin fails)); fewer
    constraints only make the test stronger, so the bound stays a lower bound. The integral
    is a midpoint sum on a grid of p (``step``).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, sparse, special, stats

from evalsim.stats.simreal import methods as _m
from evalsim.stats.simreal import real_only

__all__ = [
    "cp_expected_width",
    "discordant_family_ratio",
    "pratt_width_bound",
]


def _pair_outcomes(p_real: float, p_sim: float, correlation: float, n: int):
    """Every pair table as (n10, n01, k_real) with its probability (multinomial)."""
    p11, p10, p01, p00 = _m.joint_law(p_real, p_sim, correlation)
    i, j, n11 = [], [], []
    for a in range(n + 1):
        for b in range(n + 1 - a):
            c = np.arange(n - a - b + 1)
            i.append(np.full(c.size, a))
            j.append(np.full(c.size, b))
            n11.append(c)
    i, j, n11 = (np.concatenate(v) for v in (i, j, n11))
    n00 = n - i - j - n11
    logp = (
        special.gammaln(n + 1.0)
        - special.gammaln(i + 1.0)
        - special.gammaln(j + 1.0)
        - special.gammaln(n11 + 1.0)
        - special.gammaln(n00 + 1.0)
        + special.xlogy(i, p10)
        + special.xlogy(j, p01)
        + special.xlogy(n11, p11)
        + special.xlogy(n00, p00)
    )
    return i, j, n11 + i, np.exp(logp)


def _cp_upper_one_sided(k: np.ndarray, n: int, beta: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound at level 1 - beta (1 at k = n)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = special.betainccinv(k + 1.0, n - k, beta)
    return np.where(k >= n, 1.0, u)


def cp_expected_width(p_real: float, n: int, confidence: float = 0.95) -> float:
    """E[width] of the real-only Clopper-Pearson interval at rate p_real, n trials."""
    k = np.arange(n + 1)
    lo, hi = real_only.cp_bounds(k, n, 1.0 - confidence)
    return float(np.sum(stats.binom.pmf(k, n, p_real) * (hi - lo)))


#: Rates r_m of the randomized family's LP (:func:`discordant_family_ratio`): uniform plus
#: geometric towards 0.
_LP_RATES = np.unique(np.concatenate([np.linspace(0.0, 1.0, 201), np.geomspace(1e-5, 0.3, 200)]))


def _end_bound(joint: np.ndarray, real_end: np.ndarray, p_sim: float, n: int, beta, upper):
    """Bound on E[end] over the randomized family (the LP of the module docstring):
    ``joint[k, y]`` = P(real count k, discordant count y), ``real_end`` Blaker's end by k.
    Upper end: min over the family of E[min(B_hi, p_S + U)]; lower end: max of
    E[max(B_lo, p_S - U)]."""
    r = _LP_RATES
    m, y = r.size, n + 1
    if upper:
        value = np.minimum(real_end[:, None], p_sim + r[None, :])
    else:
        value = np.maximum(real_end[:, None], p_sim - r[None, :])
    cost = (joint.T @ value).ravel()  # variable (y, m): P(U in cell m | count y)
    pmf = stats.binom.pmf(np.arange(y)[None, :], n, r[:, None])  # (rate m', count y)
    below = np.tril(np.ones((m, m)), -1)  # [m', m]: U in cell m is below r_m'
    a_ub = sparse.csr_matrix((pmf[:, :, None] * below[:, None, :]).reshape(m, y * m))
    a_eq = sparse.kron(sparse.eye(y), np.ones((1, m)), format="csr")
    sign = 1.0 if upper else -1.0
    res = optimize.linprog(
        sign * cost,
        A_ub=a_ub,
        b_ub=np.full(m, beta),
        A_eq=a_eq,
        b_eq=np.ones(y),
        bounds=(0.0, 1.0),
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    return sign * float(res.fun)


def discordant_family_ratio(
    p_real: float,
    p_sim: float,
    correlation: float,
    n: int,
    real_shares,
    confidence: float = 0.95,
    randomized: bool = False,
) -> dict:
    """Lower bound on E[width] / E[CP width] for every interval of ``discordant_exact``'s
    family (module docstring), with p_S known, at each real share.

    Parameters
    ----------
    p_real, p_sim, correlation : float
        The joint law of (real, twin) (:func:`evalsim.stats.simreal.joint_law`).
    n : int
        Real trials.
    real_shares : sequence of float
        Shares of alpha on the real-only Blaker interval, each in (0, 1).
    confidence : float
    randomized : bool
        False: the family with deterministic monotone discordant bounds (exact enumeration);
        True: with randomized ones, which contains ``discordant_exact`` (two LPs a share).

    Returns
    -------
    dict
        ``ratio`` {share: bound}, ``min_ratio`` and ``argmin_share`` over the shares,
        ``cp_width`` (E[CP width]) and ``mass`` (enumerated probability, 1 up to rounding).
    """
    alpha = 1.0 - confidence
    i, j, k, p = _pair_outcomes(p_real, p_sim, correlation, n)
    by_n01 = np.zeros((n + 1, n + 1))
    by_n10 = np.zeros((n + 1, n + 1))
    np.add.at(by_n01, (k, j), p)
    np.add.at(by_n10, (k, i), p)
    cp_w = cp_expected_width(p_real, n, confidence)
    counts = np.arange(n + 1)
    ratio = {}
    for s in real_shares:
        alpha_r = float(s) * alpha
        beta = (alpha - alpha_r) / 2.0
        b_lo, b_hi = (np.asarray(v) for v in real_only.blaker_bounds(counts, n, alpha_r))
        if randomized:
            hi = _end_bound(by_n10, b_hi, p_sim, n, beta, upper=True)
            lo = _end_bound(by_n01, b_lo, p_sim, n, beta, upper=False)
            width = max(hi - lo, 0.0)
        else:
            u = _cp_upper_one_sided(counts, n, beta)
            lo = np.maximum(b_lo[k], p_sim - u[j])
            hi = np.minimum(b_hi[k], p_sim + u[i])
            width = float(np.sum(p * np.maximum(hi - lo, 0.0)))
        ratio[float(s)] = width / cp_w
    best = min(ratio, key=ratio.get)
    return {
        "ratio": ratio,
        "min_ratio": ratio[best],
        "argmin_share": best,
        "cp_width": cp_w,
        "mass": float(p.sum()),
    }


def _stratum_outcomes(n: int):
    rows = [(n1, k1, k0) for n1 in range(n + 1) for k1 in range(n1 + 1) for k0 in range(n - n1 + 1)]
    return np.array(rows, dtype=np.int64).T


def _stratum_pmf(x, n: int, p_sim: float, a: float, b: float) -> np.ndarray:
    n1, k1, k0 = x
    return (
        stats.binom.pmf(n1, n, p_sim) * stats.binom.pmf(k1, n1, a) * stats.binom.pmf(k0, n - n1, b)
    )


def _most_powerful_miss(x, n, p_sim, pmf_true, p, alpha, null_points) -> float:
    """Type-II error of the most powerful level-alpha test of p_R = p against the true law,
    over ``null_points`` null laws on the line p_S a + (1 - p_S) b = p (an LP)."""
    a_lo = max(0.0, (p - (1.0 - p_sim)) / p_sim)
    a_hi = min(1.0, p / p_sim)
    rows = []
    for a in np.linspace(a_lo, a_hi, null_points):
        b = min(max((p - p_sim * a) / (1.0 - p_sim), 0.0), 1.0)
        rows.append(_stratum_pmf(x, n, p_sim, a, b))
    res = optimize.linprog(
        -pmf_true,
        A_ub=np.array(rows),
        b_ub=np.full(null_points, alpha),
        bounds=(0.0, 1.0),
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"linprog failed at p = {p}: {res.message}")
    return max(1.0 + float(res.fun), 0.0)


def pratt_width_bound(
    p_real: float,
    p_sim: float,
    correlation: float,
    n: int,
    confidence: float = 0.95,
    step: float = 0.004,
    null_points: int = 41,
) -> dict:
    """Pratt lower bound on the expected width of *every* exact interval for p_R at one law
    with p_S known (module docstring).

    Returns
    -------
    dict
        ``width_bound``, ``cp_width``, ``ratio`` (their quotient), and the parts below and
        above p_R (``below``, ``above``).
    """
    alpha = 1.0 - confidence
    p11, p10, _, _ = _m.joint_law(p_real, p_sim, correlation)
    if not 0.0 < p_sim < 1.0:
        raise ValueError(f"p_sim must be in (0, 1), got {p_sim}")
    x = _stratum_outcomes(n)
    pmf_true = _stratum_pmf(x, n, p_sim, p11 / p_sim, p10 / (1.0 - p_sim))
    parts = {}
    for side, grid in (
        ("above", np.arange(p_real + step / 2.0, 1.0, step)),
        ("below", np.arange(p_real - step / 2.0, 0.0, -step)),
    ):
        total = 0.0
        for p in grid:
            miss = _most_powerful_miss(x, n, p_sim, pmf_true, p, alpha, null_points)
            total += step * miss
            if miss < 1e-9:
                break  # the rest is taken as 0, which only lowers the bound
        parts[side] = total
    cp_w = cp_expected_width(p_real, n, confidence)
    w = parts["above"] + parts["below"]
    return {"width_bound": w, "cp_width": cp_w, "ratio": w / cp_w, **parts}
