"""The two questions of a simulation claim: (a) the document's own inputs, (b) our pools.

A claim with a ``model`` block names a downstream quantity ``f`` (a registry entry below,
e.g. the exact Wilson coverage at ``n``), its fixed arguments, the document's own stated
inputs (``document``) and the pools' rates (``pools``: a rate and its number of trials,
read from the result tables).

(a) **Self-consistency**: ``f`` at the document's inputs, against the printed number. The
    allowed gap is the printed number's rounding plus, when the document's number is a
    Monte Carlo estimate of ``n_doc`` replications, 2 of its standard errors.
(b) **The pools**: a parametric bootstrap over each pool's rate (``k* ~ Binomial(trials,
    rate)``), ``f`` at ``k*/trials``; the document's number must lie in the central 95% of
    that distribution, widened by the same rounding and 2 document standard errors.

No tolerance is set by hand: every allowance is computed from the numbers. References:
Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (parametric bootstrap).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from evalsim.safe_expr import evaluate
from evalsim.seeding import rng_for
from evalsim.stats.binomial import prob_at_least
from evalsim.stats.coverage import exact_coverage
from evalsim.stats.power import fisher_power, prob_b_not_better

N_BOOT = 400  # bootstrap draws per claim; f is evaluated once per distinct draw
BOOT_SEED = 2025  # the ledger's own stream (evalsim.seeding), keyed by claim id

# name -> function of keyword rates/arguments returning a probability.
MODELS = {
    "rate": lambda p: p,
    "gap": lambda p_a, p_b: p_b - p_a,
    "prob_at_least": lambda p, n, k: float(prob_at_least(k, n, p)),
    "wilson_coverage": lambda p, n: exact_coverage("wilson", int(n), p),
    "wald_coverage": lambda p, n: exact_coverage("wald", int(n), p),
    "fisher_power": lambda p_a, p_b, n: fisher_power(p_a, int(n), p_b, int(n)),
    "b_not_better": lambda p_a, p_b, n: prob_b_not_better(p_a, int(n), p_b, int(n)),
}
MODEL_KEYS = {"f", "args", "document", "pools", "n_doc"}


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


def _doc_se(value: float, n_doc) -> float:
    """Standard error of a document's Monte Carlo proportion of ``n_doc`` replications."""
    if not n_doc:
        return 0.0
    return math.sqrt(max(value * (1.0 - value), 0.0) / float(n_doc))


def self_consistency(model: dict, stated: float, half: float) -> tuple[bool, str] | None:
    """Question (a); None when the claim states no inputs of its own."""
    if "document" not in model:
        return None
    f = MODELS[model["f"]]
    inputs = {k: float(evaluate(str(v), {})) for k, v in model["document"].items()}
    value = float(f(**inputs, **model.get("args", {})))
    se = _doc_se(value, model.get("n_doc"))
    allowed = half + 2.0 * se
    ok = abs(stated - value) <= allowed * (1 + 1e-9) + 1e-12
    what = ", ".join(f"{k} = {v:g}" for k, v in model["document"].items())
    why = f"(a) at the document's own {what}: {value:.4g}"
    why += f" ({'within' if ok else 'outside'} rounding"
    why += f" + 2 SE of its {model['n_doc']:,} replications)" if se else ")"
    return ok, why


def pool_agreement(
    model: dict, lookup: Callable, stated: float, half: float, claim_id: str
) -> tuple[bool, str, float, float]:
    """Question (b): the document's number against the bootstrap of ``f`` over our pools.

    ``lookup(spec)`` reads a table value (``evalsim.ledger.readings._lookup``).
    """
    f = MODELS[model["f"]]
    args = model.get("args", {})
    rng = rng_for(BOOT_SEED, "ledger", claim_id)
    draws = {}
    for name, spec in model["pools"].items():
        rate = float(lookup(spec["rate"])[0][0])
        trials = int(round(float(lookup(spec["trials"])[0][0])))
        draws[name] = (rng.binomial(trials, rate, size=N_BOOT) / trials, rate)
    names = list(draws)
    cache: dict[tuple, float] = {}
    values = np.empty(N_BOOT)
    for i in range(N_BOOT):
        key = tuple(draws[n][0][i] for n in names)
        if key not in cache:
            cache[key] = float(f(**dict(zip(names, key, strict=True)), **args))
        values[i] = cache[key]
    point = float(f(**{n: draws[n][1] for n in names}, **args))
    lo, hi = (float(q) for q in np.quantile(values, [0.025, 0.975]))
    se = _doc_se(stated, model.get("n_doc"))
    ok = lo - half - 2 * se - 1e-12 <= stated <= hi + half + 2 * se + 1e-12
    why = (
        f"(b) our pools give {point:.4g}, 95% bootstrap range [{lo:.4g}, {hi:.4g}] over the "
        f"pools' sampling error; the document's number is {'inside' if ok else 'outside'}"
    )
    if se:
        why += " (allowing 2 SE of the document's own simulation)"
    return ok, why, lo, hi
