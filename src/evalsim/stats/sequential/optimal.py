"""The optimal paired design: least expected pairs at one alternative, by backward induction.

For the walk of B's solo wins ``w`` over the discordant pairs ``d`` (see
:mod:`evalsim.stats.sequential.paired`), a design stops at each (d, w) with "B better", for
futility, or continues; when the ``n_max`` pairs run out it decides by its final rows. At an
alternative (A-only pairs with probability ``p10``, B-only ``p01``) the pairs run while the
walk stands at d number ``spent[d] = sum_{t<n_max} P(D_t = d)`` on average, so the expected
number of pairs of any walk design is ``sum_d spent[d] P_1(the walk continues at d)``: a
cost on the walk. Backward induction on the Lagrangian

    E_1[pairs] + lam0 P_0(B better) + lam1 P_1(no "B better")

[1]_ [2]_ gives, for each (lam0, lam1), the walk design of least Lagrangian; the multipliers
are searched (bisection in log lam0 for each lam1, then in log lam1) for the largest size
<= alpha and the smallest power >= the target. The design so found has the least expected
pairs at the alternative among all walk designs with futility binding, no verdict when the
pairs run out, size at most its own and power at least its own (the Lagrangian argument).
Its final rows then spend at each d what is left of alpha (power can only rise, the expected
pairs do not change), and it is certified exactly like every paired design
(:func:`evalsim.stats.sequential.paired.paired_certificate`, futility binding).

Size here is the worst case over every nuisance: under "no difference" the discordant signs
are fair coins whatever the rates, and the null walk run to ``d_max = n_max`` bounds every
pair count.

References
----------
.. [1] Eales, J. D. & Jennison, C. (1992), "An improved method for deriving optimal one-sided
   group sequential tests", Biometrika 79(1), 13-24.
.. [2] Jennison, C. & Turnbull, B. W. (2000), *Group Sequential Methods with Applications to
   Clinical Trials*, Chapman & Hall/CRC, chapter 4 (optimal tests by backward induction).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from evalsim._records import record
from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.sequential import _optimal_kernels as _ok
from evalsim.stats.sequential.core import SequentialDesign
from evalsim.stats.sequential.paired import paired_certificate, sign_z

__all__ = ["OptimalDesign", "optimal_paired_design", "pair_rates", "unpaired_lower_bound"]

#: Search of the multipliers: log lam1 on a grid of _GRID points in [-3, 12], refined by
#: _REFINE halvings where the power crosses the target; for each, _BISECTIONS halvings of
#: log lam0 in [-10, 60].
_GRID = 31
_REFINE = 30
_BISECTIONS = 28


def pair_rates(p_a, p_b, p10=None, p01=None) -> tuple[float, float]:
    """A-only and B-only pair probabilities: given, or from marginal rates (independent pair)."""
    if p10 is not None and p01 is not None:
        return check_probability(p10, "p10"), check_probability(p01, "p01")
    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    return p_a * (1.0 - p_b), (1.0 - p_a) * p_b


@dataclass(frozen=True)
class OptimalDesign:
    """Result of :func:`optimal_paired_design`.

    Attributes
    ----------
    design : SequentialDesign
        The certified design (boundary family ``optimal``).
    lam0, lam1 : float
        The Lagrange multipliers of size and of missed power.
    lagrangian : float
        Minimum of ``E_1[pairs] + lam0 size + lam1 (1 - power)`` over walk designs.
    size_walk, power_walk, ess : float
        The walk design's size (futility binding), power without final rows, expected pairs.
    lower_bound : float
        The largest ``L(lam0', lam1') - lam0' alpha - lam1' (1 - power)`` over the
        multipliers tried (L: the Lagrangian's minimum): no walk design (futility binding, no
        verdict at the pair limit) of size <= alpha and power >= the target has fewer
        expected pairs (weak duality).
    seconds : float
    """

    design: SequentialDesign
    lam0: float
    lam1: float
    lagrangian: float
    size_walk: float
    power_walk: float
    ess: float
    lower_bound: float
    seconds: float

    def to_dict(self) -> dict:
        return {
            "label": self.design.label,
            **record(self, ("lam0", "lam1", "size_walk", "power_walk", "ess", "lower_bound")),
            "max_type1_certified": self.design.certificate.upper,
        }


def _solve(d_max, pi1, w, lam0, lam1):
    action = np.zeros((d_max + 1, d_max + 1), dtype=np.int8)
    value = _ok.lagrangian_walk(d_max, pi1, w[0], w[1], w[2], lam0, lam1, action)
    size, power, ess = _ok.walk_operating(d_max, pi1, w[0], w[2], action)
    return action, value, size, power, ess


def optimal_paired_design(
    p_a=None,
    p_b=None,
    alpha=0.05,
    power=0.8,
    n_max=200,
    p10=None,
    p01=None,
    certify=True,
) -> OptimalDesign:
    """The walk design of least expected pairs at one alternative (one-sided, "B better").

    Parameters
    ----------
    p_a, p_b : float
        The alternative's success rates (pairs independent given the condition:
        ``p10 = p_a (1 - p_b)``), or give ``p10`` and ``p01`` directly.
    alpha : float
        Worst-case false-win rate over every nuisance.
    power : float
        Power at the alternative the design must have (before its final rows).
    n_max : int
        Maximum number of pairs (the walk's d_max is n_max too).
    certify : bool
        Attach the exact certificate.

    Returns
    -------
    OptimalDesign

    Raises
    ------
    ValueError
        When no walk design reaches the power within ``n_max`` pairs, or B is not better.
    """
    start = time.perf_counter()
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    p10, p01 = pair_rates(p_a, p_b, p10, p01)
    q = p10 + p01
    if not p01 > p10 or q > 1.0 + 1e-12:
        raise ValueError(f"the alternative must have B better (p01 > p10), got {p10!r}, {p01!r}")
    pi1 = p01 / q
    d_max = n_max
    w = _ok.walk_weights(n_max, min(q, 1.0))
    if pi1 >= 1.0:
        pi1 = 1.0 - 1e-12

    bound = [-math.inf]

    def at(log_lam1):
        lam1 = math.exp(log_lam1)
        lo, hi = -10.0, 60.0  # log lam0: size falls as lam0 grows
        found = None
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            sol = _solve(d_max, pi1, w, math.exp(mid), lam1)
            bound[0] = max(bound[0], sol[1] - math.exp(mid) * alpha - lam1 * (1.0 - power))
            if sol[2] <= alpha:
                hi, found = mid, (lam1, math.exp(mid), sol)
            else:
                lo = mid
        return found

    best = None

    def keep(found):
        nonlocal best
        if found is not None and found[2][3] >= power:
            if best is None or found[2][4] < best[2][4]:
                best = found

    grid = np.linspace(-3.0, 12.0, _GRID)
    found_at = [at(g) for g in grid]
    for f in found_at:
        keep(f)
    if best is None:
        top = at(30.0)
        raise ValueError(
            f"no paired design reaches power {power} at p10={p10:.4g}, p01={p01:.4g} within "
            f"{n_max} pairs (at most {0.0 if top is None else top[2][3]:.4f}); raise n_max "
            "or lower the power"
        )
    # power rises with lam1: bisect every grid step where it crosses the target
    ok = [f is not None and f[2][3] >= power for f in found_at]
    for i in range(len(grid) - 1):
        if ok[i + 1] and not ok[i]:
            lo, hi = grid[i], grid[i + 1]
            for _ in range(_REFINE):
                mid = 0.5 * (lo + hi)
                f = at(mid)
                keep(f)
                if f is not None and f[2][3] >= power:
                    hi = mid
                else:
                    lo = mid
    lam1, lam0, (action, value, size, pw, ess) = best
    design = _walk_design(
        action,
        alpha,
        n_max,
        {
            "family": "optimal",
            "p10": float(p10),
            "p01": float(p01),
            "power": float(power),
        },
    )
    if certify:
        design = SequentialDesign(**{**design.__dict__, "certificate": paired_certificate(design)})
    return OptimalDesign(
        design=design,
        lam0=float(lam0),
        lam1=float(lam1),
        lagrangian=float(value),
        size_walk=float(size),
        power_walk=float(pw),
        ess=float(ess),
        lower_bound=float(bound[0]),
        seconds=time.perf_counter() - start,
    )


def _walk_design(action, alpha, n_max, boundary) -> SequentialDesign:
    """A paired design (rows) from a walk action table, binding futility, final rows added."""
    d_max = action.shape[0] - 1
    upper = np.empty(d_max + 1, dtype=np.int64)
    fut_lo = np.zeros(d_max + 1, dtype=np.int64)
    fut_hi = np.full(d_max + 1, -1, dtype=np.int64)
    z_fut = -math.inf
    for d in range(d_max + 1):
        row = action[d, : d + 1]
        rej = np.flatnonzero(row == 1)
        acc = np.flatnonzero(row == 3)
        upper[d] = int(rej[0]) if rej.size else d + 1
        if rej.size and not np.all(row[upper[d] :] == 1):
            raise RuntimeError(f"optimal design: B-better region not an upper set at d={d}")
        if acc.size:
            if acc[0] != 0 or not np.all(row[: acc[-1] + 1] == 3):
                raise RuntimeError(f"optimal design: futility region not a lower set at d={d}")
            fut_hi[d] = int(acc[-1])
            if d > 0 and not math.isfinite(z_fut):
                z_fut = float(sign_z(acc[-1], d))  # informative: the first futility row
    final = _ok.final_rows_spending_rest(d_max, upper, fut_lo, fut_hi, float(alpha))
    return SequentialDesign(
        kind="paired",
        alternative="one-sided",
        alpha=float(alpha),
        n_max=int(n_max),
        boundary=boundary,
        look_sizes=np.arange(1, n_max + 1, dtype=np.int64),
        rows={
            "upper": upper,
            "lower": np.full(d_max + 1, -1, dtype=np.int64),
            "final_upper": final,
            "final_lower": np.full(d_max + 1, -1, dtype=np.int64),
            "fut_lo": fut_lo,
            "fut_hi": fut_hi,
        },
        futility={
            "z": round(z_fut, 6) if math.isfinite(z_fut) else 0.0,
            "from": 1,
            "binding": True,
        },
        d_max=int(d_max),
    )


def unpaired_lower_bound(p_a, p_b, alpha=0.05, power=0.8, n_max=200, p0=None) -> float:
    """Least expected trials per policy any unpaired design could have (a proven lower bound).

    Every unpaired design with at most ``n_max`` trials per policy, false-win rate at most
    alpha at the common rate ``p0`` (default ``(p_a + p_b) / 2``; a design certified over
    every common rate has it) and power at least ``power`` at (p_a, p_b) has expected trials
    at (p_a, p_b) of at least ``L(lam0, lam1) - lam0 alpha - lam1 (1 - power)`` for every
    multiplier pair (weak duality; L the Lagrangian minimum over all designs on the blocks,
    :func:`evalsim.stats.sequential._optimal_kernels.unpaired_lagrangian`). The multipliers
    are chosen by Nelder-Mead on their logarithms; any choice gives a valid bound.
    """
    from scipy.optimize import minimize

    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    p0 = 0.5 * (p_a + p_b) if p0 is None else check_probability(p0, "p0")

    def negdual(x):
        lam0, lam1 = math.exp(x[0]), math.exp(x[1])
        val = _ok.unpaired_lagrangian(n_max, p_a, p_b, p0, lam0, lam1)
        return -(val - lam0 * alpha - lam1 * (1.0 - power))

    res = minimize(
        negdual,
        np.array([6.0, 4.5]),
        method="Nelder-Mead",
        options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 160},
    )
    return float(-res.fun)
