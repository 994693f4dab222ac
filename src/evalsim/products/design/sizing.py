"""Tables T13, T21, T26 and T29 of the stage design: how many trials a plan needs.

Paired against unpaired sizing (T13), trials per policy to separate two rates (T21), the n
to estimate a rate against the n to detect a difference (T26), and Cohen's h (T29). What a
given n can detect (T14, T17, T19, T20) is in :mod:`evalsim.products.design.detection`, the
interval tables in :mod:`evalsim.products.design.intervals`, the tables built from the pools
in :mod:`evalsim.products.design.pools`.

Each builder reproduces a worked number of documents 001, 002 or 004 from the config's
``design`` section and returns a DataFrame whose ``doc_stated`` column carries the
document's own number where it states one, so the claims ledger can compare them. Where
the document's number does not follow from its own method, the note says so; nothing is
tuned to match.
"""

from __future__ import annotations

import math

import pandas as pd

from evalsim.products._common import titled_frame
from evalsim.products.design._common import NAN, _pts
from evalsim.products.settings import Sizing
from evalsim.stats.two_sample import design as dz
from evalsim.stats.two_sample import paired_design as pdz


# ---------------------------------------------------------------- T13
def paired_vs_unpaired_sizing(
    sizing: Sizing,
    p_a: float = 0.70,
    p_b: float = 0.50,
    rho: float = 0.5,
    rho_grid: list[float] = (0.0, 0.25, 0.5, 0.75),
    minutes_per_trial: float = 3.0,
    doc_z_alpha: float = 1.96,
    doc_z_beta: float = 0.84,
) -> pd.DataFrame:
    """T13: trials per arm, unpaired vs paired, for p_a vs p_b (document 001's 94 vs 47)."""
    alpha, power, exact_fisher = sizing.alpha, sizing.power, sizing.exact_fisher
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
        from evalsim.stats.two_sample.power import n_for_fisher_power

        res = n_for_fisher_power(p_a, p_b, power=power, alpha=alpha)
        add("unpaired", "exact Fisher power, first n", NAN, dz.SampleSize(res.n_first, NAN, ""))
        add("unpaired", "exact Fisher power, stays above", NAN, dz.SampleSize(res.n, NAN, ""))
    add(
        "paired",
        f"doc arithmetic: pbar variance, z = {doc_z_alpha}+{doc_z_beta}",
        rho,
        pdz.paired_n(p_a, p_b, rho=rho, alpha=alpha, power=power, variance="pbar", **zdoc),
        47,
        "Pairing reduces the required sample size from 94 to 47 trials per arm",
    )
    skipped = []
    for r in rho_grid:
        try:
            pdz.discordance_from_rho(p_a, p_b, r)
        except ValueError:
            skipped.append(r)
            continue
        add(
            "paired",
            "normal, pbar variance, exact z",
            r,
            pdz.paired_n(p_a, p_b, rho=r, alpha=alpha, power=power, variance="pbar"),
        )
        add(
            "paired",
            "normal, separate variances",
            r,
            pdz.paired_n(p_a, p_b, rho=r, alpha=alpha, power=power),
        )
        psi = pdz.discordance_from_rho(p_a, p_b, r)
        add(
            "paired",
            f"McNemar (Connor 1987), discordance {psi:.4f}",
            r,
            pdz.paired_n(p_a, p_b, discordance=psi, alpha=alpha, power=power),
        )
        p10, p01 = (psi + (p_a - p_b)) / 2.0, (psi - (p_a - p_b)) / 2.0
        add(
            "paired",
            "exact McNemar power",
            r,
            pdz.mcnemar_n_exact(p10, p01, alpha=alpha, power=power),
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
    return titled_frame(rows, "T13 Paired vs unpaired sizing", note)


# ---------------------------------------------------------------- T21
def trials_to_separate(
    sizing: Sizing, rates: list[float] = (0.90, 0.80), minutes_per_trial: float = 3.0
) -> pd.DataFrame:
    """T21: trials per policy to separate 90% from 80% at 80% power."""
    alpha, power, exact_fisher = sizing.alpha, sizing.power, sizing.exact_fisher
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
        from evalsim.stats.two_sample.power import fisher_power, n_for_fisher_power

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
    return titled_frame(rows, "T21 Trials per policy to separate 90% from 80%", note)


# ---------------------------------------------------------------- T26
def estimation_vs_detection(
    sizing: Sizing,
    rate: float = 0.90,
    half_width: float = 0.02,
    rates: list[float] = (0.90, 0.92),
    paired_rhos: list[float] = (0.0, 0.5),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """T26: n to estimate 90% within +/-2 pp vs n to detect 90% vs 92%."""
    alpha, power, exact_fisher = sizing.alpha, sizing.power, sizing.exact_fisher
    r1, r2 = rates
    est_quote = "to +/-2 pp 95% confidence requires roughly 1 000 roll-outs"
    det_quote = "detect a true 2 pp difference ... needs about 3 200 total roll-outs"
    detect = f"detect {r1:.0%} vs {r2:.0%}"
    rows = []

    def add(
        method, n, n_real=NAN, power_at_n=NAN, goal=detect, total=None, doc=3200.0, quote=det_quote
    ):
        """One row; ``total`` roll-outs default to both arms' (2 n)."""
        rows.append(
            {
                "goal": goal,
                "method": method,
                "n_real": n_real,
                "n_per_arm": n,
                "total_rollouts": 2 * n if total is None else total,
                "power_at_n": power_at_n,
                "doc_stated_total": doc,
                "doc_quote": quote,
            }
        )

    for method in ("normal", "wilson"):
        res = dz.n_for_estimate(rate, half_width, confidence, method)
        goal = f"estimate {rate:.0%} within +/-{_pts(half_width):g} pp"
        add(method, res.n, res.n_real, goal=goal, total=res.n, doc=1000.0, quote=est_quote)
    for variance in ("fleiss", "pbar", "unpooled"):
        res = dz.n_per_arm_normal(r1, r2, alpha, power, variance)
        add(f"normal ({variance})", res.n, res.n_real, dz.normal_power(r1, r2, res.n, alpha))
    res = dz.n_per_arm_from_h(dz.cohens_h(r1, r2), alpha, power)
    add("arcsine (Cohen's h)", res.n, res.n_real)
    half = 1600
    add(
        "normal power at 1600 per arm (3200 total)",
        half,
        power_at_n=dz.normal_power(r1, r2, half, alpha),
    )
    if exact_fisher:
        from evalsim.stats.two_sample.power import fisher_power, n_for_fisher_power

        ex = n_for_fisher_power(r1, r2, power=power, alpha=alpha)
        add("exact Fisher power (stays above)", ex.n, power_at_n=ex.power)
        for n in (half, rows[2]["n_per_arm"]):
            add(
                f"exact Fisher power at {n} per arm",
                n,
                power_at_n=fisher_power(r1, n, r2, n, alpha=alpha),
            )
    for r in paired_rhos:
        try:
            psi = pdz.discordance_from_rho(r1, r2, r)
        except ValueError:
            continue
        res = pdz.paired_n(r1, r2, discordance=psi, alpha=alpha, power=power)
        add(
            f"McNemar (Connor 1987), rho = {r:g}, discordance {psi:.4f}",
            res.n,
            res.n_real,
            goal=f"{detect}, paired",
            doc=NAN,
            quote="This number increases further when working with paired designs "
            "and low discordant rates",
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
    return titled_frame(rows, "T26 Estimation vs detection sample sizes", note)


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
    return titled_frame(rows, "T29 Cohen's h", note)
