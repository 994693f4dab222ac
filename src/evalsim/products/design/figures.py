"""Figures mde_vs_n and power_vs_n of the stage design.

The tables are in :mod:`evalsim.products.design.sizing`, :mod:`evalsim.products.design.detection`
and :mod:`evalsim.products.design.pools`.
"""

from __future__ import annotations

import numpy as np

from evalsim.products.design._common import _pts
from evalsim.stats.two_sample import design as dz


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
    from evalsim.stats.two_sample.power import fisher_power_curve

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
