"""T41 and F13: every stopping rule on one exact table (issue 44).

At each scenario (STEP's, from ``sequential.step``, and ``sequential.stopping_rules.scenarios``)
every rule is brought to the same power (``stopping_rules.power``): its maximum n is the least
that reaches it (bisection), never above ``sequential.n_max``. The optimal paired design is
built at ``n_max`` itself, so among paired walk designs of that power nothing has fewer
expected pairs (:mod:`evalsim.stats.sequential.optimal`), and each row's expected trials are
divided by its. All numbers are exact (dynamic programs), none simulated. STEP's published
power and ESS (at its own power, 200 per policy) are a reference column, with the optimal
paired design at STEP's power beside them.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.stats import binom

from evalsim.figures import OKABE_ITO, PAGE_WIDTH_IN
from evalsim.stats.sequential.anytime import paired_anytime_design, unpaired_anytime_design
from evalsim.stats.sequential.designs import operating_characteristics, unpaired_design
from evalsim.stats.sequential.optimal import optimal_paired_design, unpaired_lower_bound
from evalsim.stats.sequential.optimise import fixed_n_for_power, fixed_n_power, optimise_design
from evalsim.stats.sequential.paired import paired_design
from evalsim.stats.sequential.zlooks import peer_bounds, zlook_oc, zlook_type1

__all__ = ["stopping_rules_figure", "stopping_rules_table"]

#: Boundary shapes b tried by the unpaired design optimised for one alternative.
_SHAPE_GRID = (0.0, 0.1, 0.2, 0.3, 0.5)


def _least_n(power_at, target, n_hi):
    """Least n in 1..n_hi with power_at(n) >= target (bisection; None if n_hi falls short)."""
    if power_at(n_hi) < target:
        return None
    lo, hi = 0, n_hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _row(scenario, rule, kind, n, ess1, ess0, type1, power, note=""):
    return {
        "p_A": scenario[0],
        "p_B": scenario[1],
        "rule": rule,
        "kind": kind,
        "max n": n,
        "ESS under H1": ess1,
        "ESS under H0": ess0,
        "exact type I": type1,
        "exact power": power,
        "note": note,
    }


def _design_rows(scenario, rule, make, target, n_max, note):
    """A row of a design family at its least n_max reaching the power."""
    pa, pb = scenario
    cache = {}

    def power_at(n):
        if n not in cache:
            d = make(n)
            cache[n] = (d, operating_characteristics(d, pa, pb))
        return cache[n][1].power

    n = _least_n(power_at, target, n_max)
    if n is None:
        d = make(n_max)
        oc = operating_characteristics(d, pa, pb)
        return _row(
            scenario,
            rule,
            d.kind,
            n_max,
            oc.ess,
            math.nan,
            d.certificate.upper,
            oc.power,
            f"power {target} not reached within {n_max}; {note}",
        )
    d, oc = cache[n]
    oc0 = operating_characteristics(d, pa, pa)
    return _row(scenario, rule, d.kind, n, oc.ess, oc0.ess, d.certificate.upper, oc.power, note)


def _optimal_row(scenario, rule, alpha, power, n_max, note, ess_h0=True):
    """The row of the optimal paired design of ``power`` at ``n_max`` (NaNs and the reason when
    there is none).

    ``note(opt, oc)`` words the row's note from the design and its operating characteristics
    under H1; ``ess_h0=False`` leaves the expected pairs under H0 out (NaN).
    """
    pa, pb = scenario
    try:
        opt = optimal_paired_design(pa, pb, alpha, power, n_max)
        d = opt.design
        oc = operating_characteristics(d, pa, pb)
        ess0 = operating_characteristics(d, pa, pa).ess if ess_h0 else math.nan
        return _row(
            scenario,
            rule,
            "paired",
            n_max,
            oc.ess,
            ess0,
            d.certificate.upper,
            oc.power,
            note(opt, oc),
        )
    except ValueError as e:
        nan = math.nan
        return _row(scenario, rule, "paired", n_max, nan, nan, nan, nan, str(e))


def _mcnemar_type1(n, alpha):
    """Exact worst size of the one-sided exact McNemar test over D = 0..n discordant pairs."""
    worst = 0.0
    for d in range(1, n + 1):
        sf = binom.sf(np.arange(d + 1) - 1, d, 0.5)
        ok = sf <= alpha * (1 + 1e-7)
        if ok.any():
            worst = max(worst, float(sf[np.flatnonzero(ok)[0]]))
    return worst


def stopping_rules_table(
    alpha, n_max, step, scenarios, power, peer_looks, null_rates, optimal_only=False
) -> pd.DataFrame:
    """T41: one row per stopping rule and scenario, all exact.

    Parameters
    ----------
    alpha : float
        Level of every rule.
    n_max : int
        The common maximum: pairs (paired rules) or trials per policy (unpaired ones).
    step : list of dict
        STEP's published figures (``p_a``, ``p_b``, ``power``, ``ess``); their scenarios
        come first.
    scenarios : list of (p_A, p_B)
        Further scenarios (the lesson's rates).
    power : float
        The power every rule is brought to, and the optimal design's floor.
    peer_looks : int
        Looks of fieldtrial's O'Brien-Fleming rule on the McNemar z.
    null_rates : int
        Discordance rates on which that rule's exact type I is maximised.
    optimal_only : bool
        Only the optimal design's rows (benchmarks).

    Returns
    -------
    pandas.DataFrame
    """
    step_at = {(float(s["p_a"]), float(s["p_b"])): s for s in step}
    order = list(step_at) + [(float(a), float(b)) for a, b in scenarios]
    order = list(dict.fromkeys(order))
    anytime_u = unpaired_anytime_design(alpha, n_max)
    rows = []
    for sc in order:
        pa, pb = sc
        p10, p01 = pa * (1 - pb), (1 - pa) * pb
        block = [
            _optimal_row(
                sc,
                "optimal (least expected pairs)",
                alpha,
                power,
                n_max,
                lambda opt, oc: f"Lagrangian lower bound {opt.lower_bound:.2f}; futility binding",
            )
        ]
        opt_ess = block[0]["ESS under H1"]
        if not optimal_only:
            n_fix = fixed_n_for_power(power, pa, pb, alpha, "paired", window=0)
            block.append(
                _row(
                    sc,
                    "fixed-n exact McNemar",
                    "paired",
                    n_fix,
                    n_fix,
                    n_fix,
                    _mcnemar_type1(n_fix, alpha),
                    fixed_n_power(n_fix, pa, pb, alpha, "paired"),
                    "",
                )
            )
            for fam, label in (("pocock", "Pocock"), ("obrien-fleming", "O'Brien-Fleming")):
                block.append(
                    _design_rows(
                        sc,
                        f"{label} (every pair)",
                        lambda n, f=fam: paired_design(alpha, n, "one-sided", f),
                        power,
                        n_max,
                        "spending in discordant pairs",
                    )
                )
            block.append(
                _design_rows(
                    sc,
                    "anytime e-process (beta mixture)",
                    lambda n: paired_anytime_design(alpha, n),
                    power,
                    n_max,
                    "valid at any stop; truncated at max n",
                )
            )

            def peer_power(n, p10=p10, p01=p01):
                return zlook_oc(n, peer_looks, peer_bounds(n, peer_looks, alpha), p10, p01)[
                    "reject"
                ]

            n_peer = _least_n(peer_power, power, n_max) or n_max
            bounds = peer_bounds(n_peer, peer_looks, alpha)
            o1 = zlook_oc(n_peer, peer_looks, bounds, p10, p01)
            o0 = zlook_oc(n_peer, peer_looks, bounds, pa * (1 - pa), pa * (1 - pa))
            t1, q_at = zlook_type1(n_peer, peer_looks, bounds, null_rates)
            block.append(
                _row(
                    sc,
                    f"fieldtrial {peer_looks}-look O'Brien-Fleming, McNemar z",
                    "paired",
                    n_peer,
                    o1["ess"],
                    o0["ess"],
                    t1,
                    o1["reject"],
                    f"normal boundaries; worst discordance rate q = {q_at:.3f}",
                )
            )
            n_fisher = fixed_n_for_power(power, pa, pb, alpha, window=0)
            grid = np.linspace(0.0025, 0.9975, null_rates)
            t1f = max(
                fixed_n_power(n_fisher, p, p, alpha) for p in grid[:: max(1, null_rates // 41)]
            )
            block.append(
                _row(
                    sc,
                    "fixed-n exact Fisher",
                    "unpaired",
                    n_fisher,
                    n_fisher,
                    n_fisher,
                    t1f,
                    fixed_n_power(n_fisher, pa, pb, alpha),
                    "type I: max over 41 common rates",
                )
            )
            pocock_u = _design_rows(
                sc,
                "Pocock (every pair)",
                lambda n: unpaired_design(alpha, n),
                power,
                n_max,
                "pooled z, certified over p",
            )
            block.append(pocock_u)
            block.append(_anytime_unpaired_row(sc, anytime_u, power, n_max))
            block.extend(_unpaired_bound_row(sc, block, pocock_u, alpha, power))
        for r in block:
            r["ess_ratio_to_optimal"] = r["ESS under H1"] / opt_ess
            r.setdefault("ess_ratio_to_unpaired_bound", math.nan)
            s = step_at.get(sc)
            r["STEP power"] = math.nan if s is None else s["power"]
            r["STEP ESS"] = math.nan if s is None else s["ess"]
        s = step_at.get(sc)
        if s is not None and not optimal_only:
            r = _optimal_row(
                sc,
                "optimal at STEP's power",
                alpha,
                min(float(s["power"]), 0.999),
                n_max,
                lambda opt, oc, s=s: (
                    "beats STEP" if oc.ess < s["ess"] else "STEP lower: see caption"
                ),
                ess_h0=False,
            )
            r["ess_ratio_to_optimal"] = math.nan
            r["ess_ratio_to_unpaired_bound"] = math.nan
            r["STEP power"], r["STEP ESS"] = s["power"], s["ess"]
            block.append(r)
        rows.extend(block)
    df = pd.DataFrame(rows)
    df.attrs["title"] = "T41: every stopping rule on one exact table"
    return df


def _unpaired_bound_row(sc, block, pocock_u, alpha, power) -> list[dict]:
    """The unpaired lower bound at the unpaired Pocock design's max n, and the ratios to it.

    Every unpaired design of max n at most that, type I at most alpha at the mean rate and
    the power has at least these expected trials
    (:func:`evalsim.stats.sequential.optimal.unpaired_lower_bound`); the unpaired rows of at
    most that max n get ``ess_ratio_to_unpaired_bound``.
    """
    if not pocock_u["exact power"] >= power:
        return []
    n_b = int(pocock_u["max n"])
    out = []
    try:  # the shape family optimised for this one alternative at the same max n
        res = optimise_design([sc], alpha, n_b, min_power=[power], b_grid=_SHAPE_GRID, refine=0.0)
        d = res.design
        oc = operating_characteristics(d, *sc)
        oc0 = operating_characteristics(d, sc[0], sc[0])
        out.append(
            _row(
                sc,
                "optimised shape (this alternative)",
                "unpaired",
                n_b,
                oc.ess,
                oc0.ess,
                d.certificate.upper,
                oc.power,
                f"c_t = a (t/n)^-b, b = {d.boundary['b']:.2f}, certified over p",
            )
        )
    except ValueError:
        pass
    block = block + out
    bound = unpaired_lower_bound(sc[0], sc[1], alpha, power, n_b)
    for r in block:
        if r["kind"] == "unpaired" and r["max n"] <= n_b:
            r["ess_ratio_to_unpaired_bound"] = r["ESS under H1"] / bound
    row = _row(
        sc,
        "lower bound, any unpaired design",
        "unpaired",
        n_b,
        bound,
        math.nan,
        alpha,
        power,
        "Lagrangian dual bound: every design of max n <= this, type I <= alpha at the "
        "mean rate and this power",
    )
    row["ess_ratio_to_unpaired_bound"] = 1.0
    return [*out, row]


def _anytime_unpaired_row(sc, design, power, n_max):
    """The unpaired e-process truncated at the least n reaching the power (rows do not change)."""

    from evalsim.stats.sequential.designs import certify_type1

    pa, pb = sc

    def cut(n):
        r = design.rows
        rows = {k: (v[:n, : n + 1].copy() if v.ndim == 2 else v[:n].copy()) for k, v in r.items()}
        return replace(design, n_max=n, look_sizes=design.look_sizes[:n].copy(), rows=rows)

    def power_at(n):
        return operating_characteristics(cut(n), pa, pb).power

    n = _least_n(power_at, power, n_max)
    note = "2x2 safe test (mixture); valid at any stop"
    if n is None:
        n, note = n_max, f"power {power} not reached within {n_max}; " + note
    d = cut(n)
    oc = operating_characteristics(d, pa, pb)
    oc0 = operating_characteristics(d, pa, pa)
    return _row(
        sc,
        "anytime e-process (2x2 mixture)",
        "unpaired",
        n,
        oc.ess,
        oc0.ess,
        certify_type1(d).upper,
        oc.power,
        note,
    )


def stopping_rules_figure(table: pd.DataFrame, power: float = 0.8):
    """F13: each rule's expected trials over the optimal design's, by scenario.

    Rows of T41 that reach ``power`` only; a scenario where no paired design reaches it
    within n_max has no optimum and is left out.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    t = table[np.isfinite(table["ess_ratio_to_optimal"])]
    t = t[(t["rule"] != "optimal (least expected pairs)") & (t["exact power"] >= power - 1e-9)]
    rules = list(dict.fromkeys(t["rule"] + " [" + t["kind"] + "]"))
    scen = list(dict.fromkeys(zip(t["p_A"], t["p_B"], strict=True)))
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN, 0.6 * PAGE_WIDTH_IN))
    colors = [OKABE_ITO[k % len(OKABE_ITO)] for k in range(len(scen))]
    markers = "osD^vP*X"
    for j, (pa, pb) in enumerate(scen):
        sub = t[(t["p_A"] == pa) & (t["p_B"] == pb)]
        y = [
            rules.index(f"{r} [{k}]") + (j - len(scen) / 2) * 0.08
            for r, k in zip(sub["rule"], sub["kind"], strict=True)
        ]
        ax.scatter(
            sub["ess_ratio_to_optimal"],
            y,
            color=colors[j],
            marker=markers[j % 8],
            label=f"{pa:g} vs {pb:g}",
            s=18,
        )
    ax.axvline(1.0, color="0.3", lw=0.8)
    ax.set_yticks(range(len(rules)), rules, fontsize=7)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator([0.8, 1.0, 1.25, 1.5, 2.0, 2.5]))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("expected trials / optimal paired design's (same alpha, power)")
    ax.legend(
        fontsize=6,
        title="p_A vs p_B",
        title_fontsize=6,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )
    ax.set_title("F13: the cost of each stopping rule against the optimum", fontsize=8)
    fig.tight_layout()
    return fig
