"""Design optimiser and the fixed-n yardstick of sequential designs.

:func:`optimise_design` chooses the boundary shape ``c_j = a (m_j / n_max)^(-b)`` of an
unpaired design: for each b the scale a is calibrated and the design certified
(:func:`evalsim.stats.sequential.unpaired_shape_design`); among the certified designs that
meet the stated power floors, the one with the smallest mean expected number of trials over
the stated alternatives wins. :func:`fixed_n_for_power` is the smallest fixed n whose exact
test (one-sided Fisher for unpaired, exact McNemar for paired) has a given power, the
yardstick of the savings.

References
----------
.. [1] Jennison, C. & Turnbull, B. W. (2000), *Group Sequential Methods with Applications to
   Clinical Trials*, Chapman & Hall/CRC, section 4.5 (optimal boundary shapes, the
   Wang-Tsiatis family ``c (t)^(Delta - 1/2)``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.sequential import _kernels as _k
from evalsim.stats.sequential import _paired_kernels as _pk
from evalsim.stats.sequential.core import SequentialDesign, _check_futility
from evalsim.stats.sequential.designs import operating_characteristics, unpaired_shape_design

__all__ = ["OptimisedDesign", "fixed_n_for_power", "fixed_n_power", "optimise_design"]


def fixed_n_power(n, p_a, p_b, alpha=0.05, kind="unpaired", alternative="one-sided") -> float:
    """Exact power of the fixed-n test at n per policy (pairs): "B better" at level alpha.

    Unpaired: Fisher's exact test, one-sided (p < alpha); two-sided as the sum of the two
    one-sided tests at alpha/2. Paired: the exact McNemar test on the discordant pairs,
    outcomes of a pair independent given the condition (``p10 = p_a (1 - p_b)``).
    """
    n = check_n(n, "n")
    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    alpha = check_alpha(alpha)
    level = alpha / 2.0 if alternative == "two-sided" else alpha
    if kind == "paired":
        p10, p01 = p_a * (1.0 - p_b), (1.0 - p_a) * p_b
        up = _pk.mcnemar_one_sided_power(n, p10, p01, level)
        lo = _pk.mcnemar_one_sided_power(n, p01, p10, level) if alternative == "two-sided" else 0.0
    else:
        up = _k.fisher_one_sided_power(n, p_a, p_b, level)
        lo = _k.fisher_one_sided_power(n, p_b, p_a, level) if alternative == "two-sided" else 0.0
    return float(up + lo)


def fixed_n_for_power(
    power, p_a, p_b, alpha=0.05, kind="unpaired", alternative="one-sided", window=10, n_limit=20_000
) -> int:
    """Smallest n from which the fixed-n exact test keeps ``power`` for ``window`` more n.

    The power of a discrete test is a saw-tooth in n; this is the first n with power >=
    the target at n, n + 1, ..., n + window. The search brackets the crossing from the normal
    approximation and scans.
    """
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if p_a == p_b:
        raise ValueError("p_a and p_b must differ")
    target = float(power)
    cache: dict[int, float] = {}

    def pw(n: int) -> float:
        if n not in cache:
            cache[n] = fixed_n_power(n, p_a, p_b, alpha, kind, alternative)
        return cache[n]

    za = ndtri(1.0 - alpha)
    zb = ndtri(min(target, 1 - 1e-12))
    pbar = 0.5 * (p_a + p_b)
    n0 = (
        (za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b)))
        / abs(p_b - p_a)
    ) ** 2
    n = max(1, int(0.6 * n0))
    while n > 1 and pw(n) >= target:
        n = max(1, n // 2)
    while True:
        if n > n_limit:
            raise ValueError(f"power {power} not reached up to n={n_limit}")
        if pw(n) >= target and all(pw(n + i) >= target for i in range(1, window + 1)):
            return n
        n += 1


@dataclass(frozen=True)
class OptimisedDesign:
    """Result of :func:`optimise_design`.

    Attributes
    ----------
    design : SequentialDesign
        The chosen, certified design.
    candidates : pandas.DataFrame
        One row per boundary shape tried: b, a, certified type-I, mean ESS, power and ESS
        per alternative, feasible.
    seconds : float
    """

    design: SequentialDesign
    candidates: pd.DataFrame
    seconds: float


def optimise_design(
    alternatives,
    alpha=0.05,
    n_max=200,
    min_power=None,
    alternative="one-sided",
    looks="every",
    b_grid=(0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
    refine=0.01,
    futility=None,
) -> OptimisedDesign:
    """Boundary shape minimising mean ESS over stated alternatives, type-I certified <= alpha.

    Parameters
    ----------
    alternatives : sequence of (p_a, p_b)
        The stated alternatives.
    alpha, n_max, alternative, looks
        As in :func:`evalsim.stats.sequential.unpaired_shape_design`.
    min_power : sequence of float, optional
        Power floor at each alternative (a design below a floor is infeasible).
    b_grid : sequence of float
        Shapes tried first; the best feasible one is then refined in steps of ``refine``
        (0 to skip) between its grid neighbours.
    futility : dict, optional
        Non-binding futility added to the chosen design (the optimisation is done without).

    Returns
    -------
    OptimisedDesign
    """
    start = time.perf_counter()
    alts = [(check_probability(a, "p_a"), check_probability(b, "p_b")) for a, b in alternatives]
    if not alts:
        raise ValueError("alternatives must name at least one (p_a, p_b)")
    floors = None if min_power is None else [float(v) for v in min_power]
    if floors is not None and len(floors) != len(alts):
        raise ValueError(
            f"min_power must give one floor per alternative ({len(alts)}), got {len(floors)}"
        )
    futility = _check_futility(futility, n_max)
    rows = []
    designs: dict[float, SequentialDesign] = {}

    def evaluate(b: float) -> None:
        b = round(float(b), 6)
        if b in designs or b < 0:
            return
        d = unpaired_shape_design(alpha, n_max, b, alternative, looks)
        designs[b] = d
        ocs = [operating_characteristics(d, pa, pb) for pa, pb in alts]
        row = {"b": b, "a": d.boundary["a"], "max_type1_certified": d.certificate.upper}
        row["mean_ess"] = float(np.mean([o.ess for o in ocs]))
        feasible = d.certificate.upper <= alpha
        for i, o in enumerate(ocs):
            row[f"power_{i}"] = o.power
            row[f"ess_{i}"] = o.ess
            if floors is not None and o.power < floors[i]:
                feasible = False
        row["feasible"] = feasible
        rows.append(row)

    for b in b_grid:
        evaluate(b)

    def best() -> float | None:
        ok = [r for r in rows if r["feasible"]]
        return min(ok, key=lambda r: r["mean_ess"])["b"] if ok else None

    b0 = best()
    if b0 is None:
        raise ValueError("no boundary shape meets the power floors; lower them or raise n_max")
    if refine and refine > 0:
        grid = sorted(designs)
        i = grid.index(b0)
        lo = grid[i - 1] if i > 0 else b0
        hi = grid[i + 1] if i + 1 < len(grid) else b0
        for b in np.arange(lo + refine, hi, refine):
            evaluate(b)
    b_best = best()
    chosen = designs[b_best]
    if futility is not None:
        chosen = unpaired_shape_design(alpha, n_max, b_best, alternative, looks, futility=futility)
    cand = pd.DataFrame(rows).sort_values("b").reset_index(drop=True)
    return OptimisedDesign(chosen, cand, time.perf_counter() - start)
