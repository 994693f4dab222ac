"""Tables T15, T16, T23, T24, T25 of the stage design: interval widths and methods.

Wilson vs Wald (T15), Wilson width against n (T16), Clopper-Pearson vs Wilson (T23), intervals
for a difference (T24) and the width at a rate (T25), from the config's ``design`` section.
The sizing and detection tables are in :mod:`evalsim.products.design.sizing` and
:mod:`evalsim.products.design.detection`.
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.special import ndtri  # norm.ppf, without loading scipy.stats

from evalsim.products._common import titled_frame
from evalsim.products.design._common import NAN, _pts
from evalsim.stats.two_sample import design as dz
from evalsim.stats.two_sample import paired as pz


# ---------------------------------------------------------------- T15
def wilson_vs_wald(counts: list[list[int]], confidence: float = 0.95) -> pd.DataFrame:
    """T15: Wilson and Wald 95% intervals for document 001's five counts."""
    from evalsim.stats.proportion.intervals import wald_interval, wilson_interval

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
    return titled_frame(rows, "T15 Wilson vs Wald", note)


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
    from evalsim.stats.proportion.intervals import wilson_interval

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
    return titled_frame(rows, "T16 Interval width vs n, and bench hours", note)


def _wilson_width_at(rate: float, n: int, confidence: float) -> float:
    """Wilson width at an observed rate that need not be k/n for integer k (closed form)."""
    z = float(ndtri(0.5 + confidence / 2.0))
    denom = 1.0 + z * z / n
    return 2.0 * (z / denom) * math.sqrt(rate * (1 - rate) / n + z * z / (4.0 * n * n))


# ---------------------------------------------------------------- T23
def cp_vs_wilson(k: int = 63, n: int = 70, confidence: float = 0.95) -> pd.DataFrame:
    """T23: Clopper-Pearson vs Wilson for 63/70 (document 004)."""
    from evalsim.stats.proportion.intervals import clopper_pearson_interval, wilson_interval

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
    return titled_frame(rows, "T23 Clopper-Pearson vs Wilson for 63/70", note)


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
    return titled_frame(rows, "T24 Difference interval, 90/100 vs 92/100", note)


# ---------------------------------------------------------------- T25
def width_at_rate(
    rate: float = 0.9, n_grid: list[int] = (10, 100), confidence: float = 0.95
) -> pd.DataFrame:
    """T25: interval width at a 90% observed rate for 10 and 100 roll-outs."""
    from evalsim.stats.proportion.intervals import interval

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
    return titled_frame(rows, "T25 Interval width at 90% for 10 and 100 roll-outs", note)
