"""What a reviewer checks on a rendered figure, read from the artists' geometry (issue 46).

Every check draws the figure first and works in display coordinates (pixels), so it sees
what the PNG shows: legends against the data drawn under them, text boxes against each other
and against lines, and whether each series a legend names has a point inside its axes.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import Container
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

#: Points interpolated on every line segment (a legend may sit between two vertices).
DENSITY = 24


def _renderer(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _dense(xy: np.ndarray) -> np.ndarray:
    xy = xy[np.all(np.isfinite(xy), axis=1)]
    if len(xy) < 2:
        return xy
    t = np.linspace(0.0, 1.0, DENSITY)[:, None, None]
    return (xy[:-1] + t * (xy[1:] - xy[:-1])).reshape(-1, 2)


def _line_points(line: Line2D) -> np.ndarray:
    x = np.asarray(line.get_xdata(), dtype=float)
    y = np.asarray(line.get_ydata(), dtype=float)
    if x.size == 0:
        return np.empty((0, 2))
    pts = line.get_transform().transform(np.column_stack(np.broadcast_arrays(x, y)))
    return _dense(pts) if line.get_linestyle() not in ("None", "", " ") else pts


def data_points(ax) -> list[tuple[str, np.ndarray]]:
    """(artist label, display points) of every data artist of ``ax``, clipped to the axes."""
    box = ax.get_window_extent()
    out = []
    for line in ax.get_lines():
        if line.get_visible():
            out.append((line.get_label(), _line_points(line)))
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, LineCollection):  # error bars
            segs = [
                _dense(coll.get_transform().transform(np.asarray(s, float)))
                for s in coll.get_segments()
            ]
            if segs:
                out.append((coll.get_label(), np.concatenate(segs)))
        elif isinstance(coll, PathCollection):  # scatter
            offs = np.asarray(coll.get_offsets(), float)
            if offs.size:
                out.append((coll.get_label(), coll.get_offset_transform().transform(offs)))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible():
            corners = patch.get_verts()
            out.append((patch.get_label(), _dense(np.asarray(corners, float))))
    inside = []
    for label, pts in out:
        keep = (
            (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0)
            & (pts[:, 1] <= box.y1)
        )  # fmt: skip
        inside.append((label, pts[keep]))
    return inside


def legends(fig) -> list:
    return [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)


def legend_overlaps(fig) -> list[str]:
    """Data points under a legend: '<legend entry or axes> covers <artist>' per hit."""
    renderer = _renderer(fig)
    hits = []
    for lg in legends(fig):
        box = lg.get_window_extent(renderer).shrunk(0.98, 0.98)
        for ax in fig.axes:
            for label, pts in data_points(ax):
                if pts.size and np.any(
                    (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                    & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
                ):  # fmt: skip
                    hits.append(f"legend covers {label!r} in {ax.get_title() or 'an axes'}")
    return hits


def texts(fig) -> list[Text]:
    """Every visible, non-empty text of the figure outside legends and tick labels (titles,
    axis labels, notes), each once."""
    found = list(fig.texts)
    if fig._suptitle is not None:
        found.append(fig._suptitle)
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        found += list(ax.texts)
    unique = list({id(t): t for t in found}.values())
    return [t for t in unique if t.get_visible() and t.get_text().strip()]


def _overlapping(items) -> list[str]:
    hits = []
    for i, (a, ba) in enumerate(items):
        for b, bb in items[i + 1 :]:
            if ba.overlaps(bb):
                hits.append(f"{a.get_text()!r} overlaps {b.get_text()!r}")
    return hits


def text_overlaps(fig, ticks: bool = True) -> list[str]:
    """Pairs of text labels whose boxes overlap (by more than a pixel); tick labels are
    compared with the other tick labels of their own axis."""
    renderer = _renderer(fig)

    def boxed(ts):
        return [(t, t.get_window_extent(renderer).shrunk(0.97, 0.9)) for t in ts]

    hits = _overlapping(boxed(texts(fig)))
    if ticks:
        for ax in fig.axes:
            for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
                shown = [t for t in labels if t.get_visible() and t.get_text().strip()]
                hits += _overlapping(boxed(shown))
    return hits


def lines_through_texts(fig) -> list[str]:
    """Texts placed in an axes (``ax.text``) that a line of that axes crosses."""
    renderer = _renderer(fig)
    hits = []
    for ax in fig.axes:
        for t in ax.texts:
            box = t.get_window_extent(renderer).shrunk(0.9, 0.8)
            for line in ax.get_lines():
                pts = _line_points(line)
                if pts.size and np.any(
                    (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                    & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
                ):  # fmt: skip
                    hits.append(f"{line.get_label()!r} crosses {t.get_text()!r}")
    return hits


def _named_artists(fig, label: str) -> list:
    found = []
    for ax in fig.axes:
        for art in [*ax.get_lines(), *ax.collections, *ax.patches, *ax.containers]:
            if art.get_label() == label:
                found.append((ax, art))
    return found


def _artist_points(ax, art) -> np.ndarray:
    if isinstance(art, Container):
        parts = [c for c in art.get_children() if c is not None]
        pts = [_artist_points(ax, p) for p in parts]
        pts = [p for p in pts if p.size]
        return np.concatenate(pts) if pts else np.empty((0, 2))
    if isinstance(art, Line2D):
        return _line_points(art)
    if isinstance(art, LineCollection):
        segs = [art.get_transform().transform(np.asarray(s, float)) for s in art.get_segments()]
        return np.concatenate(segs) if segs else np.empty((0, 2))
    if isinstance(art, PathCollection):
        offs = np.asarray(art.get_offsets(), float)
        return art.get_offset_transform().transform(offs) if offs.size else np.empty((0, 2))
    if isinstance(art, Rectangle):
        return np.asarray(art.get_verts(), float)
    return np.asarray(art.get_window_extent().get_points(), float)  # e.g. a filled band


def invisible_series(fig) -> list[str]:
    """Legend entries with no artist of that name drawn inside its axes."""
    _renderer(fig)
    missing = []
    for lg in legends(fig):
        for text in lg.get_texts():
            label = text.get_text()
            ok = False
            for ax, art in _named_artists(fig, label):
                box = ax.get_window_extent()
                pts = _artist_points(ax, art)
                pts = pts[np.all(np.isfinite(pts), axis=1)] if pts.size else pts
                if pts.size and np.any(
                    (pts[:, 0] >= box.x0 - 1) & (pts[:, 0] <= box.x1 + 1)
                    & (pts[:, 1] >= box.y0 - 1) & (pts[:, 1] <= box.y1 + 1)
                ):  # fmt: skip
                    ok = True
                    break
            if not ok:
                missing.append(label)
    return missing


def check(fig, ticks: bool = True, lines_vs_texts: bool = False) -> list[str]:
    """Every problem the three checks find (empty: the figure passes)."""
    problems = legend_overlaps(fig) + text_overlaps(fig, ticks)
    problems += [f"legend entry {s!r} has no visible point" for s in invisible_series(fig)]
    if lines_vs_texts:
        problems += lines_through_texts(fig)
    return problems
