"""A normal-theory group-sequential rule on the McNemar z, and its exact operating characteristics.

This is the rule of a peer tool (fieldtrial 0.3.0, studied, not copied): K looks after equal
shares of the planned pairs (``ceil(k n_max / K)``), the McNemar score statistic
``z = (b - c) / sqrt(b + c)`` (B-only minus A-only discordant pairs; 0 without discordant
pairs) against one-sided Lan-DeMets boundaries computed for a normal z with independent
increments, at information fractions ``n_k / n_max`` [1]_ [2]_. The boundaries assume
normality; the exact type-I error of the rule on binary pairs depends on the discordance
rate q, and is computed here exactly by a dynamic program over (discordant pairs, B-only
pairs), maximised over a grid of q.

References
----------
.. [1] Lan, K. K. G. & DeMets, D. L. (1983), "Discrete sequential boundaries for clinical
   trials", Biometrika 70(3), 659-663.
.. [2] Armitage, P., McPherson, C. K. & Rowe, B. C. (1969), "Repeated significance tests on
   accumulating data", JRSS A 132, 235-244 (the recursive integration).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from evalsim.stats._validate import check_alpha, check_n
from evalsim.stats.sequential import _optimal_kernels as _ok
from evalsim.stats.sequential.core import spending

__all__ = [
    "look_pairs",
    "normal_boundaries",
    "peer_bounds",
    "zlook_oc",
    "zlook_sizes",
    "zlook_type1",
]

_GRID = 2001


def normal_boundaries(fractions, alpha=0.05, family="obrien-fleming") -> np.ndarray:
    """One-sided Lan-DeMets critical z per look for a normal z with independent increments.

    The score ``S_k = Z_k sqrt(t_k)`` is Brownian motion at the information fractions;
    its sub-density on the continuation region is carried look to look on a grid of
    ``_GRID`` points (trapezoid rule), and each critical value solves "P(first crossing at
    look k) = spending(t_k) - spending(t_{k-1})" by Brent's method.
    """
    alpha = check_alpha(alpha)
    t = np.asarray(fractions, dtype=np.float64)
    cum = spending(t, alpha, family)
    bounds = np.empty(len(t))
    grid = dens = None
    prev_spent = 0.0
    for k, tk in enumerate(t):
        target = cum[k] - prev_spent
        if k == 0:

            def cross(b, tk=tk):
                return float(ndtr(-b))

        else:
            dt = tk - t[k - 1]
            sd = math.sqrt(dt)
            wts = _trapezoid(grid) * dens

            def cross(b, tk=tk, sd=sd, wts=wts, grid=grid):
                return float(wts @ ndtr((grid - b * math.sqrt(tk)) / sd))

        if target <= cross(12.0):
            b = 12.0
        else:
            b = brentq(lambda x, f=cross, g=target: f(x) - g, -12.0, 12.0, xtol=1e-12)
        bounds[k] = b
        prev_spent += cross(b)
        if k < len(t) - 1:
            hi = b * math.sqrt(tk)
            new_grid = np.linspace(-9.0 * math.sqrt(tk) - 1.0, hi, _GRID)
            if k == 0:
                dens = np.exp(-0.5 * new_grid**2 / tk) / math.sqrt(2 * math.pi * tk)
            else:
                z = (new_grid[:, None] - grid[None, :]) / sd
                dens = (np.exp(-0.5 * z * z) / (sd * math.sqrt(2 * math.pi))) @ wts
            grid = new_grid
    return bounds


def _trapezoid(x: np.ndarray) -> np.ndarray:
    w = np.empty_like(x)
    h = np.diff(x)
    w[0] = h[0] / 2
    w[-1] = h[-1] / 2
    w[1:-1] = (h[:-1] + h[1:]) / 2
    return w


def look_pairs(n_max: int, looks: int) -> np.ndarray:
    """Pairs at each look: ``ceil(k n_max / K)`` (equal shares of the planned pairs)."""
    return np.asarray([math.ceil(k * n_max / looks - 1e-9) for k in range(1, looks + 1)])


@lru_cache(maxsize=512)
def peer_bounds(n_max: int, looks: int, alpha: float) -> np.ndarray:
    """The rule's critical z at its looks for n_max planned pairs.

    The information fraction of look k is its pairs over the planned pairs,
    ``ceil(k n_max / K) / n_max`` (not exactly k / K when K does not divide n_max), and the
    last look spends all of alpha. Cached: read-only array.
    """
    sizes = look_pairs(int(n_max), int(looks))
    out = normal_boundaries(sizes / n_max, alpha)
    out.setflags(write=False)
    return out


def zlook_oc(n_max, looks, bounds, p10, p01) -> dict:
    """Exact P(B better) and expected pairs of the rule at A-only/B-only probabilities.

    Pair-time dynamic program over (discordant d, B-only w); at look k (``n_k`` pairs) the
    rule stops "B better" when ``(2 w - d) / sqrt(d) >= bounds[k]`` (d > 0; z = 0 at d = 0).
    """
    n_max = check_n(n_max, "n_max")
    sizes = look_pairs(n_max, looks).astype(np.int64)
    reject, ess = _ok.zlook_walk(
        n_max, sizes, np.asarray(bounds, dtype=np.float64), float(p10), float(p01)
    )
    return {"reject": float(reject), "ess": float(ess)}


def zlook_sizes(n_max, looks, bounds, q_grid) -> np.ndarray:
    """Exact false-win rate of the rule at each discordance rate q (no difference: p10 = p01)."""
    return np.asarray([zlook_oc(n_max, looks, bounds, q / 2, q / 2)["reject"] for q in q_grid])


def zlook_type1(n_max, looks, bounds, null_rates=201) -> tuple[float, float]:
    """Largest exact false-win rate over ``null_rates`` discordance rates q in (0, 1]."""
    q = np.linspace(0.0, 1.0, int(null_rates))[1:]
    s = zlook_sizes(n_max, looks, bounds, q)
    i = int(np.argmax(s))
    return float(s[i]), float(q[i])
