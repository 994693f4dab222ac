"""Plain-Python references for the stratified McNemar test (no numpy, no SciPy).

``enumerate_null``: every assignment of the discordant pairs (first-only or second-only, each
with probability 1/2) enumerated, the law of ``S = sum x_s`` counted by brute force.
``convolve_null``: the strata's Binomial(m_s, 1/2) pmfs convolved term by term with exact
fractions. ``pvalue``: the stated alternative's tail of that law (two-sided: every value no
more likely than the observed one, with R's relative tolerance 1e-7).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb


def enumerate_null(m: list[int]) -> dict[int, Fraction]:
    total = sum(m)
    law: dict[int, Fraction] = {}
    for bits in itertools.product((0, 1), repeat=total):
        s = sum(bits)
        law[s] = law.get(s, Fraction(0)) + Fraction(1, 2**total)
    return law


def convolve_null(m: list[int]) -> dict[int, Fraction]:
    law = {0: Fraction(1)}
    for ms in m:
        step = {j: Fraction(comb(ms, j), 2**ms) for j in range(ms + 1)}
        new: dict[int, Fraction] = {}
        for a, pa in law.items():
            for b, pb in step.items():
                new[a + b] = new.get(a + b, Fraction(0)) + pa * pb
        law = new
    return law


def pvalue(x: list[int], y: list[int], alternative: str, law=None) -> float:
    m = [a + b for a, b in zip(x, y, strict=True)]
    law = convolve_null(m) if law is None else law
    s = sum(x)
    if alternative == "greater":
        return float(sum(p for v, p in law.items() if v >= s))
    if alternative == "less":
        return float(sum(p for v, p in law.items() if v <= s))
    cut = law[s] * Fraction(10**7 + 1, 10**7)
    return min(1.0, float(sum(p for p in law.values() if p <= cut)))
