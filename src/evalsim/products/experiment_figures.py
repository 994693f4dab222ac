"""Figure B (F01) of lesson 25's experiment: mean Wilson width and coverage against n, from
Table B (:func:`evalsim.products.experiment.table_b`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import norm

from evalsim.products.experiment import exact_mean_width
from evalsim.stats._validate import check_confidence
from evalsim.stats.coverage import exact_coverage

# --------------------------------------------------------------------------- Figure B (F01)


def _table_b_rows(table_b: pd.DataFrame, policy: str) -> pd.DataFrame:
    sub = table_b[table_b["policy"].astype(str) == str(policy)].sort_values("n")
    if sub.empty:
        raise ValueError(f"Table B has no rows for policy {policy!r}")
    return sub


def _log_n_axis(ax, ns) -> None:
    ax.set_xscale("log")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_xlabel("trials per evaluation, n")


def plot_width(table_b: pd.DataFrame, policy: str, confidence: float = 0.95, ax=None):
    """Mean Wilson width against n for one pool: resampled points, exact line, c/sqrt(n).

    The reference is 2 z sqrt(p (1 - p) / n), the large-n width, whose 1/sqrt(n) shape the
    document points out. Returns the Axes.
    """
    import matplotlib.pyplot as plt

    from evalsim.figures import color_for

    confidence = check_confidence(confidence)
    sub = _table_b_rows(table_b, policy)
    ax = ax if ax is not None else plt.gca()
    p = float(sub["pool_rate"].iloc[0])
    ns = sub["n"].to_numpy(dtype=int)
    dense = np.arange(int(ns.min()), int(ns.max()) + 1)
    z = float(norm.ppf(0.5 + confidence / 2))
    exact = [exact_mean_width(int(n), p, "wilson", confidence) for n in dense]
    ax.plot(dense, exact, color=color_for(0), lw=1.2, label="exact expected width")
    ax.plot(
        dense,
        2 * z * math.sqrt(p * (1 - p)) / np.sqrt(dense),
        color="0.35",
        ls="--",
        lw=1.0,
        label=r"reference $2z\sqrt{p(1-p)/n}$",
    )
    ax.plot(ns, sub["mean_wilson_width"], "o", color=color_for(0), ms=4.5, label="resampled mean")
    _log_n_axis(ax, ns)
    ax.set_ylabel(f"mean Wilson {confidence:.0%} width (success rate)")
    ax.set_title(f"(a) Interval width, pool {policy} (p = {p:.3f})")
    ax.legend(frameon=False)
    return ax


def plot_coverage(table_b: pd.DataFrame, policy: str, confidence: float = 0.95, ax=None):
    """Wilson and Wald coverage against n for one pool: resampled points, exact lines.

    Points carry 95% resampling error bars; lines are exact coverage at every n between the
    grid's ends, at the pool rate. Returns the Axes.
    """
    import matplotlib.pyplot as plt

    from evalsim.figures import color_for

    confidence = check_confidence(confidence)
    sub = _table_b_rows(table_b, policy)
    ax = ax if ax is not None else plt.gca()
    p = float(sub["pool_rate"].iloc[0])
    ns = sub["n"].to_numpy(dtype=int)
    dense = np.arange(int(ns.min()), int(ns.max()) + 1)
    n_evals = int(sub["evaluations"].iloc[0])
    lowest = 1.0
    for i, method in enumerate(("wilson", "wald")):
        color = color_for(3 * i)  # Wilson blue, Wald vermillion
        exact = [float(exact_coverage(method, int(n), p, confidence=confidence)) for n in dense]
        ax.plot(dense, exact, color=color, lw=0.9, alpha=0.8, label=f"{method.title()}, exact")
        cov = sub[f"{method}_coverage"].to_numpy(dtype=float)
        ax.errorbar(
            ns,
            cov,
            yerr=1.96 * np.sqrt(cov * (1 - cov) / n_evals),
            fmt="o" if method == "wilson" else "s",
            color=color,
            ms=4.5,
            capsize=2,
            lw=1.0,
            mec="black",
            mew=0.5,
            label=f"{method.title()}, resampled",
        )
        lowest = min(lowest, float(np.min(exact)), float(np.min(cov)))
    ax.axhline(confidence, color="black", ls=":", lw=1.0, label=f"nominal {confidence:.2f}")
    _log_n_axis(ax, ns)
    ax.set_ylabel("coverage (fraction of evaluations)")
    ax.set_title(f"(b) Coverage of p, {n_evals} evaluations per n")
    ax.legend(frameon=False, ncol=2, loc="lower right", columnspacing=1.0, handlelength=1.6)
    ax.set_ylim(max(0.0, lowest - 0.16), 1.01)  # room for the legend under the curves
    return ax


def figure_b(table_b: pd.DataFrame, policy: str, confidence: float = 0.95):
    """Figure B (F01): mean Wilson width and Wilson/Wald coverage against n, one pool.

    Sized for one paper column, the document's left and right panels stacked: top
    :func:`plot_width`, bottom :func:`plot_coverage`.
    """
    import matplotlib.pyplot as plt

    from evalsim.figures import COLUMN_WIDTH_IN

    _table_b_rows(table_b, policy)
    fig, (ax_w, ax_c) = plt.subplots(2, 1, figsize=(COLUMN_WIDTH_IN, 5.2), layout="constrained")
    plot_width(table_b, policy, confidence, ax=ax_w)
    plot_coverage(table_b, policy, confidence, ax=ax_c)
    fig.suptitle("Figure B: evaluations resampled from the pool", fontsize=9)
    return fig
