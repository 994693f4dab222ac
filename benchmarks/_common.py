"""Helpers shared by the benchmark scripts: timing loops and the result printout.

The scripts run as ``python benchmarks/bench_<name>.py``, so this module is imported by its
plain name (the script's folder is first on ``sys.path``).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable


def timings(fn: Callable[[], object], repeat: int, clock=time.perf_counter) -> list[float]:
    """Time ``repeat`` calls of ``fn``.

    Parameters
    ----------
    fn : callable
        Called with no arguments.
    repeat : int
        How many calls are timed.
    clock : callable, optional
        The clock read around each call (default :func:`time.perf_counter`).

    Returns
    -------
    list of float
        The seconds of each call, in order.
    """
    out = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        out.append(clock() - t0)
    return out


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Smallest wall time of ``repeat`` calls of ``fn``, in seconds (:func:`timings`)."""
    return min(timings(fn, repeat))


def median_time(fn: Callable[[], object], repeat: int, clock=time.perf_counter) -> float:
    """Median time of ``repeat`` calls of ``fn``, in seconds of ``clock`` (:func:`timings`)."""
    return statistics.median(timings(fn, repeat, clock))


def print_result(result: dict, as_json: bool, row: str = "{k}: {v}", **dumps) -> None:
    """Print a benchmark's result: one JSON object, or one line a key.

    Parameters
    ----------
    result : dict
        The figures, by key.
    as_json : bool
        Print ``json.dumps(result, **dumps)`` (the ``--json`` flag) instead of the lines.
    row : str, optional
        The format of a line, with fields ``k`` (key) and ``v`` (value).
    **dumps
        Keyword arguments of :func:`json.dumps` (``indent``, ``sort_keys``).
    """
    if as_json:
        print(json.dumps(result, **dumps))
        return
    for k, v in result.items():
        print(row.format(k=k, v=v))
