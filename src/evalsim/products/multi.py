"""T34, T35, F08, F09: many tasks and many policies, from the simulation pools.

T34: policies A vs B over the configured tasks -- each task's exact test (exact McNemar on
the paired trials, or Fisher), p adjusted by each correction of
:data:`evalsim.stats.multi.CORRECTIONS` (one column each), the CMH and exact stratified
verdicts across tasks, and micro/macro success with stratified-bootstrap, MOVER and naive
intervals. F08 draws T34: per-task rates with intervals, micro and macro at the side.
T35: a ranking of several policies (the configured ones, or the sigma sweep's sigma values
treated as policies) with a compact letter display; F09 draws it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evalsim.products._common import captioned
from evalsim.products.settings import Bootstrap
from evalsim.seeding import rng_for
from evalsim.stats.multi.aggregate import aggregate_success, outcome_grid, task_pairs
from evalsim.stats.multi.rank import rank_policies, ranking_frame
from evalsim.stats.multi.tasks import CORRECTIONS, cmh_test, exact_stratified_test, per_task_tests
from evalsim.stats.proportion.intervals import wilson_interval

__all__ = [
    "MIN_RANKED_POLICIES",
    "RANK_SOURCES",
    "per_task_figure",
    "per_task_table",
    "ranking_figure",
    "ranking_frame",
    "ranking_message",
    "ranking_source",
    "ranking_table",
]

#: Where the ranking's policies come from (config key multi.ranking.source).
RANK_SOURCES = ("auto", "policies", "sweep")


def per_task_table(
    pools: pd.DataFrame,
    bootstrap: Bootstrap,
    policy_a: str,
    policy_b: str,
    paired: bool,
    alpha: float,
    outcome: str = "success",
) -> pd.DataFrame:
    """T34: A vs B per task, adjusted p, CMH and exact stratified verdicts, micro/macro.

    Parameters
    ----------
    pools : pandas.DataFrame
        Trials with columns task, policy, seed, trial and ``outcome``.
    bootstrap : Bootstrap
        Level of every interval, and the stratified bootstrap's replicates and seed; its
        stream is ``rng_for(bootstrap.study_seed, "multi", "per_task", A, B)``.
    policy_a, policy_b : str
        The reference policy and the one compared with it.
    paired : bool
        Use the exact McNemar test on trials paired by (seed, trial) within a task (trial i
        of a task has the same cube pose for every policy and seed); else Fisher's test.
    alpha : float
        Test level.
    outcome : str
        Boolean success column.

    Returns
    -------
    pandas.DataFrame
        One row per task (section "task"), then the across-task rows (section "pooled":
        CMH, CMH with continuity correction, exact stratified) and the aggregates (section
        "aggregate": micro, macro, macro with tasks fixed by bootstrap and by MOVER-Wilson,
        naive).
    """
    confidence, reps = bootstrap.confidence, bootstrap.reps
    trials = pools[pools["policy"].isin([policy_a, policy_b])]
    grid = outcome_grid(trials, policies=[policy_a, policy_b], outcome=outcome)
    k_a, n_a = grid.k[:, 0], grid.n[:, 0]
    k_b, n_b = grid.k[:, 1], grid.n[:, 1]
    pairs = None
    if paired:
        by_task = task_pairs(trials, policy_a, policy_b, ["seed", "trial"], outcome)
        pairs = [by_task[t][:2] if by_task.get(t) else None for t in grid.tasks]
    rows_t = per_task_tests(grid.tasks, k_a, n_a, k_b, n_b, pairs=pairs, alpha=alpha)
    wa = wilson_interval(k_a, n_a, confidence=confidence)
    wb = wilson_interval(k_b, n_b, confidence=confidence)
    rows = []
    for i, r in enumerate(rows_t):
        rows.append(
            {
                "section": "task",
                "row": r.task,
                "k_a": r.k_a,
                "n_a": r.n_a,
                "rate_a": r.rate_a,
                "a_lower": float(wa.lower[i]),
                "a_upper": float(wa.upper[i]),
                "k_b": r.k_b,
                "n_b": r.n_b,
                "rate_b": r.rate_b,
                "b_lower": float(wb.lower[i]),
                "b_upper": float(wb.upper[i]),
                "diff": r.rate_b - r.rate_a,
                "test": "exact McNemar" if r.a_only is not None else "Fisher exact",
                "pvalue": r.pvalue,
                **{f"p_{m}": r.adjusted[m] for m in CORRECTIONS},
                "odds_ratio": math.nan,
                "or_lower": math.nan,
                "or_upper": math.nan,
                "verdict": "differ" if r.adjusted["holm"] < alpha else "not detectably different",
                "interval": "Wilson",
            }
        )
    cmh = cmh_test(k_a, n_a, k_b, n_b, confidence)
    ex = exact_stratified_test(k_a, n_a, k_b, n_b, confidence)
    tot = {
        "k_a": int(k_a.sum()),
        "n_a": int(n_a.sum()),
        "rate_a": k_a.sum() / n_a.sum(),
        "k_b": int(k_b.sum()),
        "n_b": int(n_b.sum()),
        "rate_b": k_b.sum() / n_b.sum(),
    }
    for name, p, odds, lo, hi, iv in (
        ("CMH", cmh.pvalue, cmh.odds_ratio, cmh.odds_ratio_lower, cmh.odds_ratio_upper,
         "Mantel-Haenszel OR, RGB interval"),
        ("CMH (continuity corrected)", cmh.pvalue_corrected, cmh.odds_ratio,
         cmh.odds_ratio_lower, cmh.odds_ratio_upper, "Mantel-Haenszel OR, RGB interval"),
        ("exact stratified", ex.pvalue, ex.odds_ratio, ex.odds_ratio_lower,
         ex.odds_ratio_upper, "conditional MLE, exact conditional interval"),
    ):  # fmt: skip
        rows.append(
            {
                "section": "pooled",
                "row": name,
                **tot,
                "diff": tot["rate_b"] - tot["rate_a"],
                "test": name,
                "pvalue": p,
                "odds_ratio": odds,
                "or_lower": lo,
                "or_upper": hi,
                "verdict": "differ" if p < alpha else "not detectably different",
                "interval": iv,
            }
        )
    rows.append(
        {
            "section": "pooled",
            "row": "Breslow-Day",
            "test": "Breslow-Day (equal odds ratios across tasks)",
            "pvalue": cmh.breslow_day_pvalue,
            "verdict": (
                "n/a"
                if not math.isfinite(cmh.breslow_day_pvalue)
                else "odds ratios differ across tasks"
                if cmh.breslow_day_pvalue < alpha
                else "no evidence the odds ratios differ"
            ),
        }
    )
    aggs, _ = aggregate_success(
        grid,
        reps,
        confidence,
        rng_for(bootstrap.study_seed, "multi", "per_task", policy_a, policy_b),
    )
    a, b = aggs
    for name, attr, lo_attr, hi_attr, how in (
        ("micro", "micro", "micro_lower", "micro_upper", "stratified bootstrap (tasks, episodes)"),
        ("macro", "macro", "macro_lower", "macro_upper", "stratified bootstrap (tasks, episodes)"),
        ("macro, tasks fixed", "macro", "macro_fixed_lower", "macro_fixed_upper",
         "bootstrap of episodes within tasks"),
        ("macro, tasks fixed (MOVER)", "macro", "mover_lower", "mover_upper",
         "MOVER over the tasks' Wilson intervals"),
        ("micro, naive", "micro", "naive_lower", "naive_upper",
         "bootstrap of episodes ignoring tasks"),
        ("micro, naive (Wilson)", "micro", "wilson_lower", "wilson_upper",
         "Wilson on all episodes"),
    ):  # fmt: skip
        ratio_a = (a.micro_upper - a.micro_lower) / (getattr(a, hi_attr) - getattr(a, lo_attr))
        ratio_b = (b.micro_upper - b.micro_lower) / (getattr(b, hi_attr) - getattr(b, lo_attr))
        rows.append(
            {
                "section": "aggregate",
                "row": name,
                "k_a": a.k,
                "n_a": a.n,
                "rate_a": getattr(a, attr),
                "a_lower": getattr(a, lo_attr),
                "a_upper": getattr(a, hi_attr),
                "k_b": b.k,
                "n_b": b.n,
                "rate_b": getattr(b, attr),
                "b_lower": getattr(b, lo_attr),
                "b_upper": getattr(b, hi_attr),
                "diff": getattr(b, attr) - getattr(a, attr),
                "interval": how,
                "stratified_to_this_width_a": ratio_a,
                "stratified_to_this_width_b": ratio_b,
            }
        )
    df = pd.DataFrame(rows)
    df.insert(0, "policy_b", policy_b)
    df.insert(0, "policy_a", policy_a)
    df.attrs["title"] = f"T34 Per-task comparison, {policy_b} vs {policy_a}, over the tasks"
    design = (
        "exact McNemar on the trials paired by (seed, trial) within each task"
        if paired
        else "Fisher's exact test per task"
    )
    adjusted = " / ".join(f"p_{m}" for m in CORRECTIONS)
    df.attrs["note"] = (
        f"Outcome: {outcome}; A = {policy_a}, B = {policy_b}; diff = B - A. Per task: {design}; "
        f"{adjusted}: adjusted over the tasks by statsmodels' multipletests; "
        f"verdict at Holm p < {alpha:g}. Pooled: CMH (statsmodels StratifiedTable, 1 df), "
        "Mantel-Haenszel odds ratio (B vs A) with the Robins-Breslow-Greenland interval; exact "
        "stratified = exact conditional test (R's mantelhaen.test(exact=TRUE) rule: two-sided "
        "p sums the values of S no more likely than observed) with its conditional MLE and "
        "exact interval; both treat each task's arms as independent samples (the pairing is "
        "used only by McNemar). Breslow-Day: homogeneity of the odds ratio. Aggregates: "
        f"{reps:,} replicates, {confidence:g} percentile intervals; 'tasks fixed' "
        "rows answer for these tasks only, the stratified rows for tasks drawn from the same "
        "population. stratified_to_this_width = stratified micro width / this row's width "
        "(> 1 on a naive row: the naive interval is too narrow by that factor). Micro and "
        "macro coincide when every task has the same number of trials of a policy. With few "
        f"tasks ({len(grid.tasks)} here) the task stage of the bootstrap has at most "
        f"C(2T-1, T) = {math.comb(2 * len(grid.tasks) - 1, len(grid.tasks))} distinct draws, "
        "so its interval is rough."
    )
    return df


def _sweep_as_policies(sweep: pd.DataFrame) -> pd.DataFrame:
    """The sigma sweep with each sigma a policy named like '6 mm' (in increasing sigma)."""
    out = sweep.copy()
    out["policy"] = [f"{s:g} mm" for s in out["sigma_mm"]]
    return out.sort_values(["sigma_mm", "trial"], kind="stable")


def ranking_table(
    pools: pd.DataFrame,
    sweep: pd.DataFrame,
    bootstrap: Bootstrap,
    source: str,
    alpha: float,
    outcome: str = "success",
) -> pd.DataFrame:
    """T35: policies ranked by macro success, with letters and simultaneous intervals.

    Parameters
    ----------
    pools, sweep : pandas.DataFrame
        The pools and the sigma sweep.
    bootstrap : Bootstrap
        As in :func:`per_task_table`; the stream is ``rng_for(bootstrap.study_seed, "multi",
        "rank")``.
    source : {"auto", "policies", "sweep"}
        "policies": the configured policies of the pools (needs >= 2); "sweep": every sigma
        of the sweep is a policy; "auto": the policies when there are >= 3, else the sweep.
    alpha, outcome
        As in :func:`per_task_table`.

    Returns
    -------
    pandas.DataFrame
        One row per policy, best first.
    """
    if source not in RANK_SOURCES:
        raise ValueError(f"source must be one of {RANK_SOURCES}, got {source!r}")
    confidence, reps = bootstrap.confidence, bootstrap.reps
    n_policies = pools["policy"].nunique()
    if source == "auto":
        source = "policies" if n_policies >= 3 else "sweep"
    trials = pools if source == "policies" else _sweep_as_policies(sweep)
    grid = outcome_grid(trials, outcome=outcome)
    runs = None
    if "seed" in trials.columns and source == "policies":
        runs = [
            [
                trials[(trials["task"] == t) & (trials["policy"] == p)]["seed"].to_numpy()
                for p in grid.policies
            ]
            for t in grid.tasks
        ]
    r = rank_policies(
        grid, runs, alpha, confidence, reps, rng_for(bootstrap.study_seed, "multi", "rank")
    )
    sigma = trials.groupby("policy")["sigma_mm"].first().to_dict() if "sigma_mm" in trials else {}
    df = ranking_frame(r, sigma)
    what = "the configured policies" if source == "policies" else "the sigma sweep's sigma values"
    return captioned(
        df,
        f"T35 Ranking of {what} with a compact letter display",
        f"Outcome: {outcome}; {len(grid.tasks)} task(s): {', '.join(grid.tasks)}. Ranked by "
        "macro success (mean of task rates). Every pair compared by the exact stratified "
        f"test over the tasks; Holm-adjusted over the {len(r.pairs)} pairs; policies that "
        f"share a letter are not detectably different at Holm p < {alpha:g} (insert-and-"
        "absorb letters). differs_from: the policies this one differs from. macro_lower/upper: "
        "stratified bootstrap (tasks, then episodes) percentile interval; simultaneous_lower/"
        f"upper: max-|t| bootstrap intervals that hold jointly for all rows at {confidence:g}. "
        "iqm: interquartile mean of per-seed task rates with rliable's stratified bootstrap "
        "(only with training seeds). p_improve_over_next: rliable's P(this > next-ranked) with "
        "its bootstrap interval, on "
        f"per-seed rates when there are seeds, else on episodes. {reps:,} replicates.",
    )


def per_task_figure(table, confidence: float = 0.95, sigma_mm: dict | None = None, ax=None):
    """F08: per-task rates of A and B with their intervals; micro and macro at the side.

    The y axis is zoomed to the intervals (with a margin), each policy is named with its aim
    noise, markers are open so every error bar shows through its marker, and the naive
    interval (episodes as independent) is drawn dashed beside the cluster-aware ones.

    Parameters
    ----------
    table : DataFrame
        T34 (rows ``section`` "task" and "aggregate").
    confidence : float
        The intervals' level (title).
    sigma_mm : dict, optional
        Policy name -> aim noise sigma, mm (the legend's names).
    ax : matplotlib.axes.Axes, optional
    """
    import matplotlib.pyplot as plt

    from evalsim.figures import COLUMN_WIDTH_IN, color_for

    tasks = table[table["section"] == "task"]
    agg = table[table["section"] == "aggregate"].set_index("row")
    side = [
        r
        for r in ("micro", "macro", "macro, tasks fixed (MOVER)", "micro, naive")
        if r in agg.index
    ]
    labels = list(tasks["row"]) + side
    if ax is None:
        fig, ax = plt.subplots(figsize=(2 * COLUMN_WIDTH_IN, 2.8))
    else:
        fig = ax.figure
    x = np.arange(len(labels), dtype=float)
    x[len(tasks) :] += 0.8  # a gap before the aggregates
    title_ab = table.attrs.get("title", "")
    sigma_mm = sigma_mm or {}
    lows, highs = [], []
    naive = np.array([lab == "micro, naive" for lab in labels])
    for j, arm in enumerate(("a", "b")):
        rates = list(tasks[f"rate_{arm}"]) + [agg.loc[r, f"rate_{arm}"] for r in side]
        lo = list(tasks[f"{arm}_lower"]) + [agg.loc[r, f"{arm}_lower"] for r in side]
        hi = list(tasks[f"{arm}_upper"]) + [agg.loc[r, f"{arm}_upper"] for r in side]
        rates, lo, hi = (np.asarray(v, float) for v in (rates, lo, hi))
        lows.append(np.nanmin(lo))
        highs.append(np.nanmax(hi))
        name = str(table[f"policy_{arm}"].iloc[0]) if f"policy_{arm}" in table else arm.upper()
        label = f"{name} (σ = {sigma_mm[name]:g} mm)" if name in sigma_mm else name
        for sel, ls in ((~naive, "-"), (naive, "--")):
            if not sel.any():
                continue
            bars = ax.errorbar(
                x[sel] + (j - 0.5) * 0.25,
                rates[sel],
                yerr=[rates[sel] - lo[sel], hi[sel] - rates[sel]],
                fmt="o" if arm == "a" else "s",
                ms=4,
                mfc="none",  # open: the bar shows through the marker
                mew=1.1,
                capsize=2.5,
                elinewidth=1.2,
                color=color_for(j),
                label=label if ls == "-" else None,
            )
            bars[-1][0].set_linestyle(ls)
    ax.axvline(len(tasks) - 0.5 + 0.4, color="0.6", lw=0.6, ls=":")
    ax.set_xticks(x, [lab.replace(" (MOVER)", "\n(MOVER)").replace(", ", ",\n") for lab in labels])
    ax.set_ylabel("success rate")
    lo_all, hi_all = min(lows), max(highs)
    pad = 0.1 * max(hi_all - lo_all, 0.02)
    ax.set_ylim(max(0.0, lo_all - pad), min(1.0, hi_all + pad))
    # Outside the axes, right: a legend inside would cover some task's bars.
    ax.legend(
        frameon=False,
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        title="policy (aim noise)" if sigma_mm else None,
        title_fontsize=7,
    )
    ax.set_title(
        f"Per task (Wilson {confidence:g}) and over tasks (stratified bootstrap, MOVER; "
        "dashed: naive, episodes as independent)"
        if not title_ab
        else title_ab.replace("T34 ", ""),
        fontsize=8,
    )
    sns_despine(ax)
    return fig


def sns_despine(ax) -> None:
    import seaborn as sns

    sns.despine(ax=ax)


#: Fewer configured policies than this: F09 says so instead of drawing a ranking.
MIN_RANKED_POLICIES = 3


def ranking_source(source: str, n_policies: int) -> str:
    """What T35 ranks: "policies" or "sweep" (``source`` "auto": the configured policies when
    there are at least :data:`MIN_RANKED_POLICIES`, else the sigma sweep's values)."""
    if source not in RANK_SOURCES:
        raise ValueError(f"source must be one of {RANK_SOURCES}, got {source!r}")
    if source == "auto":
        return "policies" if n_policies >= MIN_RANKED_POLICIES else "sweep"
    return source


def ranking_message(policies, source: str = "auto") -> str | None:
    """Why F09 draws no ranking, or None when it draws one.

    A ranking of fewer than three policies says nothing a pairwise comparison (T34, F08) does
    not; with ``source`` "auto" T35 then ranks the sigma sweep's aim-noise values, which are
    not policies, so F09 does not draw them as such (``multi.ranking_source: sweep`` asks for
    that ranking explicitly).
    """
    names = [p["name"] if isinstance(p, dict) else str(p) for p in policies]
    if ranking_source(source, len(names)) == "sweep" and source == "sweep":
        return None  # asked for: the sweep's sigma values, drawn and labelled as such
    if len(names) >= MIN_RANKED_POLICIES:
        return None
    listed = ", ".join(names) if names else "none"
    extra = (
        "\nT35 ranks the aim-noise values of the sigma sweep instead; they are not policies.\n"
        "Set multi.ranking_source: sweep to draw that ranking here."
        if source == "auto"
        else ""
    )
    return (
        f"No ranking: the study configures {len(names)} "
        f"{'policy' if len(names) == 1 else 'policies'} ({listed}),\n"
        f"and a ranking needs at least {MIN_RANKED_POLICIES}. "
        f"Compare two policies with T34 and F08.{extra}"
    )


def ranking_figure(table, confidence: float = 0.95, ax=None, policies=None, source: str = "auto"):
    """F09: macro success of each ranked policy with its simultaneous interval and letters.

    Parameters
    ----------
    table : pandas.DataFrame
        T35 (:func:`ranking_table`), best first.
    confidence : float
        The intervals' level (legend).
    ax : matplotlib Axes, optional
    policies : list, optional
        The configured policies (names or config entries). With fewer than three, the figure
        says so in words instead of drawing a ranking (:func:`ranking_message`); None draws
        the table as it is.
    source : {"auto", "policies", "sweep"}
        T35's ``multi.ranking_source``; "sweep" draws the sigma values, labelled as such.

    Notes
    -----
    The letters stand in their own column right of the axes, under a "letters" heading; the
    legend sits under the axes, clear of the points.
    """
    import matplotlib.pyplot as plt

    from evalsim.figures import COLUMN_WIDTH_IN, ranking_intervals

    message = None if policies is None else ranking_message(policies, source)
    if message is not None:
        if ax is None:
            fig, ax = plt.subplots(figsize=(2 * COLUMN_WIDTH_IN, 1.6))
        else:
            fig = ax.figure
        ax.set_axis_off()
        ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=8, wrap=True)
        ax.set_title("F09: ranking of the policies", fontsize=9)
        return fig
    df = table.sort_values("rank")
    sweep = source == "sweep" or (
        policies is None and len(df) > 0 and df["policy"].astype(str).str.endswith(" mm").all()
    )
    if ax is None:
        fig, ax = plt.subplots(
            figsize=(2 * COLUMN_WIDTH_IN, 1.3 + 0.24 * len(df)), layout="constrained"
        )
    else:
        fig = ax.figure
    y = np.arange(len(df))[::-1]
    m = df["macro"].to_numpy(float)
    ranking_intervals(
        ax,
        m,
        y,
        (df["macro_lower"].to_numpy(float), df["macro_upper"].to_numpy(float)),
        (df["simultaneous_lower"].to_numpy(float), df["simultaneous_upper"].to_numpy(float)),
        f"per-policy {confidence:g} interval",
        f"simultaneous {confidence:g} interval",
    )
    ax.set_yticks(y, df["policy"])
    ax.set_ylim(-0.6, len(df) - 0.4)
    ax.set_xlim(max(0.0, float(df["simultaneous_lower"].min()) - 0.05), 1.02)
    ax.set_xlabel("macro success (mean of task rates)")
    ax.set_ylabel("aim noise σ of the sweep (not policies)" if sweep else "policy")
    # the letters: a column of their own, right of the axes (tick labels of a twin axis)
    letters = ax.twinx()
    letters.set_ylim(ax.get_ylim())
    letters.set_yticks(y, df["letters"].astype(str))
    letters.tick_params(axis="y", length=0, labelsize=7, pad=6)
    ax.annotate(
        "letters",
        xy=(1, 1),
        xycoords="axes fraction",
        xytext=(6, 2),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=7,
        style="italic",
    )
    for side in ("top", "right", "left", "bottom"):
        letters.spines[side].set_visible(False)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.legend(
        frameon=False,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18 - 0.6 / (1 + len(df))),
        ncol=2,
    )
    what = "the sweep's σ values" if sweep else "policies"
    ax.set_title(
        f"Ranking of {what}; a shared letter = not detectably different (Holm)", fontsize=9
    )
    return fig
