"""Tables T13-T21, T23-T27, T29 and the figures mde_vs_n, power_vs_n (stage design).

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
from scipy.stats import norm

from evalsim.stats import design as dz
from evalsim.stats import paired as pz

NAN = float("nan")


def _frame(rows: list[dict], title: str, note: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df.attrs["title"] = title
    df.attrs["note"] = note
    return df


def _pts(x: float) -> float:
    """A proportion as percentage points."""
    return 100.0 * float(x)


# ---------------------------------------------------------------- T13
def paired_vs_unpaired_sizing(
    p_a: float = 0.70,
    p_b: float = 0.50,
    rho: float = 0.5,
    rho_grid: list[float] = (0.0, 0.25, 0.5, 0.75),
    alpha: float = 0.05,
    power: float = 0.8,
    minutes_per_trial: float = 3.0,
    doc_z_alpha: float = 1.96,
    doc_z_beta: float = 0.84,
    exact_fisher: bool = True,
) -> pd.DataFrame:
    """T13: trials per arm, unpaired vs paired, for p_a vs p_b (document 001's 94 vs 47)."""
    rows = []

    def add(design, method, r, res, doc=NAN, quote=""):
        rows.append(
            {
                "design": design,
                "method": method,
                "rho": r,
                "n_real": res.n_real,
                "n_per_arm": res.n,
                "total_trials": 2 * res.n,
                "bench_hours": dz.bench_hours(2 * res.n, minutes_per_trial),
                "doc_stated": doc,
                "doc_quote": quote,
            }
        )

    zdoc = {"z_alpha": doc_z_alpha, "z_beta": doc_z_beta}
    add(
        "unpaired",
        f"doc arithmetic: pbar variance, z = {doc_z_alpha}+{doc_z_beta}",
        NAN,
        dz.n_per_arm_normal(p_a, p_b, alpha, power, variance="pbar", **zdoc),
        94,
        "we need 94 trials per arm (188 total)",
    )
    add(
        "unpaired",
        "pbar variance, exact z",
        NAN,
        dz.n_per_arm_normal(p_a, p_b, alpha, power, "pbar"),
    )
    add(
        "unpaired",
        "doc 001 n_per_arm (pooled null / unpooled alternative)",
        NAN,
        dz.n_per_arm_normal(p_a, p_b, alpha, power, "fleiss"),
    )
    add(
        "unpaired",
        "unpooled variance",
        NAN,
        dz.n_per_arm_normal(p_a, p_b, alpha, power, "unpooled"),
    )
    if exact_fisher:
        from evalsim.stats.power import n_for_fisher_power

        res = n_for_fisher_power(p_a, p_b, power=power, alpha=alpha)
        add("unpaired", "exact Fisher power, first n", NAN, dz.SampleSize(res.n_first, NAN, ""))
        add("unpaired", "exact Fisher power, stays above", NAN, dz.SampleSize(res.n, NAN, ""))
    add(
        "paired",
        f"doc arithmetic: pbar variance, z = {doc_z_alpha}+{doc_z_beta}",
        rho,
        dz.paired_n(p_a, p_b, rho=rho, alpha=alpha, power=power, variance="pbar", **zdoc),
        47,
        "Pairing reduces the required sample size from 94 to 47 trials per arm",
    )
    skipped = []
    for r in rho_grid:
        try:
            dz.discordance_from_rho(p_a, p_b, r)
        except ValueError:
            skipped.append(r)
            continue
        add(
            "paired",
            "normal, pbar variance, exact z",
            r,
            dz.paired_n(p_a, p_b, rho=r, alpha=alpha, power=power, variance="pbar"),
        )
        add(
            "paired",
            "normal, separate variances",
            r,
            dz.paired_n(p_a, p_b, rho=r, alpha=alpha, power=power),
        )
        psi = dz.discordance_from_rho(p_a, p_b, r)
        add(
            "paired",
            f"McNemar (Connor 1987), discordance {psi:.4f}",
            r,
            dz.paired_n(p_a, p_b, discordance=psi, alpha=alpha, power=power),
        )
        p10, p01 = (psi + (p_a - p_b)) / 2.0, (psi - (p_a - p_b)) / 2.0
        add(
            "paired",
            "exact McNemar power",
            r,
            dz.mcnemar_n_exact(p10, p01, alpha=alpha, power=power),
        )
    df = pd.DataFrame(rows)
    doc_unpaired = df.loc[0, "n_real"]
    doc_paired = df.loc[(df["design"] == "paired") & df["method"].str.startswith("doc")].iloc[0]
    pbar_var = (p_a + p_b) / 2 * (1 - (p_a + p_b) / 2)
    saved = dz.bench_hours(
        2 * (round(doc_unpaired) - round(doc_paired["n_real"])), minutes_per_trial
    )
    note = (
        f"{p_a:.2f} vs {p_b:.2f}, two-sided alpha = {alpha}, power = {power}, "
        f"{minutes_per_trial} min per trial; n is per arm (paired: pairs) and rounded up. "
        f"The document's arithmetic gives n = {doc_unpaired:.2f} unpaired and "
        f"{doc_paired['n_real']:.2f} paired; it rounds to the nearest ({round(doc_unpaired)}, "
        f"{round(doc_paired['n_real'])}) where a sample size is rounded up "
        f"({math.ceil(doc_unpaired - 1e-9)}, {math.ceil(doc_paired['n_real'] - 1e-9)}). Its "
        f"paired variance uses pbar(1-pbar) = {pbar_var:.4g} for both arms; with the arms' own "
        f"variances ({p_a * (1 - p_a):.4g}, {p_b * (1 - p_b):.4g}) rho = {rho} gives fewer "
        "pairs. "
        f"Hours saved by pairing at the document's rounding: {saved:.1f} h (doc: 4.7 h). "
        f"Document 001's own n_per_arm function gives a smaller unpaired n than its worked "
        f"example. The McNemar rows size the test one actually runs on paired data, with the "
        f"discordance rho implies; they need more pairs than the rho formula."
    )
    if skipped:
        note += (
            f" rho = {', '.join(f'{r:g}' for r in skipped)} left out: impossible for two "
            f"Bernoulli outcomes with rates {p_a:g} and {p_b:g}."
        )
    return _frame(rows, "T13 Paired vs unpaired sizing", note)


# ---------------------------------------------------------------- T14
def repeat_evaluation_gap(n: int = 20, p: float = 0.7, gap_points: float = 20.0) -> pd.DataFrame:
    """T14: P(two evaluations of one checkpoint differ by >= gap_points), exactly."""
    from evalsim.stats.binomial import binom_pmf

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
    p_norm = float(2.0 * norm.sf(gap / sd))
    p_norm_cc = float(2.0 * norm.sf((gap - 0.5 / n) / sd))
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
    return _frame(rows, "T14 Same checkpoint, two evaluations", note)


# ---------------------------------------------------------------- T15
def wilson_vs_wald(counts: list[list[int]], confidence: float = 0.95) -> pd.DataFrame:
    """T15: Wilson and Wald 95% intervals for document 001's five counts."""
    from evalsim.stats.intervals import wald_interval, wilson_interval

    rows = []
    for k, n in counts:
        wl, wa = wilson_interval(k, n, confidence), wald_interval(k, n, confidence)
        rows.append(
            {
                "k": k,
                "n": n,
                "rate": k / n,
                "wilson_lower": wl.lower,
                "wilson_upper": wl.upper,
                "wald_lower": wa.lower,
                "wald_upper": wa.upper,
                "wilson_width_points": _pts(wl.upper - wl.lower),
                "wald_width_points": _pts(wa.upper - wa.lower),
                "doc_stated_wilson_lower": 0.722 if (k, n) == (10, 10) else NAN,
                "doc_stated_wald_width_points": 0.0 if (k, n) == (10, 10) else NAN,
            }
        )
    note = (
        f"{confidence:.0%} intervals (z from the confidence level; the document's code uses "
        "z = 1.96, the same to 3 decimals). Document 001 prints 10/10 -> Wilson [0.722, "
        "1.000], Wald [1.000, 1.000]. Wald clipped neither to [0, 1] nor at the boundary."
    )
    return _frame(rows, "T15 Wilson vs Wald", note)


# ---------------------------------------------------------------- T16
def width_vs_n(
    rate: float = 0.7,
    n_grid: list[int] = (10, 20, 50, 100, 200, 500, 1000),
    precision_half_width: float = 0.03,
    precision_rates: list[float] = (0.5, 0.7),
    minutes_per_trial: float = 3.0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """T16: Wilson interval width against n, with bench hours (the table 001 refers to)."""
    from evalsim.stats.intervals import wilson_interval

    rows = []
    for n in n_grid:
        k = int(round(rate * n))
        w = wilson_interval(k, n, confidence)
        rows.append(
            {
                "row": "n grid",
                "n": n,
                "k": k,
                "rate": k / n,
                "wilson_lower": w.lower,
                "wilson_upper": w.upper,
                "wilson_width_points": _pts(w.upper - w.lower),
                "half_width_points": _pts(w.upper - w.lower) / 2.0,
                "worst_case_width_points": _pts(_wilson_width_at(0.5, n, confidence)),
                "bench_hours": dz.bench_hours(n, minutes_per_trial),
                "doc_stated": 37.0 if n == 20 else NAN,
                "doc_quote": "A 20-trial evaluation ... a 37-point window" if n == 20 else "",
            }
        )
    for r in precision_rates:
        for method in ("normal", "wilson"):
            res = dz.n_for_estimate(r, precision_half_width, confidence, method)
            k = int(round(r * res.n))
            w = wilson_interval(k, res.n, confidence)
            rows.append(
                {
                    "row": f"n for +/-{_pts(precision_half_width):g} points at {r:g} ({method})",
                    "n": res.n,
                    "k": k,
                    "rate": k / res.n,
                    "wilson_lower": w.lower,
                    "wilson_upper": w.upper,
                    "wilson_width_points": _pts(w.upper - w.lower),
                    "half_width_points": _pts(w.upper - w.lower) / 2.0,
                    "worst_case_width_points": _pts(_wilson_width_at(0.5, res.n, confidence)),
                    "bench_hours": dz.bench_hours(res.n, minutes_per_trial),
                    "doc_stated": 50.0,
                    "doc_quote": "+/-3-point precision ... a thousand trials: 50 hours",
                }
            )
    note = (
        f"Wilson {confidence:.0%} interval at observed rate {rate:g} (k = round(rate n)); "
        f"worst case = rate 0.5; bench hours for one policy at {minutes_per_trial:g} min per "
        "trial. doc_stated: the 37-point window at n = 20 and the 50 hours for +/-3 points "
        "(the hours are compared in the bench_hours column)."
    )
    return _frame(rows, "T16 Interval width vs n, and bench hours", note)


def _wilson_width_at(rate: float, n: int, confidence: float) -> float:
    """Wilson width at an observed rate that need not be k/n for integer k (closed form)."""
    z = float(norm.ppf(0.5 + confidence / 2.0))
    denom = 1.0 + z * z / n
    return 2.0 * (z / denom) * math.sqrt(rate * (1 - rate) / n + z * z / (4.0 * n * n))


# ---------------------------------------------------------------- T17
def mde_table(
    n_grid: list[int] = (10, 20, 25, 50, 100, 250, 350),
    pbar: float = 0.5,
    planning_rates: list[float] = (0.40, 0.70),
    alpha: float = 0.05,
    power: float = 0.8,
    minutes_per_trial: float = 3.0,
    exact_fisher: bool = True,
) -> pd.DataFrame:
    """T17: worst-case MDE against n per arm, and n per arm for the planned 0.40 vs 0.70."""
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
        from evalsim.stats.power import n_for_fisher_power

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
    return _frame(rows, "T17 Minimum detectable effect and n per arm", note)


# ---------------------------------------------------------------- T19
def null_result_mde(
    n_per_arm: int = 45,
    pbar: float = 0.5,
    planning_rates: list[float] = (0.40, 0.70),
    alpha: float = 0.05,
    power: float = 0.8,
    exact_fisher: bool = True,
) -> pd.DataFrame:
    """T19: 'effects below about 29 points are invisible at n = 45 per arm'."""
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
        from evalsim.stats.power import fisher_power

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
    return _frame(rows, "T19 The null-result sentence", note)


# ---------------------------------------------------------------- T20
def fisher_ladder(
    rates: list[float] = (0.90, 0.80),
    n_grid: list[int] = (10, 20, 50, 100),
    scan_max_n: int = 300,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """T20: Fisher p-values for 90% vs 80% at growing n, and where p first drops below alpha."""
    from evalsim.stats.fisher import fisher_pvalue

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
    first = next((n for n in scan if ps[n] < alpha), None)
    stays = next((n for i, n in enumerate(scan) if all(ps[m] < alpha for m in scan[i:])), None)
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
    return _frame(rows, "T20 Fisher p-value ladder, 90% vs 80%", note)


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
    return float(2.0 * norm.sf(abs(k1 / n1 - k2 / n2) / se))


# ---------------------------------------------------------------- T21
def trials_to_separate(
    rates: list[float] = (0.90, 0.80),
    alpha: float = 0.05,
    power: float = 0.8,
    minutes_per_trial: float = 3.0,
    exact_fisher: bool = True,
) -> pd.DataFrame:
    """T21: trials per policy to separate 90% from 80% at 80% power."""
    r1, r2 = rates
    quote = "around two hundred trials per policy"
    results = [
        (
            "normal, doc 001 n_per_arm (pooled null / unpooled alternative)",
            dz.n_per_arm_normal(r1, r2, alpha, power, "fleiss"),
        ),
        ("normal, pbar variance", dz.n_per_arm_normal(r1, r2, alpha, power, "pbar")),
        ("normal, unpooled variance", dz.n_per_arm_normal(r1, r2, alpha, power, "unpooled")),
        ("arcsine (Cohen's h)", dz.n_per_arm_from_h(dz.cohens_h(r1, r2), alpha, power)),
    ]
    if exact_fisher:
        from evalsim.stats.power import fisher_power, n_for_fisher_power

        ex = n_for_fisher_power(r1, r2, power=power, alpha=alpha)
        results.append(("exact Fisher power, first n", dz.SampleSize(ex.n_first, NAN, "")))
        results.append(("exact Fisher power, stays above", dz.SampleSize(ex.n, NAN, "")))
    rows = []
    for method, res in results:
        rows.append(
            {
                "method": method,
                "n_real": res.n_real,
                "n_per_policy": res.n,
                "exact_fisher_power_at_n": (
                    fisher_power(r1, res.n, r2, res.n, alpha=alpha) if exact_fisher else NAN
                ),
                "bench_hours_both_arms": dz.bench_hours(2 * res.n, minutes_per_trial),
                "doc_stated": 200.0,
                "doc_quote": quote,
            }
        )
    note = (
        f"{r1:.0%} vs {r2:.0%}, two-sided alpha = {alpha}, power {power:.0%}, n per policy. "
        "Fisher's test is conservative, so at the normal-approximation n its exact power falls "
        "short of the target (column exact_fisher_power_at_n). Document 002's 'around two "
        "hundred trials per policy' matches the normal approximation."
    )
    return _frame(rows, "T21 Trials per policy to separate 90% from 80%", note)


# ---------------------------------------------------------------- T23
def cp_vs_wilson(k: int = 63, n: int = 70, confidence: float = 0.95) -> pd.DataFrame:
    """T23: Clopper-Pearson vs Wilson for 63/70 (document 004)."""
    from evalsim.stats.intervals import clopper_pearson_interval, wilson_interval

    doc = {"clopper_pearson": (80.48, 95.88), "wilson": (82.77, 95.07)}
    rows = []
    for method, fn in (("clopper_pearson", clopper_pearson_interval), ("wilson", wilson_interval)):
        iv = fn(k, n, confidence)
        rows.append(
            {
                "method": method,
                "k": k,
                "n": n,
                "lower_pct": _pts(iv.lower),
                "upper_pct": _pts(iv.upper),
                "width_points": _pts(iv.upper - iv.lower),
                "doc_stated_lower_pct": doc[method][0],
                "doc_stated_upper_pct": doc[method][1],
            }
        )
    w = rows[1]
    note = (
        f"{k}/{n} at {confidence:.0%}. Clopper-Pearson matches the document. Wilson's upper "
        f"limit matches; its lower limit is {w['lower_pct']:.2f}%, not 82.77% (82.77 is not "
        "the Wilson, Wald, Agresti-Coull or Jeffreys limit; likely a typo for 80.77)."
    )
    return _frame(rows, "T23 Clopper-Pearson vs Wilson for 63/70", note)


# ---------------------------------------------------------------- T24
def difference_intervals(
    counts_a: list[int] = (90, 100), counts_b: list[int] = (92, 100), confidence: float = 0.95
) -> pd.DataFrame:
    """T24: 95% CI of the difference B - A for 90/100 vs 92/100, by each method."""
    (ka, na), (kb, nb) = counts_a, counts_b
    rows = []
    for method in pz.DIFF_METHODS:
        iv = pz.diff_interval(kb, nb, ka, na, method=method, confidence=confidence)
        lo, up = _pts(iv.lower), _pts(iv.upper)
        rows.append(
            {
                "method": method,
                "diff_b_minus_a_points": _pts(kb / nb - ka / na),
                "lower_pp": lo,
                "upper_pp": up,
                "width_points": up - lo,
                "contains_zero": bool(lo <= 0.0 <= up),
                "doc_stated_lower_pp": -5.93,
                "doc_stated_upper_pp": 9.93,
                "matches_doc_to_0.01pp": bool(abs(lo + 5.93) < 0.006 and abs(up - 9.93) < 0.006),
            }
        )
    match = [r["method"] for r in rows if r["matches_doc_to_0.01pp"]]
    note = (
        f"B = {kb}/{nb}, A = {ka}/{na}, {confidence:.0%} interval for p_B - p_A. The document's "
        f"-5.93 to +9.93 pp is reproduced by: {', '.join(match) or 'none of the methods'} "
        "(the unpooled Wald interval; the document calls it the 'independent-proportions "
        "test' interval). Newcombe's and Agresti-Caffo's are a little wider; all contain zero."
    )
    return _frame(rows, "T24 Difference interval, 90/100 vs 92/100", note)


# ---------------------------------------------------------------- T25
def width_at_rate(
    rate: float = 0.9, n_grid: list[int] = (10, 100), confidence: float = 0.95
) -> pd.DataFrame:
    """T25: interval width at a 90% observed rate for 10 and 100 roll-outs."""
    from evalsim.stats.intervals import interval

    doc = {
        10: (19.0, "its 95% confidence interval spans approximately 19 percentage points"),
        100: (6.0, "the interval width still sits near six percentage points"),
    }
    rows = []
    for n in n_grid:
        k = int(round(rate * n))
        for method in ("wilson", "clopper_pearson", "wald"):
            iv = interval(k, n, method=method, confidence=confidence)
            width = _pts(iv.upper - iv.lower)
            d = doc.get(n, (NAN, ""))
            rows.append(
                {
                    "n": n,
                    "k": k,
                    "method": method,
                    "lower_pct": _pts(iv.lower),
                    "upper_pct": _pts(iv.upper),
                    "width_points": width,
                    "half_width_points": width / 2.0,
                    "doc_stated": d[0],
                    "doc_quote": d[1],
                }
            )
    note = (
        f"{rate:.0%} observed at each n, {confidence:.0%} intervals. Wilson: "
        + "; ".join(
            f"n = {r['n']}: width {r['width_points']:.1f} points, half-width "
            f"+/-{r['half_width_points']:.1f}"
            for r in rows
            if r["method"] == "wilson"
        )
        + ". The document's 'spans approximately 19 percentage points' (10 roll-outs) and "
        "'width near six' (100) match the Wilson HALF-widths, not the widths: read as widths, "
        "the 10-roll-out claim understates the interval by half."
    )
    return _frame(rows, "T25 Interval width at 90% for 10 and 100 roll-outs", note)


# ---------------------------------------------------------------- T26
def estimation_vs_detection(
    rate: float = 0.90,
    half_width: float = 0.02,
    rates: list[float] = (0.90, 0.92),
    paired_rhos: list[float] = (0.0, 0.5),
    alpha: float = 0.05,
    power: float = 0.8,
    confidence: float = 0.95,
    exact_fisher: bool = True,
) -> pd.DataFrame:
    """T26: n to estimate 90% within +/-2 pp vs n to detect 90% vs 92%."""
    r1, r2 = rates
    est_quote = "to +/-2 pp 95% confidence requires roughly 1 000 roll-outs"
    det_quote = "detect a true 2 pp difference ... needs about 3 200 total roll-outs"
    rows = []
    for method in ("normal", "wilson"):
        res = dz.n_for_estimate(rate, half_width, confidence, method)
        rows.append(
            {
                "goal": f"estimate {rate:.0%} within +/-{_pts(half_width):g} pp",
                "method": method,
                "n_real": res.n_real,
                "n_per_arm": res.n,
                "total_rollouts": res.n,
                "power_at_n": NAN,
                "doc_stated_total": 1000.0,
                "doc_quote": est_quote,
            }
        )
    for variance in ("fleiss", "pbar", "unpooled"):
        res = dz.n_per_arm_normal(r1, r2, alpha, power, variance)
        rows.append(
            {
                "goal": f"detect {r1:.0%} vs {r2:.0%}",
                "method": f"normal ({variance})",
                "n_real": res.n_real,
                "n_per_arm": res.n,
                "total_rollouts": 2 * res.n,
                "power_at_n": dz.normal_power(r1, r2, res.n, alpha),
                "doc_stated_total": 3200.0,
                "doc_quote": det_quote,
            }
        )
    res = dz.n_per_arm_from_h(dz.cohens_h(r1, r2), alpha, power)
    rows.append(
        {
            "goal": f"detect {r1:.0%} vs {r2:.0%}",
            "method": "arcsine (Cohen's h)",
            "n_real": res.n_real,
            "n_per_arm": res.n,
            "total_rollouts": 2 * res.n,
            "power_at_n": NAN,
            "doc_stated_total": 3200.0,
            "doc_quote": det_quote,
        }
    )
    half = 1600
    rows.append(
        {
            "goal": f"detect {r1:.0%} vs {r2:.0%}",
            "method": "normal power at 1600 per arm (3200 total)",
            "n_real": NAN,
            "n_per_arm": half,
            "total_rollouts": 2 * half,
            "power_at_n": dz.normal_power(r1, r2, half, alpha),
            "doc_stated_total": 3200.0,
            "doc_quote": det_quote,
        }
    )
    if exact_fisher:
        from evalsim.stats.power import fisher_power, n_for_fisher_power

        ex = n_for_fisher_power(r1, r2, power=power, alpha=alpha)
        rows.append(
            {
                "goal": f"detect {r1:.0%} vs {r2:.0%}",
                "method": "exact Fisher power (stays above)",
                "n_real": NAN,
                "n_per_arm": ex.n,
                "total_rollouts": 2 * ex.n,
                "power_at_n": ex.power,
                "doc_stated_total": 3200.0,
                "doc_quote": det_quote,
            }
        )
        for n in (half, rows[2]["n_per_arm"]):
            rows.append(
                {
                    "goal": f"detect {r1:.0%} vs {r2:.0%}",
                    "method": f"exact Fisher power at {n} per arm",
                    "n_real": NAN,
                    "n_per_arm": n,
                    "total_rollouts": 2 * n,
                    "power_at_n": fisher_power(r1, n, r2, n, alpha=alpha),
                    "doc_stated_total": 3200.0,
                    "doc_quote": det_quote,
                }
            )
    for r in paired_rhos:
        try:
            psi = dz.discordance_from_rho(r1, r2, r)
        except ValueError:
            continue
        res = dz.paired_n(r1, r2, discordance=psi, alpha=alpha, power=power)
        rows.append(
            {
                "goal": f"detect {r1:.0%} vs {r2:.0%}, paired",
                "method": f"McNemar (Connor 1987), rho = {r:g}, discordance {psi:.4f}",
                "n_real": res.n_real,
                "n_per_arm": res.n,
                "total_rollouts": 2 * res.n,
                "power_at_n": NAN,
                "doc_stated_total": NAN,
                "doc_quote": "This number increases further when working with paired designs "
                "and low discordant rates",
            }
        )
    note = (
        f"Estimation: {confidence:.0%} interval half-width {_pts(half_width):g} pp at "
        f"{rate:.0%} needs {rows[0]['n_per_arm']} (normal) / {rows[1]['n_per_arm']} (Wilson) "
        "roll-outs; the document's 'roughly 1 000' is a generous rounding. Detection at "
        f"two-sided alpha = {alpha}, power {power:.0%}, independent samples: about "
        f"{rows[2]['n_per_arm']} roll-outs PER ARM ({rows[2]['total_rollouts']} total) by the "
        "normal approximation, more by exact Fisher power; the document's 'about 3 200 total' "
        "is the per-arm number: at 1 600 per arm (3 200 total) the power is about "
        f"{rows[6]['power_at_n']:.0%}. The document adds that paired designs with low "
        "discordance need more; the paired rows show the opposite: with outcomes independent "
        "(rho = 0) a paired McNemar design needs about the unpaired n, and the more positively "
        "correlated (the LOWER the discordance), the fewer pairs."
    )
    return _frame(rows, "T26 Estimation vs detection sample sizes", note)


# ---------------------------------------------------------------- T29
def cohens_h_table(
    pairs: list[list[float]] = ((0.90, 0.92),), alpha: float = 0.05, power: float = 0.8
) -> pd.DataFrame:
    """T29: Cohen's h for 90% vs 92% (and the document's other planned pairs)."""
    rows = []
    for p1, p2 in pairs:
        h = dz.cohens_h(p2, p1)
        size = (
            "negligible"
            if abs(h) < 0.2
            else "small"
            if abs(h) < 0.5
            else "medium"
            if abs(h) < 0.8
            else "large"
        )
        n = dz.n_per_arm_from_h(h, alpha, power)
        rows.append(
            {
                "p1": p1,
                "p2": p2,
                "cohens_h": h,
                "abs_h": abs(h),
                "cohen_label": size,
                "n_per_arm_arcsine": n.n,
                "doc_stated": NAN,
            }
        )
    note = (
        "h = 2 asin(sqrt(p2)) - 2 asin(sqrt(p1)); Cohen's labels: 0.2 small, 0.5 medium, 0.8 "
        f"large. n per arm = 2 (z_a + z_b)^2 / h^2 at alpha = {alpha}, power {power:.0%}. "
        "Document 004 names Cohen's h but states no value."
    )
    return _frame(rows, "T29 Cohen's h", note)


# ---------------------------------------------------------------- pools: T18, T27
def _paired_arrays(pools: pd.DataFrame, task: str, policy_a: str, policy_b: str, seed: int):
    sel = pools[(pools["task"] == task) & (pools["seed"] == seed)]
    a = sel[sel["policy"] == policy_a].set_index("trial")["success"].sort_index()
    b = sel[sel["policy"] == policy_b].set_index("trial")["success"].sort_index()
    common = a.index.intersection(b.index)
    if len(common) == 0:
        raise ValueError(
            f"no shared trials for {task!r}, seed {seed!r}, {policy_a!r} vs {policy_b!r}"
        )
    return a.loc[common].to_numpy(bool), b.loc[common].to_numpy(bool)


def _for_each_pair(builder, pools: pd.DataFrame, pairs, **kwargs) -> pd.DataFrame:
    """``builder`` (T18 or T27) once per pair [policy_a, policy_b], stacked in pair order.

    Columns ``policy_a`` and ``policy_b`` lead; the title and the note are the first pair's,
    its "A vs B" naming every pair instead. Each pair's rows (and bootstrap streams) are the
    same whatever other pairs are listed.
    """
    frames = []
    for a, b in pairs:
        df = builder(pools, policy_a=a, policy_b=b, **kwargs)
        df.insert(0, "policy_b", b)
        df.insert(0, "policy_a", a)
        frames.append(df)
    if not frames:
        raise ValueError("pairs: empty; give at least one [policy_a, policy_b]")
    out = pd.concat(frames, ignore_index=True)
    (a0, b0), first = pairs[0], frames[0]
    listed = "; ".join(f"{a} vs {b}" for a, b in pairs)
    out.attrs["title"] = first.attrs["title"]
    out.attrs["note"] = first.attrs["note"].replace(
        f"{a0} vs {b0}", f"policy_a vs policy_b (one block of rows per pair: {listed})", 1
    )
    return out


def _pool_keys(pools: pd.DataFrame, task, policy_a, policy_b):
    task = task or str(pools["task"].iloc[0])
    seeds = sorted(int(s) for s in pools.loc[pools["task"] == task, "seed"].unique())
    return task, seeds


def mcnemar_vs_unpaired(
    pools: pd.DataFrame,
    policy_a: str = "A",
    policy_b: str = "B",
    task: str | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    pairs: list[list[str]] | None = None,
) -> pd.DataFrame:
    """T18: McNemar on paired pool outcomes vs an unpaired test on the same trials.

    One row per training seed of the first task (seed 0 first: the headline row). The
    pairing-gain columns measure rho from trials that share a cube pose and give the n a
    paired design needs relative to an unpaired one for the observed rates. With ``pairs``
    ([[policy_a, policy_b], ...]), one block of rows per pair, led by the two policy names.
    """
    from evalsim.stats.fisher import fisher_pvalue

    if pairs is not None:
        return _for_each_pair(
            mcnemar_vs_unpaired, pools, pairs, task=task, alpha=alpha, power=power
        )
    task, seeds = _pool_keys(pools, task, policy_a, policy_b)
    rows = []
    for seed in seeds:
        a, b = _paired_arrays(pools, task, policy_a, policy_b, seed)
        t = pz.paired_contingency(a, b)
        mc = pz.mcnemar_exact(t.a_only, t.b_only)
        g = pz.pairing_gain(a, b)
        n_unp = n_pair = NAN
        if 0 < g.rate_a < 1 and 0 < g.rate_b < 1 and g.rate_a != g.rate_b:
            n_unp = dz.n_per_arm_normal(g.rate_a, g.rate_b, alpha, power, "unpooled").n
            if np.isfinite(g.rho) and g.var_paired > 0:
                n_pair = dz.paired_n(
                    g.rate_a, g.rate_b, rho=float(np.clip(g.rho, -1, 1)), alpha=alpha, power=power
                ).n
        rows.append(
            {
                "task": task,
                "seed": seed,
                "n_pairs": t.n,
                "k_a": t.k_a,
                "k_b": t.k_b,
                "both_succeed": t.both_succeed,
                "a_only_b": t.a_only,
                "b_only_c": t.b_only,
                "both_fail": t.both_fail,
                "mcnemar_exact_p": mc.pvalue,
                "mcnemar_midp": mc.midp_pvalue,
                "mcnemar_chi2": mc.statistic,
                "fisher_unpaired_p": fisher_pvalue(t.k_a, t.n, t.k_b, t.n),
                "rho_same_pose": g.rho,
                "var_diff_unpaired": g.var_unpaired,
                "var_diff_paired": g.var_paired,
                "variance_ratio_paired_over_unpaired": g.variance_ratio,
                "n_per_arm_unpaired_at_observed_rates": n_unp,
                "n_pairs_paired_at_observed_rho": n_pair,
            }
        )
    note = (
        f"Pools: task {task}, {policy_a} vs {policy_b}, the same cube pose for trial i of "
        "both policies; one row per training seed (seed 0 is the headline). McNemar works on "
        "the discordant pairs b (A only) and c (B only); the unpaired test is Fisher's exact "
        "test on the same trials treated as independent. rho is the correlation of the two "
        "policies' outcomes on the same pose; the variance ratio is the fraction of unpaired "
        f"trials a paired design needs (n columns: normal approximation, alpha {alpha}, "
        f"power {power:.0%}, at the observed rates). Depends on the simulation."
    )
    return _frame(rows, "T18 McNemar on paired outcomes vs an unpaired test", note)


def paired_contingency_table(
    pools: pd.DataFrame,
    policy_a: str = "A",
    policy_b: str = "B",
    task: str | None = None,
    n_boot: int = 10_000,
    confidence: float = 0.95,
    study_seed: int = 0,
    pairs: list[list[str]] | None = None,
) -> pd.DataFrame:
    """T27: the paired 2x2 table from the pools, McNemar (exact, mid-p), paired bootstrap CI.

    With ``pairs`` ([[policy_a, policy_b], ...]), one block of rows per pair, led by the two
    policy names.
    """
    from evalsim.seeding import rng_for

    if pairs is not None:
        return _for_each_pair(
            paired_contingency_table,
            pools,
            pairs,
            task=task,
            n_boot=n_boot,
            confidence=confidence,
            study_seed=study_seed,
        )
    task, seeds = _pool_keys(pools, task, policy_a, policy_b)
    rows = []
    for seed in seeds:
        a, b = _paired_arrays(pools, task, policy_a, policy_b, seed)
        t = pz.paired_contingency(a, b)
        mc = pz.mcnemar_exact(t.a_only, t.b_only)
        # B - A, the direction of document 004 (is the newer policy better?)
        bs = pz.paired_bootstrap(
            b,
            a,
            n_boot=n_boot,
            confidence=confidence,
            rng=rng_for(study_seed, "paired_bootstrap", task, policy_a, policy_b, seed),
        )
        pw = pz.paired_wald_interval(pz.paired_contingency(b, a), confidence)
        un = pz.diff_interval(t.k_b, t.n, t.k_a, t.n, "newcombe", confidence)
        rows.append(
            {
                "task": task,
                "seed": seed,
                "n_pairs": t.n,
                "both_succeed": t.both_succeed,
                "a_only": t.a_only,
                "b_only": t.b_only,
                "both_fail": t.both_fail,
                "rate_a": t.k_a / t.n,
                "rate_b": t.k_b / t.n,
                "diff_b_minus_a": bs.diff,
                "mcnemar_exact_p": mc.pvalue,
                "mcnemar_midp": mc.midp_pvalue,
                "bootstrap_lower": bs.lower,
                "bootstrap_upper": bs.upper,
                "bootstrap_se": bs.se,
                "paired_wald_lower": pw.lower,
                "paired_wald_upper": pw.upper,
                "unpaired_newcombe_lower": un.lower,
                "unpaired_newcombe_upper": un.upper,
            }
        )
    note = (
        f"Task {task}, {policy_a} vs {policy_b} on the same cube poses, one row per training "
        f"seed. Only the discordant cells (a_only, b_only) carry comparative information. "
        f"Paired percentile bootstrap over poses ({n_boot} replicates, seeded from the study "
        f"seed), the paired Wald interval, and for contrast the unpaired Newcombe interval that "
        f"ignores the pairing; all {confidence:.0%}, for rate B - rate A. Depends on the "
        "simulation."
    )
    return _frame(rows, "T27 Paired contingency table with McNemar and a paired bootstrap", note)


# ---------------------------------------------------------------- figures
def mde_vs_n_figure(
    n_max: int = 400,
    n_points: int = 40,
    pbar: float = 0.5,
    alpha: float = 0.05,
    power: float = 0.8,
    mark_n: list[int] = (10, 20, 50, 100, 350),
):
    """Figure mde_vs_n: MDE against n per arm, normal approximation and exact Fisher."""
    import matplotlib.pyplot as plt
    import matplotlib.ticker as mticker

    from evalsim.figures import PAGE_WIDTH_IN, color_for

    grid = np.unique(np.round(np.geomspace(5, n_max, n_points)).astype(int))
    normal = _pts(1.0) * np.asarray(dz.mde_normal(grid, pbar, alpha, power))
    exact = np.array([_pts(dz.mde_exact(int(n), alpha, power, baseline=pbar).mde) for n in grid])
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN * 0.6, 2.8))
    ax.plot(grid, normal, color=color_for(0), label="normal approximation (z-test)")
    ax.plot(grid, exact, color=color_for(3), marker="o", ms=2.5, lw=1, label="exact Fisher power")
    ax.set_xscale("log")
    ticks = []
    for t in sorted({5, *mark_n}):
        # keep tick labels apart on the log axis
        if grid[0] <= t <= grid[-1] and (not ticks or t >= 1.3 * ticks[-1]):
            ticks.append(t)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(mticker.NullLocator())
    ax.set_xlabel("trials per arm, n (log scale)")
    ax.set_ylabel("minimum detectable effect (points)")
    ax.set_title(
        f"Smallest gap detectable at {power:.0%} power, alpha = {alpha}\n"
        f"(rates centred on {pbar:g}: worst case)"
    )
    ax.set_ylim(0, None)
    ax.legend(frameon=False)
    ax.grid(True, which="major", lw=0.4, color="0.9")
    fig.tight_layout()
    return fig


def power_vs_n_figure(
    rates: list[float] = (0.40, 0.70),
    n_min: int = 5,
    n_max: int = 120,
    alpha: float = 0.05,
    power: float = 0.8,
):
    """Figure power_vs_n: exact Fisher power vs the normal approximation, every n."""
    import matplotlib.pyplot as plt

    from evalsim.figures import PAGE_WIDTH_IN, color_for
    from evalsim.stats.power import fisher_power_curve

    p1, p2 = rates
    ns = np.arange(n_min, n_max + 1)
    exact = np.asarray(fisher_power_curve(p1, p2, ns, alpha=alpha))
    approx = np.array([dz.normal_power(p1, p2, int(n), alpha) for n in ns])
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN * 0.6, 2.8))
    ax.plot(ns, approx, color=color_for(0), label="normal approximation (z-test)")
    ax.plot(ns, exact, color=color_for(3), lw=0.9, drawstyle="steps-mid", label="exact Fisher test")
    ax.axhline(power, color="0.4", lw=0.6, ls="--")
    n_norm = dz.n_per_arm_normal(p1, p2, alpha, power).n
    reach = np.nonzero(exact >= power)[0]
    marks = [(n_norm, color_for(0), f"normal n = {n_norm}")]
    if reach.size:
        marks.append((int(ns[reach[0]]), color_for(3), f"exact n = {int(ns[reach[0]])}"))
    for i, (n_mark, color, label) in enumerate(marks):
        if ns[0] <= n_mark <= ns[-1]:
            ax.axvline(n_mark, color=color, lw=0.6, ls=":")
            ax.text(n_mark + 1, 0.05 + 0.08 * i, label, fontsize=7, color=color)
    ax.text(
        ns[-1] - 1,
        power - 0.01,
        f"{power:.0%} power",
        fontsize=7,
        color="0.3",
        ha="right",
        va="top",
    )
    ax.set_xlabel("trials per arm, n")
    ax.set_ylabel("power")
    ax.set_title(f"Power to detect {p1:.0%} vs {p2:.0%} (two-sided alpha = {alpha})")
    ax.set_ylim(0, 1)
    ax.set_xlim(ns[0], ns[-1])
    ax.legend(frameon=False, loc="center right")
    ax.grid(True, lw=0.4, color="0.9")
    fig.tight_layout()
    return fig
