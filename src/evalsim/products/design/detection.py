"""Tables T14, T17, T19 and T20 of the stage design: what a given n can detect.

How often two evaluations of one checkpoint differ by a gap (T14), the minimum detectable
effect against n (T17), the null-result sentence (T19), and the Fisher p-value ladder (T20).
How many trials a plan needs (T13, T21, T26, T29) is in :mod:`evalsim.products.design.sizing`.

Each builder reproduces a worked number of documents 001, 002 or 004 from the config's
``design`` section and returns a DataFrame whose ``doc_stated`` column carries the
document's own number where it states one, so the claims ledger can compare them. Where
the document's number does not follow from its own method, the note says so; nothing is
tuned to match.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import ndtr  # norm.sf(x) = ndtr(-x), without loading scipy.stats

from evalsim.products._common import titled_frame
from evalsim.products.design._common import NAN, _pts
from evalsim.products.settings import Sizing
from evalsim.stats.decision import rejects
from evalsim.stats.two_sample import design as dz


# ---------------------------------------------------------------- T14
def repeat_evaluation_gap(n: int = 20, p: float = 0.7, gap_points: float = 20.0) -> pd.DataFrame:
    """T14: P(two evaluations of one checkpoint differ by >= gap_points), exactly."""
    from evalsim.stats.proportion.binomial import binom_pmf

    k = np.arange(n + 1)
    pmf = np.asarray(binom_pmf(k, n, p), dtype=float)
    joint = np.outer(pmf, pmf)
    diff = np.abs(np.subtract.outer(k, k))
    gap_k = gap_points / 100.0 * n
    k_at_least = int(math.ceil(gap_k - 1e-9))
    k_more = int(math.floor(gap_k + 1e-9)) + 1
    p_ge = float(joint[diff >= k_at_least].sum())
    p_gt = float(joint[diff >= k_more].sum())
    sd = math.sqrt(2.0 * p * (1.0 - p) / n)
    gap = gap_points / 100.0
    p_norm = float(2.0 * ndtr(-(gap / sd)))
    p_norm_cc = float(2.0 * ndtr(-((gap - 0.5 / n) / sd)))
    se = math.sqrt(p * (1.0 - p) / n)
    quote = "the scores differ by 20 or more points about one time in six"
    rows = [
        {
            "quantity": f"P(|k1-k2| >= {k_at_least}) exact (>= {gap_points:g} points)",
            "value": p_ge,
            "one_in": 1 / p_ge,
            "doc_stated": 1 / 6,
            "doc_quote": quote,
        },
        {
            "quantity": f"P(|k1-k2| >= {k_more}) exact (> {gap_points:g} points)",
            "value": p_gt,
            "one_in": 1 / p_gt,
            "doc_stated": NAN,
            "doc_quote": "",
        },
        {
            "quantity": "normal approximation, no continuity correction",
            "value": p_norm,
            "one_in": 1 / p_norm,
            "doc_stated": 1 / 6,
            "doc_quote": quote,
        },
        {
            "quantity": "normal approximation, continuity correction",
            "value": p_norm_cc,
            "one_in": 1 / p_norm_cc,
            "doc_stated": NAN,
            "doc_quote": "",
        },
        {
            "quantity": "standard error of k/n, sqrt(p(1-p)/n)",
            "value": se,
            "one_in": NAN,
            "doc_stated": 0.10,
            "doc_quote": "sqrt(0.21/20) ~ 0.10",
        },
    ]
    note = (
        f"Two independent evaluations of the same checkpoint, n = {n} each, true p = {p}. "
        f"'{gap_points:g} or more points' at n = {n} is |k1 - k2| >= {k_at_least}: exactly "
        f"{p_ge:.4f} (one time in {1 / p_ge:.1f}), not one in six. The document's 'one in six' "
        f"is the normal approximation without continuity correction ({p_norm:.4f}); "
        f"a strict 'more than {gap_points:g} points' gives {p_gt:.4f} (one in {1 / p_gt:.1f})."
    )
    return titled_frame(rows, "T14 Same checkpoint, two evaluations", note)


# ---------------------------------------------------------------- T17
def mde_table(
    sizing: Sizing,
    n_grid: list[int] = (10, 20, 25, 50, 100, 250, 350),
    pbar: float = 0.5,
    planning_rates: list[float] = (0.40, 0.70),
    minutes_per_trial: float = 3.0,
) -> pd.DataFrame:
    """T17: worst-case MDE against n per arm, and n per arm for the planned 0.40 vs 0.70."""
    alpha, power, exact_fisher = sizing.alpha, sizing.power, sizing.exact_fisher
    doc_mde = {
        20: (40.0, "Per task, the MDE is 40-plus points (10-25 trials)"),
        25: (40.0, "Per task, the MDE is 40-plus points (10-25 trials)"),
        250: (
            10.0,
            "250 trials per method, enough for coarse aggregate claims of roughly 10 points",
        ),
    }
    rows = []
    for n in n_grid:
        ex = dz.mde_exact(n, alpha, power, baseline=pbar) if exact_fisher else None
        doc = doc_mde.get(n, (NAN, ""))
        rows.append(
            {
                "quantity": "MDE (worst case)",
                "n_per_arm": n,
                "mde_normal_points": _pts(dz.mde_normal(n, pbar, alpha, power)),
                "mde_exact_fisher_points": _pts(ex.mde) if ex else NAN,
                "bench_hours_both_arms": dz.bench_hours(2 * n, minutes_per_trial),
                "doc_stated": doc[0],
                "doc_quote": doc[1],
            }
        )
    p1, p2 = planning_rates
    res = dz.n_per_arm_normal(p1, p2, alpha, power, "fleiss")
    rows.append(
        {
            "quantity": f"n per arm, {p1:g} vs {p2:g} (doc 001 n_per_arm)",
            "n_per_arm": res.n,
            "mde_normal_points": _pts(abs(p2 - p1)),
            "mde_exact_fisher_points": NAN,
            "bench_hours_both_arms": dz.bench_hours(2 * res.n, minutes_per_trial),
            "doc_stated": 42.0,
            "doc_quote": "n_per_arm(p_bc, p_act) -> 42 trials per policy | 4.2 h",
        }
    )
    if exact_fisher:
        from evalsim.stats.two_sample.power import n_for_fisher_power

        ex = n_for_fisher_power(p1, p2, power=power, alpha=alpha)
        for label, n_ex in (("first n", ex.n_first), ("stays above", ex.n)):
            rows.append(
                {
                    "quantity": f"n per arm, {p1:g} vs {p2:g} (exact Fisher power, {label})",
                    "n_per_arm": int(n_ex),
                    "mde_normal_points": _pts(abs(p2 - p1)),
                    "mde_exact_fisher_points": NAN,
                    "bench_hours_both_arms": dz.bench_hours(2 * int(n_ex), minutes_per_trial),
                    "doc_stated": NAN,
                    "doc_quote": "",
                }
            )
    note = (
        f"MDE = (z_a + z_b) sqrt(2 pbar(1-pbar)/n) at pbar = {pbar:g} (document 001's mde); "
        f"exact Fisher: the smallest gap centred on {pbar:g} (rates {pbar:g} -/+ gap/2) whose "
        f"exact power of the two-sided Fisher test (p < {alpha}) reaches {power:.0%}. "
        f"Bench hours count both arms at {minutes_per_trial:g} min per trial "
        "(the document's 4.2 h for 42 per arm). The n = 250 row checks 'roughly 10 points'."
    )
    return titled_frame(rows, "T17 Minimum detectable effect and n per arm", note)


# ---------------------------------------------------------------- T19
def null_result_mde(
    sizing: Sizing,
    n_per_arm: int = 45,
    pbar: float = 0.5,
    planning_rates: list[float] = (0.40, 0.70),
) -> pd.DataFrame:
    """T19: 'effects below about 29 points are invisible at n = 45 per arm'."""
    alpha, power, exact_fisher = sizing.alpha, sizing.power, sizing.exact_fisher
    quote = "effects below about 29 points are invisible at this sample size"
    p1, p2 = planning_rates
    rows = [
        {
            "quantity": f"MDE, normal, pbar = {pbar:g}",
            "value_points": _pts(dz.mde_normal(n_per_arm, pbar, alpha, power)),
            "doc_stated": 29.0,
            "doc_quote": quote,
        },
        {
            "quantity": f"MDE, normal, pbar = {(p1 + p2) / 2:g}",
            "value_points": _pts(dz.mde_normal(n_per_arm, (p1 + p2) / 2, alpha, power)),
            "doc_stated": 29.0,
            "doc_quote": quote,
        },
    ]
    if exact_fisher:
        from evalsim.stats.two_sample.power import fisher_power

        ex = dz.mde_exact(n_per_arm, alpha, power, baseline=pbar)
        rows.append(
            {
                "quantity": f"MDE, exact Fisher, centred on {pbar:g}",
                "value_points": _pts(ex.mde),
                "doc_stated": 29.0,
                "doc_quote": quote,
            }
        )
        rows.append(
            {
                "quantity": f"power of exact Fisher, {p1:g} vs {p2:g}",
                "value_points": _pts(fisher_power(p1, n_per_arm, p2, n_per_arm, alpha=alpha)),
                "doc_stated": NAN,
                "doc_quote": "",
            }
        )
    rows.append(
        {
            "quantity": f"power of the z-test (normal approx.), {p1:g} vs {p2:g}",
            "value_points": _pts(dz.normal_power(p1, p2, n_per_arm, alpha)),
            "doc_stated": NAN,
            "doc_quote": "",
        }
    )
    note = (
        f"n = {n_per_arm} per arm, two-sided alpha = {alpha}, power {power:.0%}. The MDE is in "
        "percentage points; the power rows are in percent (the document's planned effect, "
        "'one experiment in five returns a null' at 80% power)."
    )
    return titled_frame(rows, "T19 The null-result sentence", note)


# ---------------------------------------------------------------- T20
def fisher_ladder(
    rates: list[float] = (0.90, 0.80),
    n_grid: list[int] = (10, 20, 50, 100),
    scan_max_n: int = 300,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """T20: Fisher p-values for 90% vs 80% at growing n, and where p first drops below alpha."""
    from evalsim.stats.two_sample.fisher import fisher_pvalue

    doc = {10: 1.000, 20: 0.661, 50: 0.262, 100: 0.073}
    r1, r2 = rates

    def row(n, what, doc_value=NAN, quote=""):
        k1, k2 = int(round(r1 * n)), int(round(r2 * n))
        return {
            "row": what,
            "n_per_policy": n,
            "k1": k1,
            "k2": k2,
            "fisher_p": fisher_pvalue(k1, n, k2, n),
            "z_test_p": _pooled_z_p(k1, n, k2, n),
            "doc_stated": doc_value,
            "doc_quote": quote,
        }

    rows = [row(n, "ladder", doc.get(n, NAN), "p-value ladder" if n in doc else "") for n in n_grid]
    step = _exact_step(r1, r2)
    scan = [n for n in range(step, scan_max_n + 1, step)]
    ps = {n: row(n, "")["fisher_p"] for n in scan}
    first = next((n for n in scan if rejects(ps[n], alpha)), None)
    stays = next(
        (n for i, n in enumerate(scan) if all(rejects(ps[m], alpha) for m in scan[i:])), None
    )
    quote = "The gap only becomes something you can state at around two hundred trials per policy"
    if first is not None:
        rows.append(row(first, f"first n (multiple of {step}) with p < {alpha}", 200.0, quote))
    if stays is not None and stays != first:
        rows.append(row(stays, f"from this n on (to {scan_max_n}) p < {alpha}", 200.0, quote))
    note = (
        f"Observed {r1:.0%} vs {r2:.0%} at n per policy (k = round(rate n)), two-sided Fisher "
        f"exact test (= scipy.stats.fisher_exact) and the pooled two-proportion z-test. The "
        f"scan runs over n where both rates are whole counts. With exactly {r1:.0%} vs {r2:.0%} "
        f"observed, p < {alpha} first at n = {first}. The document's 'around two hundred' "
        "matches instead the n per policy for 80% power (T21)."
    )
    return titled_frame(rows, "T20 Fisher p-value ladder, 90% vs 80%", note)


def _exact_step(r1: float, r2: float) -> int:
    for step in range(1, 1001):
        if abs(r1 * step - round(r1 * step)) < 1e-9 and abs(r2 * step - round(r2 * step)) < 1e-9:
            return step
    raise ValueError(f"rates {r1!r}, {r2!r} are not whole counts at any n <= 1000")


def _pooled_z_p(k1: int, n1: int, k2: int, n2: int) -> float:
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    return float(2.0 * ndtr(-(abs(k1 / n1 - k2 / n2) / se)))
