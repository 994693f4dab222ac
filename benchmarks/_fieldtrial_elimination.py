"""Run fieldtrial 0.3.0's own successive elimination (``fieldtrial.stats.selection.eliminate``)
on simulated studies; executed by ``bench_select.py`` with the interpreter of a scratch venv
holding fieldtrial (it is not a dependency of evalsim). Prints one JSON object.

Each study draws ``blocks`` blocks of one outcome per arm. An arm stops running after the
block in which fieldtrial eliminates it: fieldtrial decides each block from the blocks so far,
so the earliest elimination found on the full matrix is the one the study would have made;
that arm's later outcomes are then blanked (None, "did not run") and the call repeated.

Usage: python _fieldtrial_elimination.py RATES BLOCKS DELTA REPS SEED
"""

import json
import sys

import numpy as np
from fieldtrial.stats.selection import eliminate


def study(rates, blocks, delta, rng):
    k = len(rates)
    rows = [[float(v) for v in (rng.random(k) < rates)] for _ in range(blocks)]
    names = [f"arm{i}" for i in range(k)]
    gone = {}
    while True:
        res = eliminate(rows, names, delta)
        new = [e for e in res.eliminations if names.index(e.arm) not in gone]
        if not new:
            break
        first = min(e.block for e in new)
        for e in new:
            if e.block == first:
                i = names.index(e.arm)
                gone[i] = first
                for b in range(first, blocks):  # blocks after `first` (1-based) did not run it
                    rows[b][i] = None
        if len(gone) == k - 1:
            break
    survivors = [i for i in range(k) if i not in gone]
    used = max(gone.values()) if len(survivors) == 1 else blocks
    return survivors, used


def main():
    rates = np.array([float(v) for v in sys.argv[1].split(",")])
    blocks, delta, reps, seed = (
        int(sys.argv[2]),
        float(sys.argv[3]),
        int(sys.argv[4]),
        int(sys.argv[5]),
    )
    rng = np.random.default_rng(seed)
    best = int(np.argmax(rates))
    correct, single, used = [], [], []
    for _ in range(reps):
        surv, b = study(rates, blocks, delta, rng)
        single.append(len(surv) == 1)
        correct.append(surv == [best])
        used.append(b)
    print(
        json.dumps(
            {
                "p_single": float(np.mean(single)),
                "p_single_correct": float(np.mean(correct)),
                "p_single_correct_se": float(np.std(correct, ddof=1) / np.sqrt(reps)),
                "blocks_mean": float(np.mean(used)),
                "blocks_median": float(np.median(used)),
                "reps": reps,
            }
        )
    )


if __name__ == "__main__":
    main()
