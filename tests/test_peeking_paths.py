"""Peeking without (n+1)^2 regions: the Fisher DP with per-margin bounds, and the paired
McNemar design, each against a plain reference computed here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from evalsim.stats.sequential import _peeking_kernels as K
from evalsim.stats.sequential.peeking import (
    _pack,
    _regions_for,
    fisher_region_bounds,
    fisher_rejection_region,
    look_sizes,
    sequential_mcnemar_probability,
    sequential_rejection_probability,
)


@pytest.mark.parametrize("m", [1, 2, 3, 5, 10, 40, 77])
@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.01])
def test_bounds_are_the_fisher_region(m, alpha):
    left, right = fisher_region_bounds(m, alpha)
    ka = np.arange(m + 1)[:, None] + np.zeros((1, m + 1), dtype=int)
    kk = np.arange(m + 1)[:, None] + np.arange(m + 1)[None, :]
    got = (ka <= left[kk]) | (ka >= right[kk])
    np.testing.assert_array_equal(got, fisher_rejection_region(m, alpha))


@pytest.mark.parametrize(
    "n, p_a, p_b, looks",
    [
        (40, 0.7, 0.7, "every"),
        (60, 0.3, 0.5, "every"),
        (80, 0.01, 0.02, "every"),
        (30, 1.0, 0.5, "every"),
        (30, 0.0, 0.0, "every"),
        (100, 0.05, 0.5, 7),
        (25, 0.5, 0.5, [5, 10, 25]),
    ],
)
def test_fisher_dp_without_regions_equals_the_full_table_dp(n, p_a, p_b, looks):
    sizes = look_sizes(n, looks)
    flat, offsets = _pack(_regions_for(sizes, 0.05, None))
    want = K.sequential_rejection_dp(p_a, p_b, sizes, flat, offsets)
    got = sequential_rejection_probability(n, p_a, p_b, 0.05, looks)
    np.testing.assert_allclose(got.rejection_by_look, want, rtol=1e-12, atol=1e-17)


def _paired_reference(n, p10, p01, alpha, looks):
    """Plain dictionary DP over (b, c) with SciPy's binomial test at every look."""
    sizes = set(look_sizes(n, looks).tolist())
    dist = {(0, 0): 1.0}
    out = []
    for t in range(1, n + 1):
        new: dict = {}
        for (b, c), v in dist.items():
            for db, dc, pr in ((1, 0, p10), (0, 1, p01), (0, 0, 1 - p10 - p01)):
                key = (b + db, c + dc)
                new[key] = new.get(key, 0.0) + v * pr
        dist = new
        if t in sizes:
            absorbed = 0.0
            for b, c in list(dist):
                if b + c and binomtest(b, b + c, 0.5).pvalue < alpha * (1 - 1e-9):
                    absorbed += dist.pop((b, c))
            out.append(absorbed)
    return np.array(out)


@pytest.mark.parametrize(
    "n, p10, p01, alpha, looks",
    [
        (30, 0.1, 0.1, 0.05, "every"),
        (40, 0.2, 0.05, 0.05, 4),
        (25, 0.3, 0.3, 0.1, "every"),
        (20, 0.0, 0.0, 0.05, "every"),
        (20, 0.5, 0.5, 0.05, "every"),
    ],
)
def test_paired_peeking_matches_plain_dp(n, p10, p01, alpha, looks):
    got = sequential_mcnemar_probability(n, p10, p01, alpha, looks)
    want = _paired_reference(n, p10, p01, alpha, looks)
    np.testing.assert_allclose(got.rejection_by_look, want, rtol=1e-12, atol=1e-17)
    assert got.false_win_rate >= got.fixed_rate - 1e-15 or looks != "every"


def test_paired_peeking_rejects_bad_rates():
    with pytest.raises(ValueError, match="0.7"):
        sequential_mcnemar_probability(10, 0.7, 0.6)
