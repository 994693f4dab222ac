"""Issue 46, item 13: each changed figure rendered from a small input and read as a reviewer
would, from the artists' geometry (tests/figure_geometry.py): no legend over a data line or
marker, no two text labels overlapping, and every series a legend names drawn with at least
one visible point. Items 7-12's specifics are checked beside (box counts, labels, ranges).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from figure_geometry import check, legend_overlaps, lines_through_texts
from matplotlib.patches import Rectangle

pytestmark = pytest.mark.usefixtures("figure_style")


@pytest.fixture(scope="module")
def designs():
    from evalsim.stats.sequential.designs import unpaired_design
    from evalsim.stats.sequential.paired import paired_design

    return {
        "paired-pocock": paired_design(0.05, 16, "one-sided", "pocock"),
        "unpaired-pocock": unpaired_design(0.05, 16, "one-sided", "pocock"),
    }


def test_the_checks_bite():
    # A legend on a line, two overlapping labels, a legend entry drawn outside the axes.
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0.9, 0.9], label="a line")
    ax.plot([5], [5], "o", label="outside")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    ax.text(0.5, 0.5, "first label")
    ax.text(0.52, 0.5, "second label")
    problems = check(fig)
    assert any("legend covers 'a line'" in p for p in problems)
    assert any("'first label' overlaps 'second label'" in p for p in problems)
    assert any("'outside' has no visible point" in p for p in problems)
    ax.axvline(0.6, label="crossing")
    assert any("crosses 'first label'" in p for p in lines_through_texts(fig))


# ---------------------------------------------------------------- item 7: F07
def test_f07_has_a_box_for_every_pair_of_the_design(designs):
    from evalsim.figures.sequential_sheet import (
        BOXES_PER_ROW,
        ROWS_PER_PAGE,
        bench_sheet,
        tick_pages,
    )

    d = designs["paired-pocock"]
    fig = bench_sheet(d)
    assert not check(fig, ticks=False), check(fig, ticks=False)
    (page,) = fig.more_pages
    boxes = [p for p in page.axes[0].patches if isinstance(p, Rectangle)]
    numbers = sorted(int(t.get_text()) for t in page.axes[0].texts)
    assert len(boxes) == d.n_max and numbers == list(range(1, d.n_max + 1))
    # A 450-pair design: three pages of boxes, none missing, at 9 pt (A4 landscape pages).
    per_page = BOXES_PER_ROW * ROWS_PER_PAGE
    pages = tick_pages(450, "a 450-pair design")
    assert len(pages) == math.ceil(450 / per_page)
    got = [int(t.get_text()) for p in pages for t in p.axes[0].texts]
    assert got == list(range(1, 451))
    assert all(p.get_size_inches()[0] == pytest.approx(11.69) for p in pages)
    assert min(t.get_fontsize() for p in pages for t in p.axes[0].texts) >= 9


def test_f07_pdf_holds_every_page(designs, tmp_path):
    from evalsim.figures import save_figure
    from evalsim.figures.sequential_sheet import bench_sheet

    fig = bench_sheet(designs["unpaired-pocock"])
    save_figure(fig, tmp_path / "s.png", tmp_path / "s.pdf")
    pdf = (tmp_path / "s.pdf").read_bytes()
    assert (
        pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") + pdf.count(b"/Type /Page>") >= 2
    )


# ---------------------------------------------------------------- item 8: F11
def _twins(n_pairs: int, cells: tuple[int, int, int, int]):
    y = np.repeat([1, 1, 0, 0], cells)
    t = np.repeat([1, 0, 1, 0], cells)
    base = pd.DataFrame({"task": "cube30", "policy": "A", "seed": 0, "trial": np.arange(n_pairs)})
    return base.assign(success=t.astype(bool)), base.assign(success=y.astype(bool))


def test_f11_legend_clear_labels_from_the_registry():
    from evalsim.products.simreal import simreal_styles, twin_coverage_figure
    from evalsim.stats.simreal import methods as sr

    assert set(sr.LABELS) == set(sr.METHODS)
    pools, twins = _twins(100, (70, 8, 6, 16))
    fig = twin_coverage_figure(pools, {"g": twins}, "cube30", "A", "g", [10, 20], 60, 0.95)
    assert not check(fig), check(fig)
    texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert texts == [sr.LABELS[m] for m in sr.METHODS]
    assert not any("_" in t for t in texts)  # no code names
    colors = [s["color"] for s in simreal_styles().values()]
    assert "#F0E442" not in colors and len(set(colors)) == len(colors)
    # Clopper-Pearson is drawn on top of the others in panel (a)
    ax_c = fig.axes[0]
    cp = next(ln for ln in ax_c.lines if ln.get_label() == sr.LABELS["clopper_pearson"])
    assert cp.get_zorder() > max(
        ln.get_zorder() for ln in ax_c.lines if ln is not cp and ln.get_label()[0] != "_"
    )


# ---------------------------------------------------------------- item 9: coverage_vs_p
def test_coverage_vs_p_labels_do_not_overlap_and_the_title_counts():
    from evalsim.products.exact import coverage_vs_p_figure
    from evalsim.stats.proportion.intervals import METHODS

    fig = coverage_vs_p_figure([10], 0.95, p_points=41)
    assert not check(fig), check(fig)
    assert f"of {len(METHODS)} nominal" in fig._suptitle.get_text()


# ---------------------------------------------------------------- item 10: F05, F06
def test_f05_f06_every_design_visible_and_named(designs):
    from evalsim.products.sequential.figures import (
        design_label,
        false_win_figure,
        power_ess_figure,
    )

    for fig in (
        false_win_figure(designs, alpha=0.05, n_naive=10, p_points=21),
        power_ess_figure(designs, 0.5, [0.5, 0.7, 0.9], 0.05),
    ):
        assert not check(fig), check(fig)
        shown = " ".join(t.get_text() for ax in fig.axes for t in [ax._left_title])
        shown += " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
        for name, d in designs.items():
            assert name not in shown  # no config slugs
            assert design_label(d).split(",")[0] in shown


# ---------------------------------------------------------------- item 11: F08
def _t34():
    tasks = pd.DataFrame(
        {
            "section": "task",
            "row": ["cube30", "cube25"],
            "rate_a": [0.78, 0.84],
            "a_lower": [0.70, 0.77],
            "a_upper": [0.85, 0.90],
            "rate_b": [0.88, 0.94],
            "b_lower": [0.81, 0.88],
            "b_upper": [0.93, 0.97],
        }
    )
    agg = pd.DataFrame(
        {
            "section": "aggregate",
            "row": ["micro", "macro", "micro, naive"],
            "rate_a": [0.81] * 3,
            "a_lower": [0.75, 0.75, 0.77],
            "a_upper": [0.87, 0.87, 0.85],
            "rate_b": [0.91] * 3,
            "b_lower": [0.86, 0.86, 0.88],
            "b_upper": [0.96, 0.96, 0.94],
        }
    )
    t = pd.concat([tasks, agg], ignore_index=True)
    t["policy_a"], t["policy_b"] = "A", "B"
    return t


def test_f08_zoomed_named_with_sigma_and_bars_visible():
    from evalsim.products.multi import per_task_figure

    fig = per_task_figure(_t34(), 0.95, sigma_mm={"A": 9.0, "B": 6.0})
    assert not check(fig), check(fig)
    (ax,) = fig.axes
    lo, hi = ax.get_ylim()
    assert 0.6 < lo < 0.70 and 0.97 < hi < 1.0  # zoomed to the intervals, not 0-1
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["A (σ = 9 mm)", "B (σ = 6 mm)"]
    for line in ax.get_lines():  # open markers: the bar shows through
        if line.get_marker() in ("o", "s"):
            assert line.get_markerfacecolor() == "none"
    dashed = [c for c in ax.collections if c.get_linestyle()[0][1] is not None]
    assert len(dashed) == 2  # the naive intervals of A and B


# ---------------------------------------------------------------- item 12: F03, sigma, F10
def test_f03_the_exact_bars_have_a_legend_entry():
    from evalsim.products.peeking import peeking_figure, peeking_table

    doc = {"experiments": 100_000, "test_once": 0.028, "every_trial": 0.110, "decimals": 1}
    df = peeking_table(0.7, 12, 0.05, [2], 300, 1, doc)
    fig = peeking_figure(df, alpha=0.05, p=0.7)
    assert not check(fig), check(fig)
    ax_bar = fig.axes[0]
    colors = {tuple(p.get_facecolor()) for p in ax_bar.patches if isinstance(p, Rectangle)}
    assert len(colors) == 1  # one colour, one legend entry ("exact (DP)") for both bars


def test_success_vs_sigma_labels_clear_of_lines_and_no_seed():
    from evalsim.products.simulate import success_vs_sigma_figure

    rng = np.random.default_rng(0)
    rows = [
        {"task": "t", "trial": i, "sigma_mm": s, "success": ok, "success_loose": ok}
        for s in (0.0, 6.0, 9.0, 30.0)
        for i in range(20)
        for ok in [bool(rng.random() < 1 - s / 40)]
    ]
    doc = {
        "A": {"strict": 221, "loose": 259, "n": 300},
        "B": {"strict": 263, "loose": 288, "n": 300},
    }
    fig = success_vs_sigma_figure(pd.DataFrame(rows), policies={"A": 9.0, "B": 6.0}, document=doc)
    assert not check(fig, lines_vs_texts=True), check(fig, lines_vs_texts=True)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert not any("seed 0" in t for t in legend)


def test_f10_plain_words_and_the_warning_axis_fits_its_data():
    from test_drift import ALPHA, CURVE_RATES, GRID, synthetic_curve

    from evalsim.products import drift as D

    curve = synthetic_curve(CURVE_RATES, GRID)
    df = D.drift_table(curve, ["A", "B"], [0.0, 10.0], [20], ALPHA, 300, 7)
    fig = D.drift_figure(df, curve, 20, ALPHA, ["A", "B"])
    assert not check(fig), check(fig)
    texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert any(t.startswith("A against B; order blocked: all of A, then all of B") for t in texts)
    assert not any(t.endswith(", blocked") for t in texts)
    ax_p = fig.axes[3]
    top = max(np.max(np.asarray(ln.get_ydata(), float)) for ln in ax_p.lines)
    assert ax_p.get_ylim()[1] <= max(1.25 * top, 100 * ALPHA * 1.25) + 1e-9
    assert not legend_overlaps(fig)
