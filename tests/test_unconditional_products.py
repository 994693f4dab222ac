"""T38 and F12 builders: values against the library, computed here, and the figure's curves."""

from __future__ import annotations

import pytest
from naive_fisher import power as naive_fisher_power

from evalsim.products.unconditional import unconditional_power_figure, unconditional_power_table
from evalsim.stats.names import POWER_TESTS, TWO_SAMPLE_TESTS
from evalsim.stats.two_sample.power import n_for_fisher_power
from evalsim.stats.two_sample.unconditional_power import exact_power, n_for_power


def test_t38_rows_and_sizing():
    df = unconditional_power_table([[0.3, 0.8]], [5, 9], alpha=0.05, power_window=3)
    assert list(df.n_per_arm) == [5, 9]
    for _, row in df.iterrows():
        n = int(row.n_per_arm)
        assert row.power_fisher == pytest.approx(naive_fisher_power(0.3, n, 0.8, n), rel=1e-9)
        assert row.power_boschloo == pytest.approx(exact_power("boschloo", 0.3, n, 0.8, n))
        assert row.power_boschloo >= row.power_fisher - 1e-12
    want = {"fisher": n_for_fisher_power(0.3, 0.8, window=3).n}
    want |= {t: n_for_power(t, 0.3, 0.8, window=3).n for t in TWO_SAMPLE_TESTS if t != "fisher"}
    assert [c for c in df.columns if c.startswith("power_")] == [f"power_{t}" for t in want]
    assert {t: int(df[f"n_{t}"].iloc[0]) for t in want} == want
    saved = want["fisher"] - want["boschloo"]
    assert f"Boschloo saves {saved} trials per arm" in df.attrs["note"]


def test_f12_curves():
    fig = unconditional_power_figure(0.3, 0.8, [5, 9], size_n=6, size_rates=[0.2, 0.5])
    ax, bx = fig.axes
    n = len(POWER_TESTS)
    assert len(ax.lines) == n + 1 and len(bx.lines) == n + 1  # each test, the reference line
    y = bx.lines[POWER_TESTS.index("boschloo")].get_ydata()  # Boschloo's size
    assert y[1] == pytest.approx(exact_power("boschloo", 0.5, 6, 0.5, 6))
    # the legend and colors are the registry's
    for axis in (ax, bx):
        drawn = [(line.get_label(), line.get_color()) for line in axis.lines[:n]]
        assert drawn == [
            (TWO_SAMPLE_TESTS[t].short, TWO_SAMPLE_TESTS[t].color) for t in POWER_TESTS
        ]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        TWO_SAMPLE_TESTS[t].short for t in POWER_TESTS
    ]
