"""Time the refusal of a trial log with a huge field (issue 45, item 7), in one run.

Before the limit a 2-row CSV whose policy name is 1 MB took 3.3 s in the command, 10 MB took
225 s (superlinear). Now a field longer than ``evalsim._log_files.MAX_FIELD_CHARS`` is
refused before the log is parsed (a linear numpy scan), or, inside quotes, right after.

Keys of ``--json`` (best of ``--repeat``, in-process, the pandas reader
``evalsim.trial_logs.read_trial_logs``):

- ``read_2_rows_seconds``: the baseline, a well-formed 2-row CSV read;
- ``refuse_field_1mb_seconds``, ``refuse_field_10mb_seconds``: a 2-row CSV whose policy name
  is 1 MB / 10 MB, refused (target: each <= 1 s; the ratios to the baseline as
  ``refuse_field_*_over_read``);
- ``refuse_quoted_field_10mb_seconds``: a 10 MB quoted field full of commas, refused after
  parsing (target <= 2 s).

Usage: python benchmarks/bench_log_limits.py [--json] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import best_of, print_result

from evalsim._log_files import TrialLogError
from evalsim.trial_logs import read_trial_logs


def _refused(path: Path) -> None:
    try:
        read_trial_logs([path])
    except TrialLogError:
        return
    raise AssertionError(f"{path} was read")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        small = folder / "small.csv"
        small.write_text("policy,success\nA,1\nB,0\n")
        files = {}
        for mb in (1, 10):
            files[mb] = folder / f"field_{mb}mb.csv"
            files[mb].write_text("policy,success\n" + "A" * (mb << 20) + ",1\nB,0\n")
        quoted = folder / "quoted_10mb.csv"
        quoted.write_text('policy,success\n"' + "ab," * ((10 << 20) // 3) + '",1\nB,0\n')
        read_trial_logs([small])  # warm-up: pandas' first read
        result = {"read_2_rows_seconds": best_of(lambda: read_trial_logs([small]), args.repeat)}
        for mb, path in files.items():
            key = f"refuse_field_{mb}mb"
            result[f"{key}_seconds"] = best_of(lambda p=path: _refused(p), args.repeat)
            result[f"{key}_over_read"] = result[f"{key}_seconds"] / result["read_2_rows_seconds"]
        result["refuse_quoted_field_10mb_seconds"] = best_of(lambda: _refused(quoted), args.repeat)
    print_result(result, args.json, indent=1)


if __name__ == "__main__":
    main()
