"""T40 and F14: picking the best checkpoint on the sigma sweep's pools (issue 43).

Document 002: "pick your checkpoint on a held-out split rather than on the test rollouts ...
choosing the checkpoint that scored best on your evaluation set turns the evaluation into
part of training, and the number stops being an estimate of anything."

Model. The sweep's pools from ``sigma_from_mm`` up, in increasing sigma, stand for a ladder of
checkpoints whose true rates are known: each pool's success rate (``outcome``). K checkpoints
are the first K such pools. Each runs n trials; the one with the most successes is picked
(ties by ``tie_rule``). Exact, from :func:`evalsim.stats.selection.fixed_n.
selection_probabilities`: the probability of a correct selection (PCS: the pick has the
highest true rate) and the winner's curse, the expected reported rate of the picked
checkpoint minus its true rate. Beside them, the same quantities from the pools themselves:
``resample_reps`` studies, each drawing n trials with replacement from every pool (so each
pool's rate is exactly its known rate), with their Monte Carlo standard errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalsim.products._common import captioned
from evalsim.seeding import rng_for
from evalsim.stats.selection.fixed_n import TIE_RULES, selection_probabilities

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["checkpoint_pools", "selection_figure", "selection_table"]


def checkpoint_pools(sweep: pd.DataFrame, sigma_from_mm: float, outcome: str = "success"):
    """(sigmas, per-pool 0/1 outcome arrays) of the sweep's pools with sigma >= sigma_from_mm,
    in increasing sigma (all tasks of the sweep pooled within a sigma)."""
    keep = sweep[sweep["sigma_mm"] >= sigma_from_mm].sort_values(["sigma_mm", "trial"])
    sigmas = sorted(keep["sigma_mm"].unique())
    pools = [keep.loc[keep["sigma_mm"] == s, outcome].to_numpy(dtype=bool) for s in sigmas]
    return [float(s) for s in sigmas], pools


def _resampled(pools, k, n, tie_rule, reps, rng):
    """Resampled PCS and curse (with standard errors) for the first k pools at n trials."""
    rates = np.array([p.mean() for p in pools[:k]])
    counts = np.empty((reps, k), dtype=np.int64)
    for j in range(k):
        idx = rng.integers(0, pools[j].size, size=(reps, n))
        counts[:, j] = pools[j][idx].sum(axis=1)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    pick = np.argmax(counts + rng.random((reps, k)), axis=1)  # uniform among the tied
    made = np.ones(reps, dtype=bool) if tie_rule == "random" else n_top == 1
    best = rates == rates.max()
    correct = best[pick] & made
    err = counts[np.arange(reps), pick] / n - rates[pick]
    m = int(made.sum())
    pcs = float(correct.mean())
    bias = float(err[made].mean()) if m else float("nan")
    bias_se = float(err[made].std(ddof=1) / np.sqrt(m)) if m > 1 else float("nan")
    return pcs, float(np.sqrt(pcs * (1 - pcs) / reps)), bias, bias_se


def selection_table(
    sweep: pd.DataFrame,
    sigma_from_mm: float,
    k_values,
    n_values,
    tie_rule: str,
    resample_reps: int,
    study_seed: int,
    outcome: str = "success",
) -> pd.DataFrame:
    """T40: exact PCS and winner's curse against n and K, with the pools' resampled values.

    Parameters
    ----------
    sweep : pandas.DataFrame
        The sigma sweep's pools.
    sigma_from_mm : float
        The checkpoints are the pools from this sigma up (increasing sigma).
    k_values, n_values : sequence of int
        Numbers of checkpoints (K >= 2; those above the pools available are skipped, and
        the note says so) and trials per checkpoint.
    tie_rule : {"random", "no-pick"}
    resample_reps : int
        Resampled studies per (K, n); the stream is ``rng_for(study_seed, "selection", K, n)``.
    study_seed : int
    outcome : str
        Pool column that marks a success.
    """
    sigmas, pools = checkpoint_pools(sweep, sigma_from_mm, outcome)
    rows, skipped = [], []
    for k in k_values:
        if k > len(pools):
            skipped.append(int(k))
            continue
        rates = np.array([p.mean() for p in pools[:k]])
        for n in n_values:
            r = selection_probabilities(rates, int(n), tie_rule)
            best = rates == rates.max()
            pcs = float(np.asarray(r.p_select)[best].sum())  # any top-rate pool is right
            rng = rng_for(study_seed, "selection", int(k), int(n))
            pcs_rs, pcs_se, bias_rs, bias_se = _resampled(
                pools, k, int(n), tie_rule, int(resample_reps), rng
            )
            rows.append(
                {
                    "k_checkpoints": int(k),
                    "n_per_checkpoint": int(n),
                    "sigmas_mm": ", ".join(f"{s:g}" for s in sigmas[:k]),
                    "best_rate": float(rates.max()),
                    "pcs_exact": pcs,
                    "pcs_resampled": pcs_rs,
                    "pcs_resampled_se": pcs_se,
                    "bias_pts_exact": 100 * r.bias,
                    "bias_pts_resampled": 100 * bias_rs,
                    "bias_pts_resampled_se": 100 * bias_se,
                    "reported_minus_best_pts_exact": 100 * r.bias_vs_best,
                }
            )
    df = pd.DataFrame(rows)
    note = (
        f"Checkpoints: the sigma sweep's pools from {sigma_from_mm:g} mm up (K = the first K, "
        f"increasing sigma), true rates = the pools' {outcome} rates. Pick: the most "
        f"successes of n trials each; {TIE_RULES[tie_rule][1]}. pcs: probability that the "
        "pick has the highest true rate; bias_pts: expected reported rate of the pick minus "
        "its true rate (the winner's curse, points); reported_minus_best: minus the best "
        "rate instead. _exact: exact sums (evalsim.stats.selection); _resampled: "
        f"{resample_reps} studies drawing n trials with replacement from each pool, with "
        "Monte Carlo standard errors (_se)."
    )
    if skipped:
        note += f" Skipped K = {', '.join(map(str, skipped))}: only {len(pools)} pools."
    return captioned(df, "T40 Checkpoint selection: PCS and the winner's curse", note)


def selection_figure(table: pd.DataFrame) -> Figure:
    """F14: PCS (left) and the winner's curse (right) against n per checkpoint, one line per
    K (exact), the pools' resampled values as points with ±2 SE bars."""
    import matplotlib.pyplot as plt

    from evalsim.figures import OKABE_ITO, PAGE_WIDTH_IN

    fig, (ax_p, ax_b) = plt.subplots(1, 2, figsize=(PAGE_WIDTH_IN, 2.8))
    for i, (k, g) in enumerate(table.groupby("k_checkpoints", sort=True)):
        g = g.sort_values("n_per_checkpoint")
        c = OKABE_ITO[i % len(OKABE_ITO)]
        x = g["n_per_checkpoint"]
        # per panel: the column, its scale to the axis' unit (percent, points), the legend
        for ax, col, scale, label in (
            (ax_p, "pcs", 100, f"K = {k}, exact"),
            (ax_b, "bias_pts", 1, f"K = {k}"),
        ):
            ax.plot(x, scale * g[f"{col}_exact"], "-", color=c, lw=1.2, label=label)
            ax.errorbar(
                x,
                scale * g[f"{col}_resampled"],
                yerr=2 * scale * g[f"{col}_resampled_se"],
                fmt="o",
                ms=3,
                color=c,
                capsize=2,
                lw=0.8,
            )
    ns = sorted(table["n_per_checkpoint"].unique())
    for ax in (ax_p, ax_b):
        ax.set_xscale("log")
        ax.set_xticks(ns, [str(int(v)) for v in ns])
        ax.minorticks_off()
        ax.set_xlabel("trials per checkpoint n")
        ax.grid(linewidth=0.4, alpha=0.5)
    ax_p.set_ylabel("correct selection (%)")
    ax_p.set_title("P(the pick is the best checkpoint); dots: pools resampled ±2 SE")
    ax_p.legend(frameon=False, fontsize=6)
    ax_b.axhline(0, color="0.4", lw=0.8, ls=":")
    ax_b.set_ylabel("reported − true rate (points)")
    ax_b.set_title("Winner's curse of the pick (lines exact)")
    fig.tight_layout()
    return fig
