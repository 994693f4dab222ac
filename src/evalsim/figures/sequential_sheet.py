"""F07: a printable bench sheet of a sequential design, to tick off by hand at the robot.

Paired designs: a lattice of (discordant pairs so far, B-alone minus A-alone). After each pair
the person moves one column right and one row up (only B succeeded) or down (only A
succeeded); pairs where both or neither succeed are tallied in the margin and do not move.
The shaded regions are the stops. Unpaired designs: the lead ``k_B - k_A`` needed at each look,
drawn for a few values of A's success count (the exact thresholds are in the design file).

Drawn here, in the figures layer, so that ``evalsim sequential sheet`` can draw it without
importing the pipeline's products; :mod:`evalsim.products.sequential.sheet` is the builder.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from evalsim.figures import OKABE_ITO
from evalsim.stats.sequential.core import SequentialDesign

__all__ = ["bench_sheet", "tick_pages"]

_A4_LANDSCAPE_IN = (11.69, 8.27)


def _marks(ax, d, lead, **style) -> None:
    """Marks (over the lattice) at the discordant counts ``d`` where ``lead`` is finite."""
    ok = np.isfinite(lead)
    ax.scatter(d[ok], lead[ok], zorder=3, **style)


def _stop_marks(ax, d, lead, final, color, final_label=None) -> None:
    """A boundary's stop marks: filled squares where a look stops, open ones at the last look."""
    _marks(ax, d, lead, marker="s", s=9, color=color, lw=0)
    _marks(
        ax, d, final, marker="s", s=9, facecolor="none", edgecolor=color, lw=0.6, label=final_label
    )


def _certified(design: SequentialDesign) -> str:
    """The title's certificate clause ("" for a design without a certificate).

    Parameters
    ----------
    design : SequentialDesign
        The design drawn.

    Returns
    -------
    str
        ``"; certified worst-case false-win rate <= <upper>"``, or ``""``.
    """
    c = design.certificate
    return "" if c is None else f"; certified worst-case false-win rate <= {c.upper:.6f}"


def _axes_labels(ax, xlabel: str, ylabel: str) -> None:
    """The sheet's axis labels (10 pt), tick labels (9 pt) and light major grid."""
    ax.set_xlabel(xlabel, fontsize=10)
    ax.set_ylabel(ylabel, fontsize=10)
    ax.tick_params(labelsize=9)
    ax.grid(True, which="major", color="0.85", lw=0.5)


def _finish_sheet(fig, ax, design: SequentialDesign, how_to: str, tick_unit: str, **legend_kw):
    """Title (the design, its certificate and ``how_to``), legend, the tick-box note.

    Parameters
    ----------
    fig, ax
        The sheet's first page and its axes.
    design : SequentialDesign
        The design drawn.
    how_to : str
        The title's second line: how to walk the sheet.
    tick_unit : str
        What one tick box counts, for the note under the axes ("pair run", "trial per
        policy").
    **legend_kw
        Placement of the legend (default: Matplotlib's best place).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig``, laid out.
    """
    ax.set_title(f"Bench sheet -- {design.label}{_certified(design)}\n{how_to}", fontsize=10)
    ax.legend(frameon=False, fontsize=9, **legend_kw)
    ax.text(
        1.0,
        -0.09,
        f"Tick one box per {tick_unit}: {_pages_note(design.n_max)}",
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def _paired_sheet(design: SequentialDesign):
    r = design.rows
    d_max = design.d_max
    d = np.arange(d_max + 1)
    up_lead = np.where(r["upper"] <= d, 2 * r["upper"] - d, np.nan)
    lo_lead = np.where(r["lower"] >= 0, 2 * r["lower"] - d, np.nan)
    fin_up = np.where(r["final_upper"] <= d, 2 * r["final_upper"] - d, np.nan)
    fin_lo = np.where(r["final_lower"] >= 0, 2 * r["final_lower"] - d, np.nan)
    fig, ax = plt.subplots(figsize=_A4_LANDSCAPE_IN)
    top = int(np.nanmax(np.r_[up_lead, 5])) + 2
    bottom = -top if design.two_sided else -int(0.35 * top)
    xs, ys = [], []
    for k in range(d_max + 1):
        lead = np.arange(-k, k + 1, 2)
        lead = lead[(lead >= bottom) & (lead <= top)]
        xs.extend([k] * lead.size)
        ys.extend(lead.tolist())
    ax.scatter(xs, ys, s=1.2, color="0.55", lw=0)
    ok = np.isfinite(up_lead)
    ax.fill_between(
        d[ok],
        up_lead[ok] - 0.5,
        top + 1,
        color=OKABE_ITO[2],
        alpha=0.25,
        lw=0,
        label="stop: B better (filled squares: the lowest such point)",
    )
    _stop_marks(
        ax,
        d,
        up_lead,
        fin_up,
        OKABE_ITO[2],
        f"at pair {design.n_max} (the last): B better on or above",
    )
    if design.two_sided:
        okl = np.isfinite(lo_lead)
        ax.fill_between(
            d[okl],
            bottom - 1,
            lo_lead[okl] + 0.5,
            color=OKABE_ITO[3],
            alpha=0.25,
            lw=0,
            label="stop: A better",
        )
        _stop_marks(ax, d, lo_lead, fin_lo, OKABE_ITO[3])
    if design.futility is not None:
        fl = np.where(r["fut_hi"] >= 0, 2 * r["fut_hi"] - d, np.nan)
        _marks(
            ax,
            d,
            fl,
            marker="v",
            s=8,
            color=OKABE_ITO[1],
            lw=0,
            label=f"from pair {design.futility['from']}: may stop for futility on or below",
        )
    ax.set_xlim(-0.5, d_max + 0.5)
    ax.set_ylim(bottom - 0.5, top + 0.5)
    _axes_labels(
        ax,
        "discordant pairs so far (pairs where exactly one policy succeeded)",
        "B-alone minus A-alone",
    )
    ax.set_xticks(np.arange(0, d_max + 1, 10))
    ax.set_xticks(np.arange(0, d_max + 1, 1), minor=True)
    # The legend under the axes, left: inside, it covered part of the lattice the operator marks.
    return _finish_sheet(
        fig,
        ax,
        design,
        "After each pair: only B succeeded -> one step right and up; only A -> right and down; "
        "both or neither -> no move (tick the margin box). Stop when you enter a shaded region.",
        "pair run",
        loc="upper left",
        bbox_to_anchor=(0.0, -0.09),
        ncol=1,
    )


#: Tick boxes per row and rows per page of the tick pages (A4 landscape, 9 pt numbers).
BOXES_PER_ROW = 20
ROWS_PER_PAGE = 10


def _pages_note(n_max: int) -> str:
    pages = -(-n_max // (BOXES_PER_ROW * ROWS_PER_PAGE))
    where = "the next page" if pages == 1 else f"the next {pages} pages"
    return f"{n_max} numbered boxes on {where} of the PDF"


def tick_pages(n_max: int, label: str, unit: str = "pair") -> list:
    """A4-landscape pages of ``n_max`` numbered tick boxes, one per pair (or trial) run.

    :data:`BOXES_PER_ROW` x :data:`ROWS_PER_PAGE` boxes a page, each about 13 mm square
    with its number in 9 pt, so the operator never runs out before the design's last pair.

    Parameters
    ----------
    n_max : int
        The design's largest number of pairs (trials per policy for an unpaired design).
    label : str
        The design, for each page's header.
    unit : str
        What one box counts ("pair" or "trial per policy").
    """
    from matplotlib.patches import Rectangle

    per_page = BOXES_PER_ROW * ROWS_PER_PAGE
    n_pages = -(-n_max // per_page)
    pages = []
    for page in range(n_pages):
        first = page * per_page + 1
        last = min(n_max, first + per_page - 1)
        fig = plt.figure(figsize=_A4_LANDSCAPE_IN)
        ax = fig.add_axes((0.04, 0.05, 0.92, 0.8))
        ax.set_xlim(0, BOXES_PER_ROW)
        ax.set_ylim(ROWS_PER_PAGE, 0)
        ax.set_axis_off()
        for i in range(first, last + 1):
            r, c = divmod(i - first, BOXES_PER_ROW)
            ax.add_patch(Rectangle((c + 0.12, r + 0.12), 0.76, 0.76, fill=False, ec="0.2", lw=0.8))
            ax.text(c + 0.16, r + 0.16, str(i), ha="left", va="top", fontsize=9, color="0.3")
        fig.text(
            0.04,
            0.93,
            f"Bench sheet -- {label}: tick one box per {unit} run ({unit}s {first}-{last} "
            f"of {n_max}; page {page + 2} of {n_pages + 1})",
            fontsize=11,
        )
        pages.append(fig)
    return pages


def _unpaired_sheet(design: SequentialDesign):
    r = design.rows
    sizes = design.look_sizes
    fig, ax = plt.subplots(figsize=_A4_LANDSCAPE_IN)
    for i, rate in enumerate((0.3, 0.5, 0.7, 0.9)):
        need = []
        for j, m in enumerate(sizes):
            ka = int(round(rate * m))
            u = r["upper"][j, ka]
            need.append(u - ka if u <= m else np.nan)
        ax.step(
            sizes,
            need,
            where="post",
            color=OKABE_ITO[i],
            label=f"A has succeeded in about {rate:.0%} of its trials",
        )
    _axes_labels(ax, "trials per policy so far", "lead k_B - k_A needed to stop: B better")
    return _finish_sheet(
        fig,
        ax,
        design,
        "At each look, stop with 'B better' when B's lead reaches the line for A's current count "
        "(exact thresholds per k_A: the design file).",
        "trial per policy",
    )


def bench_sheet(design: SequentialDesign):
    """F07: the printable bench sheet of a design (A4 landscape).

    The first page is the design's lattice (paired) or thresholds (unpaired); the tick boxes,
    one per pair (or trial per policy) up to the design's ``n_max``, follow on as many pages
    as they need (:func:`tick_pages`), kept on the figure as ``more_pages``:
    :func:`evalsim.figures.save_figure` writes every page into the PDF (the PNG shows the
    first).
    """
    if design.kind == "paired":
        fig, unit = _paired_sheet(design), "pair"
    else:
        fig, unit = _unpaired_sheet(design), "trial per policy"
    fig.more_pages = tick_pages(design.n_max, design.label, unit)
    return fig
