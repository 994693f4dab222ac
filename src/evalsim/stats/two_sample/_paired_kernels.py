"""Numba kernels for paired comparisons. No validation: callers in paired.py check inputs."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def paired_bootstrap_diffs(a: np.ndarray, b: np.ndarray, n_boot: int, rng) -> np.ndarray:
    """Bootstrap replicates of mean(a) - mean(b), resampling whole pairs with replacement.

    ``a`` and ``b`` are int8 arrays of 0/1 of equal length; ``rng`` is a
    ``numpy.random.Generator`` (numba draws from its bit generator, so the stream is the
    one :func:`evalsim.seeding.rng_for` made).
    """
    n = a.shape[0]
    out = np.empty(n_boot, dtype=np.float64)
    for r in range(n_boot):
        s = 0
        for _ in range(n):
            i = int(rng.random() * n)
            s += a[i] - b[i]
        out[r] = s / n
    return out
