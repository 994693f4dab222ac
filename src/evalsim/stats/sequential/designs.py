"""Sequential comparisons of two policies with exact, certified error rates.

A *sequential design* is fixed before the first trial. It looks at the tallies as the trials
come in, may stop at every look with a verdict ("B better", "A better" when two-sided, or
a non-binding futility stop), and its worst-case false-win rate is at most ``alpha``,
proven by exact computation rather than simulated.

Two designs share the exact dynamic programs of :mod:`evalsim.stats._sequential_kernels`:

* **Unpaired** (:func:`unpaired_design`): both policies get one trial per step; at look j
  (``m_j`` trials per policy) the pooled two-proportion z is compared with a critical value
  ``c_j``. The critical values come from an alpha-spending function (Pocock,
  O'Brien-Fleming, power family) [1]_ -- each ``c_j`` the smallest whose cumulative alpha,
  maximised over the common rate p, stays within the spending function -- or from a
  boundary shape ``c_j = a (m_j / n_max)^(-b)`` calibrated on the total alpha
  (:mod:`evalsim.stats.sequential_optimise`). The null rejection probability is a
  polynomial in p whose Bernstein coefficients are the rejection probabilities given the
  total number of successes, so its maximum over all of [0, 1] is **certified** by
  Bernstein subdivision (:func:`certify_type1`) [2]_.
* **Paired** (:mod:`evalsim.stats.sequential_paired`): boundaries on the walk of B's solo
  wins over the discordant pairs, exact for every nuisance rate.

The boundary families (their ids, labels, parameters and the design kinds that take them)
are the registry :data:`BOUNDARY_FAMILIES` of :mod:`evalsim.stats.boundaries`, re-exported
here; :func:`unpaired_family_design` builds an unpaired design of any of them but
``optimised`` (:func:`evalsim.stats.sequential_optimise.optimise_design`).
Exact operating characteristics for any (p_A, p_B) come from :func:`operating_characteristics`.
Design files: :mod:`evalsim.stats.sequential_io`.

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

import math
import numbers
import time
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import ndtr, ndtri

from evalsim.stats import _sequential_kernels as _k
from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.boundaries import BOUNDARY_FAMILIES, SPENDING_FAMILIES, kind_problem
from evalsim.stats.peeking import look_sizes

__all__ = [
    "ALTERNATIVES",
    "BOUNDARY_FAMILIES",
    "SPENDING_FAMILIES",
    "UNPAIRED_BUILDERS",
    "VERDICTS",
    "Certificate",
    "OperatingCharacteristics",
    "SequentialDesign",
    "certify_type1",
    "operating_characteristics",
    "spending",
    "type1_curve",
    "unpaired_design",
    "unpaired_family_design",
    "unpaired_shape_design",
]

ALTERNATIVES = ("one-sided", "two-sided")
#: Verdict codes of the kernels -> words.
VERDICTS = {0: "no difference shown", 1: "B better", 2: "A better", 3: "futility"}
#: Largest n per policy of an unpaired design (the p = 1/2 masses of 2 n trials must stay
#: inside the float64 range).
UNPAIRED_N_MAX = 500
#: Allowance for floating-point rounding added to every certified bound.
ROUNDING_ALLOWANCE = 1e-10
_CALIBRATION_GRID = 48


def _check_choice(value, name: str, allowed) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def spending(tau, alpha=0.05, family="pocock", rho=None) -> np.ndarray:
    """Cumulative alpha spent by information fraction ``tau`` (Lan-DeMets families [1]_).

    ``pocock``: ``alpha log(1 + (e - 1) tau)``; ``obrien-fleming``:
    ``2 - 2 Phi(z_{1-alpha/2} / sqrt(tau))``; ``power``: ``alpha tau^rho``. Each equals
    ``alpha`` at ``tau = 1``.
    """
    alpha = check_alpha(alpha)
    _check_choice(family, "spending", tuple(SPENDING_FAMILIES))
    tau = np.clip(np.asarray(tau, dtype=np.float64), 0.0, 1.0)
    if family == "pocock":
        out = alpha * np.log1p((math.e - 1.0) * tau)
    elif family == "obrien-fleming":
        with np.errstate(divide="ignore"):
            out = 2.0 - 2.0 * ndtr(ndtri(1.0 - alpha / 2.0) / np.sqrt(tau))
    else:
        if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not rho > 0:
            raise ValueError(f"rho (power spending) must be a number > 0, got {rho!r}")
        out = alpha * tau ** float(rho)
    return np.where(tau >= 1.0, alpha, np.minimum(out, alpha))


@dataclass(frozen=True)
class Certificate:
    """A certified bound on the worst-case false-win rate of a design.

    Attributes
    ----------
    upper : float
        Proven upper bound of P(false win) over every null (unpaired: every common rate
        p in [0, 1]; paired: every nuisance, drifting or not), rounding allowance included.
    attained : float
        A false-win rate actually attained (at ``p_at``), so the maximum is in
        ``[attained, upper]``.
    p_at : float or None
        Where ``attained`` is attained (unpaired: the common rate; paired: None, see
        ``discordant_at``).
    method : str
        How the bound was proven.
    intervals : int
        Sub-intervals examined by the subdivision (0 for paired designs).
    seconds : float
        Time taken. Not written to the design file (a timing would make the file differ from
        run to run) and not compared; benchmarks/bench_sequential.py reports the times.
    discordant_at : int or None
        Paired: the number of discordant pairs at which the worst case is attained.
    """

    upper: float
    attained: float
    p_at: float | None
    method: str
    intervals: int = 0
    seconds: float = field(default=0.0, compare=False)
    discordant_at: int | None = None

    def to_dict(self) -> dict:
        return {
            "max_type1_upper": self.upper,
            "max_type1_attained": self.attained,
            "p_at_max": self.p_at,
            "discordant_at_max": self.discordant_at,
            "method": self.method,
            "intervals": self.intervals,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Certificate:
        return cls(
            upper=float(d["max_type1_upper"]),
            attained=float(d["max_type1_attained"]),
            p_at=None if d.get("p_at_max") is None else float(d["p_at_max"]),
            method=str(d["method"]),
            intervals=int(d.get("intervals", 0)),
            seconds=float(d.get("seconds", 0.0)),
            discordant_at=None
            if d.get("discordant_at_max") is None
            else int(d["discordant_at_max"]),
        )


@dataclass(frozen=True, eq=False)
class SequentialDesign:
    """A sequential design with integer boundaries (see :mod:`evalsim.stats.sequential_io`).

    Attributes
    ----------
    kind : {"unpaired", "paired"}
    alternative : {"one-sided", "two-sided"}
        One-sided designs test "B better than A" only.
    alpha : float
        Level: certified worst-case false-win rate <= alpha.
    n_max : int
        Maximum trials per policy (unpaired) or pairs (paired).
    boundary : dict
        How the boundaries were made: ``{"family": ..., <parameter>: ...}``.
    look_sizes : numpy.ndarray of int64
        Unpaired: trials per policy at each look. Paired: pairs 1..n_max (a look after
        every pair).
    rows : dict of numpy.ndarray
        Unpaired: ``upper``, ``lower``, ``fut_lo``, ``fut_hi`` of shape (looks, n_max + 1),
        indexed [look, k_A] (see the kernel module), and ``crit`` (the critical z per look).
        Paired: ``upper``, ``lower``, ``final_upper``, ``final_lower``, ``fut_lo``,
        ``fut_hi`` indexed by the number of discordant pairs d = 0..d_max.
    futility : dict or None
        ``{"z": z_f, "from": start}``: stop for futility when the z statistic <= z_f (|z| <=
        z_f two-sided) from ``start`` trials per policy (pairs when paired). Non-binding:
        the type-I certificate ignores it.
    certificate : Certificate or None
    d_max : int or None
        Paired: stop at this many discordant pairs.
    """

    kind: str
    alternative: str
    alpha: float
    n_max: int
    boundary: dict
    look_sizes: np.ndarray
    rows: dict = field(repr=False)
    futility: dict | None = None
    certificate: Certificate | None = None
    d_max: int | None = None

    @property
    def two_sided(self) -> bool:
        return self.alternative == "two-sided"

    @property
    def label(self) -> str:
        fam = self.boundary.get("family", "?")
        par = {k: v for k, v in self.boundary.items() if k != "family"}
        extra = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in par.items()
        )
        fut = (
            ""
            if self.futility is None
            else f", futility z<={self.futility['z']:g} from {self.futility['from']}"
        )
        return (
            f"{self.kind} {self.alternative} {fam}{' (' + extra + ')' if extra else ''}, "
            f"alpha={self.alpha:g}, n_max={self.n_max}{fut}"
        )

    def __repr__(self) -> str:
        cert = (
            "uncertified"
            if self.certificate is None
            else f"certified max type-I <= {self.certificate.upper:.6f}"
        )
        return f"SequentialDesign({self.label}, {len(self.look_sizes)} looks, {cert})"

    def without_futility(self) -> SequentialDesign:
        """The same boundaries with the futility stops removed."""
        if self.futility is None:
            return self
        rows = dict(self.rows)
        rows["fut_lo"] = np.zeros_like(rows["fut_lo"])
        rows["fut_hi"] = np.full_like(rows["fut_hi"], -1)
        return replace(self, rows=rows, futility=None)


def _empty_futility(shape) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(shape, dtype=np.int64), np.full(shape, -1, dtype=np.int64)


def _check_futility(futility, n_max: int) -> dict | None:
    if futility is None:
        return None
    if not isinstance(futility, dict) or set(futility) != {"z", "from"}:
        raise ValueError(
            f"futility must be None or a dict with keys 'z' and 'from', got {futility!r}"
        )
    z = futility["z"]
    if isinstance(z, bool) or not isinstance(z, numbers.Real) or not math.isfinite(z):
        raise ValueError(f"futility z must be a finite number, got {z!r}")
    start = check_n(futility["from"], "futility from")
    if start > n_max:
        raise ValueError(f"futility from must be in 1..n_max={n_max}, got {start!r}")
    return {"z": float(z), "from": int(start)}


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
    designs do not depend on p (see :func:`evalsim.stats.sequential_paired.paired_type1`).
    """
    p = np.atleast_1d(np.asarray(check_probability(p, "p"), dtype=np.float64))
    if design.kind == "paired":
        from evalsim.stats.sequential_paired import paired_type1

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

    Paired: exact, see :func:`evalsim.stats.sequential_paired.paired_certificate`.
    """
    if design.kind == "paired":
        from evalsim.stats.sequential_paired import paired_certificate

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
        Look schedule in trials per policy (:func:`evalsim.stats.peeking.look_sizes`).
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
    boundary = {"family": spending_family}
    parameter = SPENDING_FAMILIES[spending_family]
    if parameter is not None:
        spending(1.0, alpha, spending_family, rho)  # checks the parameter
        boundary[parameter] = float(rho)
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
        if not certify:
            return design
        cert = certify_type1(design)
        if cert.upper <= alpha:
            return replace(design, certificate=cert)
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
        if not certify:
            return design
        cert = certify_type1(design)
        if cert.upper <= alpha:
            return replace(design, certificate=cert)
        a *= 1.0 + 1e-3
    raise RuntimeError(f"could not certify {design.label}")  # pragma: no cover


#: Builders of the unpaired families of :data:`BOUNDARY_FAMILIES` that are not spending
#: families, by id; each takes alpha, n_max, alternative, looks, futility, certify and the
#: family's parameter as keywords. ``optimised`` is built by
#: :func:`evalsim.stats.sequential_optimise.optimise_design` from its own settings.
UNPAIRED_BUILDERS = {"shape": unpaired_shape_design}


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


@dataclass(frozen=True)
class OperatingCharacteristics:
    """Exact operating characteristics of a design at one alternative.

    Attributes
    ----------
    p_a, p_b : float
        True success rates (paired: the marginal rates, when given).
    p10, p01 : float or None
        Paired: probabilities of an A-only and a B-only pair.
    stop_sizes : numpy.ndarray of int64
        Trials per policy (pairs when paired) at each possible stop.
    stop_prob : numpy.ndarray of float64
        P(the design stops there).
    verdicts : dict
        P(each verdict): "B better", "A better", "futility", "no difference shown".
    ess : float
        Expected trials per policy (pairs when paired) at the stop.
    """

    p_a: float | None
    p_b: float | None
    stop_sizes: np.ndarray
    stop_prob: np.ndarray
    verdicts: dict
    ess: float
    p10: float | None = None
    p01: float | None = None

    @property
    def rejection_prob(self) -> float:
        """P(a verdict for either policy): the power, or the false-win rate under the null."""
        return self.verdicts["B better"] + self.verdicts["A better"]

    @property
    def power(self) -> float:
        """P(the verdict names the truly better policy) (P(B better) when rates are equal)."""
        if self.p10 is not None and self.p01 is not None:
            a_better = self.p10 > self.p01
        else:
            a_better = self.p_a > self.p_b
        return self.verdicts["A better"] if a_better else self.verdicts["B better"]

    def quantile(self, q: float) -> int:
        """Smallest stop size with P(stop by then) >= q."""
        cdf = np.cumsum(self.stop_prob)
        return int(self.stop_sizes[min(int(np.searchsorted(cdf, q - 1e-12)), len(cdf) - 1)])

    def __repr__(self) -> str:
        v = ", ".join(f"{k}: {p:.4f}" for k, p in self.verdicts.items())
        return f"OperatingCharacteristics(p_a={self.p_a}, p_b={self.p_b}, ess={self.ess:.2f}, {v})"


def _verdict_dict(by: np.ndarray) -> dict:
    return {
        "B better": float(by[:, 1].sum()),
        "A better": float(by[:, 2].sum()),
        "futility": float(by[:, 3].sum()),
        "no difference shown": float(by[:, 0].sum()),
    }


def operating_characteristics(
    design: SequentialDesign, p_a=None, p_b=None, p10=None, p01=None
) -> OperatingCharacteristics:
    """Exact rejection probability, stopping-time law, ESS and verdict probabilities.

    Unpaired: give ``p_a`` and ``p_b``. Paired: give ``p_a`` and ``p_b`` (outcomes of a pair
    independent given the condition: ``p10 = p_a (1 - p_b)``, ``p01 = (1 - p_a) p_b``) or the
    discordance split ``p10`` (A-only) and ``p01`` (B-only) directly.
    """
    if design.kind == "paired":
        from evalsim.stats.sequential_paired import paired_oc

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
