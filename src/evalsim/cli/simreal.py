"""``evalsim simreal REAL_LOG SIM_LOG``: an interval for the real success rate that uses the
simulation, and what the simulation was worth in real trials.

The real log's trials need a ``condition`` id. Each real trial's *twin* is the simulated
trial of the same policy with the same (task, seed, condition); every other simulated trial
of the policy is one of the N further simulated trials. All numbers come from
:mod:`evalsim.stats.simreal.methods`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from evalsim._log_files import pairing_key
from evalsim.cli._common import (
    FORMATS,
    BadInput,
    Report,
    _open_unit,
    _pct,
    add_confidence_flag,
    add_json_flag,
)
from evalsim.cli._reading import add_reading_flags, reading_options
from evalsim.stats.names import SIMREAL_FULL_JOINT_RATIO, SIMREAL_METHODS

#: The methods ``--real-share`` applies to (the rest ignore it, and the command says so).
SHARED_METHODS = ("stratified_exact", "discordant_exact")

#: The largest n ``joint_exact`` builds tables for (:data:`evalsim.stats.simreal.joint.MAX_N`;
#: ``tests/test_simreal_joint.py`` checks they agree).
JOINT_MAX_N = 400
#: The largest n ``full_joint_exact`` builds tables for
#: (:data:`evalsim.stats.simreal.full_joint.MAX_N`; ``tests/test_simreal_cli.py`` checks it).
FULL_JOINT_MAX_N = 200

#: ``--method`` choices: the registry of :mod:`evalsim.stats.names` plus the methods
#: :data:`evalsim.stats.simreal.METHODS` appends to it (``tests/test_simreal_cli.py`` checks
#: that the two agree).
METHOD_CHOICES = SIMREAL_METHODS

# evalsim.stats modules are imported inside the functions that use them: they load numba
# kernels and SciPy, which a command on a small log should not pay for at start (issue 24).

_LABELS = {
    "clopper_pearson": "Clopper-Pearson (real only)",
    "wilson": "Wilson (real only)",
    "ppi": "PPI",
    "ppi_plus": "PPI++ (tuned lambda)",
    "stratified_exact": "stratified exact (sim + real)",
    "discordant_exact": "discordant exact (sim + real)",
    "joint_exact": "joint exact (sim + real)",
    "full_joint_exact": "full joint exact (sim + real)",
}

if TYPE_CHECKING:
    import pandas as pd


def _policy(real: pd.DataFrame, sim: pd.DataFrame, wanted: str | None) -> str:
    in_real = sorted(set(real["policy"]))
    in_sim = sorted(set(sim["policy"]))
    if wanted is not None:
        for name, have in (("real", in_real), ("simulated", in_sim)):
            if wanted not in have:
                raise BadInput(
                    f"policy {wanted!r} is not in the {name} log (policies: {', '.join(have)})"
                )
        return wanted
    only_real = [p for p in in_real if p not in in_sim]
    if only_real:
        raise BadInput(
            f"policy {only_real[0]!r} is only in the real log (simulated log has: "
            f"{', '.join(in_sim)})"
        )
    if len(in_real) > 1:
        raise BadInput(f"the real log holds several policies ({', '.join(in_real)}); give --policy")
    return in_real[0]


def _pairs(real: pd.DataFrame, sim: pd.DataFrame, real_path: str, sim_path: str):
    """(real outcomes, twin outcomes, further simulated outcomes) aligned by condition key."""
    keys = pairing_key(real)
    if not keys:
        raise BadInput(f"{real_path}: no condition column; twins are matched by condition id")
    missing = [k for k in keys if k not in sim.columns]
    if missing:
        raise BadInput(f"{sim_path}: no {', '.join(missing)} column to match the real trials by")
    for path, df in ((real_path, real), (sim_path, sim)):
        dup = df.duplicated(keys, keep=False)
        if dup.any():
            row = df[dup].iloc[0]
            ident = "/".join(str(row[k]) for k in keys)
            raise BadInput(f"{path}: condition {ident} appears more than once for this policy")
    merged = real[[*keys, "success"]].merge(
        sim[[*keys, "success"]], on=keys, how="left", suffixes=("_real", "_sim"), indicator=True
    )
    lost = merged["_merge"] == "left_only"
    if lost.any():
        row = merged[lost].iloc[0]
        ident = "/".join(str(row[k]) for k in keys)
        raise BadInput(
            f"{sim_path}: no simulated twin for real condition {ident} "
            f"({int(lost.sum())} of {len(real)} real trials have none)"
        )
    import pandas as pd  # heavy: simreal reads its logs with pandas

    twin_keys = pd.MultiIndex.from_frame(real[keys])
    is_twin = pd.MultiIndex.from_frame(sim[keys]).isin(twin_keys)
    return (
        merged["success_real"].to_numpy(dtype=np.int64),
        merged["success_sim"].astype(bool).to_numpy(dtype=np.int64),
        sim.loc[~is_twin, "success"].to_numpy(dtype=np.int64),
    )


def cmd_simreal(args) -> Report:
    from evalsim.trial_logs import read_trial_logs  # pandas: see _pairs

    options = reading_options(args)
    real_all = read_trial_logs([args.real_log], options=options)
    sim_all = read_trial_logs([args.sim_log], options=options)
    policy = _policy(real_all, sim_all, args.policy)
    real = real_all[real_all["policy"] == policy].reset_index(drop=True)
    sim = sim_all[sim_all["policy"] == policy].reset_index(drop=True)
    y, t, further = _pairs(real, sim, args.real_log, args.sim_log)
    if further.size < y.size:
        raise BadInput(
            f"{args.sim_log}: N = {further.size} simulated trials beyond the twins, fewer "
            f"than the n = {y.size} real ones; the simulation must be the larger sample"
        )
    from evalsim.stats.simreal.methods import recommended, simreal_data, simreal_intervals

    data = simreal_data(y, t, int(further.sum()), int(further.size))
    best = recommended(data.n, data.n_sim)
    method = best if args.method is None else args.method
    results = simreal_intervals(data, args.confidence, args.real_share)
    chosen = results[method]
    cp = results["clopper_pearson"]
    gain = chosen.width < cp.width
    worth = chosen.effective_n - data.n if gain else 0.0
    if method in ("clopper_pearson", "wilson"):
        verdict = "a real-only method was asked for; the simulation is not used"
    elif gain:
        verdict = f"the simulation was worth about {worth:.0f} real trials"
    else:
        verdict = "the simulation did not help; use the real-only interval"
    level = f"{100 * args.confidence:g}%"
    rep = Report(_record(policy, data, args.confidence, method, results, worth, verdict))
    corr = "undefined" if math.isnan(data.correlation) else f"{data.correlation:.3f}"
    rep.line(
        f"policy {policy}: {data.k_real}/{data.n} real successes ({_pct(data.k_real / data.n)}), "
        f"{data.k_sim}/{data.n_sim} simulated ({_pct(data.k_sim / data.n_sim)}); "
        f"sim-real correlation {corr}, sim bias {100 * data.sim_bias:+.1f} points"
    )
    rows = [
        [
            _LABELS[m],
            r.validity,
            f"{r.lower:.4f}",
            f"{r.upper:.4f}",
            f"{r.width:.4f}",
            "inf" if math.isinf(r.effective_n) else f"{r.effective_n:.1f}",
        ]
        for m, r in results.items()
    ]
    rep.table(
        f"{level} intervals for the real success rate",
        ["method", "validity", "lower", "upper", "width", "effective n"],
        rows,
    )
    rep.line(
        f"{_LABELS[method]} ({chosen.validity}): [{chosen.lower:.4f}, {chosen.upper:.4f}]; "
        f"real-only Clopper-Pearson: [{cp.lower:.4f}, {cp.upper:.4f}]."
    )
    rep.line(f"Verdict: {verdict}.")
    _notes(rep, args.real_share, data.n, method, results, best)
    return rep


def _share(text: str) -> float:
    return _open_unit(text)


def register(sub) -> None:
    """Add the ``simreal`` subcommand to the ``evalsim`` parser."""
    p = sub.add_parser(
        "simreal", help="real success rate from real trials plus their simulated twins"
    )
    p.add_argument("real_log", metavar="REAL_LOG", help="real trials, with condition ids")
    p.add_argument("sim_log", metavar="SIM_LOG", help="simulated trials (twins and others)")
    p.add_argument("--policy", help="the policy to analyse (needed when a log holds several)")
    add_confidence_flag(p)
    p.add_argument(
        "--method",
        choices=METHOD_CHOICES,
        default=None,
        help="the interval to report (default: full_joint_exact when the simulated trials "
        f"are at most {SIMREAL_FULL_JOINT_RATIO} times the real ones, else joint_exact; "
        "both finite-sample, valid at every n)",
    )
    p.add_argument(
        "--real-share",
        type=_share,
        default=None,
        help="stratified_exact and discordant_exact: share of alpha on the real-only "
        "interval (default: each method's own)",
    )
    add_json_flag(p)
    add_reading_flags(p)
    p.add_argument(
        "--format", choices=FORMATS, default=None, help="text (default), markdown, latex or json"
    )
    p.set_defaults(run=cmd_simreal)


def _record(policy, data, confidence, method, results, worth, verdict) -> dict:
    """The JSON record of ``simreal``: the counts, the chosen interval and every method's."""
    chosen, cp = results[method], results["clopper_pearson"]
    return {
        "policy": policy,
        "n_real": data.n,
        "k_real": data.k_real,
        "n_sim": data.n_sim,
        "k_sim": data.k_sim,
        "pairs": {"n11": data.n11, "n10": data.n10, "n01": data.n01, "n00": data.n00},
        "correlation": data.correlation,
        "sim_bias": data.sim_bias,
        "confidence": confidence,
        "method": method,
        "validity": chosen.validity,
        "interval": [chosen.lower, chosen.upper],
        "real_only_interval": [cp.lower, cp.upper],
        "effective_n": chosen.effective_n,
        "worth_real_trials": worth,
        "verdict": verdict,
        "methods": {
            m: {
                "validity": r.validity,
                "interval": [r.lower, r.upper],
                "width": r.width,
                "lambda": r.lam,
                "effective_n": r.effective_n,
            }
            for m, r in results.items()
        },
    }


def _notes(rep: Report, real_share, n: int, method: str, results: dict, best: str) -> None:
    """The notes under the table: --real-share unused, table-built methods past their n, an
    asymptotic method's coverage."""
    chosen = results[method]
    if real_share is not None and method not in SHARED_METHODS:
        rep.line(
            f"note: --real-share applies to {' and '.join(SHARED_METHODS)} only; "
            f"{method} does not use it."
        )
    # each table-built method: its largest n and the method whose interval it gives above it
    limits = {
        "joint_exact": (JOINT_MAX_N, "discordant_exact"),
        "full_joint_exact": (FULL_JOINT_MAX_N, "joint_exact"),
    }
    for name, (limit, instead) in limits.items():
        if name in results and n > limit:
            rep.line(
                f"note: {name} builds its exact tables for n <= {limit}; at n = "
                f"{n} its row is {instead}'s interval."
            )
    if chosen.validity == "asymptotic":
        rep.line(
            "note: this method's coverage is asymptotic and falls short at small n; "
            f"{best} is valid at every n."
        )
