"""Trial budgets: how many trials an interval of a given half-width needs.

The lesson's definition (lesson 25, Build it step 3, ``trials_needed``): the smallest n whose
Wilson interval at the observed rate, i.e. at k = round(rate * n), has half-width
(upper - lower) / 2 <= the target. The lesson uses Python's ``round``, which rounds halves
to even (round(46.5) = 46); :func:`half_width_budget` does the same by default
(``rounding="half_even"``) and offers ``"half_up"`` (floor(x + 1/2)) for comparison.

Because k = round(rate * n) jumps by whole trials, the half-width is not monotone in n: just
after the first n that meets the target, a later n can miss it again (with z = 1.96, rate
0.90 meets +-0.10 at n = 34 but misses it at two larger n; it holds for good from n = 38).
:func:`half_width_budget` therefore also reports the first n from which the half-width
stays at or below the target over a stated range of n.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from evalsim.stats.proportion.intervals import bounds, check_method, resolve_level

__all__ = ["HalfWidthBudget", "half_width_budget", "half_widths"]

ROUNDINGS = ("half_even", "half_up")
_N_LIMIT = 10**8


def _check_rate(rate) -> float:
    if isinstance(rate, bool | np.bool_) or not isinstance(rate, numbers.Real):
        raise ValueError(f"rate must be an observed rate in [0, 1], got {rate!r}")
    r = float(rate)
    if not (0.0 <= r <= 1.0):
        raise ValueError(f"rate must be an observed rate in [0, 1], got {rate!r}")
    return r


def _check_half_width(half_width) -> float:
    if isinstance(half_width, bool | np.bool_) or not isinstance(half_width, numbers.Real):
        raise ValueError(f"half_width must be a number in (0, 0.5], got {half_width!r}")
    h = float(half_width)
    if not (0.0 < h <= 0.5):
        raise ValueError(f"half_width must be a number in (0, 0.5], got {half_width!r}")
    return h


def _observed_k(rate: float, n: np.ndarray, rounding: str) -> np.ndarray:
    x = rate * n.astype(np.float64)
    if rounding == "half_even":
        return np.rint(x).astype(np.int64)  # rint rounds halves to even, as Python's round
    if rounding == "half_up":
        return np.floor(x + 0.5).astype(np.int64)
    raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")


def half_widths(
    rate: float,
    n,
    confidence: float = 0.95,
    z=None,
    method: str = "wilson",
    rounding: str = "half_even",
) -> np.ndarray:
    """Half-width (upper - lower) / 2 of the interval at k = round(rate * n), for each n."""
    rate = _check_rate(rate)
    check_method(method)
    zf, tail = resolve_level(confidence, z)
    n_arr = np.atleast_1d(np.asarray(n, dtype=np.int64))
    if (n_arr < 1).any():
        raise ValueError(f"n must be integers >= 1, got {n!r}")
    k = _observed_k(rate, n_arr, rounding)
    lower, upper = bounds(method, k, n_arr, zf, tail)
    return (upper - lower) / 2.0


@dataclass(frozen=True)
class HalfWidthBudget:
    """Trials needed for a half-width target, with the non-monotone part made visible.

    Attributes
    ----------
    first_n : int
        Smallest n with half-width <= target (the lesson's definition).
    stays_below_from : int
        Smallest n0 such that every n in [n0, n_max] has half-width <= target.
    n_max : int
        Upper end of the range checked for ``stays_below_from``.
    misses_after_first : int
        How many n in (first_n, n_max] have half-width > target again.
    """

    rate: float
    half_width: float
    first_n: int
    stays_below_from: int
    n_max: int
    misses_after_first: int


def half_width_budget(
    rate: float,
    half_width: float,
    confidence: float = 0.95,
    z=None,
    method: str = "wilson",
    rounding: str = "half_even",
    n_max: int | None = None,
) -> HalfWidthBudget:
    """The lesson's trial budget plus the first n from which the target holds for good.

    Parameters
    ----------
    rate : float
        Observed success rate in [0, 1]; the count at n trials is round(rate * n).
    half_width : float
        Target half-width in (0, 0.5].
    confidence, z, method
        As in :func:`evalsim.stats.proportion.intervals.interval`; the lesson uses Wilson, z = 1.96.
    rounding : {"half_even", "half_up"}
        How rate * n becomes a count; "half_even" is Python's ``round`` (the lesson's code).
    n_max : int, optional
        Last n checked for ``stays_below_from``; default 4 * first_n (where the half-width,
        shrinking like 1/sqrt(n), is about half the target).

    Returns
    -------
    HalfWidthBudget
    """
    rate = _check_rate(rate)
    target = _check_half_width(half_width)
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, got {rounding!r}")
    # Grow the searched range until some n meets the target.
    hi = 1024
    while True:
        ns = np.arange(1, hi + 1, dtype=np.int64)
        hw = half_widths(rate, ns, confidence, z, method, rounding)
        ok = hw <= target
        if ok.any():
            break
        if hi >= _N_LIMIT:
            raise ValueError(f"no n <= {_N_LIMIT} reaches half-width {half_width!r}")
        hi *= 4
    first = int(np.argmax(ok)) + 1
    if n_max is None:
        n_max = 4 * first
    if isinstance(n_max, bool) or not isinstance(n_max, numbers.Integral) or n_max < first:
        raise ValueError(f"n_max must be an integer >= first_n = {first}, got {n_max!r}")
    n_max = int(n_max)
    if n_max > hi:
        ns = np.arange(1, n_max + 1, dtype=np.int64)
        ok = half_widths(rate, ns, confidence, z, method, rounding) <= target
    ok = ok[:n_max]
    bad = np.flatnonzero(~ok) + 1  # n values that miss the target
    stays = int(bad[-1]) + 1 if bad.size else 1
    return HalfWidthBudget(
        rate=rate,
        half_width=target,
        first_n=first,
        stays_below_from=stays,
        n_max=n_max,
        misses_after_first=int((bad > first).sum()),
    )
