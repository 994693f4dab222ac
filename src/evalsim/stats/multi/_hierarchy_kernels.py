"""Numba kernels of the hierarchical bootstrap.

Private: :mod:`evalsim.stats.multi.hierarchy` validates. Episodes are stored sorted by cluster:
cluster c owns ``values[starts[c]:starts[c + 1]]``.

Each kernel is a plain function compiled with ``njit(cache=True)(fn)`` rather than decorated,
so that mutation testing (``make mutants``, which leaves decorated functions alone) can
mutate its body and run it with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def _hierarchical_bootstrap(values, starts, n_reps, rng):
    """Two-stage bootstrap replicates, next to a naive episode bootstrap.

    Each replicate draws as many clusters as there are, with replacement; within each drawn
    cluster it draws as many episodes as the cluster holds, with replacement.

    Parameters
    ----------
    values : float64[N]
        Per-episode outcome (1.0 success, 0.0 failure, or any metric), sorted by cluster.
    starts : int64[G + 1]
        Cluster boundaries (``starts[0] = 0``, ``starts[G] = N``), every cluster non-empty.
    n_reps : int
        Bootstrap replicates.
    rng : numpy.random.Generator
        The stream (advanced in place). Indices are ``int(u * size)`` with u uniform in
        [0, 1): numba's ``Generator.integers`` is several times slower.

    Returns
    -------
    macro, micro, naive : float64[n_reps]
        Per replicate: the mean of the drawn clusters' means (cluster-weighted), the mean over
        all drawn episodes (episode-weighted), and the mean of N episodes drawn from all
        episodes ignoring clusters.
    """
    n_clusters = starts.shape[0] - 1
    n_total = starts[n_clusters]
    macro = np.empty(n_reps, dtype=np.float64)
    micro = np.empty(n_reps, dtype=np.float64)
    naive = np.empty(n_reps, dtype=np.float64)
    for r in range(n_reps):
        sum_means = 0.0
        sum_all = 0.0
        count_all = 0
        for _ in range(n_clusters):
            c = int(rng.random() * n_clusters)
            lo = starts[c]
            size = starts[c + 1] - lo
            s = 0.0
            for _ in range(size):
                s += values[lo + int(rng.random() * size)]
            sum_means += s / size
            sum_all += s
            count_all += size
        macro[r] = sum_means / n_clusters
        micro[r] = sum_all / count_all
        s = 0.0
        for _ in range(n_total):
            s += values[int(rng.random() * n_total)]
        naive[r] = s / n_total
    return macro, micro, naive


hierarchical_bootstrap = njit(cache=True)(_hierarchical_bootstrap)
