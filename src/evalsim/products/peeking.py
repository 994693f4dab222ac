"""F03: the peeking table and figure (document 002, "Looking early is a decision").

:func:`peeking_table` computes, for each number of equally spaced looks, the exact
false-win rate (DP) and a Monte Carlo estimate, and sets the document's two stated values
next to the matching rows with a verdict. :func:`peeking_figure` draws the document's bar
chart (test once vs after every trial) and the false-win rate against the number of looks.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalsim.figures import OKABE_ITO, PAGE_WIDTH_IN
from evalsim.products._common import captioned
from evalsim.seeding import rng_for
from evalsim.stats.sequential.peeking import look_sizes
from evalsim.stats.sequential.peeking_simulation import false_win_rate_vs_looks

__all__ = ["document_verdict", "peeking_figure", "peeking_table"]


def document_verdict(stated: float, exact: float, n_experiments: int, decimals: int) -> str:
    """Compare a document's stated rate with the exact one.

    ``stated`` was printed with ``decimals`` decimals (of a percentage), so it stands for
    an interval of half-width ``0.5 * 10**-decimals`` percentage points; a simulation of
    ``n_experiments`` adds a standard error ``sqrt(e (1 - e) / n_experiments)``.

    Returns
    -------
    str
        "matches" when the exact value rounds to the stated one; "matches approximately" when
        the stated value is within 2 standard errors (plus rounding) of the exact one;
        "differs" otherwise; each with the distance in standard errors.
    """
    rounding = 0.5 * 10.0 ** (-decimals) / 100.0
    se = math.sqrt(exact * (1.0 - exact) / n_experiments)
    z = (stated - exact) / se
    if abs(stated - exact) <= rounding + 1e-12:
        verdict = "matches"
    elif abs(stated - exact) <= rounding + 2.0 * se:
        verdict = "matches approximately"
    else:
        verdict = "differs"
    return (
        f"{verdict}: stated {100 * stated:.{decimals}f}% vs exact {100 * exact:.2f}% "
        f"({z:+.1f} SE of a {n_experiments:,}-experiment simulation; allowance "
        f"{100 * rounding:.2g} pp rounding + 2 SE = {100 * (rounding + 2 * se):.3f} pp)"
    )


def _design(k: int, n: int) -> str:
    if k == 1:
        return f"test once (after {n} trials)"
    if k == n:
        return "test after every trial"
    return f"{k} equally spaced looks"


def _sizes_text(sizes: np.ndarray) -> str:
    s = sizes.tolist()
    if len(s) > 6:
        return f"{s[0]}, {s[1]}, {s[2]}, ..., {s[-1]}"
    return ", ".join(str(v) for v in s)


def peeking_table(
    p: float,
    n_per_arm: int,
    alpha: float,
    looks_grid: list[int],
    mc_experiments: int,
    study_seed: int,
    document: dict,
) -> pd.DataFrame:
    """F03 numbers: exact and Monte Carlo false-win rate per number of looks.

    Parameters
    ----------
    p : float
        The common true success rate of both policies.
    n_per_arm : int
        Trials per policy.
    alpha : float
        Fisher two-sided level (p < alpha).
    looks_grid : list of int
        Numbers of equally spaced looks K; 1 (test once) and ``n_per_arm`` (every trial) are
        always added.
    mc_experiments : int
        Simulated experiments (common to all K).
    study_seed : int
        The study's seed; the stream is ``rng_for(study_seed, "peeking", "mc")``.
    document : dict
        ``experiments``, ``test_once``, ``every_trial``, ``decimals``: document 002's
        simulation size and stated rates, as printed.

    Returns
    -------
    pandas.DataFrame
        One row per K with the exact and MC rates, the MC standard error, its distance
        from the exact value in SE, and the document's value and verdict on the two rows it
        states.
    """
    ks = sorted({1, int(n_per_arm), *(int(k) for k in looks_grid)})
    rng = rng_for(study_seed, "peeking", "mc")
    curve = false_win_rate_vs_looks(n_per_arm, p, alpha, ks, mc_experiments, rng)
    stated = {1: document.get("test_once"), int(n_per_arm): document.get("every_trial")}
    rows = []
    for k, exact, mc, se in zip(ks, curve.exact, curve.mc, curve.mc_se, strict=True):
        doc = stated.get(k)
        rows.append(
            {
                "design": _design(k, n_per_arm),
                "n_looks": k,
                "look_sizes": _sizes_text(look_sizes(n_per_arm, k)),
                "exact_false_win_rate": float(exact),
                "mc_false_win_rate": float(mc),
                "mc_se": float(se),
                "mc_minus_exact_in_se": float((mc - exact) / se) if se > 0 else math.nan,
                "document_value": math.nan if doc is None else float(doc),
                "document_verdict": ""
                if doc is None
                else document_verdict(
                    float(doc),
                    float(exact),
                    int(document["experiments"]),
                    int(document.get("decimals", 1)),
                ),
            }
        )
    df = pd.DataFrame(rows)
    once = df.loc[df.n_looks == 1, "exact_false_win_rate"].iloc[0]
    every = df.loc[df.n_looks == n_per_arm, "exact_false_win_rate"].iloc[0]
    return captioned(
        df,
        f"F03 Peeking: false-win rate of two equal policies (p = {p:g}, {n_per_arm} trials "
        f"each, Fisher two-sided p < {alpha:g})",
        f"Exact: dynamic programming over (k_A, k_B) with rejection absorbing. MC: "
        f"{mc_experiments:,} simulated experiments (numba; the same paths for every K, so "
        f"the MC deviations from the exact values are correlated across rows). "
        f"K looks are at ceil(j*{n_per_arm}/K), j = 1..K. Testing after every trial declares "
        f"a false winner {every / once:.2f} times as often as testing once "
        f"({100 * every:.2f}% vs {100 * once:.2f}%). Document 002 states "
        f"{100 * document['test_once']:.1f}% and {100 * document['every_trial']:.1f}% from "
        f"{document['experiments']:,} experiments; see document_verdict.",
    )


def _mc_points(ax, x, rows: pd.DataFrame, capsize: float) -> None:
    """F03's Monte Carlo estimates: black points at ``x`` with +-2 SE bars, in percent.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    x : array-like
        Horizontal positions, one per row.
    rows : pandas.DataFrame
        Rows of the peeking table (columns ``mc_false_win_rate`` and ``mc_se``).
    capsize : float
        Length of the bars' caps (points).
    """
    ax.errorbar(
        x,
        100 * rows.mc_false_win_rate,
        yerr=200 * rows.mc_se,
        fmt="o",
        color="black",
        ms=3,
        capsize=capsize,
        label="Monte Carlo ±2 SE",
    )


def peeking_figure(table: pd.DataFrame, alpha: float, p: float) -> plt.Figure:
    """F03: bars for test once vs after every trial; false-win rate vs number of looks.

    Bars are the exact rates; black points the Monte Carlo estimates with +-2 SE; open
    diamonds document 002's stated values. The dashed line is alpha.
    """
    n = int(table.n_looks.max())
    fig, (ax_bar, ax_k) = plt.subplots(
        1, 2, figsize=(PAGE_WIDTH_IN, 3.0), gridspec_kw={"width_ratios": [1, 1.5]}
    )
    pair = table[table.n_looks.isin([1, n])].sort_values("n_looks")
    x = np.arange(len(pair))
    labels = [f"test once\n(after {n} trials)", "test after\nevery trial"]
    # One colour for both bars: both are the exact rate, the legend's one entry names them.
    ax_bar.bar(
        x, 100 * pair.exact_false_win_rate, width=0.6, color=OKABE_ITO[0], label="exact (DP)"
    )
    # MC point left of centre, document's value right of it, so neither hides the other.
    _mc_points(ax_bar, x - 0.13, pair, capsize=3)
    has_doc = pair.document_value.notna()
    ax_bar.scatter(
        x[has_doc] + 0.13,
        100 * pair.document_value[has_doc],
        marker="D",
        s=28,
        facecolor="white",
        edgecolor="black",
        zorder=3,
        label="document 002",
    )
    for xi, e in zip(x, pair.exact_false_win_rate, strict=True):
        ax_bar.annotate(
            f"{100 * e:.2f}%",
            (xi, 100 * e),
            xytext=(0, 9),
            textcoords="offset points",
            ha="center",
            fontsize=7,
        )
    ax_bar.axhline(100 * alpha, color="0.4", ls="--", lw=0.8, label=f"α = {alpha:g}")
    ax_bar.set_xticks(x, labels)
    ax_bar.set_xlim(-0.6, 1.6)
    ax_bar.set_ylim(0, 100 * max(pair.exact_false_win_rate.max(), alpha) * 1.35)
    ax_bar.set_ylabel("false-win rate (%)")
    ax_bar.set_title("Two equal policies: when you look")

    ks = table.sort_values("n_looks")
    ax_k.plot(
        ks.n_looks,
        100 * ks.exact_false_win_rate,
        "-",
        color=OKABE_ITO[0],
        lw=1.2,
        label="exact (DP)",
    )
    _mc_points(ax_k, ks.n_looks, ks, capsize=2)
    ax_k.axhline(100 * alpha, color="0.4", ls="--", lw=0.8, label=f"α = {alpha:g}")
    ax_k.set_xscale("log")
    ax_k.set_xticks(ks.n_looks.tolist(), [str(v) for v in ks.n_looks])
    ax_k.minorticks_off()
    ax_k.set_ylim(0, None)
    ax_k.set_xlabel(f"number of equally spaced looks (of {n} trials per policy)")
    ax_k.set_ylabel("false-win rate (%)")
    ax_k.set_title("More looks, more false wins")
    # One legend under both panels (inside, it covered the alpha line): the bars' entries
    # ("exact (DP)" names both bars), then the right panel's line.
    handles, labels = ax_bar.get_legend_handles_labels()
    for h, lab in zip(*ax_k.get_legend_handles_labels(), strict=True):
        if lab not in labels:
            handles.append(h)
            labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle(
        f"F03 Peeking: both policies truly at {100 * p:g}%, {n} trials each, "
        f"Fisher two-sided p < {alpha:g}",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig
