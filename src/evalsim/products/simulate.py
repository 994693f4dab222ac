"""Products of the simulate stage: pool rates table and the success-vs-sigma figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalsim.figures import COLUMN_WIDTH_IN, color_for
from evalsim.sim.scene import FAILURES
from evalsim.stats.intervals import wilson_interval


def _rates(g: pd.DataFrame, confidence: float) -> dict:
    n = len(g)
    k = int(g["success"].sum())
    kl = int(g["success_loose"].sum())
    ci = wilson_interval(k, n, confidence=confidence)
    cil = wilson_interval(kl, n, confidence=confidence)
    row = {
        "n": n,
        "k_strict": k,
        "rate_strict": k / n,
        "wilson_lo": float(ci.lower),
        "wilson_hi": float(ci.upper),
        "k_loose": kl,
        "rate_loose": kl / n,
        "wilson_loose_lo": float(cil.lower),
        "wilson_loose_hi": float(cil.upper),
    }
    for f in FAILURES[1:]:
        row[f] = int((g["failure"] == f).sum())
    return row


def pool_rates_table(pools: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Strict and loose success (k/n, Wilson) and failure counts per task, policy and seed.

    A row with seed ``"all"`` pools a (task, policy)'s training seeds.
    """
    rows = []
    for (task, policy), g in pools.groupby(["task", "policy"], sort=False):
        for seed, gs in g.groupby("seed"):
            rows.append(
                {
                    "task": task,
                    "policy": policy,
                    "sigma_mm": gs["sigma_mm"].iloc[0],
                    "seed": str(seed),
                    **_rates(gs, confidence),
                }
            )
        rows.append(
            {
                "task": task,
                "policy": policy,
                "sigma_mm": g["sigma_mm"].iloc[0],
                "seed": "all",
                **_rates(g, confidence),
            }
        )
    df = pd.DataFrame(rows)
    df.attrs["title"] = "Simulated pools: strict and loose success per task, policy, seed"
    df.attrs["note"] = (
        f"Wilson {confidence:.0%} intervals. Strict: cube's lowest point >= the strict lift "
        "height with both jaws on it after the hold; loose: both jaws on the cube when the "
        "close phase settled (or strict). Failure types: missed, pushed, dropped "
        "(config/README.md)."
    )
    return df


def success_vs_sigma_figure(
    sweep: pd.DataFrame, confidence: float = 0.95, policies: dict[str, float] | None = None, ax=None
):
    """Strict and loose success rate (Wilson bands) against the aim noise sigma."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN * 1.6, COLUMN_WIDTH_IN * 1.1))
    else:
        fig = ax.figure
    g = sweep.groupby("sigma_mm")
    sig = np.array(sorted(g.groups), dtype=float)
    n = g.size().reindex(sig).to_numpy()
    for i, (col, label) in enumerate(
        [
            ("success", "strict (lifted 4 cm, held 1 s)"),
            ("success_loose", "loose (jaws closed on cube)"),
        ]
    ):
        k = g[col].sum().reindex(sig).to_numpy()
        ci = wilson_interval(k, n, confidence=confidence)
        ax.fill_between(sig, ci.lower, ci.upper, color=color_for(i), alpha=0.25, lw=0)
        ax.plot(sig, k / n, "o-", color=color_for(i), ms=3, label=label)
    for j, (name, s) in enumerate((policies or {}).items()):
        ax.axvline(s, color="0.4", lw=0.8, ls=":")
        ax.text(s, 0.03 + 0.07 * j, f" {name} ({s:g} mm)", fontsize=7, color="0.3")
    task = sweep["task"].iloc[0] if len(sweep) else ""
    ax.set_xlabel("aim noise σ per axis (mm)")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.02)
    ax.set_title(
        f"Scripted pick ({task}): success vs aim noise\n"
        f"{int(n.min())} trials per σ, same poses, Wilson {confidence:.0%} bands"
    )
    ax.legend(loc="upper right", frameon=False)
    fig.tight_layout()
    return fig
