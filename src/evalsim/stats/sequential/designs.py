"""Sequential comparisons of two policies with exact, certified error rates.

A *sequential design* is fixed before the first trial. It looks at the tallies as the trials
come in, may stop at every look with a verdict ("B better", "A better" when two-sided, or
a non-binding futility stop), and its worst-case false-win rate is at most ``alpha``,
proven by exact computation rather than simulated.

Two designs share the exact dynamic programs of :mod:`evalsim.stats.sequential._kernels`:

* **Unpaired** (:func:`unpaired_design`): both policies get one trial per step; at look j
  (``m_j`` trials per policy) the pooled two-proportion z is compared with a critical value
  ``c_j``. The critical values come from an alpha-spending function (Pocock,
  O'Brien-Fleming, power family) [1]_ -- each ``c_j`` the smallest whose cumulative alpha,
  maximised over the common rate p, stays within the spending function -- or from a
  boundary shape ``c_j = a (m_j / n_max)^(-b)`` calibrated on the total alpha
  (:mod:`evalsim.stats.sequential.optimise`). The null rejection probability is a
  polynomial in p whose Bernstein coefficients are the rejection probabilities given the
  total number of successes, so its maximum over all of [0, 1] is **certified** by
  Bernstein subdivision (:func:`certify_type1`) [2]_.
* **Paired** (:mod:`evalsim.stats.sequential.paired`): boundaries on the walk of B's solo
  wins over the discordant pairs, exact for every nuisance rate.

The boundary families (their ids, labels, parameters and the design kinds that take them)
are the registry :data:`BOUNDARY_FAMILIES` of :mod:`evalsim.stats.boundaries`, re-exported
here; :func:`unpaired_family_design` builds an unpaired design of any of them but
``optimised`` (:func:`evalsim.stats.sequential.optimise.optimise_design`).
Exact operating characteristics for any (p_A, p_B) come from :func:`operating_characteristics`.
Design files: :mod:`evalsim.stats.sequential.io`.

References
----------
.. [1] Lan, K. K. G. & DeMets, D. L. (1983), "Discrete sequential boundaries for clinical
   trials", Biometrika 70(3), 659-663.
.. [2] Farouki, R. T. (2012), "The Bernstein polynomial basis: a centennial retrospective",
   Computer Aided Geometric Design 29(6), 379-419.
.. [3] Jennison, C. & Turnbull, B. W. (2000), *Group Sequential Methods with Applications to
   Clinical Trials*, Chapman & Hall/CRC (chapters 7 and 12: spending functions, exact
   binomial boundaries).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import replace

import numpy as np

from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.boundaries import BOUNDARY_FAMILIES, SPENDING_FAMILIES, kind_problem
from evalsim.stats.sequential import _kernels as _k
from evalsim.stats.sequential.core import (
    ALTERNATIVES,
    ROUNDING_ALLOWANCE,
    UNPAIRED_N_MAX,
    Certificate,
    OperatingCharacteristics,
    SequentialDesign,
    _check_choice,
    _check_futility,
    _empty_futility,
    _verdict_dict,
    spending,
    spending_boundary,
)
from evalsim.stats.sequential.paired import paired_certificate, paired_oc, paired_type1
from evalsim.stats.sequential.peeking import look_sizes

__all__ = [
    "UNPAIRED_BUILDERS",
    "certify_type1",
    "operating_characteristics",
    "type1_curve",
    "unpaired_design",
    "unpaired_family_design",
    "unpaired_shape_design",
]


_CALIBRATION_GRID = 48


def _unpaired_rows(sizes, crit, two_sided, n_max, futility) -> dict:
    upper, lower = _k.z_thresholds(sizes, crit, two_sided, n_max)
    if futility is None:
        fut_lo, fut_hi = _empty_futility(upper.shape)
    else:
        fut_lo, fut_hi = _k.z_futility_rows(
            sizes, futility["z"], futility["from"], two_sided, n_max
        )
    return {"upper": upper, "lower": lower, "fut_lo": fut_lo, "fut_hi": fut_hi, "crit": crit}


def _check_unpaired(alpha, n_max, alternative, looks):
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    if n_max > UNPAIRED_N_MAX:
        raise ValueError(
            f"n_max of an unpaired design must be at most {UNPAIRED_N_MAX}, got {n_max!r}"
        )
    _check_choice(alternative, "alternative", ALTERNATIVES)
    return alpha, n_max, look_sizes(n_max, looks)


def _null_beta(design: SequentialDesign, by_look: bool = False):
    r = design.rows
    beta, per_look = _k.unpaired_null_bernstein(
        design.look_sizes, r["upper"], r["lower"], True, design.two_sided
    )
    return (beta, per_look) if by_look else beta


def type1_curve(design: SequentialDesign, p) -> np.ndarray:
    """Exact false-win rate of a design at common rates ``p`` (futility ignored, non-binding).

    Unpaired: the Bernstein polynomial of :func:`certify_type1` evaluated at each p. Paired
    designs do not depend on p (see :func:`evalsim.stats.sequential.paired.paired_type1`).
    """
    p = np.atleast_1d(np.asarray(check_probability(p, "p"), dtype=np.float64))
    if design.kind == "paired":
        return np.full(p.shape, paired_type1(design))
    return _k.bernstein_eval(_null_beta(design.without_futility()), p)


def certify_type1(design: SequentialDesign, tol: float = 1e-9, max_depth: int = 48) -> Certificate:
    """Prove an upper bound of the worst-case false-win rate over all of p in [0, 1].

    Unpaired: the null rejection probability is ``R(p) = sum_s beta_s b(s; 2 n_max, p)``
    with ``beta_s`` the rejection probability given s successes in all 2 n_max trials
    (the continuation past a stop does not change the verdict). On any interval a
    polynomial is bounded by its Bernstein coefficients there, which subdivision (de
    Casteljau) brings to the polynomial [2]_: intervals are split until none can hold a
    value above the best attained one by more than ``tol``. The bound is rigorous up to
    floating-point rounding, for which :data:`ROUNDING_ALLOWANCE` is added (all terms are
    non-negative sums and convex combinations, relative error below 1e-12).

    Paired: exact, see :func:`evalsim.stats.sequential.paired.paired_certificate`.
    """
    if design.kind == "paired":
        return paired_certificate(design)
    start = time.perf_counter()
    beta = _null_beta(design.without_futility())
    grid = np.linspace(0.0, 1.0, 257)
    vals = _k.bernstein_eval(beta, grid)
    i = int(np.argmax(vals))
    upper, attained, p_at, n_int, _ = _k.bernstein_certify(
        beta, 0.0, 1.0, np.array([vals[i], grid[i]]), float(tol), int(max_depth)
    )
    return Certificate(
        upper=float(upper) + ROUNDING_ALLOWANCE,
        attained=float(attained),
        p_at=float(p_at),
        method="Bernstein subdivision of the exact null rejection polynomial on p in [0, 1]",
        intervals=int(n_int),
        seconds=time.perf_counter() - start,
    )


def _calibration_grid(n: int = _CALIBRATION_GRID) -> np.ndarray:
    # pooled-z regions are invariant under (k_A, k_B) -> (m - k_B, m - k_A), so R(p) = R(1 - p)
    return np.linspace(0.5 / n, 0.5, n)


def _certified(
    design: SequentialDesign, alpha: float, certify: bool
) -> tuple[SequentialDesign | None, Certificate | None]:
    """One try of a design builder's certification loop.

    Parameters
    ----------
    design : SequentialDesign
        The design built at this try.
    alpha : float
        The level its worst-case type-I error must not exceed.
    certify : bool
        False: the design is returned as built, uncertified.

    Returns
    -------
    tuple of (SequentialDesign or None, Certificate or None)
        The design to return (with its certificate when certified), or None when the
        certificate exceeds ``alpha`` (the caller tightens and tries again); and the
        certificate (None without ``certify``).
    """
    if not certify:
        return design, None
    cert = certify_type1(design)
    if cert.upper <= alpha:
        return replace(design, certificate=cert), cert
    return None, cert


def unpaired_design(
    alpha=0.05,
    n_max=200,
    alternative="one-sided",
    spending_family="pocock",
    rho=None,
    looks="every",
    futility=None,
    certify=True,
) -> SequentialDesign:
    """An unpaired group-sequential design calibrated look by look from a spending function.

    At look j the critical value of the pooled z is the smallest whose cumulative false-win
    rate, maximised over a grid of common rates p, is at most ``spending(m_j / n_max)``
    [1]_ [3]_; the final design is then certified on all of [0, 1] (:func:`certify_type1`),
    and recalibrated with a slightly smaller budget in the rare case the certificate exceeds
    alpha.

    Parameters
    ----------
    alpha : float
        Worst-case false-win rate allowed.
    n_max : int
        Maximum trials per policy (<= 500).
    alternative : {"one-sided", "two-sided"}
        One-sided: verdict "B better" only; two-sided: either policy, alpha split evenly.
    spending_family : str
        A spending family, a key of :data:`SPENDING_FAMILIES`.
    rho : float
        The family's parameter, when it has one (the exponent of the power family).
    looks : "every", int or sequence of int
        Look schedule in trials per policy (:func:`evalsim.stats.sequential.peeking.look_sizes`).
    futility : dict, optional
        ``{"z": z_f, "from": start}``, non-binding.
    certify : bool
        Compute the certificate (on by default; off only inside optimisers).

    Returns
    -------
    SequentialDesign
    """
    alpha, n_max, sizes = _check_unpaired(alpha, n_max, alternative, looks)
    _check_choice(spending_family, "spending", tuple(SPENDING_FAMILIES))
    futility = _check_futility(futility, n_max)
    boundary = spending_boundary(spending_family, alpha, rho)
    two_sided = alternative == "two-sided"
    budget = alpha * (1.0 - 1e-7)
    for _ in range(6):
        targets = spending(sizes / n_max, budget, spending_family, rho)
        crit = _k.calibrate_spending_z(sizes, targets, two_sided, _calibration_grid(), 1e-10)
        design = SequentialDesign(
            kind="unpaired",
            alternative=alternative,
            alpha=alpha,
            n_max=n_max,
            boundary=boundary,
            look_sizes=sizes,
            rows=_unpaired_rows(sizes, crit, two_sided, n_max, futility),
            futility=futility,
        )
        done, cert = _certified(design, alpha, certify)
        if done is not None:
            return done
        budget *= 1.0 - 2.0 * (cert.upper - alpha) / alpha - 1e-6
    raise RuntimeError(f"could not certify {design.label} at alpha={alpha}")  # pragma: no cover


def unpaired_shape_design(
    alpha=0.05,
    n_max=200,
    b=0.16,
    alternative="one-sided",
    looks="every",
    futility=None,
    certify=True,
) -> SequentialDesign:
    """An unpaired design with critical values ``c_j = a (m_j / n_max)^(-b)``.

    ``b = 0`` is a Pocock-like constant boundary, ``b = 0.5`` an O'Brien-Fleming-like one.
    The scale ``a`` is the smallest (bisection to 1e-9) whose false-win rate, maximised over
    a grid of common rates, is at most alpha; the design is then certified on [0, 1] and
    ``a`` raised in the rare case the certificate exceeds alpha.
    """
    alpha, n_max, sizes = _check_unpaired(alpha, n_max, alternative, looks)
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not 0.0 <= b <= 2.0:
        raise ValueError(f"b (boundary shape) must be a number in [0, 2], got {b!r}")
    futility = _check_futility(futility, n_max)
    two_sided = alternative == "two-sided"
    shape = (sizes / n_max) ** (-float(b))
    grid = _calibration_grid()

    def make(a: float) -> SequentialDesign:
        return SequentialDesign(
            kind="unpaired",
            alternative=alternative,
            alpha=alpha,
            n_max=n_max,
            boundary={"family": "shape", "a": float(a), "b": float(b)},
            look_sizes=sizes,
            rows=_unpaired_rows(sizes, a * shape, two_sided, n_max, None),
            futility=None,
        )

    def worst(a: float) -> float:
        return float(_k.bernstein_eval(_null_beta(make(a)), grid).max())

    lo, hi = 0.5, 8.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if worst(mid) <= alpha * (1.0 - 1e-7):
            hi = mid
        else:
            lo = mid
    a = hi
    for _ in range(8):
        design = make(a)
        if futility is not None:
            design = replace(
                design,
                rows=_unpaired_rows(sizes, a * shape, two_sided, n_max, futility),
                futility=futility,
            )
        done, _ = _certified(design, alpha, certify)
        if done is not None:
            return done
        a *= 1.0 + 1e-3
    raise RuntimeError(f"could not certify {design.label}")  # pragma: no cover


#: Builders of the unpaired families of :data:`BOUNDARY_FAMILIES` that are not spending
#: families, by id; each takes alpha, n_max, alternative, looks, futility, certify and the
#: family's parameter as keywords. ``optimised`` is built by
#: :func:`evalsim.stats.sequential.optimise.optimise_design` from its own settings.
def _unpaired_anytime(
    alpha=0.05, n_max=200, alternative="one-sided", looks="every", futility=None, certify=True
) -> SequentialDesign:
    """The unpaired anytime e-process (:mod:`evalsim.stats.sequential.anytime`), every look."""
    from evalsim.stats.sequential.anytime import unpaired_anytime_design

    if alternative != "one-sided" or futility is not None:
        raise ValueError("boundary anytime is one-sided (B better), without futility")
    alpha, n_max, sizes = _check_unpaired(alpha, n_max, alternative, looks)
    design = unpaired_anytime_design(alpha, n_max)
    if looks != "every":
        keep = sizes - 1
        r = design.rows
        rows = {k: v[keep] for k, v in r.items()}
        design = replace(design, look_sizes=design.look_sizes[keep], rows=rows)
    return replace(design, certificate=certify_type1(design)) if certify else design


UNPAIRED_BUILDERS = {"shape": unpaired_shape_design, "anytime": _unpaired_anytime}


def unpaired_family_design(
    family,
    alpha=0.05,
    n_max=200,
    alternative="one-sided",
    looks="every",
    futility=None,
    certify=True,
    **parameter,
) -> SequentialDesign:
    """An unpaired design of a boundary family of :data:`BOUNDARY_FAMILIES`, by its id.

    Spending families are calibrated by :func:`unpaired_design`, the others built by their
    function in :data:`UNPAIRED_BUILDERS`.

    Parameters
    ----------
    family : str
        The family's id; unpaired designs must take it.
    alpha, n_max, alternative, looks, futility, certify
        As in :func:`unpaired_design`.
    **parameter
        The family's parameter by name (``rho=`` for ``power``, ``b=`` for ``shape``), none
        for a family without one.

    Returns
    -------
    SequentialDesign
    """
    problem = kind_problem(family, "unpaired")
    if problem is not None:
        raise ValueError(f"boundary {family!r} {problem}")
    found = BOUNDARY_FAMILIES[family]
    if set(parameter) != ({found.parameter} - {None}):
        raise ValueError(
            f"boundary {family} takes {found.parameter or 'no parameter'}, "
            f"got {', '.join(sorted(parameter)) or 'none'}"
        )
    common = {"looks": looks, "futility": futility, "certify": certify}
    if found.spending:
        return unpaired_design(alpha, n_max, alternative, family, **parameter, **common)
    if family not in UNPAIRED_BUILDERS:
        raise ValueError(
            f"boundary {family} is not built by unpaired_family_design: {found.description}"
        )
    return UNPAIRED_BUILDERS[family](
        alpha=alpha, n_max=n_max, alternative=alternative, **parameter, **common
    )


def operating_characteristics(
    design: SequentialDesign, p_a=None, p_b=None, p10=None, p01=None
) -> OperatingCharacteristics:
    """Exact rejection probability, stopping-time law, ESS and verdict probabilities.

    Unpaired: give ``p_a`` and ``p_b``. Paired: give ``p_a`` and ``p_b`` (outcomes of a pair
    independent given the condition: ``p10 = p_a (1 - p_b)``, ``p01 = (1 - p_a) p_b``) or the
    discordance split ``p10`` (A-only) and ``p01`` (B-only) directly.
    """
    if design.kind == "paired":
        return paired_oc(design, p_a=p_a, p_b=p_b, p10=p10, p01=p01)
    if p_a is None or p_b is None:
        raise ValueError("an unpaired design needs p_a and p_b")
    p_a = check_probability(p_a, "p_a")
    p_b = check_probability(p_b, "p_b")
    r = design.rows
    by = _k.unpaired_oc(
        p_a, p_b, design.look_sizes, r["upper"], r["lower"], r["fut_lo"], r["fut_hi"]
    )
    stop = by.sum(axis=1)
    return OperatingCharacteristics(
        p_a=p_a,
        p_b=p_b,
        stop_sizes=design.look_sizes.copy(),
        stop_prob=stop,
        verdicts=_verdict_dict(by),
        ess=float(stop @ design.look_sizes),
    )
