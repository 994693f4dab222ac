"""T31-T33: sequential designs, their operating characteristics, the pools check.

Builders called by ``workflow/scripts/make_product.py`` (designs read from the design files
of rule ``sequential_design``, pools from ``results/pools/pools.parquet``):

* :func:`build_design` -- one design of the config's ``sequential.designs`` list;
* :func:`designs_table` (T31) -- boundaries summary and certified maximum type-I error;
* :func:`oc_table` (T32) -- power and ESS at the scenarios, the fixed-n exact test of the
  same power, STEP's published figures beside them;
* :func:`pools_table` (T33) -- sequential evaluations drawn from the MuJoCo pools.

The figures F05 and F06 are :mod:`evalsim.products.sequential.figures`; the bench sheet
(F07) is :func:`evalsim.figures.sequential_sheet.bench_sheet`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evalsim.products._common import titled_frame
from evalsim.seeding import rng_for
from evalsim.stats.boundaries import BOUNDARY_FAMILIES
from evalsim.stats.sequential.builders import FAMILY_BUILDERS
from evalsim.stats.sequential.core import SequentialDesign
from evalsim.stats.sequential.designs import (
    operating_characteristics,
    unpaired_family_design,
)
from evalsim.stats.sequential.io import replay_paired, replay_unpaired
from evalsim.stats.sequential.optimise import fixed_n_for_power, optimise_design
from evalsim.stats.sequential.paired import paired_design

__all__ = [
    "build_design",
    "designs_table",
    "oc_table",
    "pools_table",
]


def build_design(
    spec: dict, alpha: float, n_max: int, alternative: str, looks, futility: dict, optimise: dict
) -> SequentialDesign:
    """The design named by one entry of ``sequential.designs`` (see config/README.md).

    The entry's ``boundary`` is a family of :data:`evalsim.stats.sequential.BOUNDARY_FAMILIES`;
    its parameter, if it has one, is the entry's key of that name. ``optimised`` is chosen by
    :func:`evalsim.stats.sequential.optimise.optimise_design` from ``optimise``.
    """
    fut = futility if spec.get("futility", False) else None
    family = BOUNDARY_FAMILIES[spec["boundary"]]
    parameter = {} if family.parameter is None else {family.parameter: spec[family.parameter]}
    if family.id in FAMILY_BUILDERS:  # optimal: at the first stated alternative and floor
        p_a, p_b = optimise["alternatives"][0]
        floors = optimise.get("min_power")
        return FAMILY_BUILDERS[family.id](
            spec["kind"], alpha, n_max, alternative, p_a, p_b, floors[0] if floors else 0.8
        )
    if spec["kind"] == "paired":
        return paired_design(alpha, n_max, alternative, family.id, futility=fut, **parameter)
    if family.id == "optimised":
        res = optimise_design(
            [tuple(a) for a in optimise["alternatives"]],
            alpha,
            n_max,
            min_power=optimise.get("min_power"),
            alternative=alternative,
            looks=looks,
            b_grid=tuple(optimise["b_grid"]),
            refine=optimise["refine"],
            futility=fut,
        )
        return res.design
    return unpaired_family_design(
        family.id, alpha, n_max, alternative, looks, futility=fut, **parameter
    )


def _boundary_text(d: SequentialDesign) -> str:
    """T31's boundary column: the spending family and its unit, or the shape's formula.

    Spending families (:data:`evalsim.stats.sequential.BOUNDARY_FAMILIES`) are named by id,
    with their parameter; a family with a builder of its own by its label and parameters.
    """
    b = d.boundary
    fam = b.get("family")
    if fam == "shape":
        return f"c_t = {b['a']:.4f} (t/{d.n_max})^-{b['b']:.2f}"
    family = BOUNDARY_FAMILIES.get(fam)
    if family is not None and not family.spending:
        values = ", ".join(f"{k} = {v:g}" for k, v in b.items() if k != "family")
        return f"{family.label} ({values})" if values else family.label
    par = family.parameter if family is not None else None
    extra = f", {par} = {b[par]:g}" if par is not None and par in b else ""
    unit = "discordant pairs d/d_max" if d.kind == "paired" else "trials t/n_max"
    return f"{fam} spending in {unit}{extra}"


def designs_table(designs: dict[str, SequentialDesign]) -> pd.DataFrame:
    """T31: one row per design -- boundaries summary and the certified maximum type-I error."""
    rows = []
    for name, d in designs.items():
        c = d.certificate
        r = d.rows
        if d.kind == "paired":
            first = next((int(k) for k in range(1, d.d_max + 1) if r["upper"][k] <= k), None)
            earliest = f"{first} discordant pairs, all won by B" if first else "never"
            mid = d.d_max // 2
            middle = f"B alone >= {int(r['upper'][mid])} of {mid} discordant"
            last = f"final: >= {int(r['final_upper'][d.d_max])} of {d.d_max}"
        else:
            crit = r["crit"]
            ok = np.flatnonzero(np.isfinite(crit))
            earliest = (
                f"{int(d.look_sizes[ok[0]])} per policy (z >= {crit[ok[0]]:.3f})"
                if ok.size
                else "never"
            )
            mid = len(crit) // 2
            middle = f"z >= {crit[mid]:.3f} at {int(d.look_sizes[mid])}"
            last = f"z >= {crit[-1]:.3f} at {d.n_max}"
        rows.append(
            {
                "design": name,
                "kind": d.kind,
                "alternative": d.alternative,
                "alpha": d.alpha,
                "n_max": d.n_max,
                "looks": len(d.look_sizes) if d.kind == "unpaired" else "every pair",
                "boundary": _boundary_text(d),
                "futility": "none"
                if d.futility is None
                else f"z <= {d.futility['z']:g} from {d.futility['from']}",
                "earliest possible stop": earliest,
                "boundary at mid-way": middle,
                "boundary at the end": last,
                "certified max type-I": f"{c.upper:.7f}",
                "attained max type-I": f"{c.attained:.7f}",
                "worst case at": (
                    f"p = {c.p_at:.4f}" if c.p_at is not None else f"D = {c.discordant_at}"
                ),
                "certificate": c.method,
                "intervals": c.intervals,
                "certified <= alpha": bool(c.upper <= d.alpha),
                "note": (
                    "type-I certified over every common rate p in [0, 1] by Bernstein subdivision "
                    "(rounding allowance 1e-10 included)"
                    if d.kind == "unpaired"
                    else "type-I exact for every nuisance (drifting rates included): "
                    "worst case over "
                    "the number of discordant pairs at the stop"
                ),
            }
        )
    df = pd.DataFrame(rows)
    df.attrs["title"] = "T31: sequential designs and their certified maximum type-I error"
    return df


def oc_table(
    designs: dict[str, SequentialDesign], scenarios, step: list[dict] | None = None
) -> pd.DataFrame:
    """T32: exact power and ESS at each scenario, beside the fixed-n exact test of the same power.

    Paired designs assume the two outcomes of a pair independent given the condition
    (``p10 = p_A (1 - p_B)``), the least favourable case for pairing; their fixed-n
    yardstick is the exact McNemar test, the unpaired designs' one-sided Fisher's test (two
    one-sided tests at alpha/2 for two-sided designs). STEP's published figures (one-sided,
    unpaired, 200 per policy) are set beside the unpaired rows.
    """
    step_at = {(float(s["p_a"]), float(s["p_b"])): s for s in (step or [])}
    rows = []
    for name, d in designs.items():
        for p_a, p_b in scenarios:
            p_a, p_b = float(p_a), float(p_b)
            oc = operating_characteristics(d, p_a, p_b)
            row = {
                "design": name,
                "p_A": p_a,
                "p_B": p_b,
                "power": oc.power if p_a != p_b else math.nan,
                "type-I (p_A = p_B)": oc.rejection_prob if p_a == p_b else math.nan,
                "ESS": oc.ess,
                "median stop": oc.quantile(0.5),
                "90% stop": oc.quantile(0.9),
                "P(futility)": oc.verdicts["futility"],
            }
            if p_a != p_b and oc.power > 0.01:
                n_fixed = fixed_n_for_power(oc.power, p_a, p_b, d.alpha, d.kind, d.alternative)
                row["fixed-n of same power"] = n_fixed
                row["ESS saving vs fixed n"] = 1.0 - oc.ess / n_fixed
            else:
                row["fixed-n of same power"] = math.nan
                row["ESS saving vs fixed n"] = math.nan
            s = (
                step_at.get((p_a, p_b))
                if d.kind == "unpaired" and d.alternative == "one-sided"
                else None
            )
            row["STEP power"] = math.nan if s is None else s["power"]
            row["STEP ESS"] = math.nan if s is None else s["ess"]
            row["STEP fixed n"] = math.nan if s is None else s.get("fixed_n", math.nan)
            if s is not None:
                meets = oc.power >= s["power"] - 0.01 and oc.ess <= 1.05 * s["ess"]
                row["vs STEP"] = (
                    f"power {oc.power - s['power']:+.3f}, ESS x{oc.ess / s['ess']:.3f} "
                    f"({'meets' if meets else 'misses'} "
                    "power >= STEP - 0.01 and ESS <= 1.05 STEP)"
                )
            else:
                row["vs STEP"] = ""
            rows.append(row)
    return titled_frame(
        rows,
        "T32: sequential operating characteristics (exact)",
        "Power and ESS are exact (DP over the tallies). Fixed n: the smallest n from which the "
        "exact fixed-n test keeps the design's power for 10 more n. STEP's figures are as "
        "published in issue 13 (measured by its authors' decision table, not rerun here); "
        "our fixed-n column is recomputed for our design's own power, so it differs from "
        "STEP's fixed-n column where the powers differ.",
    )


def _pool_rates(pools: pd.DataFrame, task: str, policy: str, seed: int) -> np.ndarray:
    sel = pools[(pools["task"] == task) & (pools["policy"] == policy) & (pools["seed"] == seed)]
    if sel.empty:
        raise ValueError(
            f"no trials for task={task!r}, policy={policy!r}, seed={seed!r} in the pools"
        )
    return sel.sort_values("trial", kind="stable")["success"].to_numpy(dtype=bool)


def pools_table(
    pools: pd.DataFrame,
    designs: dict[str, SequentialDesign],
    policies,
    task: str | None,
    seed: int,
    experiments: int,
    study_seed: int,
) -> pd.DataFrame:
    """T33: sequential evaluations drawn from the pools vs the exact operating characteristics.

    Unpaired designs: each experiment draws the trials of A and B with replacement from their
    pools (A vs A: both from A's pool, independently), so the exact values are the OC at the
    pools' rates. Paired designs: each experiment draws conditions (trial ids, the same cube
    pose for both policies) with replacement and uses both policies' outcomes there; the exact
    values are the OC at the pool's discordance split (A-only, B-only frequencies). Paired
    "A vs A" compares A's pool with the pool of A's next training seed on the same poses (the
    seeds' perception biases differ, so it is close to, not exactly, a null).
    """
    names = [p["name"] if isinstance(p, dict) else str(p) for p in policies]
    a_name, b_name = names[0], names[1]
    task = task or str(pools["task"].iloc[0])
    sa = _pool_rates(pools, task, a_name, seed)
    sb = _pool_rates(pools, task, b_name, seed)
    # paired A vs A: the same poses run by A's next training seed (another draw of its bias)
    has_next = ((pools["policy"] == a_name) & (pools["seed"] == seed + 1)).any()
    sa_other = _pool_rates(pools, task, a_name, seed + 1) if has_next else None
    rows = []
    for dname, d in designs.items():
        if d.kind == "unpaired":
            cases = [("A vs B", sa, sb), ("A vs A", sa, sa)]
        else:
            cases = [("A vs B", sa, sb)]
            if sa_other is not None:
                cases.append((f"A vs A (seeds {seed} and {seed + 1})", sa, sa_other))
        for label, xa, xb in cases:
            rng = rng_for(study_seed, "sequential", "pools", dname, label)
            n = d.n_max
            if d.kind == "unpaired":
                ia = rng.integers(0, xa.size, size=(experiments, n))
                ib = rng.integers(0, xb.size, size=(experiments, n))
                look, verdict = replay_unpaired(d, xa[ia], xb[ib])
                stop_n = d.look_sizes[look]
                oc = operating_characteristics(d, float(xa.mean()), float(xb.mean()))
                rates = f"p_A = {xa.mean():.4f}, p_B = {xb.mean():.4f}"
            else:
                ic = rng.integers(0, min(xa.size, xb.size), size=(experiments, n))
                stop_n, verdict = replay_paired(d, xa[ic], xb[ic])
                p10 = float((xa & ~xb).mean())
                p01 = float((~xa & xb).mean())
                oc = operating_characteristics(d, p10=p10, p01=p01)
                rates = f"p10 = {p10:.4f}, p01 = {p01:.4f} (pool of {xa.size} poses)"
            for v, word in (
                (1, "B better"),
                (2, "A better"),
                (3, "futility"),
                (0, "no difference shown"),
            ):
                exact = oc.verdicts[word]
                if word == "A better" and not d.two_sided:
                    continue
                if word == "futility" and d.futility is None:
                    continue
                emp = float((verdict == v).mean())
                se = math.sqrt(max(exact * (1 - exact), 1e-12) / experiments)
                rows.append(
                    _pool_row(dname, label, rates, f"P({word})", exact, emp, se, experiments)
                )
            var = float(oc.stop_prob @ (oc.stop_sizes - oc.ess) ** 2)
            se = math.sqrt(var / experiments)
            rows.append(
                _pool_row(
                    dname, label, rates, "ESS", oc.ess, float(np.mean(stop_n)), se, experiments
                )
            )
    return pd.DataFrame(rows)


def _pool_row(design, case, rates, quantity, exact, empirical, se, experiments) -> dict:
    z = (empirical - exact) / se if se > 0 else 0.0
    return {
        "design": design,
        "case": case,
        "pool rates": rates,
        "quantity": quantity,
        "exact": exact,
        "drawn from pools": empirical,
        "MC SE": se,
        "z": z,
        "within 3 SE": bool(abs(z) <= 3.0),
        "experiments": experiments,
    }
