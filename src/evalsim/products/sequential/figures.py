"""Figures of the sequential stage: F05 (false wins against the common rate) and F06 (power
and expected sample size). The tables (T31-T33) and the designs are
:mod:`evalsim.products.sequential.designs`; the bench sheet (F07)
:func:`evalsim.products.sequential.sheet.bench_sheet_of`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from scipy.stats import hypergeom

from evalsim.figures import OKABE_ITO, PAGE_WIDTH_IN
from evalsim.stats.sequential.core import SequentialDesign
from evalsim.stats.sequential.designs import operating_characteristics, type1_curve
from evalsim.stats.sequential.optimise import fixed_n_power
from evalsim.stats.sequential.peeking import sequential_rejection_probability

__all__ = ["false_win_figure", "power_ess_figure"]

#: Okabe-Ito without yellow (too faint for thin lines) and vermillion (the naive curve of F05).
_LINE_COLORS = [OKABE_ITO[k] for k in (0, 1, 2, 4, 5, 7)]


def _naive_one_sided_fisher_regions(n: int, alpha: float) -> list[np.ndarray]:
    """Region [k_A, k_B] of the one-sided Fisher test "B better", p < alpha, at each m = 1..n."""
    regions = []
    for m in range(1, n + 1):
        ka, kb = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
        p = hypergeom.sf(kb - 1, 2 * m, m, ka + kb)
        regions.append(p < alpha)
    return regions


#: Line styles and markers of the designs in F05 and F06 (with _LINE_COLORS): every design
#: differs from the others in color, dash pattern and marker, so none depends on color alone.
_DESIGN_STYLES = [("-", "o"), ("--", "s"), ("-.", "^"), (":", "D"), ((0, (5, 1, 1, 1)), "v")]


def _design_style(i: int) -> dict:
    ls, marker = _DESIGN_STYLES[i % len(_DESIGN_STYLES)]
    return {"color": _LINE_COLORS[i % len(_LINE_COLORS)], "ls": ls, "marker": marker}


def false_win_figure(
    designs: dict[str, SequentialDesign], alpha: float, n_naive: int, p_points: int
):
    """F05: false-win rate against the common rate p -- naive every-trial Fisher, designs, alpha.

    The alpha line is drawn first and light (grey, under the curves), so a design whose
    false-win rate sits at alpha (the paired designs, whose rate does not depend on p) stays
    visible on top of it; each design has its own color, dash pattern and markers (every
    few grid points). The legend is under the axes, in one column, at the house's size.
    """
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN, 4.2), layout="constrained")
    grid = np.linspace(0.0, 1.0, p_points)
    regions = _naive_one_sided_fisher_regions(n_naive, alpha)
    coarse = np.linspace(0.02, 0.98, 25)
    naive = [
        sequential_rejection_probability(n_naive, p, p, alpha, "every", regions).false_win_rate
        for p in coarse
    ]
    ax.axhline(alpha, color="0.7", lw=5, alpha=0.6, zorder=1, label=f"α = {alpha:g} (the target)")
    ax.plot(
        coarse,
        naive,
        color=OKABE_ITO[3],
        marker="o",
        ms=3,
        lw=1.2,
        zorder=3,
        label=f"naive: one-sided Fisher p < {alpha:g} after every trial (n = {n_naive})",
    )
    every = max(1, len(grid) // 10)
    for i, (name, d) in enumerate(designs.items()):
        y = type1_curve(d, grid)
        c = d.certificate
        style = _design_style(i)
        ax.plot(
            grid,
            y,
            lw=1.3,
            ms=3.5,
            markevery=(i % every, every),
            mfc="white",
            zorder=4 + i,
            label=f"{name} (certified max {c.upper:.5f})",
            **style,
        )
    ax.set_xlabel("common true success rate p (p_A = p_B)")
    ax.set_ylabel("false-win rate (log scale)")
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 0.6)
    ax.set_xlim(0, 1)
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1)
    ax.set_title("Peeking done right: every design stays at or below α for every p")
    return fig


def power_ess_figure(designs: dict[str, SequentialDesign], p_a: float, p_b_grid, alpha: float):
    """F06: power and expected trials against p_B (p_A fixed), designs vs the fixed-n test.

    Designs: color, dash pattern and marker each their own (markers at the computed p_B).
    Reference lines (the fixed-n tests): grey, thinner, without markers, and named in both
    panels (one legend under the two panels).
    """
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 3.4), layout="constrained")
    pb = np.asarray(p_b_grid, dtype=float)
    for i, (name, d) in enumerate(designs.items()):
        ocs = [operating_characteristics(d, p_a, float(p)) for p in pb]
        style = _design_style(i)
        ax1.plot(pb, [o.verdicts["B better"] for o in ocs], lw=1.4, ms=4, label=name, **style)
        ax2.plot(pb, [o.ess for o in ocs], lw=1.4, ms=4, label=name, **style)
    kinds = sorted({(d.kind, d.n_max, d.alternative) for d in designs.values()})
    ref_styles = [":", "--"]
    for j, (kind, n_max, alt) in enumerate(kinds):
        fixed = [
            fixed_n_power(n_max, p_a, float(p), alpha, kind, alt) if p != p_a else alpha for p in pb
        ]
        ref = {"color": "0.35", "ls": ref_styles[j % 2], "lw": 1.0, "zorder": 1}
        label = f"reference: fixed n = {n_max} ({kind}, exact)"
        ax1.plot(pb, fixed, label=label, **ref)
        ax2.axhline(n_max, **ref)
    for ax in (ax1, ax2):
        ax.xaxis.set_major_locator(MaxNLocator(5))
    ax1.set_xlabel(f"p_B (p_A = {p_a:g})")
    ax1.set_ylabel("P(verdict: B better)")
    ax1.set_title("Power", fontsize=8)
    ax2.set_xlabel(f"p_B (p_A = {p_a:g})")
    ax2.set_ylabel("expected trials per policy (pairs)")
    ax2.set_title("Expected trials (grey: the fixed n)", fontsize=8)
    fig.legend(
        *ax1.get_legend_handles_labels(),
        loc="outside lower center",
        ncol=2,
        frameon=False,
    )
    fig.suptitle(
        "Power and expected trials of the sequential designs (paired: independent outcomes)",
        fontsize=9,
    )
    return fig
