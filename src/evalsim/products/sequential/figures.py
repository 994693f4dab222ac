"""Figures of the sequential stage: F05 (false wins against the common rate) and F06 (power
and expected sample size). The tables (T31-T33) and the designs are
:mod:`evalsim.products.sequential.designs`; the bench sheet (F07)
:func:`evalsim.products.sequential.sheet.bench_sheet_of`.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from scipy.stats import hypergeom

from evalsim.figures import OKABE_ITO, PAGE_WIDTH_IN
from evalsim.stats.boundaries import BOUNDARY_FAMILIES
from evalsim.stats.sequential.core import SequentialDesign
from evalsim.stats.sequential.designs import operating_characteristics, type1_curve
from evalsim.stats.sequential.optimise import fixed_n_power
from evalsim.stats.sequential.peeking import sequential_rejection_probability

__all__ = ["design_label", "false_win_figure", "power_ess_figure"]

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


def design_label(design: SequentialDesign) -> str:
    """A design's name in words, from the boundary registry's label (not the config slug)."""
    fam = design.boundary.get("family", "?")
    text = f"{design.kind}, {BOUNDARY_FAMILIES[fam].label if fam in BOUNDARY_FAMILIES else fam}"
    par = {k: v for k, v in design.boundary.items() if k != "family"}
    if par:
        text += " (" + ", ".join(f"{k} = {v:.3g}" for k, v in par.items()) + ")"
    if design.futility is not None:
        text += f", futility stop from n = {design.futility['from']}"
    return text


def _wrapped(text: str, width: int = 34) -> str:
    """A panel title on lines of at most ``width`` characters (so the panels keep their size)."""
    return textwrap.fill(text, width)


def _panels(n: int, ncols: int = 3, extra_rows: int = 0, height_per_row: float = 1.9):
    """A figure with one panel per design (``ncols`` a row) and ``extra_rows`` full rows."""
    ncols = max(1, min(ncols, n))
    rows = -(-n // ncols)
    fig = plt.figure(
        figsize=(PAGE_WIDTH_IN, 1.2 + height_per_row * (rows + extra_rows)), layout="constrained"
    )
    grid = fig.add_gridspec(rows + extra_rows, ncols)
    axes = [fig.add_subplot(grid[i // ncols, i % ncols]) for i in range(n)]
    return fig, axes, grid, rows


def false_win_figure(
    designs: dict[str, SequentialDesign], alpha: float, n_naive: int, p_points: int
):
    """F05: false-win rate against the common rate p -- naive every-trial Fisher, designs, alpha.

    Small multiples, one panel per design (shared axes), so that no design hides another (two
    designs can have nearly the same curve): each panel draws the alpha line (grey band,
    under the curves), the naive every-trial Fisher test (thin) and the design's own curve,
    named by the boundary registry's label; its certified maximum is in the panel's title.
    """
    fig, axes, _, _ = _panels(len(designs))
    grid = np.linspace(0.0, 1.0, p_points)
    regions = _naive_one_sided_fisher_regions(n_naive, alpha)
    coarse = np.linspace(0.02, 0.98, 25)
    naive = [
        sequential_rejection_probability(n_naive, p, p, alpha, "every", regions).false_win_rate
        for p in coarse
    ]
    every = max(1, len(grid) // 10)
    for i, (ax, (_, d)) in enumerate(zip(axes, designs.items(), strict=True)):
        ax.axhline(
            alpha, color="0.7", lw=5, alpha=0.6, zorder=1, label=f"α = {alpha:g} (the target)"
        )
        ax.plot(
            coarse,
            naive,
            color=OKABE_ITO[3],
            marker="o",
            ms=2,
            lw=0.9,
            zorder=2,
            label=f"naive: one-sided Fisher p < {alpha:g} after every trial (n = {n_naive})",
        )
        style = _design_style(0)
        ax.plot(
            grid,
            type1_curve(d, grid),
            lw=1.4,
            ms=3,
            markevery=(0, every),
            mfc="white",
            zorder=4,
            label="the design's false-win rate (exact)",
            **style,
        )
        ax.set_title(
            f"{_wrapped(design_label(d))}\ncertified max {d.certificate.upper:.5f}",
            fontsize=6.5,
            loc="left",
        )
        ax.set_yscale("log")
        ax.set_ylim(1e-3, 0.6)
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 0.5, 1])
        if i % 3 == 0:
            ax.set_ylabel("false-win rate (log)")
        ax.set_xlabel("common rate p (p_A = p_B)", fontsize=7)
    fig.legend(
        *axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=1, frameon=False
    )
    fig.suptitle(
        "Peeking done right: every design stays at or below α for every p (one panel per design)",
        fontsize=9,
    )
    return fig


def power_ess_figure(designs: dict[str, SequentialDesign], p_a: float, p_b_grid, alpha: float):
    """F06: power and expected trials against p_B (p_A fixed), designs vs the fixed-n test.

    Power: small multiples, one panel per design with the fixed-n test of its kind and n_max
    (grey, dashed), since the designs' power curves nearly coincide. Expected trials: one
    panel under them, every design in its own color, dash pattern and marker, named by the
    boundary registry's label, the fixed n's grey.
    """
    fig, axes, grid, rows = _panels(len(designs), extra_rows=1, height_per_row=1.7)
    ax_e = fig.add_subplot(grid[rows, :])
    pb = np.asarray(p_b_grid, dtype=float)
    refs_done = set()
    for i, (ax, (_, d)) in enumerate(zip(axes, designs.items(), strict=True)):
        ocs = [operating_characteristics(d, p_a, float(p)) for p in pb]
        style = _design_style(i)
        label = design_label(d)
        ax.plot(pb, [o.verdicts["B better"] for o in ocs], lw=1.4, ms=3.5, label=label, **style)
        ax_e.plot(pb, [o.ess for o in ocs], lw=1.4, ms=4, label=label, **style)
        fixed = [
            fixed_n_power(d.n_max, p_a, float(p), alpha, d.kind, d.alternative)
            if p != p_a
            else alpha
            for p in pb
        ]
        ref = {"color": "0.35", "ls": "--", "lw": 1.0, "zorder": 1}
        ax.plot(pb, fixed, label=f"fixed n = {d.n_max} ({d.kind}, exact)", **ref)
        ax.set_title(_wrapped(label), fontsize=6.5, loc="left")
        ax.set_ylim(0, 1.02)
        ax.xaxis.set_major_locator(MaxNLocator(3))
        if i % 3 == 0:
            ax.set_ylabel("P(verdict: B better)")
        ax.set_xlabel(f"p_B (p_A = {p_a:g})", fontsize=7)
        if (d.kind, d.n_max) not in refs_done:
            refs_done.add((d.kind, d.n_max))
            ax_e.axhline(d.n_max, color="0.35", ls=":", lw=1.0, zorder=1)
    ax_e.xaxis.set_major_locator(MaxNLocator(5))
    ax_e.set_xlabel(f"p_B (p_A = {p_a:g})")
    ax_e.set_ylabel("expected trials per policy")
    ax_e.set_title("Expected trials (grey dotted: the fixed n)", fontsize=8)
    fig.legend(
        *ax_e.get_legend_handles_labels(),
        loc="outside lower center",
        ncol=2,
        fontsize=6.5,
        frameon=False,
    )
    fig.suptitle(
        "Power (one panel per design; grey dashed: the fixed-n test) and expected trials\n"
        "of the sequential designs (paired: independent outcomes)",
        fontsize=8,
    )
    return fig
