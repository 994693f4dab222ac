"""The one rule that turns a p-value into a decision: reject when ``p < alpha``, ties kept.

Every path in :mod:`evalsim.stats` that decides "p < alpha" -- the scalar Fisher p-value,
the all-tables p-values, the exact Fisher power kernel, the peeking regions, the exact
McNemar regions and the ``evalsim`` command's verdicts -- decides it with
:func:`rejects` (or compares against :func:`alpha_threshold` inside a kernel).

The rule. A p-value within a relative :data:`TIE_RTOL` of ``alpha`` is taken to *equal*
``alpha``, and ``p = alpha`` does not reject (the strict ``p < alpha`` of the documents):

    reject  <=>  p < alpha * (1 - TIE_RTOL).

Why a tolerance. Floating point can put an exact tie on either side: the exact two-sided
Fisher p of the table (0/3, 3/3) is 1/10, computed as 0.09999999999999999, which a bare
``p < 0.1`` rejects. The computed p-values carry a relative error of a few 1e-14 (sums of
recurrence-built hypergeometric weights, ``evalsim.stats.two_sample._fisher_kernels``), far below
``TIE_RTOL = 1e-9``; and an exact p-value that differs from ``alpha`` by less than 1e-9
relative but is not equal to it does not occur on any table with n1, n2 <= 40 at alpha in
{0.1, 0.05, 0.025, 0.01} (``tests/test_fisher.py`` checks both with ``fractions``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TIE_RTOL", "DECISION_RULE", "alpha_threshold", "rejects"]

#: Relative tolerance within which a p-value counts as equal to alpha (and does not reject).
TIE_RTOL = 1e-9

#: The rule in words, for reports.
DECISION_RULE = "reject when p < alpha; p within 1e-9 (relative) of alpha counts as p = alpha"


def alpha_threshold(alpha: float) -> float:
    """The float that p must be strictly below to reject at level ``alpha``."""
    return float(alpha) * (1.0 - TIE_RTOL)


def rejects(p, alpha: float):
    """True where ``p < alpha`` under the tie rule of this module (bool or bool array)."""
    out = np.asarray(p, dtype=np.float64) < alpha_threshold(alpha)
    return bool(out) if out.ndim == 0 else out
