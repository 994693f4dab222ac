"""T01-T04 and the coverage figure: lesson 25's "Build it" steps 1-3 and part D.

Every number is computed here from :mod:`evalsim.stats`; the document's stated values come
in through the config (``exact.*.document``) only to be set beside the computed ones with a
verdict, never to steer a computation.

- :func:`wilson_vs_library` (T01): Wald and Wilson at z = 1.96 beside statsmodels' and
  SciPy's Wilson, and the largest difference over k = 0..20 of 20 at the library's z.
- :func:`exact_coverage_table` (T02): exact coverage of Wilson and Wald at p = 221/300.
- :func:`prob_at_least_table` (T03): P(>= 9 of 10) at the stated and at the pool rates.
- :func:`trials_for_half_width_table` (T04): table D, with the n from which each target
  holds for good.
- :func:`coverage_vs_p_figure`: exact coverage of every interval method of the registry against p.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalsim.figures import PAGE_WIDTH_IN
from evalsim.products._common import captioned, titled_frame
from evalsim.stats.proportion.binomial import binom_pmf, prob_at_least
from evalsim.stats.proportion.budget import half_width_budget
from evalsim.stats.proportion.coverage import coverage_curve, exact_coverage
from evalsim.stats.proportion.intervals import (
    METHODS,
    REGISTRY,
    wald_interval,
    wilson_interval,
    z_for_confidence,
)

__all__ = [
    "coverage_vs_p_figure",
    "exact_coverage_table",
    "plot_coverage_curve",
    "prob_at_least_table",
    "trials_for_half_width_table",
    "wilson_vs_library",
]


def _fmt_interval(lo: float, hi: float, decimals: int) -> str:
    return f"[{lo:.{decimals}f}, {hi:.{decimals}f}]"


def _rounds_to(value: float, stated: float, decimals: int) -> bool:
    """True when ``value`` printed with ``decimals`` decimals reads as ``stated``."""
    return f"{value:.{decimals}f}" == f"{stated:.{decimals}f}"


def _verdict_list(mismatches: list[str]) -> str:
    if not mismatches:
        return "Every value agrees with the document at its printed precision."
    return "Differs from the document: " + "; ".join(mismatches) + "."


def wilson_vs_library(
    cases: list[dict],
    z: float,
    library_z: float,
    confidence: float,
    max_diff_n: int,
    decimals: int = 3,
    document_max_diff: float | None = None,
) -> pd.DataFrame:
    """T01: Wald and Wilson for each case next to statsmodels' and SciPy's Wilson.

    Parameters
    ----------
    cases : list of dict
        Each ``{"k": int, "n": int}``, optionally with ``"document_wald"`` and
        ``"document_wilson"`` ([lower, upper] as printed in the document).
    z : float
        The lesson's multiplier for its own Wald and Wilson (1.96).
    library_z : float
        The multiplier the lesson quotes for SciPy (1.959964, rounded).
    confidence : float
        The libraries' confidence level (their z is Phi^-1(1 - (1 - confidence)/2)).
    max_diff_n : int
        n of the final check: max |difference| over k = 0..n vs SciPy.
    decimals : int
        Printed decimals of the document's intervals.
    document_max_diff : float, optional
        The document's stated maximum difference, quoted in the note.
    """
    rows = []
    mismatches = []
    for case in cases:
        k, n = int(case["k"]), int(case["n"])
        wald = wald_interval(k, n, z=z)
        wil = wilson_interval(k, n, z=z)
        sm_lo, sm_hi = proportion_confint(k, n, alpha=1.0 - confidence, method="wilson")
        sp = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        row = {
            "case": f"{k}/{n}",
            "z": z,
            "wald_lower": wald.lower,
            "wald_upper": wald.upper,
            "wilson_lower": wil.lower,
            "wilson_upper": wil.upper,
            "statsmodels_wilson_lower": float(sm_lo),
            "statsmodels_wilson_upper": float(sm_hi),
            "scipy_wilson_lower": float(sp.low),
            "scipy_wilson_upper": float(sp.high),
            "max_abs_diff_vs_scipy": max(abs(wil.lower - sp.low), abs(wil.upper - sp.high)),
            "max_abs_diff_vs_statsmodels": max(abs(wil.lower - sm_lo), abs(wil.upper - sm_hi)),
        }
        for name, (lo, hi) in (("wald", wald), ("wilson", wil)):
            stated = case.get(f"document_{name}")
            row[f"document_{name}"] = _fmt_interval(*stated, decimals) if stated else ""
            if stated and not (
                _rounds_to(lo, stated[0], decimals) and _rounds_to(hi, stated[1], decimals)
            ):
                mismatches.append(
                    f"{name} {k}/{n} is {_fmt_interval(lo, hi, decimals + 1)}, "
                    f"document {_fmt_interval(*stated, decimals)}"
                )
        rows.append(row)

    ks = np.arange(max_diff_n + 1)
    sp_lo = np.empty(ks.size)
    sp_hi = np.empty(ks.size)
    for i, k in enumerate(ks):
        ci = stats.binomtest(int(k), max_diff_n).proportion_ci(
            confidence_level=confidence, method="wilson"
        )
        sp_lo[i], sp_hi[i] = ci.low, ci.high
    sm_lo, sm_hi = proportion_confint(ks, max_diff_n, alpha=1.0 - confidence, method="wilson")
    z_exact = z_for_confidence(confidence)
    diffs = {}
    exact_label = f"z = Phi^-1({1 - (1 - confidence) / 2:g}) = {z_exact:.9f}"
    for label, zz in ((f"z = {library_z} (as printed)", library_z), (exact_label, z_exact)):
        w = wilson_interval(ks, max_diff_n, z=zz)
        d_sp = float(max(np.abs(w.lower - sp_lo).max(), np.abs(w.upper - sp_hi).max()))
        d_sm = float(max(np.abs(w.lower - sm_lo).max(), np.abs(w.upper - sm_hi).max()))
        diffs[label] = d_sp
        rows.append(
            {
                "case": f"k = 0..{max_diff_n} of {max_diff_n}, {label}",
                "z": zz,
                "max_abs_diff_vs_scipy": d_sp,
                "max_abs_diff_vs_statsmodels": d_sm,
            }
        )
    df = pd.DataFrame(rows)
    (lit_label, d_lit), (_, d_exact) = diffs.items()
    case_diff = max((r["max_abs_diff_vs_scipy"] for r in rows[: len(cases)]), default=0.0)
    z_gap = abs(library_z - z_exact)
    note = (
        f"Wald and Wilson here use the lesson's z = {z}; statsmodels' proportion_confint and "
        f"SciPy's binomtest(...).proportion_ci use z = Phi^-1(1 - (1 - {confidence})/2) = "
        f"{z_exact:.12f}, so the case rows differ from the libraries by at most "
        f"{case_diff:.1e}. Over k = 0..{max_diff_n} of {max_diff_n}: with the rounded "
        f"z = {library_z} the largest difference from SciPy is {d_lit:.2g} (z itself is off "
        f"by {z_gap:.1e}); with the exact quantile it is {d_exact:.2g}"
    )
    if document_max_diff is not None:
        note += (
            f" (the document states {document_max_diff:.2g} 'with that z'; that holds only for "
            f"the exact quantile, not for {library_z} as printed)"
            if d_lit > 100 * document_max_diff
            else f" (the document states {document_max_diff:.2g})"
        )
    note += ". " + _verdict_list(mismatches)
    return captioned(
        df,
        "T01 - Wald and Wilson intervals vs statsmodels and SciPy (lesson 25, step 1)",
        note,
    )


def exact_coverage_table(
    pool_k: int,
    pool_n: int,
    n_values: list[int],
    z: float,
    decimals: int = 3,
    document: dict | None = None,
) -> pd.DataFrame:
    """T02: exact coverage of Wilson and Wald at p = pool_k / pool_n, by binomial sum.

    ``document`` maps "wilson" / "wald" to lists of stated coverages, one per n. The last
    column checks :func:`evalsim.stats.proportion.binomial.binom_pmf` against
    ``scipy.stats.binom.pmf``
    at each n.
    """
    p = pool_k / pool_n
    rows = []
    mismatches = []
    for i, n in enumerate(n_values):
        ks = np.arange(n + 1)
        pmf_diff = float(np.abs(binom_pmf(ks, n, p) - stats.binom.pmf(ks, n, p)).max())
        row = {"n": int(n)}
        for method in ("wilson", "wald"):
            cov = exact_coverage(method, int(n), p, z=z)
            row[f"{method}_exact_coverage"] = cov
            stated = (document or {}).get(method)
            if stated is not None:
                row[f"document_{method}"] = stated[i]
                if not _rounds_to(cov, stated[i], decimals):
                    mismatches.append(f"{method} at n = {n} is {cov:.4f}, document {stated[i]}")
        row["max_abs_pmf_diff_vs_scipy"] = pmf_diff
        rows.append(row)
    return titled_frame(
        rows,
        f"T02 - Exact coverage of Wilson and Wald at p = {pool_k}/{pool_n} (lesson 25, step 2)",
        f"Coverage = sum of Binomial(n, {pool_k}/{pool_n}) probabilities of every k whose "
        f"interval (z = {z}) contains p. The pmf column is max_k |evalsim pmf - "
        "scipy.stats.binom.pmf| at that n (the document checks n = 50). "
        + _verdict_list(mismatches),
    )


def prob_at_least_table(k: int, n: int, policies: list[dict], decimals: int = 3) -> pd.DataFrame:
    """T03: P(X >= k) of n for each policy, at its stated rate and at its pool rate.

    ``policies``: each ``{"name", "p", "pool_k", "pool_n"}`` and optionally ``"document"``
    (the stated probability). The document quotes p rounded to three decimals (0.737) but
    its experiment used the pool's rate (221/300); both are shown.
    """
    rows = []
    notes = []
    for pol in policies:
        p_stated = float(pol["p"])
        p_pool = pol["pool_k"] / pol["pool_n"]
        at_stated = prob_at_least(k, n, p_stated)
        at_pool = prob_at_least(k, n, p_pool)
        row = {
            "policy": pol["name"],
            "p_stated": p_stated,
            f"P(>={k}/{n}) at p_stated": at_stated,
            "pool": f"{pol['pool_k']}/{pol['pool_n']}",
            "p_pool": p_pool,
            f"P(>={k}/{n}) at p_pool": at_pool,
            "scipy_at_p_pool": float(stats.binom.sf(k - 1, n, p_pool)),
        }
        stated = pol.get("document")
        if stated is not None:
            row["document"] = stated
            ok_stated = _rounds_to(at_stated, stated, decimals)
            ok_pool = _rounds_to(at_pool, stated, decimals)
            if ok_pool and not ok_stated:
                notes.append(
                    f"{pol['name']}: the document's {stated} is P at the pool rate "
                    f"{pol['pool_k']}/{pol['pool_n']} ({at_pool:.4f}); at the stated p = "
                    f"{p_stated} it is {at_stated:.4f}"
                )
            elif not ok_pool and not ok_stated:
                notes.append(
                    f"{pol['name']}: document {stated} vs {at_stated:.4f} (p = {p_stated}) "
                    f"and {at_pool:.4f} (p = {pol['pool_k']}/{pol['pool_n']})"
                )
        rows.append(row)
    return titled_frame(
        rows,
        f"T03 - P(at least {k} of {n}) by the binomial (lesson 25, step 3, part C)",
        f"P(X >= {k}) = sum of the binomial pmf from {k} to {n}, summed over the tail "
        "(scipy.stats.binom.sf as a check). "
        + ("; ".join(notes) + "." if notes else "Agrees with the document."),
    )


def trials_for_half_width_table(
    rates: list[float],
    half_widths: list[float],
    z: float,
    rounding: str = "half_even",
    document: list[list[int]] | None = None,
) -> pd.DataFrame:
    """T04 (table D): smallest n whose Wilson half-width at k = round(rate n) meets a target.

    One row per observed rate; columns ``n for +-h`` (the lesson's definition: first n) and
    ``stays from (+-h)`` (first n from which every n up to 4 x first n meets the target).
    ``document``: the stated table, rows as ``rates``, columns as ``half_widths``.
    """
    rows = []
    mismatches = []
    unstable = []
    alt_differs = []
    for i, rate in enumerate(rates):
        row = {"observed rate": rate}
        stays = {}
        for j, h in enumerate(half_widths):
            b = half_width_budget(rate, h, z=z, rounding=rounding)
            row[f"n for +-{h:g}"] = b.first_n
            stays[f"stays from (+-{h:g})"] = b.stays_below_from
            if b.stays_below_from != b.first_n:
                unstable.append(
                    f"{rate:g} at +-{h:g}: first met at n = {b.first_n}, missed again at "
                    f"{b.misses_after_first} larger n, met for good from n = "
                    f"{b.stays_below_from} (checked to n = {b.n_max})"
                )
            other = "half_up" if rounding == "half_even" else "half_even"
            for label, alt in (
                (f"rounding {other}", half_width_budget(rate, h, z=z, rounding=other)),
                ("z = Phi^-1(0.975)", half_width_budget(rate, h, rounding=rounding)),
            ):
                if alt.first_n != b.first_n:
                    alt_differs.append(f"{label} gives {alt.first_n} at {rate:g}, +-{h:g}")
            if document is not None and document[i][j] != b.first_n:
                mismatches.append(f"{rate:g} at +-{h:g} is {b.first_n}, document {document[i][j]}")
        row.update(stays)
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["title"] = "T04 - Table D: trials for a Wilson 95% half-width (lesson 25, step 3)"
    rounding_text = (
        "Python's round, halves to even, as the lesson's code"
        if rounding == "half_even"
        else "halves rounded up"
    )
    df.attrs["note"] = (
        f"n = smallest n whose Wilson interval (z = {z}) at k = round(rate x n) ({rounding_text}) "
        "has half-width (upper - lower)/2 <= the target. "
        + (
            "The other rounding and the exact z give the same table. "
            if not alt_differs
            else "Alternatives differ: " + "; ".join(alt_differs) + ". "
        )
        + (
            "Not monotone in n: " + "; ".join(unstable) + ". "
            if unstable
            else "The half-width stays below target from the first n on. "
        )
        + _verdict_list(mismatches)
    )
    return df


def plot_coverage_curve(
    method: str,
    n: int,
    confidence: float,
    grid,
    y_min: float = 0.75,
    color: str | None = None,
    ax=None,
):
    """One method's exact coverage against p at one n, with the nominal level (dashed).

    Where the coverage falls below ``y_min`` the curve is clipped, and the panel says so.
    Returns the Axes.
    """
    import matplotlib.pyplot as plt

    ax = ax if ax is not None else plt.gca()
    grid = np.asarray(grid, dtype=float)
    cov = coverage_curve(method, int(n), grid, confidence=confidence)
    ax.axhline(confidence, color="black", lw=0.7, ls=(0, (4, 2)), zorder=1)
    ax.plot(grid, cov, color=color or REGISTRY[method].color, lw=0.8, zorder=2)
    if np.nanmin(cov) < y_min:
        ax.text(
            0.5,
            0.04,
            f"falls below {y_min:g} (clipped)",
            transform=ax.transAxes,
            ha="center",
            va="bottom",
            fontsize=6,
            color="0.3",
        )
    ax.set_ylim(y_min, 1.005)
    ax.set_xlim(0.0, 1.0)
    return ax


def coverage_vs_p_figure(
    n_values: list[int],
    confidence: float,
    p_points: int = 2000,
    p_min: float = 0.01,
    p_max: float = 0.99,
    methods: list[str] | None = None,
    y_min: float = 0.75,
):
    """Exact coverage of the registry's interval methods against p: small multiples (Brown et al.
    2001).

    One row per interval method, one column per n, each panel one curve
    (:func:`plot_coverage_curve`) over the nominal level; axes are shared, so rows and columns
    compare at a glance without the curves crossing in one panel.

    Parameters
    ----------
    n_values : list of int
        Sample sizes, one column each (the issue asks for 10, 20, 50).
    confidence : float
        Nominal level; drawn as a dashed line.
    p_points, p_min, p_max : grid of true p.
    methods : list of str, optional
        Interval methods, one row each (default: every method of the registry).
    y_min : float
        Lower y limit; Wald's coverage falls far below it near p = 0 and 1 (clipped, noted in
        the panel).
    """
    import matplotlib.pyplot as plt

    methods = list(methods or METHODS)
    grid = np.linspace(p_min, p_max, p_points)
    fig, axes = plt.subplots(
        len(methods),
        len(n_values),
        figsize=(PAGE_WIDTH_IN, 0.9 + 1.15 * len(methods)),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for i, m in enumerate(methods):
        for j, n in enumerate(n_values):
            ax = axes[i, j]
            plot_coverage_curve(m, int(n), confidence, grid, y_min, ax=ax)
            # Row names as left titles, n as right titles: no label is longer than its row.
            ax.set_title(f"n = {n}", fontsize=7, loc="right")
            if j == 0:
                ax.set_title(
                    REGISTRY[m].label,
                    color=REGISTRY[m].color,
                    fontsize=8,
                    fontweight="bold",
                    loc="left",
                )
            ax.set_yticks([y for y in (0.8, 0.9, 1.0) if y >= y_min])
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
    fig.supxlabel("true success probability p", fontsize=8)
    fig.supylabel("exact coverage", fontsize=8)
    fig.suptitle(
        f"Exact coverage of {len(methods)} nominal {confidence:.0%} binomial intervals against "
        "the true p (cf. Brown, Cai & DasGupta 2001)\n"
        f"one row per interval, one column per n; dashed line: {confidence:.2f}",
        fontsize=9,
    )
    return fig
