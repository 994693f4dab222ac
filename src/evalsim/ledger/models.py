"""The two questions of a simulation claim: (a) the document's own inputs, (b) our pools.

A claim with a ``model`` block names a downstream quantity ``f`` (a registry entry below,
e.g. the exact Wilson coverage at ``n``), its fixed arguments, the document's own stated
inputs (``document``), how many trials each of those inputs was estimated from
(``document_trials``, e.g. the lesson's 300-trial pools) and the pools' rates (``pools``: a
rate and its number of trials, read from the result tables).

(a) **Self-consistency**: ``f`` at the document's inputs, against the printed number. The
    allowed gap is the printed number's rounding plus, when the document's number is a
    Monte Carlo estimate of ``n_doc`` replications, 2 of that simulation's standard errors
    (:data:`BANDS`: of a proportion or of a mean; for an empirical quantile, the quantiles at
    the shifted levels q +- 2 sqrt(q(1 - q)/n_doc)).
(b) **The pools**: a parametric bootstrap over each pool's rate (``k* ~ Binomial(trials,
    rate)``) and, when the document's inputs are themselves estimates, over the document's
    (``k* ~ Binomial(document_trials, document rate)``). The document's number must lie in
    the central 95% of ``f(ours*) - (f(doc*) - f(doc))``, widened by the same rounding and
    Monte Carlo band.

No tolerance is set by hand: every allowance is computed from the numbers, so it narrows as
the pools or the document's replications grow. References: Efron & Tibshirani (1993), *An
Introduction to the Bootstrap*, ch. 6 (parametric bootstrap); the quantile band follows from
the binomial count of draws below an empirical quantile (e.g. Conover 1999, sec. 3.2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from evalsim.safe_expr import evaluate
from evalsim.seeding import rng_for
from evalsim.stats.proportion.binomial import prob_at_least
from evalsim.stats.proportion.coverage import exact_coverage
from evalsim.stats.proportion.intervals import interval
from evalsim.stats.two_sample.power import fisher_power, prob_b_not_better

N_BOOT = 400  # bootstrap draws per claim; f is evaluated once per distinct draw
BOOT_SEED = 2025  # the ledger's own stream (evalsim.seeding), keyed by claim id
LEVEL = 0.95  # central probability of the bootstrap range
_Z = 2.0  # standard errors of a Monte Carlo band, as the rules "mc" and "se2" use


def _wilson_widths(n: int) -> np.ndarray:
    ci = interval(np.arange(n + 1), n, method="wilson")
    return np.asarray(ci.upper, dtype=float) - np.asarray(ci.lower, dtype=float)


def mean_wilson_width(p: float, n) -> float:
    """Exact mean width of the 95% Wilson interval of k ~ Binomial(n, p)."""
    n = int(n)
    return float(binom.pmf(np.arange(n + 1), n, p) @ _wilson_widths(n))


def sd_wilson_width(p: float, n) -> float:
    """Standard deviation of that width (one evaluation)."""
    n = int(n)
    pmf, w = binom.pmf(np.arange(n + 1), n, p), _wilson_widths(n)
    return math.sqrt(max(float(pmf @ w**2) - float(pmf @ w) ** 2, 0.0))


def kn_quantiles(p: float, n, levels=(0.05, 0.95)) -> np.ndarray:
    """Quantiles of k/n, k ~ Binomial(n, p), at ``levels`` (inverted CDF, as Table B's)."""
    n = int(n)
    cdf = binom.cdf(np.arange(n + 1), n, p)
    return np.array([np.searchsorted(cdf, q - 1e-12) / n for q in np.atleast_1d(levels)])


def wilson_disjoint(p_a: float, p_b: float, n) -> float:
    """Exact P(the 95% Wilson intervals of two independent n-trial evaluations are disjoint)."""
    from evalsim.stats.resample.draws import (
        exact_pair_probabilities,
    )  # resample imports the pool I/O

    return exact_pair_probabilities(p_a, int(n), p_b, int(n)).disjoint


# name -> function of keyword rates/arguments returning a number (or one per stated value).
MODELS = {
    "rate": lambda p: p,
    "gap": lambda p_a, p_b: p_b - p_a,
    "prob_at_least": lambda p, n, k: float(prob_at_least(k, n, p)),
    "wilson_coverage": lambda p, n: exact_coverage("wilson", int(n), p),
    "wald_coverage": lambda p, n: exact_coverage("wald", int(n), p),
    "fisher_power": lambda p_a, p_b, n: fisher_power(p_a, int(n), p_b, int(n)),
    "b_not_better": lambda p_a, p_b, n: prob_b_not_better(p_a, int(n), p_b, int(n)),
    "wilson_disjoint": wilson_disjoint,
    "mean_wilson_width": mean_wilson_width,
    "kn_quantiles": kn_quantiles,
}


def _proportion_band(value: np.ndarray, n_doc: float, **_) -> tuple[np.ndarray, np.ndarray]:
    se = np.sqrt(np.clip(value * (1.0 - value), 0.0, None) / n_doc)
    return value - _Z * se, value + _Z * se


def _mean_width_band(value: np.ndarray, n_doc: float, p, n, **_) -> tuple:
    se = sd_wilson_width(p, n) / math.sqrt(n_doc)
    return value - _Z * se, value + _Z * se


def _quantile_band(value: np.ndarray, n_doc: float, p, n, levels=(0.05, 0.95), **_) -> tuple:
    levels = np.atleast_1d(np.asarray(levels, dtype=float))
    shift = _Z * np.sqrt(levels * (1.0 - levels) / n_doc)
    lo = kn_quantiles(p, n, np.clip(levels - shift, 1e-12, 1.0))
    hi = kn_quantiles(p, n, np.clip(levels + shift, 0.0, 1.0))
    return lo, hi


# What a Monte Carlo estimate of ``f`` from ``n_doc`` replications prints (2 SE either way).
#: The values each model's ``f`` can take (probabilities, widths and quantiles of k/n lie in
#: [0, 1]; a gap of two rates in [-1, 1]): the range question (b) shows is cut to them,
#: which changes no verdict, since a document's number lies in them too.
VALUE_RANGE: dict[str, tuple[float, float]] = {"gap": (-1.0, 1.0)}

#: Values of ``f`` a pool check must tell the document's number from: the ends of a
#: probability's range ("never", "always") and, for a gap, no gap at all. A range that holds
#: one of them cannot fail on that side, so the check does not resolve the claim.
#: Quantiles of k/n take the values 0 and 1 as ordinary outcomes: none is trivial there.
TRIVIAL: dict[str, tuple[float, ...]] = {"gap": (0.0,), "kn_quantiles": ()}

BANDS: dict[str, Callable] = {
    "mean_wilson_width": _mean_width_band,
    "kn_quantiles": _quantile_band,
}
MODEL_KEYS = {"f", "args", "document", "document_trials", "pools", "n_doc"}


def check_model(claim_id: str, model: dict) -> None:
    """Raise ValueError naming the bad key or function of a claim's ``model`` block."""
    bad = sorted(set(model) - MODEL_KEYS)
    if bad:
        raise ValueError(
            f"claim {claim_id!r}: unknown model key(s) {bad}; allowed: {sorted(MODEL_KEYS)}"
        )
    if model.get("f") not in MODELS:
        raise ValueError(
            f"claim {claim_id!r}: unknown model f {model.get('f')!r}; allowed: {sorted(MODELS)}"
        )
    extra = sorted(set(model.get("document_trials", {})) - set(model.get("document", {})))
    if extra:
        raise ValueError(f"claim {claim_id!r}: document_trials for unknown input(s) {extra}")


def _f(model: dict, inputs: dict) -> np.ndarray:
    return np.atleast_1d(np.asarray(MODELS[model["f"]](**inputs, **model.get("args", {})), float))


def mc_band(model: dict, inputs: dict, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The range a simulation of ``n_doc`` replications of ``f`` at ``inputs`` prints (2 SE)."""
    if not model.get("n_doc"):
        return value, value
    band = BANDS.get(model["f"], _proportion_band)
    lo, hi = band(value, float(model["n_doc"]), **inputs, **model.get("args", {}))
    return np.atleast_1d(lo), np.atleast_1d(hi)


def _inputs(model: dict) -> dict:
    return {k: float(evaluate(str(v), {})) for k, v in model["document"].items()}


def self_consistency(model: dict, stated, half) -> tuple[bool, str] | None:
    """Question (a); None when the claim states no inputs of its own."""
    if "document" not in model:
        return None
    stated, half = np.atleast_1d(stated), np.atleast_1d(half)
    inputs = _inputs(model)
    value = _f(model, inputs)
    lo, hi = mc_band(model, inputs, value)
    ok = bool(np.all((lo - half - 1e-12 <= stated) & (stated <= hi + half + 1e-12)))
    what = ", ".join(
        f"{k} = {v:g}" if isinstance(v, int | float) else f"{k} = {v} = {inputs[k]:.4g}"
        for k, v in model["document"].items()
    )
    why = f"(a) at the document's own {what}: {_show(value)}"
    why += f" ({'within' if ok else 'outside'} rounding"
    if model.get("n_doc"):
        why += f" + 2 SE of its {model['n_doc']:,} replications: {_range(lo, hi)})"
    else:
        why += ")"
    return ok, why


def _show(values: np.ndarray) -> str:
    parts = [f"{v:.4g}" for v in np.atleast_1d(values)]
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def _range(lo: np.ndarray, hi: np.ndarray) -> str:
    return ", ".join(f"[{a:.4g}, {b:.4g}]" for a, b in zip(lo, hi, strict=True))


def _boot(f: Callable, draws: dict[str, np.ndarray], size: int) -> np.ndarray:
    names = list(draws)
    cache: dict[tuple, np.ndarray] = {}
    out = []
    for i in range(size):
        key = tuple(float(draws[n][i]) for n in names)
        if key not in cache:
            cache[key] = f(dict(zip(names, key, strict=True)))
        out.append(cache[key])
    return np.asarray(out)


@dataclass(frozen=True)
class Resolution:
    """What a pool check can see: its range's width and the smallest difference it detects.

    Attributes
    ----------
    width : float
        Width of the acceptance range (the widest, for several stated values).
    detectable : float
        The smallest difference from our pools' value that falls outside the range on both
        sides: a document's number closer than this always passes.
    trivial_inside : tuple of float
        Values of :data:`TRIVIAL` inside the range (0 or 1 for a probability, 0 for a gap).
    """

    width: float
    detectable: float
    trivial_inside: tuple[float, ...] = ()

    @property
    def resolves(self) -> bool:
        """False when the range holds a trivial value: the check cannot fail on that side."""
        return not self.trivial_inside

    def describe(self) -> str:
        text = (
            f"resolution: range width {self.width:.3g}, smallest detectable difference "
            f"{self.detectable:.3g}"
        )
        if self.trivial_inside:
            text += ", the range holds " + " and ".join(f"{t:g}" for t in self.trivial_inside)
        return text

    def to_dict(self) -> dict:
        return {
            "width": self.width,
            "detectable": self.detectable,
            "trivial_inside": list(self.trivial_inside),
            "resolves": self.resolves,
        }


def pool_agreement(
    model: dict, lookup: Callable, stated, half, claim_id: str
) -> tuple[bool, str, np.ndarray, np.ndarray, Resolution]:
    """Question (b): the document's number against the bootstrap of ``f`` over our pools.

    ``lookup(spec)`` reads a value (``evalsim.ledger.readings.evaluate_source``-like: a
    table lookup or an ``expr``). Returns (inside, reason, lower, upper, resolution), the
    bounds being the acceptance range of the document's number (rounding and its own band
    included) and the resolution what that range can tell (:class:`Resolution`).
    """
    stated, half = np.atleast_1d(stated), np.atleast_1d(half)
    rng = rng_for(BOOT_SEED, "ledger", claim_id)
    ours, rates, trials_of = {}, {}, {}
    for name, spec in model["pools"].items():
        rate = float(lookup(spec["rate"])[0][0])
        trials = int(round(float(lookup(spec["trials"])[0][0])))
        rates[name], trials_of[name] = rate, trials
        ours[name] = rng.binomial(trials, rate, size=N_BOOT) / trials
    values = _boot(lambda x: _f(model, x), ours, N_BOOT)
    point = _f(model, rates)
    doc_trials = model.get("document_trials", {})
    if doc_trials:
        doc = _inputs(model)
        doc_draws = {
            k: rng.binomial(int(doc_trials[k]), v, size=N_BOOT) / int(doc_trials[k])
            if k in doc_trials
            else np.full(N_BOOT, v)
            for k, v in doc.items()
        }
        doc_values = _boot(lambda x: _f(model, x), doc_draws, N_BOOT)
        values = values - (doc_values - _f(model, doc))
    lo, hi = (np.quantile(values, q, axis=0) for q in ((1 - LEVEL) / 2, (1 + LEVEL) / 2))
    # The document's own Monte Carlo noise, at the value the pools give.
    band_lo, band_hi = mc_band(model, rates, point)
    lo, hi = lo - (point - band_lo) - half, hi + (band_hi - point) + half
    floor, ceiling = VALUE_RANGE.get(model["f"], (0.0, 1.0))
    lo, hi = np.maximum(lo, floor), np.minimum(hi, ceiling)
    ok = bool(np.all((lo - 1e-12 <= stated) & (stated <= hi + 1e-12)))
    trivial = np.array(TRIVIAL.get(model["f"], (floor, ceiling)), dtype=float)
    held = [t for t in trivial if np.any((lo - 1e-12 <= t) & (t <= hi + 1e-12))]
    resolution = Resolution(
        width=float(np.max(hi - lo)),
        detectable=float(np.max(np.maximum(hi - point, point - lo))),
        trivial_inside=tuple(float(t) for t in held),
    )
    pools = ", ".join(f"{k} {rates[k]:.4g} of {trials_of[k]}" for k in rates)
    why = (
        f"(b) our pools ({pools}) give {_show(point)}; the document's number may lie in "
        f"{_range(lo, hi)}, from the pools' sampling error"
    )
    if doc_trials:
        why += ", the document's own (" + ", ".join(f"{v:g}" for v in doc_trials.values())
        why += " trials)"
    if model.get("n_doc"):
        why += f", its {model['n_doc']:,} replications"
    why += f" and its rounding; the document's number is {'inside' if ok else 'outside'}"
    why += f"; {resolution.describe()}"
    return ok, why, lo, hi, resolution
