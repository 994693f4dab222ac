"""The figures as a reader sees them (issue 23, item 8): legends, panels, markers and messages.

Each test draws a figure from a small input and checks what it shows -- legend texts, the
number of panels, where the markers sit, what is drawn above what -- and that the drawn values
are the input's (presentation changed, not data).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.usefixtures("figure_style")


def _legend_texts(fig) -> list[str]:
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    return [t.get_text() for lg in legends for t in lg.get_texts()]


# ----------------------------------------------------------------------- coverage_vs_p


def test_coverage_vs_p_is_small_multiples_one_method_per_row():
    from evalsim.products.exact import coverage_vs_p_figure
    from evalsim.stats.proportion.coverage import coverage_curve
    from evalsim.stats.proportion.intervals import METHODS, REGISTRY

    fig = coverage_vs_p_figure([10, 20, 50], 0.95, p_points=41)
    axes = np.array(fig.axes).reshape(len(METHODS), 3)
    assert axes.size == 3 * len(METHODS)
    assert [ax.get_title(loc="right") for ax in axes[0]] == ["n = 10", "n = 20", "n = 50"]
    assert [ax.get_title(loc="left") for ax in axes[:, 0]] == [REGISTRY[m].label for m in METHODS]
    # each row's label in its method's color, distinct across methods
    assert [ax._left_title.get_color() for ax in axes[:, 0]] == [REGISTRY[m].color for m in METHODS]
    assert f"of {len(METHODS)} nominal" in fig._suptitle.get_text()  # counted, not typed
    grid = np.linspace(0.01, 0.99, 41)
    for i, method in enumerate(METHODS):
        for j, n in enumerate([10, 20, 50]):
            lines = axes[i, j].get_lines()
            curves = [ln for ln in lines if len(ln.get_xdata()) == len(grid)]
            assert len(curves) == 1, "one curve per panel"
            expected = coverage_curve(method, n, grid, confidence=0.95)
            np.testing.assert_allclose(curves[0].get_ydata(), expected)  # same data
    # Wald falls below the axis: its panels say it is clipped
    wald = axes[list(METHODS).index("wald"), 0]
    assert any("clipped" in t.get_text() for t in wald.texts)


# ----------------------------------------------------------------------- F09


def _ranking(names, letters):
    m = np.linspace(0.95, 0.4, len(names))
    return pd.DataFrame(
        {
            "rank": range(1, len(names) + 1),
            "policy": names,
            "letters": letters,
            "macro": m,
            "macro_lower": m - 0.05,
            "macro_upper": np.minimum(m + 0.05, 1.0),
            "simultaneous_lower": m - 0.08,
            "simultaneous_upper": np.minimum(m + 0.08, 1.0),
        }
    )


def test_f09_with_two_policies_says_so_instead_of_ranking_sigma_values():
    from evalsim.products.multi import ranking_figure

    sweep_ranked = _ranking(["0 mm", "9 mm", "30 mm"], ["a", "a", "b"])  # T35 under "auto"
    fig = ranking_figure(sweep_ranked, policies=["A", "B"], source="auto")
    (ax,) = fig.axes
    assert not ax.axison and not ax.lines and not ax.collections
    (text,) = [t.get_text() for t in ax.texts]
    assert "No ranking" in text and "2 policies (A, B)" in text and "at least 3" in text
    assert "0 mm" not in text and "not policies" in text


def test_f09_draws_sigma_values_only_when_asked_and_labels_them():
    from evalsim.products.multi import ranking_figure

    t = _ranking(["0 mm", "9 mm", "30 mm"], ["a", "a", "b"])
    fig = ranking_figure(t, policies=["A", "B"], source="sweep")
    assert "σ" in fig.axes[0].get_title() and "not policies" in fig.axes[0].get_ylabel()


def test_f09_letters_stand_in_their_own_column_clear_of_points_and_legend():
    from evalsim.products.multi import ranking_figure

    t = _ranking(["C", "A", "B", "D"], ["a", "ab", "b", "c"])
    t.loc[0, ["macro", "macro_upper", "simultaneous_upper"]] = 1.0  # a point at the edge
    fig = ranking_figure(t, policies=["A", "B", "C", "D"])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax, twin = fig.axes
    letters = [lab for lab in twin.get_yticklabels() if lab.get_text()]
    # each policy's letters on its row (the best at the top)
    rows = {lab.get_text(): y for lab, y in zip(ax.get_yticklabels(), ax.get_yticks(), strict=True)}
    lets = {y: lab.get_text() for lab, y in zip(letters, twin.get_yticks(), strict=True)}
    assert {p: lets[rows[p]] for p in t["policy"]} == dict(
        zip(t["policy"], t["letters"], strict=True)
    )
    assert max(rows, key=rows.get) == "C"
    right = ax.get_window_extent(renderer).x1
    assert all(lab.get_window_extent(renderer).x0 > right for lab in letters)
    # no drawn point reaches the letters' column
    points = ax.transData.transform(np.c_[t["simultaneous_upper"], np.arange(len(t))])
    left_of_letters = min(lab.get_window_extent(renderer).x0 for lab in letters)
    assert points[:, 0].max() < left_of_letters
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.y1 < ax.get_window_extent(renderer).y0  # under the axes
    np.testing.assert_allclose(sorted(ax.lines[0].get_xdata()), sorted(t["macro"]))


# ----------------------------------------------------------------------- F05 / F06


@pytest.fixture(scope="module")
def designs():
    from evalsim.stats.sequential.designs import unpaired_design
    from evalsim.stats.sequential.paired import paired_design

    return {
        "paired-pocock": paired_design(0.05, 16, "one-sided", "pocock"),
        "unpaired-pocock": unpaired_design(0.05, 16, "one-sided", "pocock"),
    }


def test_f05_is_one_panel_per_design_named_by_the_registry(designs):
    from evalsim.products.sequential.figures import design_label, false_win_figure, type1_curve

    fig = false_win_figure(designs, alpha=0.05, n_naive=10, p_points=21)
    assert len(fig.axes) == len(designs)  # small multiples: no design hides another
    texts = _legend_texts(fig)
    assert texts[0] == "α = 0.05 (the target)"
    assert min(t.get_fontsize() for t in fig.legends[0].get_texts()) >= 7  # the house size
    for ax, (name, d) in zip(fig.axes, designs.items(), strict=True):
        title = ax.get_title(loc="left").replace("\n", " ")
        assert design_label(d).replace("\n", " ") in title and name not in title
        assert f"certified max {d.certificate.upper:.5f}" in title
        by_label = {ln.get_label(): ln for ln in ax.get_lines()}
        alpha_line = by_label["α = 0.05 (the target)"]
        curve = by_label["the design's false-win rate (exact)"]
        assert curve.get_zorder() > alpha_line.get_zorder()
        assert curve.get_linewidth() < alpha_line.get_linewidth()  # the band shows around it
        np.testing.assert_allclose(curve.get_ydata(), type1_curve(d, np.linspace(0, 1, 21)))


def test_f06_power_per_design_and_expected_trials_together(designs):
    from evalsim.products.sequential.figures import design_label, power_ess_figure

    fig = power_ess_figure(designs, 0.5, [0.5, 0.7, 0.9], 0.05)
    *power_axes, ax_e = fig.axes
    assert len(power_axes) == len(designs)
    labels = [design_label(d) for d in designs.values()]
    for ax, label in zip(power_axes, labels, strict=True):
        refs = [ln for ln in ax.get_lines() if ln.get_label().startswith("fixed n =")]
        assert len(refs) == 1 and refs[0].get_color() == "0.35"
        assert [ln.get_label() for ln in ax.get_lines() if ln not in refs] == [label]
    design_lines = [ln for ln in ax_e.get_lines() if ln.get_label() in labels]
    styles = {(ln.get_color(), str(ln.get_linestyle()), ln.get_marker()) for ln in design_lines}
    assert len(design_lines) == 2 and len(styles) == 2
    assert len({ln.get_marker() for ln in design_lines}) == 2  # not by color alone
    assert set(_legend_texts(fig)) == set(labels)


# ----------------------------------------------------------------------- success_vs_sigma


def _sweep():
    rng = np.random.default_rng(0)
    rows = []
    for s in (0.0, 9.0, 30.0):
        for trial in range(20):
            ok = bool(rng.random() < 1 - s / 40)
            rows.append(
                {"task": "t", "trial": trial, "sigma_mm": s, "success": ok, "success_loose": ok}
            )
    return pd.DataFrame(rows)


def test_success_vs_sigma_names_lesson_25_and_explains_its_offsets():
    from evalsim.products.simulate import MARKER_OFFSET_MM, success_vs_sigma_figure

    doc = {"A": {"strict": 221, "loose": 259, "n": 300}}
    fig = success_vs_sigma_figure(_sweep(), policies={"A": 9.0}, document=doc)
    texts = _legend_texts(fig)
    lesson = [t for t in texts if t.startswith("lesson 25 (document 000)")]
    assert lesson and f"drawn {MARKER_OFFSET_MM:g} mm left of σ" in lesson[0]
    assert not any("lesson 16" in t for t in texts)
    diamonds = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "D"]
    assert sorted(float(ln.get_ydata()[0]) for ln in diamonds) == [221 / 300, 259 / 300]
    assert all(float(ln.get_xdata()[0]) == 9.0 - MARKER_OFFSET_MM for ln in diamonds)


# ----------------------------------------------------------------------- F01


def _table_b():
    from evalsim.products.resample.experiment import DOCUMENT_000

    rows = []
    for n, quoted in DOCUMENT_000["table_b"]["A"].items():
        rows.append(
            {
                "policy": "A",
                "pool_rate": 0.725,
                "n": n,
                "evaluations": 400,
                "mean_wilson_width": quoted[0] + 0.002,
                "wilson_coverage": 0.95,
                "wald_coverage": 0.9,
                "doc_mean_wilson_width": quoted[0],
                "doc_wilson_coverage": quoted[1],
                "doc_wald_coverage": quoted[2],
            }
        )
    return pd.DataFrame(rows)


def test_f01_is_at_the_pool_rate_with_the_lessons_values_as_open_diamonds():
    from evalsim.products.resample.figures import figure_b

    t = _table_b()
    fig = figure_b(t, "A")
    ax_w, ax_c = fig.axes
    assert "p = 0.725" in ax_w.get_title() and "p = 0.725" in ax_c.get_title()
    assert "lesson 25, Table B (its pool: 221/300)" in [
        x.get_text() for x in ax_w.get_legend().get_texts()
    ]
    assert "lesson 25, Table B" in [x.get_text() for x in ax_c.get_legend().get_texts()]
    diamonds_w = [ln for ln in ax_w.get_lines() if ln.get_marker() == "D"]
    (w,) = diamonds_w
    assert w.get_markerfacecolor() == "none"
    np.testing.assert_allclose(w.get_ydata(), t["doc_mean_wilson_width"])
    np.testing.assert_allclose(w.get_xdata(), t["n"])
    drawn = [ln for ln in ax_c.get_lines() if ln.get_marker() == "D" and len(ln.get_xdata())]
    got = sorted(tuple(ln.get_ydata()) for ln in drawn)
    want = sorted([tuple(t["doc_wilson_coverage"]), tuple(t["doc_wald_coverage"])])
    np.testing.assert_allclose(got, want)
