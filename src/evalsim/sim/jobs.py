"""What one simulation job needs from the config, and nothing else.

Snakemake reruns a job when its ``params`` change. If every simulation job carried the whole
config, adding a policy or a sweep sigma would rerun every chunk, although the chunks of the
other policies come out byte-identical (the draws are keyed by task, policy, seed and trial,
see :mod:`evalsim.sim.rollout`). So each job's params hold a *job config*: the study seed,
the scene, its own task and policy, and the simulation keys that change a trial's record.
The same job config is what the job's script runs and stamps into the Parquet metadata, so a
chunk's bytes depend on what its params say and on nothing else.
"""

from __future__ import annotations

import copy

from evalsim.config import canonical

# Simulation keys that decide how many trials there are and how they are split into jobs,
# not what one trial records: a chunk's own (start, stop) is in its params instead.
# ``document`` (the lesson's counts, read by T30 and the calibration) changes no trial either.
COUNT_KEYS = ("n_seeds", "trials_per_seed", "trials_per_chunk", "sweep", "document")


def _named(items: list[dict], name: str, key: str) -> dict:
    for item in items:
        if item["name"] == name:
            return item
    names = ", ".join(i["name"] for i in items)
    raise ValueError(f"unknown {key} {name!r}; configured: {names}")


def _trial_keys(config: dict) -> dict:
    sim = config.get("simulation", {})
    return {k: copy.deepcopy(v) for k, v in sim.items() if k not in COUNT_KEYS}


def chunk_config(config: dict, task: str, policy: str) -> dict:
    """The job config of a pool chunk of (``task``, ``policy``): see the module docstring.

    Parameters
    ----------
    config : dict
        The checked study config.
    task, policy : str
        Names of a configured task and policy.

    Returns
    -------
    dict
        A config with the same layout as the study's, holding only ``study_seed``,
        ``scene``, the one task, the one policy and the trial-level simulation keys.
    """
    return canonical(
        {
            "study_seed": config["study_seed"],
            "scene": copy.deepcopy(config.get("scene", {})),
            "tasks": [copy.deepcopy(_named(config["tasks"], task, "task"))],
            "policies": [copy.deepcopy(_named(config["policies"], policy, "policy"))],
            "simulation": _trial_keys(config),
        }
    )


def pools_config(config: dict) -> dict:
    """The job config of the merged pools: every task and policy, without the sweep."""
    sim = {k: copy.deepcopy(v) for k, v in config["simulation"].items() if k != "sweep"}
    return canonical(
        {
            "study_seed": config["study_seed"],
            "scene": copy.deepcopy(config.get("scene", {})),
            "tasks": copy.deepcopy(config["tasks"]),
            "policies": copy.deepcopy(config["policies"]),
            "simulation": sim,
        }
    )


def sweep_config(config: dict, merged: bool = False) -> dict:
    """The job config of one sigma of the sweep: the sweep's task and no policy.

    The sigma and the trial count of one job go in its params beside this config; with
    ``merged=True`` the config also holds the sweep's sigma list and trial count (the job
    that merges the sweep).
    """
    sweep = config["simulation"].get("sweep", {})
    sweep_task = sweep.get("task") or config["tasks"][0]["name"]
    sim = _trial_keys(config)
    sim["sweep"] = {"task": sweep_task}
    if merged:
        sim["sweep"].update(sigma_mm=list(sweep["sigma_mm"]), trials=sweep["trials"])
    return canonical(
        {
            "study_seed": config["study_seed"],
            "scene": copy.deepcopy(config.get("scene", {})),
            "tasks": [copy.deepcopy(_named(config["tasks"], sweep_task, "task"))],
            "policies": [],
            "simulation": sim,
        }
    )


def sigma_label(sigma_mm: float) -> str:
    """File-name label of a sweep sigma: ``9.0 -> '9'``, ``2.5 -> '2.5'`` (keyed by value,
    so adding a sigma to the list adds one file and renames none)."""
    return f"{float(sigma_mm):g}"


def twin_chunk_config(config: dict, gap: str, task: str, policy: str) -> dict:
    """The job config of a twin chunk (:mod:`evalsim.sim.twin`): the pool chunk's job config
    of (``task``, ``policy``) plus the one gap and the twin noise, so that adding or changing
    a gap reruns only that gap's twins."""
    sr = config["simreal"]
    gaps = [copy.deepcopy(_named(sr["gaps"], gap, "simreal gap"))]
    job = chunk_config(config, task, policy)
    job["simreal"] = {"gaps": gaps, "twin_noise": sr["twin_noise"]}
    return canonical(job)


def twins_config(config: dict, gap: str) -> dict:
    """The job config of one gap's merged twin pool: the pools' job config and the simreal
    keys that decide which twins of that gap exist (not the resampling's)."""
    sr = config["simreal"]
    job = pools_config(config)
    job["simreal"] = {k: copy.deepcopy(sr[k]) for k in ("task", "policies", "seeds", "twin_noise")}
    job["simreal"]["gaps"] = [copy.deepcopy(_named(sr["gaps"], gap, "simreal gap"))]
    return canonical(job)


def offset_job_config(config: dict, policies) -> dict:
    """What the offset simulation depends on, and nothing else (the rule's ``job`` param).

    The study seed, the scene, the first task, the compared policies and the drift key set
    to 0 (the offset is the drift); a change elsewhere in the config does not rerun it.
    """
    names = list(dict.fromkeys(policies))
    chosen = [copy.deepcopy(p) for p in config["policies"] if p["name"] in names]
    if len(chosen) != len(names):
        have = ", ".join(p["name"] for p in config["policies"])
        raise ValueError(f"drift policies {names} are not all configured (policies: {have})")
    return {
        "study_seed": config["study_seed"],
        "scene": copy.deepcopy(config.get("scene", {})),
        "tasks": [copy.deepcopy(config["tasks"][0])],
        "policies": chosen,
        "simulation": {"drift_mm_per_100_trials": 0.0},
    }
