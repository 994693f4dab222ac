"""Non-inferiority: "B is not worse than A by more than Delta", fixed, group-sequential, anytime.

Null ``p_B <= p_A - Delta``, alternative ``p_B > p_A - Delta``; unpaired (one trial of each
policy per block). Every rule rejects on an upper set in k_B and a lower set in k_A, so its
false-win rate is largest on the null's edge ``p_B = p_A - Delta`` (a coupling argument) and
there depends on the nuisance p_A alone; it is computed exactly by the unpaired dynamic
program (:mod:`evalsim.stats.sequential._kernels`) on a grid of p_A and at adversarial
points found by golden-section search around the grid's worst.

* **fixed** and **group-sequential** (:func:`ni_z_design`): the Wald z with the margin,
  ``z = (k_B/m - k_A/m + Delta) / se`` (se from the smoothed rates ``(k + 1/2) / (m + 1)``),
  against one critical value calibrated (bisection) so that the exact worst false-win rate
  over the grid is at most alpha; one look (fixed) or several (Pocock-type constant).
* **anytime** (:func:`ni_anytime_design`): a mixture e-process. For each alternative
  component (theta_a, theta_b), ``theta_b > theta_a - Delta``, the block e-variable is the
  likelihood ratio against the null point (q_a, q_a - Delta) where
  ``(theta_a - q_a) / (q_a (1 - q_a)) + (theta_b - q_b) / (q_b (1 - q_b)) = 0``: its mean
  under any null edge point ``(p, p - Delta)`` is ``1 - (p - q_a)^2 c^2 <= 1`` (the product
  of two factors linear in p, stationary at q_a), so it is an e-variable for the whole
  composite null, and Ville's inequality bounds the false-win rate by alpha at every
  stopping time (between grid points too). With Delta = 0 it is the superiority test of
  :mod:`evalsim.stats.sequential.anytime`.

References
----------
.. [1] Farrington, C. P. & Manning, G. (1990), "Test statistics and sample size formulae for
   comparative binomial trials with null hypothesis of non-zero risk difference or non-unity
   relative risk", Statistics in Medicine 9, 1447-1454.
.. [2] Grunwald, P., de Heide, R. & Koolen, W. (2024), "Safe testing", JRSS B 86(5)
   (reverse information projections).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from evalsim.stats._validate import check_alpha, check_n
from evalsim.stats.sequential import _anytime_kernels as _ak
from evalsim.stats.sequential import _kernels as _k
from evalsim.stats.sequential.anytime import UNPAIRED_GRID
from evalsim.stats.sequential.peeking import look_sizes

__all__ = ["NIDesign", "ni_anytime_design", "ni_null_point", "ni_z_design"]


@dataclass(frozen=True)
class NIDesign:
    """A non-inferiority rule on two binomial streams (rows as in unpaired designs).

    Attributes
    ----------
    form : {"fixed", "group-sequential", "anytime"}
    margin : float
        Delta.
    alpha : float
    look_sizes : numpy.ndarray of int64
        Blocks (trials per policy) at each look.
    upper : numpy.ndarray of int64
        ``upper[look, k_A]``: "B not worse" when ``k_B >= upper[look, k_A]``.
    type1 : float
        The exact worst false-win rate found on the null edge (grid and adversarial points).
    p_a_at : float
        Where it is attained.
    critical_z : float or None
        The z rules' critical value.
    """

    form: str
    margin: float
    alpha: float
    look_sizes: np.ndarray
    upper: np.ndarray
    type1: float
    p_a_at: float
    critical_z: float | None = None

    def rejection(self, p_a, p_b) -> float:
        """Exact P("B not worse") at true rates (p_a, p_b)."""
        return _reject(self.look_sizes, self.upper, p_a, p_b)[0]

    def oc(self, p_a, p_b) -> dict:
        """Exact P("B not worse") and expected trials per policy at (p_a, p_b)."""
        rej, ess = _reject(self.look_sizes, self.upper, p_a, p_b)
        return {"p_a": p_a, "p_b": p_b, "power": rej, "ess": ess}

    def to_dict(self) -> dict:
        return {
            "form": self.form,
            "margin": self.margin,
            "alpha": self.alpha,
            "n_max": int(self.look_sizes[-1]),
            "looks": len(self.look_sizes),
            "type1": self.type1,
            "p_a_at": self.p_a_at,
            "critical_z": self.critical_z,
        }


def _reject(sizes, upper, p_a, p_b):
    n = upper.shape[1] - 1
    lower = np.full(upper.shape, -1, dtype=np.int64)
    fut_lo = np.zeros(upper.shape, dtype=np.int64)
    fut_hi = np.full(upper.shape, -1, dtype=np.int64)
    by = _k.unpaired_oc(float(p_a), float(p_b), sizes, upper, lower, fut_lo, fut_hi)
    stop = by.sum(axis=1)
    del n
    return float(by[:, 1].sum()), float(stop @ sizes)


def _null_grid(margin: float, points: int) -> np.ndarray:
    return np.linspace(margin, 1.0, points)


def _worst(sizes, upper, margin, points=201) -> tuple[float, float]:
    """Worst exact false-win rate on the null edge: grid, then golden search around it."""
    grid = _null_grid(margin, points)
    vals = np.array([_reject(sizes, upper, p, p - margin)[0] for p in grid])
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best, at = float(vals[i]), float(grid[i])
    if hi > lo:
        res = minimize_scalar(
            lambda p: -_reject(sizes, upper, p, p - margin)[0],
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-9},
        )
        if -res.fun > best:
            best, at = float(-res.fun), float(res.x)
    return best, at


def _z_rows(sizes, margin, crit):
    rows = np.empty((len(sizes), int(sizes[-1]) + 1), dtype=np.int64)
    for j, m in enumerate(sizes.tolist()):
        ka = np.arange(m + 1)[:, None]
        kb = np.arange(m + 1)[None, :]
        pa = (ka + 0.5) / (m + 1)
        pb = (kb + 0.5) / (m + 1)
        z = (kb / m - ka / m + margin) / np.sqrt((pa * (1 - pa) + pb * (1 - pb)) / m)
        hit = z >= crit
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), m + 1)
        rows[j, : m + 1] = first
        rows[j, m + 1 :] = m + 1
    return rows


def ni_z_design(margin, alpha=0.05, n_max=100, looks=1, grid_points=41) -> NIDesign:
    """Fixed (``looks=1``) or group-sequential non-inferiority z rule with exact type I.

    The constant critical z is the smallest (bisection to 1e-6) whose exact worst false-win
    rate over ``grid_points`` rates on the null edge is at most alpha; the result's
    ``type1`` is then the worst over 201 rates and an adversarial search.
    """
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be in [0, 1), got {margin!r}")
    sizes = look_sizes(n_max, looks)
    grid = _null_grid(margin, grid_points)

    def size(c):
        up = _z_rows(sizes, margin, c)
        return max(_reject(sizes, up, p, p - margin)[0] for p in grid)

    lo, hi = 0.0, 6.0
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if size(mid) <= alpha:
            hi = mid
        else:
            lo = mid
    crit = hi
    for _ in range(20):
        up = _z_rows(sizes, margin, crit)
        t1, at = _worst(sizes, up, margin)
        if t1 <= alpha:
            break
        crit += 0.01
    form = "fixed" if len(sizes) == 1 else "group-sequential"
    return NIDesign(form, float(margin), alpha, sizes, up, t1, at, float(crit))


def ni_null_point(theta_a, theta_b, margin) -> tuple[float, float]:
    """The null point (q_a, q_a - margin) of the component's e-variable (see the module)."""

    def f(q):
        qb = q - margin
        return (theta_a - q) / (q * (1 - q)) + (theta_b - qb) / (qb * (1 - qb))

    lo, hi = margin + 1e-12, 1.0 - 1e-12
    return (q := brentq(f, lo, hi, xtol=1e-15)), q - margin


def ni_anytime_design(margin, alpha=0.05, n_max=100) -> NIDesign:
    """The anytime non-inferiority e-process (mixture over the grid of alternatives)."""
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    if not 0.0 <= margin < 0.5:
        raise ValueError(f"margin must be in [0, 0.5), got {margin!r}")
    g = np.asarray(UNPAIRED_GRID)
    comps = [(a, b) for a in g for b in g if b > a - margin + 1e-9 and a - margin > 0.0]
    ta = np.array([c[0] for c in comps])
    tb = np.array([c[1] for c in comps])
    q = np.array([ni_null_point(a, b, margin) for a, b in comps])
    log_w = np.full(len(comps), -math.log(len(comps)))
    t = math.log(1.0 / alpha)
    upper = _ak.unpaired_mixture_rows(
        n_max, ta, tb, q[:, 0].copy(), q[:, 1].copy(), log_w, t - 1e-12 * t
    )
    sizes = np.arange(1, n_max + 1, dtype=np.int64)
    t1, at = _worst(sizes, upper, margin)
    return NIDesign("anytime", float(margin), alpha, sizes, upper, t1, at)
