"""Figures out: one house style, PNG and PDF, colorblind-safe.

Plot functions live in the submodules (one per stage), take DataFrames and an optional
``ax=None``, and return the ``matplotlib.figure.Figure``. :func:`save_figure` writes it as
PNG (300 dpi) and PDF (vector) atomically. The palette is Okabe & Ito (2008), safe for the
common forms of color blindness; :data:`PALETTE` maps roles to colors so a policy keeps its
color across figures.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from evalsim.io import atomic_path  # noqa: E402

#: Okabe & Ito (2008) colors, in the order seaborn's "colorblind" palette uses them.
OKABE_ITO = [
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
]

#: Width of one column of a two-column paper, in inches.
COLUMN_WIDTH_IN = 3.5
#: Width of a full page figure, in inches.
PAGE_WIDTH_IN = 7.0


def set_style() -> None:
    """Apply the house style: seaborn ticks, paper context, Okabe-Ito colors."""
    sns.set_theme(context="paper", style="ticks", palette=OKABE_ITO, font_scale=1.0)
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 300,
            "savefig.bbox": "tight",
            "axes.titlesize": 9,
            "axes.labelsize": 8,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "legend.fontsize": 7,
            "pdf.fonttype": 42,
            # Fixed metadata so the same figure gives the same PDF bytes.
            "svg.hashsalt": "evalsim",
        }
    )


def color_for(index: int) -> str:
    """The ``index``-th palette color (cycles)."""
    return OKABE_ITO[index % len(OKABE_ITO)]


def ranking_intervals(
    ax, macro, rows, per_policy, simultaneous, per_policy_label: str, simultaneous_label: str
) -> None:
    """Draw a ranking's two intervals per policy on ``ax``, one policy per row.

    The per-policy interval is a thick pale band, the simultaneous one a point at the macro
    success with capped whiskers on top of it; both come into the legend.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    macro : numpy.ndarray
        Each policy's macro success (the point), in the axis' units (fraction or percent).
    rows : numpy.ndarray
        Each policy's y position.
    per_policy, simultaneous : tuple of numpy.ndarray
        ``(lower, upper)`` of each interval, in the units of ``macro``.
    per_policy_label, simultaneous_label : str
        Their legend entries.
    """
    band = {"fmt": "none", "lw": 3.0, "alpha": 0.45, "color": color_for(1)}
    points = {"fmt": "o", "ms": 3.5, "capsize": 2, "color": color_for(0)}
    for (lower, upper), style, label in (
        (per_policy, band, per_policy_label),
        (simultaneous, points, simultaneous_label),
    ):
        ax.errorbar(macro, rows, xerr=[macro - lower, upper - macro], label=label, **style)


def save_figure(fig, png_path: str | os.PathLike, pdf_path: str | os.PathLike) -> None:
    """Save ``fig`` as PNG and PDF atomically, then close it.

    A figure with further pages (a list of figures as ``fig.more_pages``, e.g. F07's tick
    boxes) is written as one multi-page PDF; the PNG shows the first page.
    """
    from matplotlib.backends.backend_pdf import PdfPages

    meta = {"Creator": None, "Producer": None, "CreationDate": None}
    pages = [fig, *getattr(fig, "more_pages", [])]
    with atomic_path(png_path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    with atomic_path(pdf_path) as tmp:
        if len(pages) == 1:
            fig.savefig(tmp, format="pdf", metadata=meta)
        else:
            with PdfPages(tmp, metadata=meta) as pdf:
                for page in pages:
                    pdf.savefig(page)
    for page in pages:
        plt.close(page)
