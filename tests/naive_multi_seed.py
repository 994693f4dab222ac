"""Plain-Python Welch t-test pieces on per-seed rates (no numpy, no SciPy): the statistic,
the Welch-Satterthwaite degrees of freedom and the interval's half-width given a t quantile."""

from __future__ import annotations

import math


def _mean_var(x):
    m = sum(x) / len(x)
    return m, sum((v - m) ** 2 for v in x) / (len(x) - 1)


def welch(ra, rb, t_quantile=None):
    """(t, df, half-width of the interval at the given t quantile or None) for mean(rb) -
    mean(ra)."""
    ma, va = _mean_var(ra)
    mb, vb = _mean_var(rb)
    sa, sb = va / len(ra), vb / len(rb)
    se = math.sqrt(sa + sb)
    df = (sa + sb) ** 2 / (sa**2 / (len(ra) - 1) + sb**2 / (len(rb) - 1))
    half = None if t_quantile is None else t_quantile * se
    return (mb - ma) / se, df, half
