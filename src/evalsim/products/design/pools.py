"""Tables T18 and T27 of the stage design: McNemar vs unpaired, and the paired contingency
table, from the MuJoCo pools (the A/B outcomes on shared poses). The tables built from the
config alone are in :mod:`evalsim.products.design.sizing` and
:mod:`evalsim.products.design.detection`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalsim.products._common import captioned, titled_frame
from evalsim.products.design._common import NAN
from evalsim.products.settings import Bootstrap
from evalsim.seeding import rng_for
from evalsim.stats.two_sample import design as dz
from evalsim.stats.two_sample import paired as pz
from evalsim.stats.two_sample import paired_design as pdz


# ---------------------------------------------------------------- pools: T18, T27
def _paired_arrays(pools: pd.DataFrame, task: str, policy_a: str, policy_b: str, seed: int):
    sel = pools[(pools["task"] == task) & (pools["seed"] == seed)]
    a = sel[sel["policy"] == policy_a].set_index("trial")["success"].sort_index()
    b = sel[sel["policy"] == policy_b].set_index("trial")["success"].sort_index()
    common = a.index.intersection(b.index)
    if len(common) == 0:
        raise ValueError(
            f"no shared trials for {task!r}, seed {seed!r}, {policy_a!r} vs {policy_b!r}"
        )
    return a.loc[common].to_numpy(bool), b.loc[common].to_numpy(bool)


def _for_each_pair(builder, pools: pd.DataFrame, pairs, **kwargs) -> pd.DataFrame:
    """``builder`` (T18 or T27) once per pair [policy_a, policy_b], stacked in pair order.

    Columns ``policy_a`` and ``policy_b`` lead; the title and the note are the first pair's,
    its "A vs B" naming every pair instead. Each pair's rows (and bootstrap streams) are the
    same whatever other pairs are listed.
    """
    frames = []
    for a, b in pairs:
        df = builder(pools, policy_a=a, policy_b=b, **kwargs)
        df.insert(0, "policy_b", b)
        df.insert(0, "policy_a", a)
        frames.append(df)
    if not frames:
        raise ValueError("pairs: empty; give at least one [policy_a, policy_b]")
    out = pd.concat(frames, ignore_index=True)
    (a0, b0), first = pairs[0], frames[0]
    listed = "; ".join(f"{a} vs {b}" for a, b in pairs)
    return captioned(
        out,
        first.attrs["title"],
        first.attrs["note"].replace(
            f"{a0} vs {b0}", f"policy_a vs policy_b (one block of rows per pair: {listed})", 1
        ),
    )


def _per_seed(pools: pd.DataFrame, task, policy_a, policy_b):
    """The task (the pools' first when None) and, per training seed of it in increasing order,
    ``(seed, a, b, table, mcnemar)``: the paired outcomes, their 2x2 table and its exact
    McNemar test."""
    task = task or str(pools["task"].iloc[0])
    seeds = sorted(int(s) for s in pools.loc[pools["task"] == task, "seed"].unique())
    per_seed = []
    for seed in seeds:
        a, b = _paired_arrays(pools, task, policy_a, policy_b, seed)
        t = pz.paired_contingency(a, b)
        per_seed.append((seed, a, b, t, pz.mcnemar_exact(t.a_only, t.b_only)))
    return task, per_seed


def mcnemar_vs_unpaired(
    pools: pd.DataFrame,
    policy_a: str = "A",
    policy_b: str = "B",
    task: str | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    pairs: list[list[str]] | None = None,
) -> pd.DataFrame:
    """T18: McNemar on paired pool outcomes vs an unpaired test on the same trials.

    One row per training seed of the first task (seed 0 first: the headline row). The
    pairing-gain columns measure rho from trials that share a cube pose and give the n a
    paired design needs relative to an unpaired one for the observed rates. With ``pairs``
    ([[policy_a, policy_b], ...]), one block of rows per pair, led by the two policy names.
    """
    from evalsim.stats.two_sample.fisher import fisher_pvalue

    if pairs is not None:
        return _for_each_pair(
            mcnemar_vs_unpaired, pools, pairs, task=task, alpha=alpha, power=power
        )
    task, per_seed = _per_seed(pools, task, policy_a, policy_b)
    rows = []
    for seed, a, b, t, mc in per_seed:
        g = pz.pairing_gain(a, b)
        n_unp = n_pair = NAN
        if 0 < g.rate_a < 1 and 0 < g.rate_b < 1 and g.rate_a != g.rate_b:
            n_unp = dz.n_per_arm_normal(g.rate_a, g.rate_b, alpha, power, "unpooled").n
            if np.isfinite(g.rho) and g.var_paired > 0:
                n_pair = pdz.paired_n(
                    g.rate_a, g.rate_b, rho=float(np.clip(g.rho, -1, 1)), alpha=alpha, power=power
                ).n
        rows.append(
            {
                "task": task,
                "seed": seed,
                "n_pairs": t.n,
                "k_a": t.k_a,
                "k_b": t.k_b,
                "both_succeed": t.both_succeed,
                "a_only_b": t.a_only,
                "b_only_c": t.b_only,
                "both_fail": t.both_fail,
                "mcnemar_exact_p": mc.pvalue,
                "mcnemar_midp": mc.midp_pvalue,
                "mcnemar_chi2": mc.statistic,
                "fisher_unpaired_p": fisher_pvalue(t.k_a, t.n, t.k_b, t.n),
                "rho_same_pose": g.rho,
                "var_diff_unpaired": g.var_unpaired,
                "var_diff_paired": g.var_paired,
                "variance_ratio_paired_over_unpaired": g.variance_ratio,
                "n_per_arm_unpaired_at_observed_rates": n_unp,
                "n_pairs_paired_at_observed_rho": n_pair,
            }
        )
    note = (
        f"Pools: task {task}, {policy_a} vs {policy_b}, the same cube pose for trial i of "
        "both policies; one row per training seed (seed 0 is the headline). McNemar works on "
        "the discordant pairs b (A only) and c (B only); the unpaired test is Fisher's exact "
        "test on the same trials treated as independent. rho is the correlation of the two "
        "policies' outcomes on the same pose; the variance ratio is the fraction of unpaired "
        f"trials a paired design needs (n columns: normal approximation, alpha {alpha}, "
        f"power {power:.0%}, at the observed rates). Depends on the simulation."
    )
    return titled_frame(rows, "T18 McNemar on paired outcomes vs an unpaired test", note)


def paired_contingency_table(
    pools: pd.DataFrame,
    bootstrap: Bootstrap,
    policy_a: str = "A",
    policy_b: str = "B",
    task: str | None = None,
    pairs: list[list[str]] | None = None,
) -> pd.DataFrame:
    """T27: the paired 2x2 table from the pools, McNemar (exact, mid-p), paired bootstrap CI.

    With ``pairs`` ([[policy_a, policy_b], ...]), one block of rows per pair, led by the two
    policy names. Every interval is at ``bootstrap.confidence``; the bootstrap stream of a
    pair and seed is ``rng_for(bootstrap.study_seed, "paired_bootstrap", task, A, B, seed)``.
    """
    if pairs is not None:
        return _for_each_pair(
            paired_contingency_table, pools, pairs, task=task, bootstrap=bootstrap
        )
    n_boot, confidence = bootstrap.reps, bootstrap.confidence
    task, per_seed = _per_seed(pools, task, policy_a, policy_b)
    rows = []
    for seed, a, b, t, mc in per_seed:
        # B - A, the direction of document 004 (is the newer policy better?)
        bs = pz.paired_bootstrap(
            b,
            a,
            n_boot=n_boot,
            confidence=confidence,
            rng=rng_for(bootstrap.study_seed, "paired_bootstrap", task, policy_a, policy_b, seed),
        )
        pw = pz.paired_contingency(b, a).difference_interval("wald", confidence)
        un = pz.diff_interval(t.k_b, t.n, t.k_a, t.n, "newcombe", confidence)
        rows.append(
            {
                "task": task,
                "seed": seed,
                "n_pairs": t.n,
                "both_succeed": t.both_succeed,
                "a_only": t.a_only,
                "b_only": t.b_only,
                "both_fail": t.both_fail,
                "rate_a": t.k_a / t.n,
                "rate_b": t.k_b / t.n,
                "diff_b_minus_a": bs.diff,
                "mcnemar_exact_p": mc.pvalue,
                "mcnemar_midp": mc.midp_pvalue,
                "bootstrap_lower": bs.lower,
                "bootstrap_upper": bs.upper,
                "bootstrap_se": bs.se,
                "paired_wald_lower": pw.lower,
                "paired_wald_upper": pw.upper,
                "unpaired_newcombe_lower": un.lower,
                "unpaired_newcombe_upper": un.upper,
            }
        )
    note = (
        f"Task {task}, {policy_a} vs {policy_b} on the same cube poses, one row per training "
        f"seed. Only the discordant cells (a_only, b_only) carry comparative information. "
        f"Paired percentile bootstrap over poses ({n_boot} replicates, seeded from the study "
        f"seed), the paired Wald interval, and for contrast the unpaired Newcombe interval that "
        f"ignores the pairing; all {confidence:.0%}, for rate B - rate A. Depends on the "
        "simulation."
    )
    return titled_frame(
        rows, "T27 Paired contingency table with McNemar and a paired bootstrap", note
    )
