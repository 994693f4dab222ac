"""Training seeds and checkpoints as clusters, for ``summarize`` and ``compare``.

Issue 24, item 20: a lab log often has several training seeds per policy; a checkpoint can
swing 10+ points between seeds, and episodes of one seed move together. With a ``seed``
column (used when some policy has two or more seeds) or ``--cluster COLUMN``:

* ``summarize`` adds, per policy (and task, when the log has several): each seed's k/n,
  the seed-to-seed and trial-to-trial spreads, the design effect and effective n
  (:func:`evalsim.stats.multi.hierarchy.two_spreads`, as T22), and two cluster-aware intervals:
  Student's t over the seed rates and the hierarchical bootstrap (seeds, then episodes, as
  T28; from the counts, :func:`evalsim.stats.multi.seeds.cluster_interval`);
* ``compare`` adds the test with seeds as the unit of replication: Welch's t-test on the
  seed rates and a cluster bootstrap of the pooled difference
  (:func:`evalsim.stats.multi.seeds.seed_comparison`), and says when seed spread dominates
  trial spread.

"Seed spread dominates" when the between-seed variance of the true rates (ANOVA, method of
moments) exceeds the binomial variance of one seed's measured rate, ``p (1 - p) / m``: then
more episodes per seed cannot buy precision that only more seeds can.

This module is a log hook (:data:`evalsim.cli._log_hooks.LOG_HOOKS`);
the subcommands keep the cluster column when they read the log (:func:`cluster_columns`).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

import numpy as np

from evalsim.cli._common import BadInput, Report, _ci_pct, _p, column_flag
from evalsim.seeding import rng_for

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BOOTSTRAP_REPS", "add_cluster_argument", "apply_hook", "cluster_columns"]

#: Replicates of the cluster bootstraps (hierarchical and the compare difference).
BOOTSTRAP_REPS = 2000

#: The study seed of the cluster bootstraps (streams from :mod:`evalsim.seeding`).
STUDY_SEED = 0


def add_cluster_argument(p: argparse.ArgumentParser) -> None:
    """Add ``--cluster COLUMN`` to a subcommand's parser."""
    p.add_argument(
        "--cluster",
        metavar="COLUMN",
        help="training seed / checkpoint column: per-seed k/n, seed vs trial spread, design "
        "effect and cluster-aware intervals (default: the 'seed' column when a policy has "
        "2+ seeds)",
    )


def cluster_columns(args) -> tuple[str, ...]:
    """The column the log reader must keep for ``--cluster`` (lower-case), or ()."""
    return column_flag(args, "cluster", "--cluster")


def _column(args, df: pd.DataFrame) -> str | None:
    cols = cluster_columns(args)
    if cols:
        if cols[0] in ("policy", "success"):
            raise BadInput(f"--cluster {cols[0]!r}: give a seed or checkpoint column")
        return cols[0]
    if "seed" in df.columns and (df["seed"] != "").all():
        if (df.groupby("policy")["seed"].nunique() >= 2).any():
            return "seed"
    return None


def seeds_are_clusters(table) -> bool:
    """Whether a small-log table (:class:`evalsim.small_logs.TrialTable`) has the seeds that
    make this hook act without ``--cluster`` (as :func:`_column`): every trial has a seed and
    some policy ran two or more."""
    if "seed" not in table.columns:
        return False
    seeds = table["seed"].tolist()
    if any(s == "" for s in seeds):
        return False
    per_policy: dict[str, set] = {}
    for policy, seed in zip(table["policy"].tolist(), seeds, strict=True):
        per_policy.setdefault(policy, set()).add(seed)
    return any(len(v) >= 2 for v in per_policy.values())


def _seed_counts(g: pd.DataFrame, column: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    counts = g.groupby(g[column].astype(str), sort=True)["success"].agg(["sum", "count"])
    return list(counts.index), counts["sum"].to_numpy(np.int64), counts["count"].to_numpy(np.int64)


def _spread(g: pd.DataFrame, column: str, confidence: float, rng) -> dict:
    """One policy's (or policy x task cell's) seeds: k/n, two spreads, intervals."""
    from scipy.special import stdtrit  # Student's t quantile (late: startup time)

    names, k, n = _seed_counts(g, column)
    out = {
        "seeds": [
            {"seed": s, "k": int(a), "n": int(b)} for s, a, b in zip(names, k, n, strict=True)
        ]
    }
    if len(names) < 2:
        out["clustered"] = False
        return out
    from evalsim.stats.multi.hierarchy import two_spreads
    from evalsim.stats.multi.seeds import cluster_interval

    ts = two_spreads(k, n)
    rates = k / n
    g_n = rates.size
    half = float(stdtrit(g_n - 1, (1 + confidence) / 2) * rates.std(ddof=1) / math.sqrt(g_n))
    # T28's two-stage bootstrap (seeds, then episodes), from the counts
    h_lo, h_hi, n_lo, n_hi = cluster_interval(k, n, confidence, BOOTSTRAP_REPS, rng)
    dominates = ts.between_var > ts.trial_sd**2
    out.update(
        {
            "clustered": True,
            "pooled_rate": ts.pooled_rate,
            "seed_sd": ts.seed_sd,
            "trial_sd": ts.trial_sd,
            "between_var": ts.between_var,
            "icc": ts.icc,
            "design_effect": ts.design_effect,
            "n_effective": ts.n_effective,
            "homogeneity_pvalue": ts.homogeneity_pvalue,
            "seed_mean": float(rates.mean()),
            # a rate: the t interval clipped to [0, 1]
            "seed_t_ci": [
                max(float(rates.mean()) - half, 0.0),
                min(float(rates.mean()) + half, 1.0),
            ],
            "hierarchical_ci": [h_lo, h_hi],
            "naive_ci": [n_lo, n_hi],
            "seed_spread_dominates": bool(dominates),
        }
    )
    return out


def _label(keys, values) -> str:
    return " / ".join(str(v) for v in values)


def apply_hook(args, df: pd.DataFrame, rep: Report) -> None:
    """The log hook: the cluster tables of ``summarize`` (all policies) and ``compare``
    (``--a`` and ``--b``, with the seed-level test)."""

    column = _column(args, df)
    if column is None:
        return
    pair = (getattr(args, "a", None), getattr(args, "b", None))
    is_compare = pair[0] is not None and pair[1] is not None
    if is_compare:
        df = df[df["policy"].isin(pair)]
        confidence = 1 - args.alpha
    else:
        confidence = args.confidence
    if (df[column].astype(str).str.strip() == "").any():
        raise BadInput(f"--cluster column {column!r} is empty in some trial(s)")
    keys = ["policy"]
    if not is_compare and "task" in df.columns and df["task"].nunique() > 1:
        keys.append("task")
    groups = []
    for values, g in df.groupby(keys, sort=True):
        values = values if isinstance(values, tuple) else (values,)
        row = dict(zip(keys, (str(v) for v in values), strict=True))
        row.update(_spread(g, column, confidence, rng_for(STUDY_SEED, "clusters", *row.values())))
        groups.append(row)
    data = {"column": column, "confidence": confidence, "groups": groups}
    level = f"{100 * confidence:g}%"
    _spread_table(rep, column, keys, groups, level)
    if is_compare:
        _seed_test(rep, data, column, pair, groups, confidence, level)
    rep.data["clusters"] = data


def _spread_table(rep: Report, column: str, keys: list, groups: list, level: str) -> None:
    """The per-group table of seed spread vs trial spread, its legend and its warnings."""
    rows = []
    for r in groups:
        seeds = " ".join(f"{s['k']}/{s['n']}" for s in r["seeds"])
        label = _label(keys, [r[k] for k in keys])
        if not r["clustered"]:
            rows.append([label, seeds, "—", "—", "—", "—", "—", "one seed: no seed spread"])
            continue
        rows.append(
            [
                label,
                seeds,
                f"{100 * r['seed_sd']:.1f}",
                f"{100 * r['trial_sd']:.1f}",
                f"{r['design_effect']:.2f} (n_eff {r['n_effective']:.0f})",
                _ci_pct(*r["seed_t_ci"]),
                _ci_pct(*r["hierarchical_ci"]),
                _ci_pct(*r["naive_ci"]),
            ]
        )
    rep.table(
        f"By {column} (clusters): seed spread vs trial spread, {level} intervals",
        [
            " / ".join(keys),
            f"k/n per {column}",
            "seed sd",
            "trial sd",
            "design effect",
            "t over seeds",
            "hierarchical",
            "naive",
        ],
        rows,
    )
    rep.line(
        f"seed sd: spread of the {column} rates (points); trial sd: what trials alone would "
        "give one seed; design effect 1 + (m - 1) ICC; t over seeds: Student's t on the seed "
        "rates; hierarchical: bootstrap of seeds, then episodes; naive: episodes as "
        "independent."
    )
    for r in groups:
        if r.get("seed_spread_dominates"):
            label = _label(keys, [r[k] for k in keys])
            rep.line(
                f"warning: {label}: seed spread dominates trial spread (seed sd "
                f"{100 * r['seed_sd']:.1f} vs trial sd {100 * r['trial_sd']:.1f} points, "
                f"design effect {r['design_effect']:.2f}): the naive interval is too narrow; "
                f"more {column}s, not more episodes, will tighten it"
            )


def _seed_test(rep: Report, data: dict, column: str, pair, groups, confidence, level) -> None:
    """``compare --cluster``: B - A with the seeds as the unit of replication (Welch t over
    the seed rates, the cluster bootstrap), and a warning when the seeds dominate."""
    by = {r["policy"]: r for r in groups}
    ra, rb = by.get(pair[0]), by.get(pair[1])
    if ra and rb and ra["clustered"] and rb["clustered"]:
        ka = [s["k"] for s in ra["seeds"]]
        na = [s["n"] for s in ra["seeds"]]
        kb = [s["k"] for s in rb["seeds"]]
        nb = [s["n"] for s in rb["seeds"]]
        from evalsim.stats.multi.seeds import seed_comparison

        sc = seed_comparison(
            ka, na, kb, nb, confidence, BOOTSTRAP_REPS, rng_for(STUDY_SEED, "clusters", *pair)
        )
        data["seed_test"] = {
            "welch_statistic": sc.welch_statistic,
            "welch_df": sc.welch_df,
            "welch_pvalue": sc.welch_pvalue,
            "welch_ci": [sc.welch_lower, sc.welch_upper],
            "mean_a": sc.mean_a,
            "mean_b": sc.mean_b,
            "bootstrap_ci": [sc.bootstrap_lower, sc.bootstrap_upper],
            "bootstrap_se": sc.bootstrap_se,
            "naive_se": sc.naive_se,
        }
        rep.table(
            f"B - A with {column}s as the unit of replication ({level})",
            ["method", "estimate", "interval", "p"],
            [
                [
                    f"Welch t on {column} rates ({sc.seeds_a} vs {sc.seeds_b}, "
                    f"df {sc.welch_df:.1f})",
                    f"{100 * (sc.mean_b - sc.mean_a):+.1f}",
                    f"[{100 * sc.welch_lower:+.1f}, {100 * sc.welch_upper:+.1f}]",
                    _p(sc.welch_pvalue),
                ],
                [
                    f"cluster bootstrap of pooled rates ({column}s, then episodes)",
                    f"{100 * (sc.micro_b - sc.micro_a):+.1f}",
                    f"[{100 * sc.bootstrap_lower:+.1f}, {100 * sc.bootstrap_upper:+.1f}]",
                    "—",
                ],
            ],
        )
        ratio = sc.bootstrap_se / sc.naive_se if sc.naive_se > 0 else math.nan
        if ratio > 1.5 or ra["seed_spread_dominates"] or rb["seed_spread_dominates"]:
            rep.line(
                f"warning: seed spread dominates trial spread: the difference's standard "
                f"error over {column}s is {ratio:.1f}x the episode-level one; the tests "
                f"above that pool the episodes are too optimistic -- read the {column}-level "
                f"test (Welch p = {_p(sc.welch_pvalue)})"
            )
        data["se_ratio"] = ratio
    elif ra and rb:
        rep.line(
            f"note: the {column}-level test needs 2+ {column}s for both {pair[0]} and {pair[1]}"
        )
