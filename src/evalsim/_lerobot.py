"""LeRobot's multi-task ``eval_info.json`` as ``lerobot-eval`` writes it today (issue 45,
items 11 and 23).

The file: ``per_task`` entries (``task_group``, ``task_id``, ``metrics.successes`` a list of
episode outcomes), ``per_group`` and ``overall``; since lerobot PR #4628 (2026-09-14) also
``n_episodes``, ``n_success``, ``pc_success`` and ``pc_success_ci95`` (a Wilson interval,
in percent) per task, per group and overall. An empty task or suite writes a bare ``NaN``
(Python's :mod:`json` reads it). :func:`per_task_trials` reads the episodes and checks every
count the file reports against them: a task's counts and its ``pc_success_ci95`` (against
the Wilson interval of its episodes, :func:`evalsim.stats.proportion.intervals.wilson_interval`),
each group's counts against its tasks, and the overall counts. Disagreements become
warnings; an empty task a note (it is reported, not dropped silently).

The file records no per-episode seeds: episode i of a run used the seed ``--seed + i``, so
two runs made with the same ``--seed`` started their episode i from the same state. Only
with ``pair_episodes`` (``--pair-episodes``) is the episode index used as the condition id.
"""

from __future__ import annotations

import math

from evalsim._log_files import TrialLogError, task_name

__all__ = [
    "CI_TOLERANCE_POINTS",
    "PAIR_EPISODES_NOTE",
    "both_forms_note",
    "empty_task_note",
    "per_task_trials",
]

#: Two reported rates or interval ends (percent) disagree beyond this many points (the file
#: may round to 0.1).
CI_TOLERANCE_POINTS = 0.05

#: What ``--pair-episodes`` assumes, said in its help and in a note when used.
PAIR_EPISODES_NOTE = (
    "paired by episode index (--pair-episodes): valid only when every run was made with the "
    "same lerobot-eval --seed (episode i uses seed --seed + i); the file does not record it"
)


def _number(block, key):
    if not isinstance(block, dict):
        return None
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if isinstance(value, float) and math.isnan(value) else float(value)


def _reported(block) -> dict:
    """n_episodes, n_success, pc_success, pc_success_ci95 of a block (or its metrics)."""
    out = {}
    for where in (block, block.get("metrics") if isinstance(block, dict) else None):
        if not isinstance(where, dict):
            continue
        for key in ("n_episodes", "n_success", "pc_success"):
            if key not in out and _number(where, key) is not None:
                out[key] = _number(where, key)
        ci = where.get("pc_success_ci95")
        if "ci" not in out and isinstance(ci, list | tuple) and len(ci) == 2:
            if all(isinstance(v, int | float) and not isinstance(v, bool) for v in ci):
                if not any(math.isnan(float(v)) for v in ci):
                    out["ci"] = (float(ci[0]), float(ci[1]))
    return out


def _check_counts(where: str, k: int, n: int, reported: dict, path) -> list[str]:
    """Warnings where the reported counts of ``where`` disagree with its k of n episodes."""
    out = []
    for key, ours in (("n_episodes", n), ("n_success", k)):
        if key in reported and reported[key] != ours:
            out.append(
                f"warning: {path}: {where} reports {key} = {reported[key]:g} but its episodes "
                f"give {ours}; the episodes are used"
            )
    if "pc_success" in reported and n:
        ours = 100 * k / n
        if abs(reported["pc_success"] - ours) > CI_TOLERANCE_POINTS:
            out.append(
                f"warning: {path}: {where} reports pc_success = {reported['pc_success']:g} but "
                f"its episodes give {ours:.1f}; the episodes are used"
            )
    if "ci" in reported and n:
        from evalsim.stats.proportion.intervals import wilson_interval

        w = wilson_interval(k, n, confidence=0.95)
        ours_ci = (100 * float(w.lower), 100 * float(w.upper))
        if max(abs(a - b) for a, b in zip(reported["ci"], ours_ci, strict=True)) > (
            CI_TOLERANCE_POINTS
        ):
            lo, hi = reported["ci"]
            out.append(
                f"warning: {path}: {where} reports pc_success_ci95 = [{lo:g}, {hi:g}] but the "
                f"Wilson 95% interval of its {k}/{n} episodes is [{ours_ci[0]:.1f}, "
                f"{ours_ci[1]:.1f}]; ours is used"
            )
    return out


def empty_task_note(path, label: str) -> str:
    """The note of a task without episodes (reported, not dropped silently)."""
    return (
        f"note: {path}: task {label} has no episodes (metrics.successes is empty); it is "
        "reported here and left out of every rate"
    )


def per_task_trials(info: dict, path, name: str, pair_episodes: bool = False):
    """The episodes of a ``per_task`` eval_info, with the checks of the reported counts.

    Parameters
    ----------
    info : dict
        The parsed file (it has a ``per_task`` list).
    path : path-like
        For messages.
    name : str
        The policy of every episode.
    pair_episodes : bool
        Add a ``condition`` column: the episode's index within its task.

    Returns
    -------
    (dict of lists, list of str, dict)
        The columns (policy, task, success, and condition when paired), the notes and
        warnings, and task label -> task group.

    Raises
    ------
    TrialLogError
        A task without ``metrics.successes`` (or not a list).
    """
    cols: dict[str, list] = {"policy": [], "task": [], "success": []}
    if pair_episodes:
        cols["condition"] = []
    notes: list[str] = []
    groups: dict[str, str] = {}
    group_counts: dict[str, list[int]] = {}
    for j, task in enumerate(info["per_task"]):
        try:
            successes = task["metrics"]["successes"]
        except (KeyError, TypeError):
            raise TrialLogError(f"{path}: per_task[{j}] has no metrics.successes") from None
        if not isinstance(successes, list):
            raise TrialLogError(f"{path}: per_task[{j}] metrics.successes is not a list")
        label = task_name(task) or ":".join(
            str(task[key]) for key in ("task_group", "task_id") if task.get(key) is not None
        )
        label = label or str(j)
        group = task.get("task_group")
        if group is not None:
            groups[label] = str(group)
        k = sum(1 for s in successes if s is True or s == 1)
        n = len(successes)
        if group is not None:
            kn = group_counts.setdefault(str(group), [0, 0])
            kn[0] += k
            kn[1] += n
        if not successes:
            notes.append(empty_task_note(path, label))
        notes += _check_counts(f"task {label}", k, n, _reported(task), path)
        cols["policy"] += [name] * n
        cols["task"] += [label] * n
        cols["success"] += list(successes)
        if pair_episodes:
            cols["condition"] += [str(i) for i in range(n)]
    per_group = info.get("per_group")
    if isinstance(per_group, dict):
        for group, block in per_group.items():
            if str(group) not in group_counts:
                continue
            k, n = group_counts[str(group)]
            notes += [
                w.replace(f"group {group} reports", f"per_group {group} reports")
                for w in _check_counts(f"group {group}", k, n, _reported(block), path)
            ]
    overall = info.get("overall")
    if isinstance(overall, dict) and cols["success"]:
        k_all = sum(1 for s in cols["success"] if s is True or s == 1)
        notes += [
            w
            for w in _check_counts("overall", k_all, len(cols["success"]), _reported(overall), path)
            if "pc_success =" not in w  # the reader's own check words that one
        ]
    if pair_episodes:
        notes.append(f"note: {path}: {PAIR_EPISODES_NOTE}")
    return cols, notes, groups


def both_forms_note(info: dict, path, cols: dict) -> str:
    """An eval_info with both ``per_episode`` and ``per_task``: the note that ``per_task`` was
    read, or a TrialLogError when the two disagree (issue 45, item 11)."""
    episodes = info["per_episode"]
    k_ep = sum(1 for e in episodes if isinstance(e, dict) and e.get("success") in (True, 1))
    k_task = sum(1 for s in cols["success"] if s is True or s == 1)
    if len(episodes) != len(cols["success"]) or k_ep != k_task:
        raise TrialLogError(
            f"{path}: holds both per_episode ({k_ep}/{len(episodes)}) and per_task "
            f"({k_task}/{len(cols['success'])}) and they disagree; which one is meant is "
            "ambiguous: keep one of them"
        )
    return (
        f"note: {path}: holds both per_episode and per_task with the same {k_task}/"
        f"{len(episodes)} episodes; per_task (with its tasks) is used, per_episode ignored"
    )
