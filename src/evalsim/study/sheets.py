"""The paper of a locked study: the grid sheet to tape on the table and the run sheet.

* ``grid_sheet.pdf`` / ``.png``: every start position drawn to scale on an A4 landscape
  page (1:1 when the grid fits the printable area, else scaled down and labelled "scale
  1:s" with a 5 cm bar to check the print), with its name, coloured by block.
* ``run_sheet.pdf``: one row per scheduled trial in run order -- trial id, blind code,
  position, coordinates, block -- with boxes for the outcome and the failure type, for labs
  that record on paper (``evalsim study import`` reads them back).

Both carry the study title, the lock hash and the seed; neither names an arm. The PDFs are
written without creation dates or producer strings, so the same lock gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from pathlib import Path

__all__ = ["GRID_SHEET", "RUN_SHEET", "ROWS_PER_PAGE", "write_sheets", "grid_figure"]

GRID_SHEET = "grid_sheet"
RUN_SHEET = "run_sheet"
#: Run-sheet rows per A4 page.
ROWS_PER_PAGE = 48
_CM_PER_IN = 2.54
#: A4 landscape (cm) and the margin kept free around the drawing.
_PAGE_CM = (29.7, 21.0)
_MARGIN_CM = 1.2
_PDF_META = {"Creator": None, "Producer": None, "CreationDate": None}
# The PDF's 14 core fonts (Helvetica, Courier) need no embedding: small files, drawn fast
# (embedding a TrueType subset costs about a second per file).
_RC = {
    "pdf.use14corefonts": True,
    "savefig.bbox": None,
    "font.family": "sans-serif",
    "font.sans-serif": ["Helvetica", "DejaVu Sans"],
    "font.monospace": ["Courier", "DejaVu Sans Mono"],
    "svg.hashsalt": "evalsim",
}
#: Okabe & Ito (2008) colours (evalsim.figures.OKABE_ITO, without loading seaborn).
_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]


def _positions(schedule: list[dict]) -> list[tuple[str, float, float, str]]:
    seen: dict[tuple[str, str], tuple[str, float, float, str]] = {}
    for t in schedule:
        key = (t["position"], t["block"])
        if key not in seen:
            seen[key] = (t["position"], float(t["x_cm"]), float(t["y_cm"]), t["block"])
    return sorted(seen.values(), key=lambda p: (p[3], p[2], p[1], p[0]))


def grid_figure(lock: dict, colour_by: dict | None = None, title: str | None = None):
    """The grid sheet's figure (A4 landscape, positions to scale).

    Parameters
    ----------
    lock : dict
        The lock document.
    colour_by : dict, optional
        ``{position: (fraction, label)}``: draw each position as a filled disc whose colour
        runs from vermillion (0) to blue (1), with ``label`` under its name (the report's
        outcome map); default: positions marked as crosses, coloured by block.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    pos = _positions(lock["schedule"])
    xs = [p[1] for p in pos]
    ys = [p[2] for p in pos]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    pad = 1.5  # cm around the outermost positions
    span_x, span_y = x1 - x0 + 2 * pad, y1 - y0 + 2 * pad
    room_x = _PAGE_CM[0] - 2 * _MARGIN_CM
    room_y = _PAGE_CM[1] - 2 * _MARGIN_CM - 2.0  # title and footer
    scale = max(1.0, span_x / room_x, span_y / room_y)
    scale = 1.0 if scale == 1.0 else math.ceil(scale * 4) / 4
    w_cm, h_cm = span_x / scale, span_y / scale
    fig = Figure(figsize=(_PAGE_CM[0] / _CM_PER_IN, _PAGE_CM[1] / _CM_PER_IN))
    left = (_PAGE_CM[0] - w_cm) / 2 / _PAGE_CM[0]
    bottom = (_PAGE_CM[1] - h_cm) / 2 / _PAGE_CM[1] - 0.02
    ax = fig.add_axes((left, bottom, w_cm / _PAGE_CM[0], h_cm / _PAGE_CM[1]))
    ax.set_xlim(x0 - pad, x1 + pad)
    ax.set_ylim(y0 - pad, y1 + pad)
    ax.set_aspect("equal")
    blocks = list(dict.fromkeys(p[3] for p in pos))
    n_blocks = len(blocks)
    if colour_by is None:
        many = len(pos) > 100
        for i, block in enumerate(blocks):
            c = _COLOURS[i % len(_COLOURS)]
            mine = [p for p in pos if p[3] == block]
            ax.scatter(
                [p[1] for p in mine],
                [p[2] for p in mine],
                marker="+",
                s=40 if many else 200,
                linewidths=1.2,
                color=c,
            )
            for name, x, y, _ in mine:
                ax.text(x + 0.3, y + 0.3, name, fontsize=4 if many else 8, color=c)
    else:
        from matplotlib import colormaps

        cmap = colormaps["RdYlBu"]
        done = set()
        for name, x, y, _ in pos:
            if name in done:
                continue
            done.add(name)
            frac, text = colour_by.get(name, (None, "no trials"))
            face = "#DDDDDD" if frac is None else cmap(frac)
            ax.plot([x], [y], marker="o", markersize=16, color=face, mec="black", mew=0.5)
            ax.text(x, y + 0.9, name, fontsize=7, ha="center", va="bottom")
            ax.text(x, y - 0.9, text, fontsize=6, ha="center", va="top")
    ax.grid(True, linewidth=0.3, alpha=0.5)
    ax.tick_params(labelsize=6)
    ax.set_xlabel("x (cm)", fontsize=7)
    ax.set_ylabel("y (cm)", fontsize=7)
    head = title or lock.get("title") or "study"
    fig.text(0.5, 0.96, head, ha="center", va="top", fontsize=11)
    scale_text = (
        "scale 1:1 (print at 100%, no fit-to-page)"
        if scale == 1
        else (f"scale 1:{scale:g} (the grid does not fit A4 at 1:1)")
    )
    fig.text(
        0.5,
        0.915,
        f"start positions, {scale_text}; check the 5 cm bar after printing",
        ha="center",
        va="top",
        fontsize=8,
    )
    if colour_by is None and n_blocks > 1:
        for i, b in enumerate(blocks):
            fig.text(
                0.06 + 0.22 * (i % 4),
                0.06 - 0.025 * (i // 4),
                f"+ {b}",
                color=_COLOURS[i % len(_COLOURS)],
                fontsize=8,
            )
    bar_x = 0.06
    bar_w = 5.0 / scale / _PAGE_CM[0]
    fig.add_artist(
        matplotlib.lines.Line2D([bar_x, bar_x + bar_w], [0.11, 0.11], color="black", lw=2)
    )
    fig.text(bar_x, 0.125, "5 cm", fontsize=7)
    fig.text(
        0.94,
        0.03,
        f"lock {lock['study_sha256'][:12]} · seed {lock['seed']}",
        ha="right",
        fontsize=6,
        color="#555555",
    )
    return fig


def _run_pages(lock: dict):
    """Yield one figure per page of the run sheet."""
    from matplotlib.figure import Figure

    rows = lock["schedule"]
    pages = max(1, math.ceil(len(rows) / ROWS_PER_PAGE))
    failure = lock.get("failure_types_text", "")
    head = (
        f"{'trial':<7}{'code':<6}{'position':<10}{'x, y (cm)':<13}{'block':<24}"
        f"{'outcome':<14}{'failure type':<16}"
    )
    fig = Figure(figsize=(21.0 / _CM_PER_IN, 29.7 / _CM_PER_IN))
    for page in range(pages):
        fig.clear()
        chunk = rows[page * ROWS_PER_PAGE : (page + 1) * ROWS_PER_PAGE]
        fig.text(0.06, 0.965, lock.get("title") or "study", fontsize=11, va="top")
        fig.text(
            0.06,
            0.945,
            f"run sheet: run the trials in this order; outcome S (success) or F (failure). "
            f"page {page + 1}/{pages}",
            fontsize=7,
            va="top",
        )
        if failure:
            fig.text(0.06, 0.93, f"failure types: {failure}", fontsize=6.5, va="top")
        lines = [head, ""]
        for t in chunk:
            xy = f"{t['x_cm']:g}, {t['y_cm']:g}"
            block = t["block"] if len(t["block"]) <= 23 else t["block"][:22] + "…"
            lines.append(
                f"{t['trial']:<7}{t['code']:<6}{t['position']:<10}{xy:<13}{block:<24}"
                f"{'[ ]S  [ ]F':<14}{'_' * 14}"
            )
        fig.text(
            0.06,
            0.91,
            "\n".join(lines),
            fontsize=7,
            family="monospace",
            va="top",
            linespacing=1.75,
        )
        fig.text(
            0.94,
            0.02,
            f"lock {lock['study_sha256'][:12]} · seed {lock['seed']}",
            ha="right",
            fontsize=6,
            color="#555555",
        )
        yield fig


def _check_replaceable(path: Path) -> None:
    from evalsim.study.files import check_replaceable

    check_replaceable(path)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_sheets(folder: Path, lock: dict) -> dict[str, str]:
    """Write the grid sheet (PDF, PNG) and the run sheet (PDF) into ``folder``.

    Returns
    -------
    dict of str to str
        ``{file name: sha256}`` of each sheet.
    """

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_pdf import PdfPages

    from evalsim.io import atomic_path

    # Text is measured with the TrueType twins of the core fonts; the font manager's note
    # that it substituted them is not for the user.
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    folder.mkdir(exist_ok=True)
    canon = json.loads(lock["canonical"])
    lock = dict(lock, failure_types_text=", ".join(canon["rubric"]["failure_types"]))
    out = {}
    with matplotlib.rc_context(_RC):
        fig = grid_figure(lock)
        for suffix, meta in (("pdf", _PDF_META), ("png", {"Software": None})):
            path = folder / f"{GRID_SHEET}.{suffix}"
            _check_replaceable(path)
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=suffix, metadata=meta, dpi=150)
            out[path.name] = _sha(path)
        path = folder / f"{RUN_SHEET}.pdf"
        _check_replaceable(path)
        with atomic_path(path) as tmp:
            with PdfPages(tmp, metadata=_PDF_META) as pdf:
                for page in _run_pages(lock):
                    pdf.savefig(page)
        out[path.name] = _sha(path)
    return out
