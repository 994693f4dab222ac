"""T22 (two spreads) and T28 (hierarchical bootstrap) from the simulation pools.

T22, document 002 "Two spreads, not one": per task and policy, each training seed's k/n,
the seed-to-seed spread next to the spread trials alone would give, the ANOVA intraclass
correlation, the design effect and the effective number of trials.
T28, document 004 "Hierarchical structure": per policy, macro (cluster-weighted) and micro
(episode-weighted) averages with a two-stage bootstrap interval, next to a naive episode
bootstrap; the width ratio says how much too narrow the naive interval is.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evalsim.products._common import titled_frame
from evalsim.products.settings import Bootstrap
from evalsim.seeding import rng_for
from evalsim.stats.multi.hierarchy import hierarchical_bootstrap, two_spreads
from evalsim.stats.proportion.intervals import wilson_interval

__all__ = ["hierarchical_bootstrap_table", "two_spreads_table"]


def _check_columns(pools: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in pools.columns]
    if missing:
        raise ValueError(f"pools lack column(s) {missing}; they have {sorted(pools.columns)}")


def two_spreads_table(
    pools: pd.DataFrame, confidence: float, outcome: str = "success"
) -> pd.DataFrame:
    """T22: seed-to-seed vs trial-to-trial spread, per task and policy.

    Parameters
    ----------
    pools : pandas.DataFrame
        The trial pools (columns task, policy, seed and ``outcome``).
    confidence : float
        Level of the pooled Wilson interval.
    outcome : str
        Boolean column that marks a success ("success", strict, or "success_loose").

    Returns
    -------
    pandas.DataFrame
        One row per (task, policy).
    """
    _check_columns(pools, ["task", "policy", "seed", outcome])
    rows = []
    for (task, policy), grp in pools.groupby(["task", "policy"], sort=False):
        per_seed = grp.groupby("seed")[outcome].agg(["sum", "size"]).sort_index()
        k = per_seed["sum"].to_numpy(np.int64)
        n = per_seed["size"].to_numpy(np.int64)
        res = two_spreads(k, n)
        ci = wilson_interval(int(k.sum()), int(n.sum()), confidence=confidence)
        rates = k / n
        rows.append(
            {
                "task": task,
                "policy": policy,
                "seeds": len(k),
                "per_seed_k_n": ", ".join(f"{a}/{b}" for a, b in zip(k, n, strict=True)),
                "seed_rate_min": float(rates.min()),
                "seed_rate_max": float(rates.max()),
                "pooled_k": int(k.sum()),
                "pooled_n": int(n.sum()),
                "pooled_rate": res.pooled_rate,
                "pooled_wilson_lower": float(ci.lower),
                "pooled_wilson_upper": float(ci.upper),
                "seed_sd": res.seed_sd,
                "trial_sd": res.trial_sd,
                "seed_to_trial_sd_ratio": res.seed_sd / res.trial_sd
                if res.trial_sd > 0
                else math.nan,
                "between_seed_sd": math.sqrt(max(res.between_var, 0.0)),
                "icc": res.icc,
                "design_effect": res.design_effect,
                "n_effective": res.n_effective,
                "homogeneity_pvalue": res.homogeneity_pvalue,
            }
        )
    note = (
        f"Outcome: {outcome}. seed_sd: standard deviation of the per-seed rates; trial_sd: "
        "what trials alone would give, sqrt(p(1-p)/m) at the pooled rate and m trials per "
        "seed. between_seed_sd, icc: one-way ANOVA (method of moments) on the 0/1 outcomes, "
        "sigma_b^2 = (MSB - MSW)/n0, ICC = sigma_b^2/(sigma_b^2 + MSW) (negative when seeds "
        "agree better than binomial noise; between_seed_sd then shows 0). design_effect = "
        "1 + (m-1) max(ICC, 0); n_effective = N / design_effect. homogeneity_pvalue: "
        "chi-square test that all seeds share one rate. Pooled Wilson interval at "
        f"{confidence:g}, treating all trials as independent."
    )
    return titled_frame(rows, "T22 Two spreads: seed-to-seed vs trial-to-trial variation", note)


def hierarchical_bootstrap_table(
    pools: pd.DataFrame,
    bootstrap: Bootstrap,
    cluster_by: list[list[str]] | list[str],
    outcome: str = "success",
) -> pd.DataFrame:
    """T28: macro and micro averages with hierarchical vs naive bootstrap, per policy.

    Parameters
    ----------
    pools : pandas.DataFrame
        The trial pools.
    bootstrap : Bootstrap
        Replicates of each bootstrap and level of its percentile intervals; the stream of
        policy P and scheme S is ``rng_for(bootstrap.study_seed, "hierarchy", "bootstrap", P,
        *S)``.
    cluster_by : list of list of str (or one list of str)
        Clustering schemes, one row per policy and scheme: each scheme names the columns whose
        combinations are the units resampled first (document 004: ``["task"]``;
        ``["task", "seed"]`` makes each training seed of each task a cluster).
    outcome : str
        Boolean success column.

    Returns
    -------
    pandas.DataFrame
        One row per policy.
    """
    schemes = [cluster_by] if all(isinstance(c, str) for c in cluster_by) else cluster_by
    schemes = [list(sc) for sc in schemes]
    if not schemes or any(not sc for sc in schemes):
        raise ValueError(f"cluster_by must name at least one column per scheme, got {cluster_by!r}")
    _check_columns(pools, ["policy", outcome, *{c for sc in schemes for c in sc}])
    reps, confidence = bootstrap.reps, bootstrap.confidence
    rows = []
    for policy, grp in pools.groupby("policy", sort=False):
        for scheme in schemes:
            labels = grp[scheme].astype(str).agg("|".join, axis=1).to_numpy()
            res = hierarchical_bootstrap(
                grp[outcome].to_numpy(np.float64),
                labels,
                n_reps=reps,
                confidence=confidence,
                seed=rng_for(bootstrap.study_seed, "hierarchy", "bootstrap", str(policy), *scheme),
            )
            rows.append(
                {
                    "policy": policy,
                    "cluster_by": "×".join(scheme),
                    "clusters": res.n_clusters,
                    "episodes": res.n_episodes,
                    "macro": res.macro,
                    "macro_lower": res.macro_lower,
                    "macro_upper": res.macro_upper,
                    "micro": res.micro,
                    "micro_lower": res.micro_lower,
                    "micro_upper": res.micro_upper,
                    "naive_lower": res.naive_lower,
                    "naive_upper": res.naive_upper,
                    "hierarchical_width": res.micro_upper - res.micro_lower,
                    "naive_width": res.naive_upper - res.naive_lower,
                    "width_ratio": res.width_ratio,
                    "se_ratio": res.micro_se / res.naive_se if res.naive_se > 0 else math.nan,
                }
            )
    note = (
        f"Outcome: {outcome}; clusters = combinations of the cluster_by columns. Macro: mean "
        "of cluster rates (cluster-weighted); micro: pooled over episodes (episode-weighted); "
        "the two coincide when every cluster holds the same number of episodes. "
        f"{reps:,} replicates, {confidence:g} percentile intervals. Hierarchical: "
        "resample clusters with replacement, then episodes within each drawn cluster. Naive: "
        "resample episodes ignoring clusters. width_ratio = hierarchical micro width / naive "
        "width (> 1: the naive interval is too narrow by that factor). With few clusters the "
        "percentile interval of the cluster stage is itself rough (g clusters give at most "
        "C(2g-1, g) distinct cluster draws)."
    )
    return titled_frame(
        rows, "T28 Hierarchical bootstrap: clusters, then episodes within clusters", note
    )
