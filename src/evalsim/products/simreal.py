"""Products of the simreal stage (issue 27): sim + real intervals on the SO-101's real twins.

T37 resamples evaluations from the twin pools (:mod:`evalsim.sim.twin`) -- n real trials with
their simulated twins and N further simulated trials -- and puts each method's coverage and
mean width beside the exact values at the pools' rates and correlation
(:func:`evalsim.stats.simreal.operating_characteristics`). F11 draws the exact coverage
against the real rate and the expected width against n.

The resampling world: the (real, twin) pairs of a gap and policy are the law. A resampled
evaluation draws n pairs from them with replacement (a multinomial count of the four
outcome cells) and N simulated trials from the pairs' twin outcomes (a binomial count at
the twins' rate, so the twins and the simulated trials share one simulated law, as the
methods assume). The truth is the pairs' real rate.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalsim.figures import COLUMN_WIDTH_IN, OKABE_ITO
from evalsim.products._common import titled_frame
from evalsim.seeding import rng_for
from evalsim.stats.simreal import methods as sr

__all__ = ["pair_law", "twin_coverage_table", "twin_coverage_figure"]


def pair_law(pools: pd.DataFrame, twins: pd.DataFrame, task: str, policy: str) -> dict:
    """The (real, twin) pairs of one policy: each twin-pool trial beside its pool trial.

    Returns
    -------
    dict
        ``n_pairs``, ``p_real`` (the twins' real rate), ``p_sim`` (their simulated twins'
        rate), ``correlation`` (phi of the pairs; 0 when a rate is 0 or 1) and ``cells``
        (p11, p10, p01, p00: real, twin outcomes).
    """
    key = ["task", "policy", "seed", "trial"]
    real = twins[(twins["task"] == task) & (twins["policy"] == policy)]
    sim = pools[(pools["task"] == task) & (pools["policy"] == policy)]
    pairs = real[key + ["success"]].merge(
        sim[key + ["success"]], on=key, how="left", suffixes=("_real", "_twin"), validate="1:1"
    )
    if pairs["success_twin"].isna().any():
        missing = pairs.loc[pairs["success_twin"].isna(), key].iloc[0].to_dict()
        raise ValueError(f"twin trial {missing} has no pool trial")
    y = pairs["success_real"].to_numpy(dtype=np.int64)
    t = pairs["success_twin"].to_numpy(dtype=np.int64)
    n = y.size
    cells = np.array(
        [np.sum(y & t), np.sum(y & (1 - t)), np.sum((1 - y) & t), np.sum((1 - y) & (1 - t))]
    ) / float(n)
    pr, ps = y.mean(), t.mean()
    sd = math.sqrt(pr * (1 - pr) * ps * (1 - ps))
    rho = 0.0 if sd == 0.0 else (cells[0] - pr * ps) / sd
    return {
        "n_pairs": n,
        "p_real": float(pr),
        "p_sim": float(ps),
        "correlation": float(rho),
        "cells": cells,
    }


def _resampled(law: dict, n: int, big_n: int, resamples: int, confidence: float, rng):
    """Coverage and mean width per method over ``resamples`` resampled evaluations."""
    counts = rng.multinomial(n, law["cells"], size=resamples)
    k_sim = rng.binomial(big_n, law["p_sim"], size=resamples)
    cover = {m: 0 for m in sr.METHODS}
    width = {m: 0.0 for m in sr.METHODS}
    cache: dict[tuple, dict] = {}
    for (n11, n10, n01, n00), ks in zip(counts.tolist(), k_sim.tolist(), strict=True):
        key = (n11, n10, n01, n00, ks)
        if key not in cache:
            data = sr.SimRealData(n11=n11, n10=n10, n01=n01, n00=n00, k_sim=ks, n_sim=big_n)
            cache[key] = {
                m: (r.lower, r.upper)
                for m, r in sr.simreal_intervals(data, confidence=confidence).items()
            }
        for m, (lo, hi) in cache[key].items():
            cover[m] += lo <= law["p_real"] <= hi
            width[m] += hi - lo
    return (
        {m: cover[m] / resamples for m in sr.METHODS},
        {m: width[m] / resamples for m in sr.METHODS},
    )


def twin_coverage_table(
    pools: pd.DataFrame,
    twins: dict[str, pd.DataFrame],
    task: str,
    policies: list[str],
    n_real: list[int],
    n_sim: list[int],
    resamples: int,
    confidence: float,
    study_seed: int,
) -> pd.DataFrame:
    """T37: coverage and width of every sim + real method, resampled from the twin pools,
    beside the exact values at the pools' rates and correlation.

    Parameters
    ----------
    pools : DataFrame
        The simulated pools (the twins' simulated side).
    twins : dict
        Gap name -> its twin pool (the "real" side).
    task, policies : str, list of str
        The twins' task and policies.
    n_real, n_sim : list of int
        Real trials and simulated trials per evaluation (one row block per pair).
    resamples : int
        Resampled evaluations per row.
    confidence : float
        Every interval's confidence.
    study_seed : int
        Root of the resampling draws (key ``("simreal", gap, policy, n, N)``).

    Returns
    -------
    DataFrame
        One row per gap, policy, n_real, N_sim and method.
    """
    rows = []
    for gap, real in twins.items():
        for policy in policies:
            law = pair_law(pools, real, task, policy)
            for n in n_real:
                for big_n in n_sim:
                    oc = sr.operating_characteristics(
                        law["p_real"], law["p_sim"], law["correlation"], n, big_n, confidence
                    )
                    rng = rng_for(study_seed, "simreal", gap, policy, int(n), int(big_n))
                    cov, wid = _resampled(law, n, big_n, resamples, confidence, rng)
                    cp_width = oc.width["clopper_pearson"]
                    for m in sr.METHODS:
                        # the binomial SE of a resampled coverage whose truth is the exact one
                        c = oc.coverage[m]
                        se = math.sqrt(max(c * (1 - c), 1e-12) / resamples)
                        rows.append(
                            {
                                "gap": gap,
                                "policy": policy,
                                "p_real": law["p_real"],
                                "p_sim": law["p_sim"],
                                "correlation": law["correlation"],
                                "n_real": n,
                                "n_sim": big_n,
                                "method": m,
                                "validity": sr.VALIDITY[m],
                                "coverage_exact": oc.coverage[m],
                                "coverage_resampled": cov[m],
                                "coverage_z": (cov[m] - oc.coverage[m]) / se,
                                "width_exact": oc.width[m],
                                "width_resampled": wid[m],
                                "width_vs_cp": oc.width[m] / cp_width,
                            }
                        )
    n_pairs = {g: len(t) for g, t in twins.items()}
    note = (
        f"{confidence:.0%} intervals for the real rate p_R. The real side is a twin pool "
        f"(the SO-101 with a sim-to-real gap; pairs per gap: "
        + ", ".join(f"{g} {k}" for g, k in n_pairs.items())
        + f"); p_real, p_sim and correlation (phi) are the pairs' own. Resampled: {resamples} "
        "evaluations per row, n pairs drawn with replacement and N simulated outcomes at the "
        "pairs' twin rate; coverage_z = (resampled - exact) / the binomial SE at the exact "
        "coverage. Exact: "
        "evalsim.stats.simreal.operating_characteristics at the same law. width_vs_cp: exact "
        "expected width over real-only Clopper-Pearson's. Validity: finite-sample methods "
        "cover >= the confidence at every law; asymptotic ones need not."
    )
    if not rows:
        note = "No simreal gaps are configured (simreal.gaps): no twins, no rows."
    return titled_frame(rows, "Sim + real intervals on the SO-101's real twins", note)


def twin_coverage_figure(
    pools: pd.DataFrame,
    twins: dict[str, pd.DataFrame],
    task: str,
    policy: str,
    gap: str | None,
    n_real: list[int],
    n_sim: int,
    confidence: float,
):
    """F11: exact coverage against the real rate (at the smallest n_real above 10, or the
    smallest) and expected width against n_real, per method, at the correlation and sim bias
    of one gap's pairs."""
    fig, (ax_c, ax_w) = plt.subplots(1, 2, figsize=(2 * COLUMN_WIDTH_IN, 0.95 * COLUMN_WIDTH_IN))
    if not twins:
        fig.text(0.5, 0.5, "no simreal gaps configured", ha="center", va="center")
        ax_c.set_axis_off()
        ax_w.set_axis_off()
        return fig
    gap = gap or next(iter(twins))
    law = pair_law(pools, twins[gap], task, policy)
    rho, bias = law["correlation"], law["p_sim"] - law["p_real"]
    n_cov = min([n for n in n_real if n >= 20] or [min(n_real)])
    grid = np.round(np.arange(0.5, 0.991, 0.01), 10)
    style = simreal_styles()
    cov = {m: [] for m in sr.METHODS}
    shown = []
    for pr in grid:
        ps = min(max(pr + bias, 0.0), 1.0)
        try:
            oc = sr.operating_characteristics(float(pr), float(ps), rho, n_cov, n_sim, confidence)
        except ValueError:  # this correlation is impossible at these rates
            continue
        shown.append(pr)
        for m in sr.METHODS:
            cov[m].append(oc.coverage[m])
    for i, m in enumerate(sr.METHODS):
        # Staggered markers: a line drawn under another still shows its own marks.
        every = (i % 4, 4) if len(shown) > 8 else 1
        ax_c.plot(shown, cov[m], markevery=every, label=sr.LABELS[m], **style[m])
    ax_c.axhline(confidence, color="0.3", lw=0.8, ls=":")
    ax_c.set_xlabel("real success rate $p_R$ (where this correlation is possible)")
    ax_c.set_ylabel("exact coverage")
    ax_c.set_title(f"(a) n = {n_cov} real, N = {n_sim} sim", loc="left")
    ax_c.set_ylim(max(0.0, min(min(v) for v in cov.values() if v) - 0.02), 1.0)
    widths = {m: [] for m in sr.METHODS}
    for n in n_real:
        oc = sr.operating_characteristics(law["p_real"], law["p_sim"], rho, n, n_sim, confidence)
        for m in sr.METHODS:
            widths[m].append(oc.width[m])
    for m in sr.METHODS:
        ax_w.plot(n_real, widths[m], label=sr.LABELS[m], **style[m])
    ax_w.set_xscale("log")
    ax_w.set_xticks(n_real, [str(n) for n in n_real])
    ax_w.minorticks_off()
    ax_w.set_xlabel("real trials n")
    ax_w.set_ylabel("expected width")
    ax_w.set_title(f"(b) at $p_R$ = {law['p_real']:.3f}", loc="left")
    fig.suptitle(
        f"Gap '{gap}', policy {policy}: correlation {rho:.2f}, sim bias {bias:+.3f} "
        "(solid: finite-sample, dashed: asymptotic)",
        fontsize="small",
    )
    # One legend for both panels, below them: it covers no line of either.
    handles, labels = ax_c.get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="lower center", ncol=4, fontsize="x-small", frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )  # fmt: skip
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def simreal_styles() -> dict[str, dict]:
    """Line style of each sim + real method: colour, dash (validity), marker, width.

    Okabe-Ito colours without the yellow (too pale on white) and with a neutral grey in its
    place; a marker per method so overlapping lines stay distinguishable; Clopper-Pearson, the
    baseline most often hidden under the others, drawn thickest and on top.
    """
    colors = [c for c in OKABE_ITO if c != "#F0E442"] + ["0.55"]
    markers = ["o", "s", "^", "v", "D", "P", "X", "*"]
    out = {}
    for i, m in enumerate(sr.METHODS):
        out[m] = {
            "color": colors[i % len(colors)],
            "ls": "-" if sr.VALIDITY[m] == "finite-sample" else "--",
            "marker": markers[i % len(markers)],
            "ms": 3.5,
            "lw": 2.2 if m == "clopper_pearson" else 1.1,
            "zorder": 4 if m == "clopper_pearson" else 2,
        }
    return out
