"""The data of the sim + real methods: n real trials paired with their simulated twins, and
N further simulated trials (:class:`SimRealData`, built and checked by
:func:`simreal_data`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from evalsim.stats._validate import MAX_COUNT, check_outcomes

__all__ = ["SimRealData", "check_count", "simreal_data"]


def check_count(x, name: str, minimum: int) -> int:
    """``x`` as an int in [minimum, MAX_COUNT]; ValueError naming ``name`` otherwise."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if not minimum <= int(x) <= MAX_COUNT:
        raise ValueError(f"{name} must be an integer in [{minimum}, {MAX_COUNT}], got {x!r}")
    return int(x)


@dataclass(frozen=True)
class SimRealData:
    """Validated pairs and simulated counts (build with :func:`simreal_data`, or directly
    from the counts: the constructor checks them too).

    Attributes
    ----------
    n11, n10, n01, n00 : int
        Pairs by (real, twin) outcome: both succeed, real only, twin only, both fail.
    k_sim, n_sim : int
        Successes among the N further simulated trials, and N.
    """

    n11: int
    n10: int
    n01: int
    n00: int
    k_sim: int
    n_sim: int

    def __post_init__(self):
        """The checks of :func:`simreal_data`, on the counts (issue 45, item 16): each cell
        an integer >= 0, n >= 1, 0 <= k_sim <= n_sim, n_sim >= n. Counts become ``int``."""
        for name in ("n11", "n10", "n01", "n00", "k_sim"):
            object.__setattr__(self, name, check_count(getattr(self, name), name, 0))
        object.__setattr__(self, "n_sim", check_count(self.n_sim, "n_sim", 1))
        if self.n == 0:
            raise ValueError("the pairs must hold at least one real trial, got n = 0")
        if self.k_sim > self.n_sim:
            raise ValueError(f"k_sim must be in [0, n_sim = {self.n_sim}], got {self.k_sim}")
        if self.n_sim < self.n:
            raise ValueError(f"n_sim must be >= n = {self.n} real trials, got {self.n_sim}")

    @property
    def n(self) -> int:
        """Number of real trials (pairs)."""
        return self.n11 + self.n10 + self.n01 + self.n00

    @property
    def k_real(self) -> int:
        """Real successes."""
        return self.n11 + self.n10

    @property
    def k_twin(self) -> int:
        """Twin successes."""
        return self.n11 + self.n01

    @property
    def correlation(self) -> float:
        """Phi coefficient of (real, twin) over the pairs; NaN when either is constant."""
        n = self.n
        den = self.k_real * (n - self.k_real) * self.k_twin * (n - self.k_twin)
        if den == 0:
            return math.nan
        return (n * self.n11 - self.k_real * self.k_twin) / math.sqrt(den)

    @property
    def sim_bias(self) -> float:
        """k_sim / N - k_real / n: the simulated rate minus the real rate."""
        return self.k_sim / self.n_sim - self.k_real / self.n


def simreal_data(real, twin, k_sim, n_sim) -> SimRealData:
    """Validate paired outcomes and the simulated count.

    Parameters
    ----------
    real, twin : sequence of 0/1
        The real outcomes and their twins' simulated outcomes, aligned (same length n >= 1).
    k_sim, n_sim : int
        Successes among N further simulated trials; N >= n (the simulated set is the cheap,
        large one).

    Raises
    ------
    ValueError
        Non-binary outcomes, different lengths, n = 0, k_sim outside [0, N], N < n.
    """
    y = check_outcomes(real, "real")
    t = check_outcomes(twin, "twin")
    if y.shape != t.shape:
        raise ValueError(f"real and twin must have the same length, got {y.size} and {t.size}")
    if y.size == 0:
        raise ValueError("real must hold at least one trial, got n = 0")
    n_sim = check_count(n_sim, "n_sim", 1)
    k_sim = check_count(k_sim, "k_sim", 0)
    if k_sim > n_sim:
        raise ValueError(f"k_sim must be in [0, n_sim = {n_sim}], got {k_sim}")
    if n_sim < y.size:
        raise ValueError(f"n_sim must be >= n = {y.size} real trials, got {n_sim}")
    return SimRealData(
        n11=int(np.sum((y == 1) & (t == 1))),
        n10=int(np.sum((y == 1) & (t == 0))),
        n01=int(np.sum((y == 0) & (t == 1))),
        n00=int(np.sum((y == 0) & (t == 0))),
        k_sim=k_sim,
        n_sim=n_sim,
    )
