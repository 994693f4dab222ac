"""Products of the simulate stage: pool rates, T30 (acceptance vs the document's counts), the
success-vs-sigma figure (with the pools and the document's points at the policies' sigma) and
the sweep-versus-pools agreement check."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from evalsim.products._common import captioned, titled_frame
from evalsim.products.resample.experiment import DOCUMENT_000
from evalsim.sim.scene import FAILURES
from evalsim.stats.proportion.intervals import wilson_interval
from evalsim.stats.two_sample.fisher import fisher_pvalue
from evalsim.stats.two_sample.power import fisher_power

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
    # heavy optional dependencies, only for figures (the tables' jobs do without them)
    import matplotlib.pyplot as plt

    from evalsim.figures import COLUMN_WIDTH_IN, color_for

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
    for name, s in (policies or {}).items():
        ax.axvline(s, color="0.4", lw=0.8, ls=":")
        # Along its own line, on its left, at the foot of the axes: no other policy's line
        # crosses it (each label ends at its own sigma) and the curves are higher up there.
        ax.text(
            s,
            0.03,
            f"{name} ({s:g} mm) ",
            transform=ax.get_xaxis_transform(),
            rotation=90,
            ha="right",
            va="bottom",
            fontsize=7,
            color="0.3",
        )
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
                    f"lesson 25 (document 000), Table A, its 300-trial pools (drawn "
                    f"{MARKER_OFFSET_MM:g} mm left of σ)"
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


def _gap_rows(df: pd.DataFrame, a: str, b: str) -> list[dict]:
    """The strict gap b - a at each scope beside the document's, in SE of the difference.

    The two gaps are independent estimates (ours from the pools, the document's from its own
    trials), each a difference of two independent binomial rates, so the SE of their difference
    is the root of the four binomial variances. ``same_rate`` is ``|z| <= 2`` (issue 22's
    "within 2 SE").
    """
    rows = []
    strict = df[df["criterion"] == "strict"]
    for scope in ("seed 0", "pooled seeds"):
        ra = strict[(strict.policy == a) & (strict.scope == scope)].iloc[0]
        rb = strict[(strict.policy == b) & (strict.scope == scope)].iloc[0]
        var = sum(
            r / n * (1 - r / n) / n
            for r, n in (
                (ra.k, ra.n),
                (rb.k, rb.n),
                (ra.document_k, ra.document_n),
                (rb.document_k, rb.document_n),
            )
        )
        gap, doc_gap = rb.rate - ra.rate, rb.document_rate - ra.document_rate
        z = (gap - doc_gap) / math.sqrt(var) if var > 0 else 0.0
        rows.append(
            {
                "policy": f"{b} - {a}",
                "criterion": "strict gap",
                "scope": scope,
                "seeds": int(ra.seeds),
                "rate": gap,
                "document_rate": doc_gap,
                "z_gap": z,
                "same_rate": abs(z) <= 2.0,
            }
        )
    return rows


def _joint_test(df: pd.DataFrame, document: dict) -> tuple[float, float]:
    """Chi-square test of all four seed-0 counts at once: per policy the 2 x 3 table of
    (strict, loose only, neither) in our seed 0 against the document's (strict implies loose),
    the two policies' statistics summed, 2 degrees of freedom each (Pearson, no correction)."""
    stat = 0.0
    dof = 0
    seed0 = df[(df["scope"] == "seed 0") & df["criterion"].isin(["strict", "loose"])]
    for policy, doc in document.items():
        s = seed0[seed0.policy == policy].set_index("criterion")
        ours = [s.at["strict", "k"], s.at["loose", "k"] - s.at["strict", "k"]]
        ours.append(s.at["strict", "n"] - s.at["loose", "k"])
        theirs = [doc["strict"], doc["loose"] - doc["strict"], doc["n"] - doc["loose"]]
        table = np.array([ours, theirs], dtype=float)
        keep = table.sum(axis=0) > 0
        res = stats.chi2_contingency(table[:, keep], correction=False)
        stat += float(res.statistic)
        dof += int(res.dof)
    return stat, float(stats.chi2.sf(stat, dof)) if dof else 1.0


def acceptance_table(
    pools: pd.DataFrame,
    document: dict,
    alpha: float = 0.05,
    task: str | None = None,
    detection_n: int = 20,
) -> pd.DataFrame:
    """T30: the pools' strict and loose counts beside the document's, with Fisher p; the
    strict gap beside the document's; a joint test; Table E's detection at the pools' rates.

    For each policy of ``document`` (policy -> {"strict": k, "loose": k, "n": n}) and each
    criterion, two rows: the first training seed (seed 0, as the document's Table A) and all
    training seeds pooled. ``fisher_p`` is the two-sided Fisher exact p of "same rate"
    (:func:`evalsim.stats.two_sample.fisher.fisher_pvalue`); ``same_rate`` is ``fisher_p >= alpha``.
    With two policies, two more rows give the strict gap (second minus first policy) at each
    scope beside the document's, ``z_gap`` their difference in SE and ``same_rate`` ``|z| <= 2``.
    The note adds a joint chi-square test of the four seed-0 counts and, as the downstream
    check of Table E, the exact Fisher detection rate at ``detection_n`` trials per policy at
    the pools' seed-0 strict rates beside the document's Table E
    (:data:`evalsim.products.resample.experiment.DOCUMENT_000`; the lesson's 0.113 at n = 20).
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
    counts = pd.DataFrame(rows)
    policies = list(document)
    extra = ""
    if len(policies) == 2:
        a, b = policies
        joint, joint_p = _joint_test(counts, document)
        s0 = counts[(counts.scope == "seed 0") & (counts.criterion == "strict")].set_index("policy")
        detect = float(
            fisher_power(s0.at[a, "rate"], detection_n, s0.at[b, "rate"], detection_n, alpha)
        )
        rows += _gap_rows(counts, a, b)
        stated = DOCUMENT_000["table_e"].get((a, b), {}).get(detection_n)
        document_detection = stated[0] if stated else None
        extra = (
            f" Joint chi-square test of the four seed-0 counts (per policy strict / loose only "
            f"/ neither against the document's): X2 = {joint:.3g}, p = {joint_p:.3g}. Table E's "
            f"check: exact Fisher detection at n = {detection_n} per policy at the pools' "
            f"seed-0 strict rates is {detect:.3f}"
            + (f" (the lesson: {document_detection:g})." if document_detection is not None else ".")
        )
    df = pd.DataFrame(rows)
    for col in ("k", "n", "document_k", "document_n"):  # counts; blank on the gap rows
        df[col] = ["" if pd.isna(v) else int(v) for v in df[col]]
    miss = df.loc[~df["same_rate"]]
    return captioned(
        df,
        "T30: Table A's four counts, the study's pools beside the lesson's",
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
                if r.criterion != "strict gap"
                else f"{r.policy} {r.criterion} {r.scope} {r.rate:.3f} vs {r.document_rate:.3f} "
                f"(z = {r.z_gap:.2f})"
                for r in miss.itertuples()
            )
            + "."
        )
        + extra,
    )


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
