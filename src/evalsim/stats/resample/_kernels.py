"""Numba kernels for drawing evaluations from a pool of trials (private).

Kernels only: fixed dtypes, preallocated outputs, no validation, no I/O. The public,
validating face is :mod:`evalsim.stats.resample.draws`.

The random stream is SplitMix64 (Steele, Lea & Flood 2014), seeded with one 63-bit integer
from :func:`evalsim.seeding.int_seed_for`. Its whole state is that one integer, so a draw
depends only on its seed: never on a global generator, call order or thread. Indices are
made uniform on ``[0, m)`` by rejecting the lowest ``2**64 mod m`` outputs before taking the
remainder (no modulo bias).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# SplitMix64 constants (Steele, Lea & Flood 2014; Vigna's reference splitmix64.c). All are
# uint64 so numba never promotes a mixed uint64/int64 expression to float64.
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_ZERO = np.uint64(0)


@njit(cache=True)
def _draw_counts_into(success, n, n_evals, state, out):
    """Fill ``out[:n_evals]`` with success counts; return the advanced stream state.

    ``success``: uint8 (0/1) pool, ``n``: trials per evaluation, ``state``: uint64.
    """
    m = np.uint64(success.shape[0])
    threshold = (_ZERO - m) % m  # 2**64 mod m: outputs below it are rejected
    for e in range(n_evals):
        count = 0
        for _ in range(n):
            while True:
                state += _GAMMA
                z = state
                z = (z ^ (z >> _S30)) * _MIX1
                z = (z ^ (z >> _S27)) * _MIX2
                z = z ^ (z >> _S31)
                if z >= threshold:
                    break
            count += success[z % m]
        out[e] = count
    return state


@njit(cache=True)
def draw_counts(success, n, n_evals, seed):
    """Success counts of ``n_evals`` evaluations of ``n`` trials drawn with replacement.

    Parameters: ``success`` uint8[:] (0/1), ``n`` int64, ``n_evals`` int64, ``seed`` int64
    (>= 0). Returns int64[n_evals].
    """
    out = np.empty(n_evals, dtype=np.int64)
    _draw_counts_into(success, n, n_evals, np.uint64(seed), out)
    return out


@njit(cache=True)
def splitmix64_outputs(seed, size):
    """The first ``size`` raw SplitMix64 outputs from ``seed`` (for tests against a reference)."""
    out = np.empty(size, dtype=np.uint64)
    state = np.uint64(seed)
    for i in range(size):
        state += _GAMMA
        z = state
        z = (z ^ (z >> _S30)) * _MIX1
        z = (z ^ (z >> _S27)) * _MIX2
        out[i] = z ^ (z >> _S31)
    return out
