"""Figure B (F01) of lesson 25's experiment: mean Wilson width and coverage against n, from
Table B (:func:`evalsim.products.resample.experiment.table_b`).

Lines and filled points are at the pool's rate (exact and resampled); the lesson's own Table B
values (its ``doc_*`` columns) are open diamonds, as F03 shows document 002's values.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import ndtri  # norm.ppf, without loading scipy.stats

from evalsim.products.resample.experiment import DOCUMENT_000, exact_mean_width
from evalsim.stats._validate import check_confidence
from evalsim.stats.proportion.coverage import exact_coverage

# --------------------------------------------------------------------------- Figure B (F01)


def _table_b_rows(table_b: pd.DataFrame, policy: str) -> pd.DataFrame:
    sub = table_b[table_b["policy"].astype(str) == str(policy)].sort_values("n")
    if sub.empty:
        raise ValueError(f"Table B has no rows for policy {policy!r}")
    return sub


def _lesson_label(policy: str) -> str:
    quoted = DOCUMENT_000["table_a"].get(str(policy))
    rate = f" (its pool: {quoted['k']}/{quoted['n']})" if quoted else ""
    return f"lesson 25, Table B{rate}"


def _plot_lesson(ax, sub: pd.DataFrame, column: str, color: str, label: str | None) -> bool:
    """The lesson's values of ``column`` (open diamonds, F03's marker); False if it has none."""
    if column not in sub or not sub[column].notna().any():
        return False
    has = sub[column].notna()
    ax.plot(
        sub["n"][has],
        sub[column][has],
        "D",
        ms=6.5,
        mfc="none",
        mec=color,
        mew=1.1,
        zorder=4,
        label=label,
    )
    return True


def _log_n_axis(ax, ns) -> None:
    ax.set_xscale("log")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_xlabel("trials per evaluation, n")


def _pool_panel(table_b: pd.DataFrame, policy: str, confidence: float, ax):
    """What both panels of F01 start from.

    Parameters
    ----------
    table_b : pandas.DataFrame
        Table B (T08).
    policy : str
        The pool drawn.
    confidence : float
        The intervals' confidence level (checked).
    ax : matplotlib.axes.Axes or None
        The panel; None: the current Axes.

    Returns
    -------
    tuple
        The checked confidence, the pool's rows of Table B, the Axes, the pool rate, the
        grid's n values and every n between the grid's ends.
    """
    import matplotlib.pyplot as plt

    confidence = check_confidence(confidence)
    sub = _table_b_rows(table_b, policy)
    ax = ax if ax is not None else plt.gca()
    p = float(sub["pool_rate"].iloc[0])
    ns = sub["n"].to_numpy(dtype=int)
    dense = np.arange(int(ns.min()), int(ns.max()) + 1)
    return confidence, sub, ax, p, ns, dense


def plot_width(table_b: pd.DataFrame, policy: str, confidence: float = 0.95, ax=None):
    """Mean Wilson width against n for one pool: resampled points, exact line, c/sqrt(n).

    The reference is 2 z sqrt(p (1 - p) / n), the large-n width, whose 1/sqrt(n) shape the
    document points out. Lines and points are at the pool rate; the lesson's values, where
    Table B quotes them, are open diamonds. Returns the Axes.
    """
    from evalsim.figures import color_for

    confidence, sub, ax, p, ns, dense = _pool_panel(table_b, policy, confidence, ax)
    z = float(ndtri(0.5 + confidence / 2))
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
    _plot_lesson(ax, sub, "doc_mean_wilson_width", "black", _lesson_label(policy))
    _log_n_axis(ax, ns)
    ax.set_ylabel(f"mean Wilson {confidence:.0%} width (success rate)")
    ax.set_title(f"(a) Interval width, pool {policy} (p = {p:.3f})")
    ax.legend(frameon=False)
    return ax


def plot_coverage(table_b: pd.DataFrame, policy: str, confidence: float = 0.95, ax=None):
    """Wilson and Wald coverage against n for one pool: resampled points, exact lines.

    Points carry 95% resampling error bars; lines are exact coverage at every n between the
    grid's ends, at the pool rate. The lesson's resampled coverage, where Table B quotes it, is
    an open diamond in the method's color. Returns the Axes.
    """
    from evalsim.figures import color_for

    confidence, sub, ax, p, ns, dense = _pool_panel(table_b, policy, confidence, ax)
    n_evals = int(sub["evaluations"].iloc[0])
    lowest = 1.0
    lesson = False
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
        if _plot_lesson(ax, sub, f"doc_{method}_coverage", color, None):
            lowest = min(lowest, float(sub[f"doc_{method}_coverage"].min()))
            lesson = True
    ax.axhline(confidence, color="black", ls=":", lw=1.0, label=f"nominal {confidence:.2f}")
    if lesson:  # one legend entry for both methods' diamonds (each in its method's color)
        ax.plot([], [], "D", ms=6.5, mfc="none", mec="0.3", mew=1.1, label="lesson 25, Table B")
    _log_n_axis(ax, ns)
    ax.set_ylabel("coverage (fraction of evaluations)")
    ax.set_title(f"(b) Coverage of p = {p:.3f}, {n_evals} evaluations per n")
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
