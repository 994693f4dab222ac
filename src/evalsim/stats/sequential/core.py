"""The records and rules every sequential design shares: the spending functions, the design
and its certificate, operating characteristics and the futility rule.

:mod:`evalsim.stats.sequential.designs` (unpaired designs, and the checks of any design) and
:mod:`evalsim.stats.sequential.paired` (paired designs) build on it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import ndtr, ndtri

from evalsim._records import record
from evalsim.stats._validate import check_alpha, check_n
from evalsim.stats.boundaries import SPENDING_FAMILIES

__all__ = [
    "ALTERNATIVES",
    "ROUNDING_ALLOWANCE",
    "UNPAIRED_N_MAX",
    "VERDICTS",
    "Certificate",
    "OperatingCharacteristics",
    "SequentialDesign",
    "spending",
    "spending_boundary",
]


ALTERNATIVES = ("one-sided", "two-sided")


#: Verdict codes of the kernels -> words.
VERDICTS = {0: "no difference shown", 1: "B better", 2: "A better", 3: "futility"}


#: Largest n per policy of an unpaired design (the p = 1/2 masses of 2 n trials must stay
#: inside the float64 range).
UNPAIRED_N_MAX = 500


#: Allowance for floating-point rounding added to every certified bound.
ROUNDING_ALLOWANCE = 1e-10


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


def spending_boundary(family: str, alpha: float, rho=None) -> dict:
    """The ``boundary`` of a spending design: its family, and its parameter if it has one.

    Parameters
    ----------
    family : str
        A key of :data:`evalsim.stats.boundaries.SPENDING_FAMILIES`.
    alpha : float
        The design's level (used to check the parameter through :func:`spending`).
    rho : float, optional
        The family's parameter (``power``: the exponent); ignored by a family without one.

    Returns
    -------
    dict
        ``{"family": family}``, plus ``{name: float(rho)}`` where the family has a parameter
        ``name``.

    Raises
    ------
    ValueError
        An unknown family or a bad parameter (:func:`spending`'s checks).
    """
    boundary = {"family": family}
    parameter = SPENDING_FAMILIES[family]
    if parameter is not None:
        spending(1.0, alpha, family, rho)  # checks the parameter
        boundary[parameter] = float(rho)
    return boundary


#: A certificate's keys in a design file, in order: the file's name and the attribute's.
CERTIFICATE_KEYS = (
    ("max_type1_upper", "upper"),
    ("max_type1_attained", "attained"),
    ("p_at_max", "p_at"),
    ("discordant_at_max", "discordant_at"),
    "method",
    "intervals",
)


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
        """The design file's record (``seconds`` is left out: see above)."""
        return record(self, CERTIFICATE_KEYS)

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
    """A sequential design with integer boundaries (see :mod:`evalsim.stats.sequential.io`).

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
