"""Anytime-valid tests for binary outcomes: mixture e-processes, stopped at 1/alpha.

An *e-process* is a non-negative process whose expectation at every stopping time is at
most 1 under every null; by Ville's inequality [1]_ ``P(sup_n E_n >= 1/alpha) <= alpha``, so
"stop and claim when E reaches 1/alpha" has false-win rate at most alpha whenever the lab
stops -- after any number of trials, for any reason, with or without a maximum. Each test
here is a *mixture*: the average, under a prior fixed before the first trial, of likelihood
ratios, so its value depends on the data only through the sufficient statistics (the
strategy is stated and uses the past only) and its boundaries are integer rows that the
exact dynamic programs of the other designs run:

* **paired** (:func:`paired_anytime_design`): on the discordant pairs,
  ``E = int theta^w (1-theta)^(d-w) dpi(theta) / 2^-d`` with pi the Beta(a, b) prior
  restricted to theta >= 1/2 (one-sided, "B better"). Under "no difference" every discordant
  pair is a fair coin whatever the rates, drifting or not, so E is a martingale for every
  nuisance.
* **unpaired** (:func:`unpaired_anytime_design`): blocks of one trial of each policy, the
  e-variable of a block ``e(theta) = f_{theta_a}(y_a) f_{theta_b}(y_b) / (f_pbar(y_a)
  f_pbar(y_b))`` with ``pbar = (theta_a + theta_b) / 2`` (the balanced-block safe test for
  2x2 tables of Turner, Ly and Grunwald [3]_): for a common rate p the two factors' means
  add to 2, so their product is at most 1 -- an e-variable for the whole composite null,
  every p. The mixture is uniform over a grid of (theta_a < theta_b).
* **one arm against a threshold** (:func:`one_arm_anytime`): is the success rate above p0?
  ``E = int (theta/p0)^k ((1-theta)/(1-p0))^(n-k) dpi(theta)``, pi uniform on (p0, 1): each
  factor has mean at most 1 for every p <= p0.

Their exact operating characteristics at an n_max (type I certified over the nuisance, power,
expected trials) are those of the design's rows (:mod:`evalsim.stats.sequential.designs`);
the bound alpha itself holds without any n_max.

References
----------
.. [1] Ville, J. (1939), *Etude critique de la notion de collectif*, Gauthier-Villars.
.. [2] Grunwald, P., de Heide, R. & Koolen, W. (2024), "Safe testing", JRSS B 86(5),
   1091-1128.
.. [3] Turner, R. J., Ly, A. & Grunwald, P. D. (2024), "Generic E-variables for exact
   sequential k-sample tests that allow for optional stopping", Statistics & Probability
   Letters 107(1); Turner & Grunwald (2023), "Safe sequential testing and effect estimation
   in stratified count data", AISTATS.
.. [4] Howard, S. R., Ramdas, A., McAuliffe, J. & Sekhon, J. (2021), "Time-uniform,
   nonparametric, nonasymptotic confidence sequences", Annals of Statistics 49(2).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import betainc, betaln

from evalsim._records import record
from evalsim.stats._validate import check_alpha, check_n, check_probability
from evalsim.stats.sequential import _anytime_kernels as _ak
from evalsim.stats.sequential.core import Certificate, SequentialDesign
from evalsim.stats.sequential.paired import paired_certificate

__all__ = [
    "OneArmTest",
    "log_e_one_arm",
    "log_e_paired",
    "log_e_unpaired",
    "one_arm_anytime",
    "paired_anytime_design",
    "unpaired_anytime_design",
]

#: The unpaired mixture's grid of success rates (theta_a < theta_b pairs of it).
UNPAIRED_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))


def _log_upper_beta(a, b):
    """log of int_{1/2}^1 t^(a-1) (1-t)^(b-1) dt (``B(a, b) (1 - I_{1/2}(a, b))``)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    # 1 - I_{1/2}(a, b) = I_{1/2}(b, a), accurate in the far tail
    return betaln(a, b) + np.log(np.maximum(betainc(b, a, 0.5), 1e-300))


def log_e_paired(d, w, a=1.0, b=1.0):
    """log E of the paired mixture after d discordant pairs, w of them won by B alone."""
    d = np.asarray(d, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    return d * math.log(2.0) + _log_upper_beta(a + w, b + d - w) - _log_upper_beta(a, b)


def log_e_one_arm(n, k, p0):
    """log E of the one-arm mixture (theta uniform on (p0, 1)) after k successes in n."""
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    # int_{p0}^1 t^k (1-t)^(n-k) dt = B(k+1, n-k+1) (1 - I_{p0}(k+1, n-k+1))
    tail = betainc(n - k + 1.0, k + 1.0, 1.0 - p0)
    log_int = betaln(k + 1.0, n - k + 1.0) + np.log(np.maximum(tail, 1e-300))
    return log_int - math.log(1.0 - p0) - k * math.log(p0) - (n - k) * math.log1p(-p0)


def _unpaired_mixture():
    g = np.asarray(UNPAIRED_GRID)
    ta, tb = np.meshgrid(g, g, indexing="ij")
    keep = tb > ta
    ta, tb = ta[keep].copy(), tb[keep].copy()
    log_w = np.full(ta.shape, -math.log(ta.size))
    pbar = 0.5 * (ta + tb)
    return ta, tb, pbar, pbar.copy(), log_w


def log_e_unpaired(n, k_a, k_b):
    """log E of the unpaired 2x2 mixture after n blocks with k_a, k_b successes."""
    ta, tb, qa, qb, log_w = _unpaired_mixture()
    return float(_ak._log_mixture_2x2(int(n), int(k_a), int(k_b), ta, tb, qa, qb, log_w))


def paired_anytime_design(alpha=0.05, n_max=200, a=1.0, b=1.0, certify=True) -> SequentialDesign:
    """The paired beta-mixture e-process as a paired design: "B better" when E >= 1/alpha.

    Parameters
    ----------
    alpha : float
        Level; the bound holds at every stopping time.
    n_max : int
        Pairs over which the exact operating characteristics are computed (the test itself
        needs no maximum).
    a, b : float
        The Beta prior on B's share of the discordant pairs, restricted to [1/2, 1].

    Returns
    -------
    SequentialDesign
        Rows ``upper[d]`` = least w with E >= 1/alpha; final rows the same (nothing more is
        spent when the pairs run out); with the exact certificate when ``certify``.
    """
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    for name, v in (("a", a), ("b", b)):
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0):
            raise ValueError(f"{name} (beta prior) must be a number > 0, got {v!r}")
    t = math.log(1.0 / alpha)
    upper = np.empty(n_max + 1, dtype=np.int64)
    for d in range(n_max + 1):
        w = np.arange(d + 1)
        ok = np.flatnonzero(log_e_paired(d, w, a, b) >= t - 1e-12 * t)
        upper[d] = int(ok[0]) if ok.size else d + 1
    none = np.full(n_max + 1, -1, dtype=np.int64)
    design = SequentialDesign(
        kind="paired",
        alternative="one-sided",
        alpha=alpha,
        n_max=n_max,
        boundary={"family": "anytime", "prior": "beta on [1/2, 1]", "a": float(a), "b": float(b)},
        look_sizes=np.arange(1, n_max + 1, dtype=np.int64),
        rows={
            "upper": upper,
            "lower": none.copy(),
            "final_upper": upper.copy(),
            "final_lower": none.copy(),
            "fut_lo": np.zeros(n_max + 1, dtype=np.int64),
            "fut_hi": none.copy(),
        },
        d_max=n_max,
    )
    if certify:
        design = SequentialDesign(**{**design.__dict__, "certificate": paired_certificate(design)})
    return design


def unpaired_anytime_design(alpha=0.05, n_max=200) -> SequentialDesign:
    """The unpaired 2x2 mixture e-process as an unpaired design looking after every block.

    A block is one trial of each policy; "B better" when E >= 1/alpha (rows by k_A, see
    :mod:`evalsim.stats.sequential.io`). Returned uncertified: Ville's inequality bounds the
    false-win rate by alpha already; the exact Bernstein certificate of every unpaired design
    (all common rates p) is attached by ``unpaired_family_design("anytime", ...)``
    (:func:`evalsim.stats.sequential.designs.certify_type1`).
    """
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    ta, tb, qa, qb, log_w = _unpaired_mixture()
    t = math.log(1.0 / alpha)
    upper = _ak.unpaired_mixture_rows(n_max, ta, tb, qa, qb, log_w, t - 1e-12 * t)
    shape = upper.shape
    design = SequentialDesign(
        kind="unpaired",
        alternative="one-sided",
        alpha=alpha,
        n_max=n_max,
        boundary={"family": "anytime", "prior": "uniform on the theta_a < theta_b grid"},
        look_sizes=np.arange(1, n_max + 1, dtype=np.int64),
        rows={
            "upper": upper,
            "lower": np.full(shape, -1, dtype=np.int64),
            "fut_lo": np.zeros(shape, dtype=np.int64),
            "fut_hi": np.full(shape, -1, dtype=np.int64),
            "crit": np.full(shape[0], np.inf),
        },
    )
    return design


@dataclass(frozen=True)
class OneArmTest:
    """A one-arm test of "success rate above p0", anytime (e-process) or fixed-n (exact).

    Attributes
    ----------
    p0 : float
    alpha : float
    n_max : int
    upper : numpy.ndarray of int64
        ``upper[n]``: claim "above p0" after n trials when successes >= upper[n]
        (``n + 1``: not at n). The fixed test has only ``upper[n_max]``.
    form : {"anytime", "fixed"}
    certificate : Certificate
        Exact worst case over every p <= p0 (attained at p0: the rows are upper sets, so the
        claim probability rises with p).
    """

    p0: float
    alpha: float
    n_max: int
    upper: np.ndarray
    form: str
    certificate: Certificate

    def oc(self, p) -> dict:
        """Exact power (P(claim)) and expected trials at true rate p."""
        p = check_probability(p, "p")
        out = _ak.one_arm_oc(float(p), self.n_max, self.upper)
        claim = float(out.sum())
        n = np.arange(self.n_max + 1)
        ess = float(out @ n + (1.0 - claim) * self.n_max)
        return {"p": p, "power": claim, "ess": ess}

    def to_dict(self) -> dict:
        return record(
            self,
            (
                "p0",
                "alpha",
                "n_max",
                "form",
                ("upper", lambda t: [int(v) for v in t.upper]),
                ("certificate", lambda t: t.certificate.to_dict()),
            ),
        )


def _one_arm(p0, alpha, n_max, upper, form, start) -> OneArmTest:
    size = float(_ak.one_arm_oc(p0, n_max, upper).sum())
    cert = Certificate(
        upper=size + 1e-10,
        attained=size,
        p_at=p0,
        method="exact at p0, the worst null rate (upper-set rows: the claim rate rises with p)",
        seconds=time.perf_counter() - start,
    )
    return OneArmTest(p0, alpha, n_max, upper, form, cert)


def one_arm_anytime(p0, alpha=0.05, n_max=200) -> OneArmTest:
    """Anytime test of "rate above p0": claim when the mixture E reaches 1/alpha."""
    start = time.perf_counter()
    p0 = check_probability(p0, "p0")
    if not 0.0 < p0 < 1.0:
        raise ValueError(f"p0 must be strictly between 0 and 1, got {p0!r}")
    alpha = check_alpha(alpha)
    n_max = check_n(n_max, "n_max")
    t = math.log(1.0 / alpha)
    upper = np.empty(n_max + 1, dtype=np.int64)
    upper[0] = 1
    for n in range(1, n_max + 1):
        ok = np.flatnonzero(log_e_one_arm(n, np.arange(n + 1), p0) >= t - 1e-12 * t)
        upper[n] = int(ok[0]) if ok.size else n + 1
    return _one_arm(p0, alpha, n_max, upper, "anytime", start)


def one_arm_fixed(p0, alpha=0.05, n=200) -> OneArmTest:
    """Fixed-n exact binomial test of "rate above p0" (claim when P(Bin(n, p0) >= k) <= alpha)."""
    from scipy.stats import binom

    start = time.perf_counter()
    p0 = check_probability(p0, "p0")
    alpha = check_alpha(alpha)
    n = check_n(n, "n")
    k = np.arange(n + 2)
    ok = np.flatnonzero(binom.sf(k - 1, n, p0) <= alpha)
    upper = np.arange(1, n + 2, dtype=np.int64)  # n + 1 at every n: no claim before n
    upper[n] = int(ok[0]) if ok.size else n + 1
    return _one_arm(p0, alpha, n, upper, "fixed", start)
