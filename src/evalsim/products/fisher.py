"""T05 and T06: lesson 25's Build it steps 4-5 (Fisher's exact test and its exact power).

Every number is computed here from :mod:`evalsim.stats.two_sample.fisher` and
:mod:`evalsim.stats.two_sample.power`
(and, for T05, SciPy and the lesson's own plain-Python ``fisher_p``); the document's stated
values come in through the config (``fisher.*.document*``) only to be set beside the
computed ones with a match flag, never to steer a computation.

- :func:`fisher_checks` (T05): evalsim and the hand-written ``fisher_p`` against
  ``scipy.stats.fisher_exact`` on all tables k_A/n vs k_B/n, and the p-values of the
  document's cases.
- :func:`fisher_power_table` (T06): exact power of the two-sided Fisher test and
  P(B scores <= A) for two rates at several n, at the stated and at the pool rates.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

from evalsim.products._common import captioned
from evalsim.stats.two_sample.fisher import REL_TOL, fisher_pvalue, fisher_pvalue_table
from evalsim.stats.two_sample.power import fisher_power, n_for_fisher_power, prob_b_not_better

__all__ = ["document_fisher_p", "fisher_checks", "fisher_power_table"]


def document_fisher_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Lesson 25's ``fisher_p`` verbatim (Build it step 4): plain Python, ``math.comb``.

    Two-sided Fisher exact test for k1/n1 vs k2/n2: the total probability, with the margins
    fixed, of all tables no more likely than the observed one (relative tolerance 1e-7).
    """
    kk, nn = k1 + k2, n1 + n2
    pmf = {
        a: math.comb(n1, a) * math.comb(n2, kk - a) / math.comb(nn, kk)
        for a in range(max(0, kk - n2), min(kk, n1) + 1)
    }
    return min(1.0, sum(q for q in pmf.values() if q <= pmf[k1] * (1 + 1e-7)))


def count_near_ties(n_max: int, rel_tol: float = 1e-7) -> int:
    """Pairs of tables of one margin whose probabilities differ, relatively, by (0, rel_tol].

    Exact integer arithmetic over every margin with 1 <= n1 <= n2 <= ``n_max``: where there
    are none, a tolerance of ``rel_tol`` and one of 1e-14 count the same tables.
    """
    scale = round(1.0 / rel_tol)
    found = 0
    for n1 in range(1, n_max + 1):
        c1 = [math.comb(n1, a) for a in range(n1 + 1)]
        for n2 in range(n1, n_max + 1):
            c2 = [math.comb(n2, b) for b in range(n2 + 1)]
            for kk in range(n1 + n2 + 1):
                ws = sorted(c1[a] * c2[kk - a] for a in range(max(0, kk - n2), min(kk, n1) + 1))
                found += sum(
                    1
                    for u, v in zip(ws, ws[1:], strict=False)
                    if u != v and v * scale <= u * (scale + 1)
                )
    return found


def _scipy_p(k1: int, n1: int, k2: int, n2: int) -> float:
    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def _rounds_to(value: float, stated: float, decimals: int) -> bool:
    """True when ``value`` printed with ``decimals`` decimals reads as ``stated``."""
    return f"{value:.{decimals}f}" == f"{stated:.{decimals}f}"


def fisher_checks(
    grid_n: int,
    cases: list[dict],
    decimals: int = 3,
    document_max_diff: float | None = None,
    roundoff: float = 1e-14,
    tie_check_n: int = 60,
) -> pd.DataFrame:
    """T05: Fisher's two-sided p by hand and by evalsim against SciPy.

    Parameters
    ----------
    grid_n : int
        All ``(grid_n + 1)**2`` tables k_A/grid_n vs k_B/grid_n are compared (lesson: 20).
    cases : list of dict
        Each ``{"k_a", "n_a", "k_b", "n_b"}``, optionally with ``"document"`` (the printed p).
    decimals : int
        Printed decimals of the document's p-values (match flags compare at this precision).
    document_max_diff : float, optional
        The document's stated max |by hand - SciPy| over the grid (3.3e-16).
    roundoff : float
        A difference at most this large counts as round-off (the match criterion for the
        grid check, whose exact value depends on summation order).
    """
    n = int(grid_n)
    scipy_grid = np.array(
        [[_scipy_p(a, n, b, n) for b in range(n + 1)] for a in range(n + 1)], dtype=float
    )
    hand_grid = np.array(
        [[document_fisher_p(a, n, b, n) for b in range(n + 1)] for a in range(n + 1)]
    )
    ours_grid = fisher_pvalue_table(n, n)
    hand_diff = float(np.max(np.abs(hand_grid - scipy_grid)))
    ours_diff = float(np.max(np.abs(ours_grid - scipy_grid)))
    rows = [
        {
            "check": f"all {(n + 1) ** 2} tables k_A/{n} vs k_B/{n}: max |p - SciPy|",
            "k1": np.nan,
            "n1": n,
            "k2": np.nan,
            "n2": n,
            "pvalue": np.nan,
            "pvalue_by_hand": np.nan,
            "pvalue_scipy": np.nan,
            "max_abs_diff_441": hand_diff,
            "max_abs_diff_441_evalsim": ours_diff,
            "max_rel_diff_441_evalsim": float(np.max(np.abs(ours_grid - scipy_grid) / scipy_grid)),
            "document": np.nan if document_max_diff is None else float(document_max_diff),
            "matches_document": hand_diff <= roundoff,
        }
    ]
    mismatches = []
    for case in cases:
        k1, n1, k2, n2 = (int(case[key]) for key in ("k_a", "n_a", "k_b", "n_b"))
        p = fisher_pvalue(k1, n1, k2, n2)
        stated = case.get("document")
        match = None if stated is None else _rounds_to(p, float(stated), decimals)
        if match is False:
            mismatches.append(f"{k1}/{n1} vs {k2}/{n2}: p = {p:.{decimals + 2}f}, doc {stated}")
        rows.append(
            {
                "check": f"{k1}/{n1} vs {k2}/{n2}: two-sided p",
                "k1": k1,
                "n1": n1,
                "k2": k2,
                "n2": n2,
                "pvalue": p,
                "pvalue_by_hand": document_fisher_p(k1, n1, k2, n2),
                "pvalue_scipy": _scipy_p(k1, n1, k2, n2),
                "max_abs_diff_441": np.nan,
                "max_abs_diff_441_evalsim": np.nan,
                "max_rel_diff_441_evalsim": np.nan,
                "document": np.nan if stated is None else float(stated),
                "matches_document": match,
            }
        )
    df = pd.DataFrame(rows)
    grid_txt = (
        f"Over the {(n + 1) ** 2} tables the hand-written fisher_p differs from SciPy by at most "
        f"{hand_diff:.2g} and evalsim's all-tables call by {ours_diff:.2g} "
        f"(document: {document_max_diff:g}); both are round-off (<= {roundoff:g})."
        if hand_diff <= roundoff and ours_diff <= roundoff
        else f"Max |p - SciPy|: by hand {hand_diff:.3g}, evalsim {ours_diff:.3g} (NOT round-off)."
    )
    ties = count_near_ties(int(tie_check_n))
    tie_txt = (
        f"The two tolerances count the same tables for every n1, n2 <= {tie_check_n}: an exact "
        "integer check finds no two tables of one margin whose probabilities differ by a "
        "relative amount in (0, 1e-7]."
        if ties == 0
        else f"For n1, n2 <= {tie_check_n}, {ties} pairs of tables of one margin differ by a "
        "relative amount in (0, 1e-7]: there the two tolerances can give different p-values."
    )
    verdict = (
        "Every p-value rounds to the document's."
        if not mismatches
        else "Differs from the document: " + "; ".join(mismatches) + "."
    )
    return captioned(
        df,
        "T05 - Fisher's exact test by hand, by evalsim and by SciPy (lesson 25)",
        f"{grid_txt} {verdict} The lesson's fisher_p counts tables with pmf <= pmf(observed) "
        f"x (1 + 1e-7); SciPy 1.17.1's fisher_exact (and evalsim) use a relative tolerance of "
        f"{REL_TOL:g} (the lesson says SciPy uses 1e-14, which is right for this version). "
        + tie_txt,
    )


def fisher_power_table(
    p_a: float,
    p_b: float,
    n_values: list[int],
    alpha: float,
    pool_a: list[int] | None = None,
    pool_b: list[int] | None = None,
    document_power: list[float] | None = None,
    document_not_better: list[float] | None = None,
    decimals: int = 3,
    target_power: float = 0.8,
    power_window: int = 20,
) -> pd.DataFrame:
    """T06: exact power of the two-sided Fisher test and P(B scores <= A), n trials each.

    Parameters
    ----------
    p_a, p_b : float
        True rates of A and B as the document states them (0.737, 0.877).
    n_values : list of int
        Trials per policy.
    alpha : float
        Level of the test (reject when p < alpha).
    pool_a, pool_b : [k, n], optional
        Pool counts whose unrounded rates k/n are also evaluated (221/300, 263/300).
    document_power, document_not_better : list of float, optional
        The document's printed values, one per n.
    decimals : int
        Printed decimals of the document (match flags compare at this precision).
    target_power, power_window : float, int
        For the note: n per arm for ``target_power`` at (p_a, p_b), with the monotonicity
        window of :func:`evalsim.stats.two_sample.power.n_for_fisher_power`.
    """
    for name, stated_list in (
        ("document_power", document_power),
        ("document_not_better", document_not_better),
    ):
        if stated_list is not None and len(stated_list) != len(n_values):
            raise ValueError(
                f"{name} needs one value per n in n_values={list(n_values)!r}, got {stated_list!r}"
            )
    rows = []
    mismatches = []
    pool_rates = None
    if pool_a is not None and pool_b is not None:
        pool_rates = (pool_a[0] / pool_a[1], pool_b[0] / pool_b[1])
    for i, n in enumerate(int(v) for v in n_values):
        row = {
            "n": n,
            "p_a": p_a,
            "p_b": p_b,
            "power": fisher_power(p_a, n, p_b, n, alpha),
            "prob_b_not_better": prob_b_not_better(p_a, n, p_b, n),
        }
        for col, stated_list in (
            ("power", document_power),
            ("prob_b_not_better", document_not_better),
        ):
            stated = None if stated_list is None else stated_list[i]
            row[f"document_{col}"] = np.nan if stated is None else float(stated)
            match = None if stated is None else _rounds_to(row[col], float(stated), decimals)
            row[f"{col}_matches"] = match
            if match is False:
                mismatches.append(
                    f"{col} at n = {n} is {row[col]:.{decimals + 2}f} (doc {stated:.{decimals}f})"
                )
        if pool_rates is not None:
            qa, qb = pool_rates
            row["power_pool_rates"] = fisher_power(qa, n, qb, n, alpha)
            row["prob_b_not_better_pool_rates"] = prob_b_not_better(qa, n, qb, n)
            for col, stated_list in (
                ("power", document_power),
                ("prob_b_not_better", document_not_better),
            ):
                stated = None if stated_list is None else stated_list[i]
                row[f"{col}_pool_rates_matches"] = (
                    None
                    if stated is None
                    else _rounds_to(row[f"{col}_pool_rates"], float(stated), decimals)
                )
        rows.append(row)
    df = pd.DataFrame(rows)
    sizing = n_for_fisher_power(p_a, p_b, target_power, alpha, window=power_window)
    if not mismatches:
        verdict = "Every value rounds to the document's."
    else:
        verdict = "At the stated rates, differs from the document: " + "; ".join(mismatches) + "."
        if pool_rates is not None:
            pool_ok = all(
                bool(df[f"{c}_pool_rates_matches"].fillna(True).all())
                for c in ("power", "prob_b_not_better")
            )
            verdict += (
                f" At the unrounded pool rates {pool_a[0]}/{pool_a[1]} vs {pool_b[0]}/{pool_b[1]} "
                + (
                    "every value rounds to the document's: its numbers are consistent with "
                    "computing at the pool rates while printing the rounded p."
                    if pool_ok
                    else "some values still differ."
                )
            )
    return captioned(
        df,
        f"T06 - Exact power of Fisher's test (alpha = {alpha:g}) and P(B scores <= A), "
        f"A p = {p_a} vs B p = {p_b}, n trials each (lesson 25)",
        f"{verdict} Power sums the binomial probabilities of every (k_A, k_B) with two-sided "
        f"Fisher p < {alpha:g}; P(B <= A) is P(k_B <= k_A). For {target_power:.0%} power at "
        f"these rates: n = {sizing.n} per policy (the first n from which the power stays >= "
        f"{target_power:g} for {power_window} more n; it first reaches it at n = "
        f"{sizing.n_first}).",
    )
