"""T38 and F12: exact power of the unpaired two-sample tests (issue 28).

The tests, their labels, colors and computations are the entries of
:data:`evalsim.stats.names.TWO_SAMPLE_TESTS`. T38: exact power of each two-sided test at the
lesson's rates (0.737 vs 0.877) and at 0.80 vs 0.90 on a grid of n per arm, each test's n for
the target power (the saw-tooth rule of
:func:`evalsim.stats.two_sample.power.n_for_fisher_power`) and the trials Boschloo saves over
Fisher.
F12: the power curves, and each test's exact size at the null against the common rate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalsim.products._common import captioned
from evalsim.stats.names import POWER_TESTS, TWO_SAMPLE_TESTS

__all__ = ["unconditional_power_table", "unconditional_power_figure"]


def _spoken(words: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def unconditional_power_table(
    rate_pairs: list[list[float]],
    n_values: list[int],
    alpha: float = 0.05,
    target_power: float = 0.8,
    power_window: int = 20,
) -> pd.DataFrame:
    """T38: one row per (rate pair, n): exact power of each test; then each test's n."""
    rows = []
    sizing = {}
    for p_a, p_b in rate_pairs:
        for test in POWER_TESTS:
            sizing[(p_a, p_b, test)] = TWO_SAMPLE_TESTS[test].n_for_power(
                p_a, p_b, target_power, alpha, window=power_window
            )
        for n in n_values:
            row = {"p_a": p_a, "p_b": p_b, "n_per_arm": int(n)}
            for test in POWER_TESTS:
                row[f"power_{test}"] = TWO_SAMPLE_TESTS[test].power(p_a, int(n), p_b, int(n), alpha)
            rows.append(row)
    df = pd.DataFrame(rows)
    heads = []
    for p_a, p_b in rate_pairs:
        ns = {t: sizing[(p_a, p_b, t)].n for t in POWER_TESTS}
        heads.append(
            f"{p_a} vs {p_b}: n for {target_power:.0%} power = "
            + ", ".join(f"{t} {ns[t]}" for t in POWER_TESTS)
            + f" per arm; Boschloo saves {ns['fisher'] - ns['boschloo']} trials per arm "
            f"({2 * (ns['fisher'] - ns['boschloo'])} in all) over Fisher"
        )
        for t in POWER_TESTS:
            df.loc[(df.p_a == p_a) & (df.p_b == p_b), f"n_{t}"] = ns[t]
    for t in POWER_TESTS:
        df[f"n_{t}"] = df[f"n_{t}"].astype("int64")
    whose = _spoken([f"{TWO_SAMPLE_TESTS[t].short}'s" for t in POWER_TESTS])
    return captioned(
        df,
        f"T38 - Exact power of {whose} two-sided tests (alpha = {alpha:g}), n trials per arm",
        "; ".join(heads) + f". n: the first n from which the power stays >= {target_power:g} for "
        f"{power_window} more n. Power sums the binomial probabilities of the rejection "
        "region (p < alpha); Boschloo's and Barnard's regions come from certified suprema "
        "over the nuisance rate (evalsim.stats.two_sample.unconditional).",
    )


def unconditional_power_figure(
    p_a: float,
    p_b: float,
    n_values: list[int],
    size_n: int,
    size_rates: list[float],
    alpha: float = 0.05,
):
    """F12: power against n per arm (left) and size at the null against p (right)."""
    import matplotlib.pyplot as plt  # heavy optional dependency, only for figures

    from evalsim.figures import PAGE_WIDTH_IN

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 2.8))
    ns = np.asarray(n_values, dtype=int)
    for test in POWER_TESTS:
        entry = TWO_SAMPLE_TESTS[test]
        pw = [entry.power(p_a, int(n), p_b, int(n), alpha) for n in ns]
        ax.plot(ns, pw, color=entry.color, lw=1.0, label=entry.short)
        size = [entry.power(p, size_n, p, size_n, alpha) for p in size_rates]
        bx.plot(size_rates, size, color=entry.color, lw=1.0, label=entry.short)
    ax.axhline(0.8, color="0.5", lw=0.6, ls=":")
    ax.set_xlabel("trials per arm")
    ax.set_ylabel("exact power")
    ax.set_title(f"{p_a} vs {p_b}, alpha = {alpha:g}", fontsize=9)
    ax.legend(fontsize=7, frameon=False)
    bx.axhline(alpha, color="0.5", lw=0.6, ls=":")
    bx.set_xlabel("common success rate p")
    bx.set_ylabel("exact size")
    bx.set_title(f"size at the null, n = {size_n} per arm", fontsize=9)
    fig.tight_layout()
    return fig
