"""What the ``evalsim`` command loads on a small log (issue 24: an answer in a second).

No timing here: each command runs in a fresh interpreter, and the test checks which heavy
libraries it imported and that numba compiled nothing once its cache is warm. The seconds
themselves are measured by ``benchmarks/bench_cli.py --cases small``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Runs the command in-process, then reports the heavy modules loaded and every numba
# dispatcher's compilations (cache misses) in the evalsim modules.
_PROBE = """
import io, json, sys, contextlib
from evalsim.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m in {HEAVY})
compiled = []
if "numba" in sys.modules:
    from numba.core.registry import CPUDispatcher
    for name, mod in list(sys.modules.items()):
        if not name.startswith("evalsim"):
            continue
        for attr, value in list(vars(mod).items()):
            if isinstance(value, CPUDispatcher) and sum(value.stats.cache_misses.values()):
                compiled.append(f"{{name}}.{{attr}}")
print(json.dumps({{"rc": rc, "heavy": heavy, "compiled": sorted(set(compiled))}}))
"""

HEAVY = (
    "pandas",
    "pyarrow",
    "scipy.stats",
    "scipy.optimize",
    "statsmodels",
    "matplotlib",
    "numba",
)


def _probe(*argv: str) -> dict:
    code = _PROBE.format(HEAVY=repr(set(HEAVY)))
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def small_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("startup") / "small.csv"
    lines = ["policy,condition,success"]
    for p, rate in (("act", 7), ("bc", 6), ("diffusion", 8)):
        lines += [f"{p},c{i},{int(i % 10 < rate)}" for i in range(150)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_importing_the_command_loads_no_heavy_library():
    code = "import sys, json, evalsim.cli; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout))
    assert not loaded & {*HEAVY, "scipy", "scipy.special"}, sorted(loaded & {*HEAVY, "scipy"})


# (command, heavy libraries it may load): summarize needs no numba (its intervals are
# closed forms and Beta quantiles; only the trials-needed advice of an imprecise rate loads
# the cached kernels); compare loads numba's cached kernels (Fisher, McNemar, Boschloo);
# rank reads with pandas.
CASES = [
    (["summarize"], set()),
    (["summarize", "--json"], set()),
    (["summarize", "--max-half-width", "0.02"], {"numba"}),
    (["compare", "--a", "act", "--b", "bc"], {"numba"}),
    (["compare", "--a", "act", "--b", "bc", "--unpaired"], {"numba"}),
    (["rank"], {"numba", "pandas", "pyarrow"}),
]


def _case_id(value) -> str:
    # a set's order changes between processes; xdist workers must collect the same ids
    return " ".join(sorted(value) if isinstance(value, set) else value)


@pytest.mark.parametrize(("argv", "allowed"), CASES, ids=_case_id)
def test_small_log_commands_load_no_pandas_scipy_stats_or_statsmodels(small_log, argv, allowed):
    argv = [argv[0], small_log, *argv[1:]]
    _probe(*argv)  # warm-up: fills the numba cache if it is cold
    res = _probe(*argv)
    assert res["rc"] == 0
    assert set(res["heavy"]) <= allowed, res["heavy"]
    # numba loads its kernels from the cache; it compiles nothing on the common path
    assert res["compiled"] == []
