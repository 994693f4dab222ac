"""``full_joint_exact``: one exact test of p_R over the real successes, the discordant pairs
and the simulated count together, the simulated rate maximised out.

``joint_exact`` (:mod:`.joint`) bounds the simulated rate first (Berger and Boos), so its
uncertainty adds to the pairs' almost linearly; with N = 500 simulated trials that costs
more than the twins gain. Here the simulated count k is a third argument of the test
statistic and the p-value is the supremum of the tail over every simulated rate, certified
on cells, so the two sources of error combine as the exact joint law says.

The lower bound of p_R reads y (real successes of n), j = n01 (real failed, twin succeeded)
and k (simulated successes of N). With m = max(1, round(w N / n)) (w =
:data:`DISCORDANT_WEIGHT`), the discordant statistic is W = k - m j: k / N - w j / n
estimates p_S - w p01 <= p_R (p_R = p_S + p10 - p01). Under p_R = p0:

- j ~ Binomial(n, p01) with p01 >= max(0, p_S - p0), and k ~ Binomial(N, p_S),
  independent of the pairs; W rises in k and falls in j, so on a cell [a, b] of p_S
  (a >= p0) every tail P(W >= w) is at most the tail with p01 = a - p0 and p_S = b, and
  rates p_S < p0 are dominated by p_S = p0. The supremum over p_S is certified on a dyadic
  partition of [p0, 1], refined where a cell's bound is above the level
  (``_full_joint_kernels.sup_tail_le``);
- y ~ Binomial(n, p0) exactly, whatever the nuisance.

The statistic is T = max(CP(y), B(W)): CP(y) the one-sided Clopper-Pearson lower bound at
alpha/2 (the real trials alone, what wins when the twins say nothing) and B(W) the lower
bound of the test on W alone at :data:`ORDER_SHARE` x alpha/2. Both are monotone, so
T >= t exactly when y >= y_t or W >= w_t. The counts of a multinomial are negatively
associated (Joag-Dev and Proschan 1983 [1]_), and 1{y >= y_t} rises in y while
P(W >= w_t | j) falls in j, so P(y >= y_t, W >= w_t) >= P(y >= y_t) P(W >= w_t) and

    P(T >= t) <= 1 - (1 - P(Y >= y_t)) (1 - sup P(W >= w_t)),

which the final test compares with alpha/2. The p-value rises with p0 (every part does), so
the bound is the largest rate of :data:`RATE_GRID` the test rejects (bisection; any
certified rejected rate is a valid bound). The upper bound is the same construction on the
failures (n - y, n10, N - k); where the bounds cross the interval is Clopper-Pearson's.
Nothing is chosen from the data: w, the grids and the levels are constants. Tables are
built for n <= :data:`MAX_N`; above it the method's interval is ``joint_exact``'s.

References
----------
.. [1] K. Joag-Dev, F. Proschan, "Negative association of random variables, with
   applications", Annals of Statistics 11 (1), 286-295, 1983.
"""

from __future__ import annotations

import functools

import numpy as np

from evalsim.stats.simreal import _full_joint_kernels as _F
from evalsim.stats.simreal.real_only import cp_each_count, cp_lower_bound

#: w in the discordant statistic k / N - w n01 / n (W = k - m n01, m = round(w N / n)).
DISCORDANT_WEIGHT = 2.0
#: Rates at which the tests are inverted.
RATE_GRID = np.linspace(0.0, 1.0, 2001)
#: Finest dyadic level of the partition of the simulated rate (cells of 2^-FINEST).
FINEST = 12
#: Largest n the tables are built for.
MAX_N = 200
#: Level of the discordant channel's own bound B(W), the statistic's second part, as a share
#: of alpha/2.
ORDER_SHARE = 0.5


def weight(n: int, n_sim: int) -> int:
    """m in W = k - m n01: the discordant weight in simulated-count units, at least 1."""
    return max(1, int(round(DISCORDANT_WEIGHT * n_sim / n)))


@functools.lru_cache(maxsize=4)
def _sf_table(n_sim: int, finest: int):
    return _F.sf_table(int(n_sim), int(finest))


def lower_table(n: int, n_sim: int, alpha: float) -> np.ndarray:
    """L[y, w + m n]: the lower bound for y real successes and discordant statistic w, at
    two-sided level alpha (alpha/2 a side); read only."""
    if not 1 <= n <= MAX_N:
        raise ValueError(f"full_joint_exact certifies n in [1, {MAX_N}], got n={n}")
    if n_sim < 1:
        raise ValueError(f"full_joint_exact needs n_sim >= 1, got n_sim={n_sim}")
    return _table(int(n), int(n_sim), float(alpha), FINEST, ORDER_SHARE, weight(n, n_sim))


@functools.lru_cache(maxsize=64)
def _table(n, n_sim, alpha, finest, order_share, m):
    side = alpha / 2.0
    lo, sf, ready = _sf_table(n_sim, finest)
    crit = _F.discordant_critical(n, m, n_sim, side * order_share, RATE_GRID, finest, lo, sf, ready)
    w = np.arange(-m * n, n_sim + 1)
    # B(w): the largest rate whose critical value is at most w (crit rises with the rate)
    idx = np.searchsorted(crit, w, side="right") - 1
    b_w = np.where(idx >= 0, RATE_GRID[np.maximum(idx, 0)], 0.0)
    cp = cp_lower_bound(np.arange(n + 1), n, side)
    values = np.unique(np.concatenate([cp, b_w]))
    y_of = np.searchsorted(cp, values, side="left").astype(np.int64)  # first y, CP >= t
    w_of = (np.searchsorted(b_w, values, side="left") - m * n).astype(np.int64)
    bound = _F.final_bounds(n, m, n_sim, side, RATE_GRID, finest, lo, sf, ready, values, y_of, w_of)
    stat = np.maximum(cp[:, None], b_w[None, :])
    out = bound[np.searchsorted(values, stat)]
    out.flags.writeable = False
    return out


def bounds(y: int, n01: int, n10: int, n: int, k_sim: int, n_sim: int, alpha: float):
    """(lower, upper) of ``full_joint_exact``, Clopper-Pearson's where they cross."""
    table = lower_table(n, n_sim, alpha)
    m = weight(n, n_sim)
    lo = float(table[y, k_sim - m * (n01 - n)])  # column w + m n, w = k - m n01
    hi = 1.0 - float(table[n - y, (n_sim - k_sim) - m * (n10 - n)])
    if lo > hi:
        cp_lo, cp_hi = cp_each_count(n, alpha)
        lo, hi = float(cp_lo[y]), float(cp_hi[y])
    return lo, hi


def operating_characteristics(p_real, p11, p10, p01, p00, n, n_sim, pmf_sim, ks_lo, alpha):
    """Exact (coverage, expected width, probability enumerated) of ``full_joint_exact`` at
    one joint law, over the simulated counts ``ks_lo + i`` with probabilities
    ``pmf_sim[i]``."""
    cp_lo, cp_hi = cp_each_count(n, alpha)
    return _F.coverage_width(
        n,
        n_sim,
        weight(n, n_sim),
        p_real,
        p11,
        p10,
        p01,
        p00,
        np.ascontiguousarray(pmf_sim, dtype=np.float64),
        ks_lo,
        lower_table(n, n_sim, alpha),
        cp_lo,
        cp_hi,
    )
