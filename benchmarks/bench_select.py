"""Checkpoint selection (issue 43): the planner's n, elimination beside fieldtrial's, and the
speed of one exact PCS.

Keys of ``--json``:

- ``n_for_pcs90_k4_p080_d010``: the n per checkpoint for PCS >= 0.9 at K = 4, p* = 0.8,
  delta = 0.1, independent arms, ties broken at random (exact,
  :func:`evalsim.stats.selection.fixed_n.n_for_pcs`);
- ``elimination_pcs_evalsim`` / ``elimination_pcs_fieldtrial``: P(a single survivor and it is
  the best) of successive elimination at rates (0.5, 0.5, 0.5, 0.8), error 0.05, at most 100
  blocks -- evalsim's paired design at 0.05 / 3 per comparison (certified P(best eliminated)
  <= 0.05 at every configuration; Monte Carlo, ``--reps`` studies) and fieldtrial 0.3.0's
  ``eliminate`` (delta 0.05; Monte Carlo, ``--ft-reps`` studies), with ``*_se``;
- ``elimination_blocks_evalsim`` / ``elimination_blocks_fieldtrial``: the mean blocks used
  (``*_median`` beside);
- ``pcs_seconds_k10_n200``: one exact PCS at K = 10, n = 200 (best of ``--repeat``); target
  <= 0.01.

fieldtrial is not a dependency: it runs in the interpreter named by ``--fieldtrial-python``
(default ``/tmp/ft/bin/python``, a scratch venv with ``pip install fieldtrial==0.3.0``),
through ``_fieldtrial_elimination.py``, which calls fieldtrial's own function. Without it,
the fieldtrial keys are null and ``fieldtrial_source`` says so.

Usage: python benchmarks/bench_select.py [--json] [--reps 20000] [--ft-reps 200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from _common import best_of, print_result

RATES = (0.5, 0.5, 0.5, 0.8)
BLOCKS = 100
ERROR = 0.05


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--ft-reps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--fieldtrial-python", default="/tmp/ft/bin/python")
    args = ap.parse_args()

    from evalsim.stats.selection.elimination import elimination_design, elimination_oc
    from evalsim.stats.selection.fixed_n import n_for_pcs, selection_probabilities

    out: dict = {}
    out["n_for_pcs90_k4_p080_d010"] = n_for_pcs(4, 0.8, 0.1, 0.9, "random").n
    rates10 = np.linspace(0.55, 0.9, 10)
    selection_probabilities(rates10, 200)  # compile / load the cache
    out["pcs_seconds_k10_n200"] = best_of(
        lambda: selection_probabilities(rates10, 200), args.repeat
    )

    design = elimination_design(len(RATES), ERROR, BLOCKS, "paired")
    oc = elimination_oc(design, RATES, reps=args.reps, seed=43)
    out["elimination_pcs_evalsim"] = oc.p_single_correct
    out["elimination_pcs_evalsim_se"] = oc.p_single_correct_se
    out["elimination_blocks_evalsim"] = oc.expected_rounds
    out["elimination_blocks_evalsim_median"] = oc.median_rounds
    out["elimination_certified_error_evalsim"] = design.certified_error
    out["elimination_method_evalsim"] = oc.method

    ft = Path(args.fieldtrial_python)
    script = Path(__file__).with_name("_fieldtrial_elimination.py")
    if ft.exists():
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        res = subprocess.run(
            [
                str(ft),
                str(script),
                ",".join(map(str, RATES)),
                str(BLOCKS),
                str(ERROR),
                str(args.ft_reps),
                "43",
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        r = json.loads(res.stdout)
        out["elimination_pcs_fieldtrial"] = r["p_single_correct"]
        out["elimination_pcs_fieldtrial_se"] = r["p_single_correct_se"]
        out["elimination_blocks_fieldtrial"] = r["blocks_mean"]
        out["elimination_blocks_fieldtrial_median"] = r["blocks_median"]
        out["fieldtrial_source"] = (
            f"fieldtrial 0.3.0 eliminate(), run by {ft} (Monte Carlo, {args.ft_reps} studies)"
        )
    else:
        for key in ("pcs", "pcs_se", "blocks", "blocks_median"):
            out[f"elimination_{key}_fieldtrial"] = None
        out["fieldtrial_source"] = f"not run: no interpreter at {ft}"
    print_result(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
