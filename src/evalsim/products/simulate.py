"""Products of the simulate stage: pool rates, T30 (acceptance vs the document's counts), the
success-vs-sigma figure (with the pools and the document's points at the policies' sigma) and
the sweep-versus-pools agreement check."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evalsim.figures import COLUMN_WIDTH_IN, color_for
from evalsim.products._common import titled_frame
from evalsim.sim.scene import FAILURES
from evalsim.stats.proportion.intervals import wilson_interval
from evalsim.stats.two_sample.fisher import fisher_pvalue

CRITERIA = (("strict", "success"), ("loose", "success_loose"))


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
    note = (
        f"Wilson {confidence:.0%} intervals. Strict: cube's lowest point >= the strict lift "
        "height with both jaws on it after the hold; loose: both jaws on the cube when the "
        "close phase settled (or strict). Failure types: missed, pushed, dropped, held_low "
        "(config/README.md)."
    )
    return titled_frame(
        rows, "Simulated pools: strict and loose success per task, policy, seed", note
    )


#: Sideways offset (mm of sigma) of the pools' and the lesson's markers from the policy's sigma
#: in :func:`success_vs_sigma_figure`, so that they do not hide each other or the curve's point.
MARKER_OFFSET_MM = 0.35


def success_vs_sigma_figure(
    sweep: pd.DataFrame,
    confidence: float = 0.95,
    policies: dict[str, float] | None = None,
    ax=None,
    pools: pd.DataFrame | None = None,
    document: dict | None = None,
):
    """Strict and loose success rate (Wilson bands) against the aim noise sigma.

    At each policy's sigma the figure also shows the pools on the sweep's trials (every
    seed, with a Wilson interval: an independent noise draw on the same poses, so the curve
    and these points agree within sampling error, :func:`sweep_pool_agreement`) and lesson
    25's counts (document 000, Table A; ``document``: policy -> {"strict", "loose", "n"}), as
    open diamonds. Both belong at the policy's sigma (the dotted line); so that neither hides
    the other or the curve's point there, the pools are drawn :data:`MARKER_OFFSET_MM` right of
    it and the lesson's values as far left, which the legend says.
    """
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
    if pools is not None and policies and len(sweep):
        agree = sweep_pool_agreement(sweep, pools, policies)
        task = str(sweep["task"].iloc[0])
        for j, r in enumerate(agree.itertuples()):
            pl = pools[
                (pools["task"] == task)
                & (pools["policy"] == r.policy)
                & pools["trial"].isin(set(sweep["trial"]))
            ]
            for i, (_, col) in enumerate(CRITERIA):
                k = int(pl[col].sum())
                ci = wilson_interval(k, len(pl), confidence=confidence)
                ax.errorbar(
                    r.sigma_mm + MARKER_OFFSET_MM,
                    k / len(pl),
                    yerr=[[k / len(pl) - float(ci.lower)], [float(ci.upper) - k / len(pl)]],
                    fmt="s",
                    ms=3.5,
                    color=color_for(i),
                    mec="black",
                    mew=0.5,
                    lw=0.8,
                    label=(
                        f"pools, all seeds, same poses (drawn {MARKER_OFFSET_MM:g} mm right of σ)"
                        if j == 0 and i == 0
                        else None
                    ),
                )
    for j, (name, doc) in enumerate((document or {}).items()):
        if name not in (policies or {}):
            continue
        for i, (crit, _) in enumerate(CRITERIA):
            ax.plot(
                float(policies[name]) - MARKER_OFFSET_MM,
                doc[crit] / doc["n"],
                "D",
                ms=4.5,
                mfc="none",
                mec=color_for(i),
                mew=1.2,
                label=(
                    f"lesson 25 (document 000), Table A, seed 0 (drawn {MARKER_OFFSET_MM:g} mm "
                    "left of σ)"
                    if j == 0 and i == 0
                    else None
                ),
            )
    task = sweep["task"].iloc[0] if len(sweep) else ""
    ax.set_xlabel("aim noise σ per axis (mm)")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.02)
    ax.set_title(
        f"Scripted pick ({task}): success vs aim noise\n"
        f"{int(n.min())} trials per σ, same poses, Wilson {confidence:.0%} bands"
    )
    # under the axes: inside, it covers the curves and the markers at the policies' sigma
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False, ncol=2)
    fig.tight_layout()
    return fig


def _first_task(pools: pd.DataFrame, task: str | None) -> str:
    return task if task else str(pools["task"].iloc[0])


def acceptance_table(
    pools: pd.DataFrame, document: dict, alpha: float = 0.05, task: str | None = None
) -> pd.DataFrame:
    """T30: the pools' strict and loose counts beside the document's, with Fisher p.

    For each policy of ``document`` (policy -> {"strict": k, "loose": k, "n": n}) and each
    criterion, two rows: the first training seed (seed 0, as the document's Table A) and all
    training seeds pooled. ``fisher_p`` is the two-sided Fisher exact p of "same rate"
    (:func:`evalsim.stats.two_sample.fisher.fisher_pvalue`); ``same_rate`` is ``fisher_p >= alpha``.
    The rows are on ``task`` (default: the pools' first task, the lesson's cube).
    """
    task = _first_task(pools, task)
    g = pools[pools["task"] == task]
    seed0 = int(g["seed"].min())
    rows = []
    for policy, doc in document.items():
        gp = g[g["policy"] == policy]
        if gp.empty:
            raise ValueError(f"the pools hold no trials of policy {policy!r} on task {task!r}")
        for crit, col in CRITERIA:
            for scope, sub in (("seed 0", gp[gp["seed"] == seed0]), ("pooled seeds", gp)):
                k, n = int(sub[col].sum()), len(sub)
                kd, nd = int(doc[crit]), int(doc["n"])
                p = float(fisher_pvalue(k, n, kd, nd))
                rows.append(
                    {
                        "policy": policy,
                        "criterion": crit,
                        "scope": scope,
                        "seeds": int(sub["seed"].nunique()),
                        "k": k,
                        "n": n,
                        "rate": k / n,
                        "document_k": kd,
                        "document_n": nd,
                        "document_rate": kd / nd,
                        "fisher_p": p,
                        "same_rate": p >= alpha,
                    }
                )
    df = pd.DataFrame(rows)
    miss = df.loc[~df["same_rate"]]
    df.attrs["title"] = "T30: Table A's four counts, the study's pools beside the lesson's"
    df.attrs["note"] = (
        f"Task {task}. Two-sided Fisher exact test of 'same rate' per row; same_rate = "
        f"p >= {alpha:g}. The pools were drawn once after calibration (config/README.md) and "
        "never redrawn. "
        + (
            "Every row passes."
            if miss.empty
            else "Rows that miss: "
            + "; ".join(
                f"{r.policy} {r.criterion} {r.scope} {r.k}/{r.n} vs {r.document_k}/"
                f"{r.document_n} (p = {r.fisher_p:.3g})"
                for r in miss.itertuples()
            )
            + "."
        )
    )
    return df


def sweep_pool_agreement(
    sweep: pd.DataFrame, pools: pd.DataFrame, policies: dict[str, float]
) -> pd.DataFrame:
    """The sigma sweep against the pools at each policy's sigma, on the same poses.

    For each policy whose sigma is one of the sweep's values: the sweep's strict k/n at that
    sigma, and the pools' k/n on the same trial indices (the sweep's task, every seed). The
    two are independent noise draws on shared poses, so they should agree within sampling
    error; ``fisher_p`` is the two-sided Fisher exact p of "same rate" (conservative for
    shared poses, which make the two counts positively correlated).
    """
    rows = []
    task = str(sweep["task"].iloc[0])
    for policy, sigma in policies.items():
        sw = sweep[np.isclose(sweep["sigma_mm"], float(sigma))]
        if sw.empty:
            continue
        trials = set(sw["trial"])
        pl = pools[
            (pools["task"] == task) & (pools["policy"] == policy) & pools["trial"].isin(trials)
        ]
        if pl.empty:
            continue
        ks, ns = int(sw["success"].sum()), len(sw)
        kp, npl = int(pl["success"].sum()), len(pl)
        rows.append(
            {
                "policy": policy,
                "sigma_mm": float(sigma),
                "sweep_k": ks,
                "sweep_n": ns,
                "sweep_rate": ks / ns,
                "pools_k": kp,
                "pools_n": npl,
                "pools_rate": kp / npl,
                "per_seed_k": ", ".join(
                    str(int(v)) for v in pl.groupby("seed")["success"].sum().to_numpy()
                ),
                "fisher_p": float(fisher_pvalue(ks, ns, kp, npl)),
            }
        )
    return pd.DataFrame(rows)
