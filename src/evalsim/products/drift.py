"""T36 and F10: drift (servo heating) in a session that compares two policies (issue 18).

Lesson 25: "Independence is the assumption that fails first. Servo heating, a cube that
wears, a shifted camera and the operator's resets all make trials correlated. Interleave the
policies (A, B, A, B, ...) rather than running all of A first." This stage puts numbers on it.

Model. A session of ``2 n`` trials (n per policy), session trial j = 0 .. 2n-1. The robot
heats up whichever policy runs, so trial j carries a perception offset ``d_j = rate * j / 100``
mm along world y (:func:`evalsim.sim.rollout.drift_vector_mm`, the same direction as the
simulation's ``simulation.drift_mm_per_100_trials``). A policy's success probability at
offset d, ``p(d)``, is measured with the MuJoCo scene (:func:`simulate_offset_curve`: the
first task, seed 0 with no seed bias, ``trials_per_offset`` trials at each offset of a grid,
the same cube poses and aim draws at every offset) and interpolated linearly. Trials are
independent given their offsets, so each arm's count is Poisson-binomial and everything
below is exact (no Monte Carlo) except the combined warning rule:

- designs: *blocked* (A at j = 0..n-1, then B at j = n..2n-1) and *interleaved* (A at even
  j, B at odd j);
- comparisons: *equal* (the first policy in both arms) and *A vs B*;
- Fisher's two-sided test at alpha on the two counts: P(reject), and which arm it favours;
  a false win is any rejection between equal policies, or a significant win of the policy
  that is worse without drift; power is a significant win of the better one;
- bias: E[rate_B - rate_A] minus the session-average difference
  ``mean_j (p_B(d_j) - p_A(d_j))`` over all 2n trials (what each policy would score if it ran
  the whole session): the estimand interleaving targets;
- the checks (:mod:`evalsim.stats.independence.checks`) on each policy's own n trials at their
  session offsets (A's block or B's block when blocked; every other trial when
  interleaved): exact power of the runs, trend and halves tests at alpha, and the CLI's
  warning rule (any of the three at alpha / 3) by a seeded numba Monte Carlo.
"""

from __future__ import annotations

import logging
import math
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalsim.products._common import captioned
from evalsim.seeding import rng_for
from evalsim.sim.jobs import offset_job_config
from evalsim.sim.rollout import drift_vector_mm, policy_sigma_mm, run_trials
from evalsim.stats.independence.checks import (
    exact_rejection_probabilities,
    poisson_binomial_pmf,
    rejection_rates_mc,
)
from evalsim.stats.two_sample.fisher import fisher_pvalue_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "DESIGNS",
    "compare_exact",
    "design_indices",
    "drift_figure",
    "drift_table",
    "offset_job_config",
    "offset_rates",
    "session_probabilities",
    "simulate_offset_curve",
]

log = logging.getLogger(__name__)

#: Session designs: label -> how the 2n session trials are split between A and B.
DESIGNS = {"blocked": "blocked: all of A, then all of B", "interleaved": "interleaved: A, B, A, B"}
CHECK_LABELS = {
    "runs": "runs test (exact)",
    "trend": "trend test (exact Cochran-Armitage)",
    "halves": "first vs second half (Fisher)",
    "any": "warning: any check at alpha/3",
}
CURVE_SORT = ["policy", "bias_y_mm", "trial"]


# ------------------------------------------------------------------ simulation


def _offset_job(args: tuple[dict, str, float, int]) -> pd.DataFrame:
    config, policy, offset, trials = args
    task = config["tasks"][0]["name"]
    sigma = policy_sigma_mm(config, policy)
    return run_trials(
        config, task, policy, sigma, 0, 0, trials, bias_mm=drift_vector_mm(offset), progress_every=0
    )


def simulate_offset_curve(
    config: dict, policies, offsets_mm, trials: int, processes: int = 1
) -> pd.DataFrame:
    """Trials of each policy at each constant perception offset (pool schema rows).

    The first task, training seed 0 without its bias, ``trials`` trials per offset; the
    offset is in ``bias_y_mm``. Every offset uses the same poses and aim draws (the policy's
    seed-0 stream), so the curve differs between offsets only by the offset. The config's own
    ``simulation.drift_mm_per_100_trials`` is set to 0 here: the offset is the drift. Runs
    on :func:`offset_job_config` of ``config``.
    """
    cfg = offset_job_config(config, policies)
    jobs = [(cfg, p, float(d), int(trials)) for p in policies for d in offsets_mm]
    if processes <= 1:
        frames = [_offset_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=processes) as ex:
            frames = list(ex.map(_offset_job, jobs))
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values(CURVE_SORT, kind="stable").reset_index(drop=True)


def offset_rates(curve: pd.DataFrame, policy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets mm, successes, trials) of ``policy`` in the simulated curve."""
    g = curve[curve["policy"] == policy]
    if g.empty:
        have = ", ".join(sorted(set(curve["policy"])))
        raise ValueError(f"policy {policy!r} is not in the offset curve (policies: {have})")
    agg = g.groupby("bias_y_mm")["success"].agg(["sum", "size"]).sort_index()
    return (
        agg.index.to_numpy(dtype=np.float64),
        agg["sum"].to_numpy(dtype=np.int64),
        agg["size"].to_numpy(dtype=np.int64),
    )


def _success_at(curve: pd.DataFrame, policy: str, offsets: np.ndarray) -> np.ndarray:
    grid, k, n = offset_rates(curve, policy)
    if offsets.size and offsets.max() > grid[-1] + 1e-9:
        raise ValueError(
            f"offset {offsets.max():g} mm is beyond the simulated grid (max {grid[-1]:g} mm); "
            "extend drift.offsets_mm"
        )
    return np.interp(offsets, grid, k / n)


# ------------------------------------------------------------------ exact session maths


def design_indices(design: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Session trial indices (0-based) of A and of B under ``design``, n trials each."""
    if design == "blocked":
        return np.arange(n), np.arange(n, 2 * n)
    if design == "interleaved":
        return np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
    raise ValueError(f"design must be one of {tuple(DESIGNS)}, got {design!r}")


def session_probabilities(
    curve: pd.DataFrame, policy_a: str, policy_b: str, rate: float, n: int, design: str
) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-trial success probabilities of A's and B's trials, and the session-average gap.

    Returns ``(p_a, p_b, session_diff)``: ``p_a[i]`` is the probability that A's i-th trial
    succeeds at its session offset; ``session_diff = mean_j (p_B(d_j) - p_A(d_j))`` over all
    2n session trials.
    """
    offsets = rate * np.arange(2 * n) / 100.0
    full_a = _success_at(curve, policy_a, offsets)
    full_b = _success_at(curve, policy_b, offsets)
    ia, ib = design_indices(design, n)
    return full_a[ia], full_b[ib], float(np.mean(full_b - full_a))


def compare_exact(p_a: np.ndarray, p_b: np.ndarray, alpha: float) -> dict[str, float]:
    """Exact law of Fisher's test between two arms of independent, non-identical trials.

    Returns
    -------
    dict
        ``p_reject`` (Fisher p < alpha), ``p_b_wins`` / ``p_a_wins`` (rejection with B's /
        A's count higher), ``mean_diff`` (E[k_B/n_B - k_A/n_A]) and the expected rates.
    """
    n_a, n_b = p_a.size, p_b.size
    joint = np.outer(poisson_binomial_pmf(p_a), poisson_binomial_pmf(p_b))
    reject = fisher_pvalue_table(n_a, n_b) < alpha
    ka = np.arange(n_a + 1)[:, None] / n_a
    kb = np.arange(n_b + 1)[None, :] / n_b
    return {
        "p_reject": float(joint[reject].sum()),
        "p_b_wins": float(joint[reject & (kb > ka)].sum()),
        "p_a_wins": float(joint[reject & (ka > kb)].sum()),
        "mean_diff": float(p_b.mean() - p_a.mean()),
        "rate_a": float(p_a.mean()),
        "rate_b": float(p_b.mean()),
    }


# ------------------------------------------------------------------ T36


def _compare_rows(curve, policies, rates, n_grid, alpha) -> list[dict]:
    first, second = policies
    p0 = {p: float(_success_at(curve, p, np.zeros(1))[0]) for p in policies}
    rows = []
    for rate in rates:
        for n in n_grid:
            for label, (pa, pb) in (
                (f"equal ({first} vs {first})", (first, first)),
                (f"{first} vs {second}", (first, second)),
            ):
                equal = pa == pb
                better_b = p0[pb] >= p0[pa]
                for design in DESIGNS:
                    arm_a, arm_b, session = session_probabilities(curve, pa, pb, rate, n, design)
                    r = compare_exact(arm_a, arm_b, alpha)
                    if equal:
                        false_win, power = r["p_reject"], math.nan
                    else:
                        wrong, right = (
                            ("p_a_wins", "p_b_wins") if better_b else ("p_b_wins", "p_a_wins")
                        )
                        false_win, power = r[wrong], r[right]
                    rows.append(
                        {
                            "part": "compare",
                            "drift_mm_per_100": float(rate),
                            "n_per_policy": int(n),
                            "comparison": label,
                            "design": DESIGNS[design],
                            "policy": "",
                            "test": "Fisher two-sided",
                            "rate_a": r["rate_a"],
                            "rate_b": r["rate_b"],
                            "session_diff_pts": 100 * session,
                            "mean_diff_pts": 100 * r["mean_diff"],
                            "bias_pts": 100 * (r["mean_diff"] - session),
                            "p_reject": r["p_reject"],
                            "false_win": false_win,
                            "power": power,
                            "mc_se": math.nan,
                            "method": "exact (Poisson-binomial x Fisher region)",
                        }
                    )
    return rows


def _check_rows(curve, policies, rates, n_grid, alpha, mc_sims, study_seed) -> list[dict]:
    """The checks on each policy's own n trials, at their session offsets under each design."""
    rows = []
    for i, policy in enumerate(policies[:2]):
        for design in DESIGNS:
            for rate in rates:
                for n in n_grid:
                    pos = design_indices(design, n)[i]
                    p = _success_at(curve, policy, rate * pos / 100.0)
                    rows += _check_rows_one(
                        p, policy, i, design, rate, n, alpha, mc_sims, study_seed
                    )
    return rows


def _check_rows_one(p, policy, arm, design, rate, n, alpha, mc_sims, study_seed) -> list[dict]:
    """Four rows: the exact power of each check and the warning rule's (Monte Carlo)."""
    exact = exact_rejection_probabilities(p, alpha)
    rng = rng_for(study_seed, "drift", "checks", arm, design, float(rate), int(n))
    mc = rejection_rates_mc(p, alpha, mc_sims, rng, bonferroni=True)
    base = {
        "part": "checks",
        "drift_mm_per_100": float(rate),
        "n_per_policy": int(n),
        "comparison": "",
        "design": DESIGNS[design],
        "policy": policy,
        "rate_a": float(p.mean()),
        "rate_b": math.nan,
        "session_diff_pts": math.nan,
        "mean_diff_pts": math.nan,
        "bias_pts": math.nan,
        "false_win": math.nan,
        "power": math.nan,
    }
    exact_method = "exact (DP over the check's statistic and K)"
    rows = [
        base
        | {"test": CHECK_LABELS[c], "p_reject": exact[c], "mc_se": math.nan}
        | {"method": exact_method}
        for c in ("runs", "trend", "halves")
    ]
    se = math.sqrt(mc["any"] * (1 - mc["any"]) / mc_sims)
    rows.append(
        base
        | {"test": CHECK_LABELS["any"], "p_reject": mc["any"], "mc_se": se}
        | {"method": f"Monte Carlo, {mc_sims} logs"}
    )
    return rows


def _note(df: pd.DataFrame, policies, alpha: float, curve: pd.DataFrame) -> str:
    cmp = df[df.part == "compare"]
    top_rate, top_n = cmp.drift_mm_per_100.max(), cmp.n_per_policy.max()
    sel = cmp[(cmp.drift_mm_per_100 == top_rate) & (cmp.n_per_policy == top_n)]
    eq = sel[sel.comparison.str.startswith("equal")].set_index("design")
    ab = sel[~sel.comparison.str.startswith("equal")].set_index("design")
    blk, itl = DESIGNS["blocked"], DESIGNS["interleaved"]
    chk = df[(df.part == "checks") & (df.drift_mm_per_100 == top_rate) & (df.n_per_policy == top_n)]
    warn = chk[chk.test == CHECK_LABELS["any"]].groupby(["design", "policy"]).p_reject.first()
    size0 = df[(df.part == "checks") & (df.drift_mm_per_100 == df.drift_mm_per_100.min())]
    curve_txt = "; ".join(
        f"{p}: {100 * (k[0] / m[0]):.0f}% at 0 mm, {100 * (k[-1] / m[-1]):.0f}% at {g[-1]:g} mm"
        for p in policies
        for g, k, m in [offset_rates(curve, p)]
    )
    return (
        f"Session of 2n trials, offset rate*j/100 mm along world y at session trial j; success "
        f"against offset from the MuJoCo scene ({curve_txt}), interpolated linearly. Fisher's "
        f"two-sided test at alpha = {alpha:g}. At {top_rate:g} mm per 100 trials and n = "
        f"{top_n} per policy: two equal policies are declared different "
        f"{100 * eq.loc[blk, 'false_win']:.1f}% of the time when blocked vs "
        f"{100 * eq.loc[itl, 'false_win']:.1f}% interleaved (bias "
        f"{eq.loc[blk, 'bias_pts']:+.1f} vs {eq.loc[itl, 'bias_pts']:+.1f} points); "
        f"{policies[0]} vs {policies[1]}: power {100 * ab.loc[blk, 'power']:.1f}% blocked vs "
        f"{100 * ab.loc[itl, 'power']:.1f}% interleaved, bias {ab.loc[blk, 'bias_pts']:+.1f} vs "
        f"{ab.loc[itl, 'bias_pts']:+.1f} points. The command's warning (any check at alpha/3) "
        f"flags each policy's own {top_n} trials with probability "
        + ", ".join(
            f"{100 * warn.loc[(DESIGNS[d], p)]:.0f}% ({p}, {d})"
            for d in DESIGNS
            for p in dict.fromkeys(policies)
        )
        + f"; without drift each check rejects at most {100 * size0.p_reject.max():.1f}% of "
        "the time. bias_pts = E[rate_B - rate_A] minus the session-average difference; "
        "false_win = any rejection between equal policies, or a significant win of the policy "
        "that is worse without drift."
    )


def drift_table(
    curve: pd.DataFrame,
    policies: list[str],
    rates: list[float],
    n_per_policy: list[int],
    alpha: float,
    mc_sims: int,
    study_seed: int,
) -> pd.DataFrame:
    """T36: false wins, bias and power of blocked vs interleaved sessions under drift, and the
    power of the independence checks (see the module docstring for the model).

    Parameters
    ----------
    curve : DataFrame
        :func:`simulate_offset_curve`'s rows (``policy``, ``bias_y_mm`` = offset, ``success``).
    policies : [str, str]
        A and B; "equal" runs A in both arms.
    rates : list of float
        Drift rates, mm per 100 session trials.
    n_per_policy : list of int
        Trials per policy.
    alpha : float
        Level of Fisher's test and of each check (the warning rule uses alpha / 3 each).
    mc_sims : int
        Simulated logs per row of the warning rule.
    study_seed : int
        Root seed (Monte Carlo streams keyed by policy, rate and n).
    """
    rows = _compare_rows(curve, list(policies), rates, n_per_policy, alpha)
    rows += _check_rows(curve, list(policies), rates, n_per_policy, alpha, mc_sims, study_seed)
    df = pd.DataFrame(rows)
    return captioned(
        df,
        "T36 Drift (servo heating): blocked vs interleaved, and the checks",
        _note(df, list(policies), alpha, curve),
    )


# ------------------------------------------------------------------ F10


def _drift_curve(ax, rows: pd.DataFrame, y, style: tuple[str, str], color, label: str) -> None:
    """One curve against drift (mm per 100 trials) on ``ax``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    rows : pandas.DataFrame
        The curve's rows, sorted by ``drift_mm_per_100`` (the x values).
    y : array_like
        The values plotted, one per row.
    style : tuple of str
        Line style and marker of the design.
    color
        The comparison's or policy's colour.
    label : str
        The legend entry.
    """
    line_style, marker = style
    ax.plot(rows.drift_mm_per_100, y, ls=line_style, marker=marker, ms=3, color=color, label=label)


def drift_figure(
    table: pd.DataFrame, curve: pd.DataFrame, figure_n: int, alpha: float, policies: list[str]
) -> Figure:
    """F10: false wins, bias and the checks' power against the drift rate at ``figure_n``.

    Top left: success against the constant offset (simulated, ±2 binomial SE bars). Top
    right: false-win rate of two equal policies, blocked vs interleaved, and the
    wrong-direction wins of A vs B. Bottom left: bias of the observed difference. Bottom
    right: how often the command's warning flags each policy's own trials, blocked vs
    interleaved (the per-check powers are in the table).
    """
    # heavy optional dependencies, only for figures (T36's job does without them)
    import matplotlib.pyplot as plt

    from evalsim.figures import OKABE_ITO, PAGE_WIDTH_IN

    fig, axes = plt.subplots(2, 2, figsize=(PAGE_WIDTH_IN, 6.4))
    ax_c, ax_f, ax_b, ax_p = axes.ravel()
    for i, policy in enumerate(dict.fromkeys(policies)):
        g, k, m = offset_rates(curve, policy)
        rate = k / m
        ax_c.errorbar(
            g,
            100 * rate,
            yerr=200 * np.sqrt(rate * (1 - rate) / m),
            fmt="o-",
            ms=3,
            lw=1,
            capsize=2,
            color=OKABE_ITO[i],
            label=f"policy {policy}",
        )
    ax_c.set_xlabel("constant perception offset (mm, world y)")
    ax_c.set_ylabel("success (%)")
    ax_c.set_title("Success against offset (±2 SE)")
    ax_c.legend(frameon=False)

    cmp = table[(table.part == "compare") & (table.n_per_policy == figure_n)]
    styles = {DESIGNS["blocked"]: ("-", "o"), DESIGNS["interleaved"]: ("--", "s")}
    for j, (comparison, g_cmp) in enumerate(cmp.groupby("comparison", sort=False)):
        for design, (ls, mk) in styles.items():
            g = g_cmp[g_cmp.design == design].sort_values("drift_mm_per_100")
            label = f"{_plain(comparison)}; order {design}"
            _drift_curve(ax_f, g, 100 * g.false_win, (ls, mk), OKABE_ITO[j], label)
            _drift_curve(ax_b, g, g.bias_pts, (ls, mk), OKABE_ITO[j], label)
    ax_f.axhline(100 * alpha, color="0.4", lw=0.8, ls=":", label=f"α = {alpha:g}")
    ax_f.set_xlabel("drift (mm per 100 trials)")
    ax_f.set_ylabel("false wins (%)")
    ax_f.set_title(f"False wins, n = {figure_n} per policy")
    ax_b.axhline(0, color="0.4", lw=0.8, ls=":")
    ax_b.set_xlabel("drift (mm per 100 trials)")
    ax_b.set_ylabel("bias of rate B − rate A (points)")
    ax_b.set_title("Bias against the session average")

    chk = table[
        (table.part == "checks")
        & (table.n_per_policy == figure_n)
        & (table.test == CHECK_LABELS["any"])
    ]
    for j, policy in enumerate(dict.fromkeys(policies)):
        for design, (ls, mk) in styles.items():
            g = chk[(chk.policy == policy) & (chk.design == design)]
            g = g.sort_values("drift_mm_per_100")
            label = f"{policy}'s own trials; order {design}"
            _drift_curve(ax_p, g, 100 * g.p_reject, (ls, mk), OKABE_ITO[j], label)
    ax_p.axhline(100 * alpha, color="0.4", lw=0.8, ls=":")
    # The data's range, not 0-100%: the warnings fire at most a few tens of percent here.
    top = max(float(np.nanmax(100 * chk.p_reject)) if len(chk) else 0.0, 100 * alpha)
    ax_p.set_ylim(0, min(100.0, 1.25 * top))
    ax_p.set_xlabel("drift (mm per 100 trials)")
    ax_p.set_ylabel("flags the drift (%)")
    ax_p.set_title(f"Warning (any check at α/3) on a policy's {figure_n} trials")
    # Legends under the panels (inside, they covered the alpha line and the curves): the
    # comparisons of the top-right and bottom-left panels, then the bottom-right panel's.
    h, lab = ax_f.get_legend_handles_labels()
    fig.legend(h, lab, loc="lower left", bbox_to_anchor=(0.0, 0.0), fontsize=6.5, frameon=False)
    h, lab = ax_p.get_legend_handles_labels()
    fig.legend(h, lab, loc="lower right", bbox_to_anchor=(1.0, 0.0), fontsize=6.5, frameon=False)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def _plain(comparison: str) -> str:
    """A comparison's name in words: "equal (A vs A)" -> "two equal policies (A against A)"."""
    text = comparison.replace(" vs ", " against ")
    return text.replace("equal (", "two equal policies (")
