"""Fuzzing the evalsim command: random CSV/JSON/Parquet files and random arguments to every
subcommand must end with exit status 0 or 2 -- never a traceback.

Bounded in time: a fixed number of examples per subcommand, and sizes (n, look counts) kept
small so that each call is quick; the large-n paths are timed in benchmarks/bench_cli.py.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalsim.cli import main

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)

names = st.sampled_from(["A", "B", "a", "act", "", " ", "x y", "é"])
cells = st.one_of(
    st.sampled_from(["0", "1", "true", "no", "", "2", "nan", "-1", "1.0", " 1 "]),
    st.text(max_size=4),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
)
columns = st.lists(
    st.sampled_from(["policy", "success", "condition", "task", "seed", "failure", "other"]),
    min_size=0,
    max_size=6,
)


@st.composite
def tables(draw):
    cols = draw(columns)
    n = draw(st.integers(0, 8))
    rows = [{c: draw(cells if c != "policy" else names) for c in cols} for _ in range(n)]
    return pd.DataFrame(rows, columns=list(dict.fromkeys(cols)))


@st.composite
def log_bytes(draw):
    """(suffix, bytes): random bytes, or a random table written as CSV/JSON/Parquet."""
    suffix = draw(st.sampled_from([".csv", ".json", ".parquet", ".tsv", ".txt"]))
    kind = draw(st.sampled_from(["bytes", "table", "lerobot"]))
    if kind == "bytes":
        return suffix, draw(st.binary(max_size=200))
    if kind == "lerobot" or suffix == ".json":
        eps = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"success": cells, "seed": st.one_of(st.integers(0, 3), st.none())}
                ),
                max_size=6,
            )
        )
        doc = draw(
            st.sampled_from(
                [
                    {"per_episode": eps},
                    {"per_episode": eps, "aggregated": {"pc_success": 50}},
                    {
                        "per_task": [
                            {
                                "task_group": "g",
                                "task_id": 0,
                                "metrics": {"successes": [e["success"] for e in eps]},
                            }
                        ]
                    },
                    {"per_task": [{"metrics": 3}]},
                    [1, 2],
                ]
            )
        )
        return ".json", json.dumps(doc, default=str).encode()
    df = draw(tables())
    if suffix == ".parquet":
        buf = io.BytesIO()
        try:
            df.astype(str).to_parquet(buf)
        except Exception:  # noqa: BLE001 - an odd frame pyarrow refuses: write raw bytes
            return suffix, b"PAR1"
        return suffix, buf.getvalue()
    return suffix, df.to_csv(index=False, sep="\t" if suffix == ".tsv" else ",").encode()


numbers = st.one_of(
    st.integers(-3, 60).map(str),
    st.sampled_from(["0", "1", "0.5", "1e20", "nan", "inf", "-0.1", "0.05", "x", "", "2.5"]),
)
probabilities = st.sampled_from(["0", "1", "0.5", "0.7", "0.71", "1.5", "-0.1", "nan", "a"])


def run_ok(argv, capsys, **options) -> None:
    """Run ``evalsim argv`` (plus ``--<option> value`` for each option that is not None):
    it must return 0 or 2, never raise; its output is drained."""
    for name, value in options.items():
        if value is not None:
            argv = [*argv, f"--{name.replace('_', '-')}", value]
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:  # pragma: no cover - main returns codes, never exits
        pytest.fail(f"SystemExit {exc.code} for {argv}")
    except BaseException as exc:  # noqa: BLE001 - any escape is the failure under test
        pytest.fail(f"{type(exc).__name__}: {exc} for {argv}")
    assert rc in (0, 2), (rc, argv)
    capsys.readouterr()


def write_logs(data, folder, max_files: int, run_folders: bool = False) -> list[str]:
    """Write 1..``max_files`` drawn log files (:func:`log_bytes`) below ``folder``.

    Flat (``log<i><suffix>``), or with ``run_folders`` each in ``run<i>/eval`` or
    ``run<i>/act`` as ``log<suffix>`` with a drawn ``=label`` (some of them malformed).
    Returns the command-line arguments naming them.
    """
    files = []
    for i in range(data.draw(st.integers(1, max_files))):
        suffix, payload = data.draw(log_bytes())
        if not run_folders:
            path = folder / f"log{i}{suffix}"
            path.write_bytes(payload)
            files.append(str(path))
            continue
        sub = folder / f"run{i}" / data.draw(st.sampled_from(["eval", "act"]))
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"log{suffix}"
        path.write_bytes(payload)
        label = data.draw(st.sampled_from(["", "=A", "=B", "=", "=x=y"]))
        files.append(f"{path}{label}")
    return files


@SETTINGS
@given(data=st.data())
def test_fuzz_summarize_and_compare(tmp_path_factory, data, capsys):
    files = write_logs(data, tmp_path_factory.mktemp("fuzz"), max_files=3, run_folders=True)
    fmt = data.draw(st.sampled_from([[], ["--json"], ["--format", "latex"], ["--format", "md"]]))
    if data.draw(st.booleans()):
        argv = ["summarize", *files, *fmt]
        argv += data.draw(
            st.sampled_from(
                [
                    [],
                    ["--by", "condition"],
                    ["--by", "zz"],
                    ["--confidence", "1.2"],
                    ["--policy", "p"],
                ]
            )
        )
    else:
        argv = ["compare", *files, "--a", data.draw(names), "--b", data.draw(names), *fmt]
        argv += data.draw(
            st.sampled_from(
                [[], ["--unpaired"], ["--alternative", "less"], ["--alpha", "0.6"], ["--task", "t"]]
            )
        )
    run_ok(argv, capsys)


@SETTINGS
@given(
    k=numbers,
    n=numbers,
    conf=st.one_of(st.none(), probabilities),
    extra=st.sampled_from([[], ["--json"], ["--bogus"]]),
)
def test_fuzz_interval(k, n, conf, extra, capsys):
    run_ok(["interval", k, n, *extra], capsys, confidence=conf)


@SETTINGS
@given(
    p1=probabilities,
    p2=probabilities,
    n=st.one_of(st.none(), st.integers(-2, 300).map(str), st.sampled_from(["x", "1e3"])),
    paired=st.sampled_from(
        [
            [],
            ["--paired"],
            ["--paired", "--discordance", "0.3"],
            ["--discordance", "0.9"],
            ["--paired", "--discordance", "2"],
        ]
    ),
    extra=st.sampled_from(
        [
            [],
            ["--json"],
            ["--alpha", "0"],
            ["--power", "0.99"],
            ["--minutes-per-trial", "-1"],
            ["--minutes-per-trial", "2"],
        ]
    ),
)
def test_fuzz_plan(p1, p2, n, paired, extra, capsys):
    run_ok(["plan", "--p1", p1, "--p2", p2, *paired, *extra], capsys, n=n)


@SETTINGS
@given(
    n=st.one_of(st.integers(-2, 60).map(str), st.sampled_from(["x", "0", "2.5"])),
    p=st.one_of(st.none(), probabilities),
    looks=st.one_of(st.none(), st.sampled_from(["every", "3", "0", "5,3", "1,2,70", "x", "1,,2"])),
    paired=st.sampled_from(
        [
            [],
            ["--paired"],
            ["--paired", "--discordance", "0.3"],
            ["--discordance", "0.5"],
            ["--paired", "--discordance", "0"],
        ]
    ),
    extra=st.sampled_from([[], ["--json"], ["--alpha", "1"], ["--alpha", "0.2"]]),
)
def test_fuzz_peek(n, p, looks, paired, extra, capsys):
    run_ok(["peek", "--n", n, *paired, *extra], capsys, p=p, looks=looks)


@SETTINGS
@given(data=st.data())
def test_fuzz_rank_and_compare_by_task(tmp_path_factory, data, capsys):
    files = write_logs(data, tmp_path_factory.mktemp("fuzz_multi"), max_files=2)
    if data.draw(st.booleans()):
        argv = ["rank", *files, "--bootstrap-reps", "50"]
        argv += data.draw(st.sampled_from([[], ["--json"], ["--alpha", "2"]]))
    else:
        argv = ["compare", *files, "--a", data.draw(names), "--b", data.draw(names)]
        argv += ["--by", "task", "--bootstrap-reps", "50"]
        argv += data.draw(st.sampled_from([[], ["--json"], ["--unpaired"]]))
    run_ok(argv, capsys)


@SETTINGS
@given(data=st.data())
def test_fuzz_sequential(tmp_path_factory, data, capsys):
    folder = tmp_path_factory.mktemp("fuzz_seq")
    design = folder / "design.json"
    action = data.draw(st.sampled_from(["design", "oc", "check", "sheet"]))
    if action == "design":
        argv = ["sequential", "design", "--out", design]
        argv += ["--n-max", data.draw(st.sampled_from(["0", "5", "20", "x", "-3"]))]
        argv += data.draw(
            st.sampled_from(
                [[], ["--kind", "paired"], ["--looks", "3"], ["--alpha", "1.5"], ["--looks", "5,2"]]
            )
        )
    else:
        if data.draw(st.booleans()):  # a real design, so that oc and check get past reading it
            kind = data.draw(st.sampled_from(["unpaired", "paired"]))
            assert (
                main(
                    ["sequential", "design", "--out", str(design), "--n-max", "12", "--kind", kind]
                )
                == 0
            )
        else:
            design.write_bytes(
                data.draw(
                    st.one_of(
                        st.binary(max_size=100),
                        st.sampled_from([b"{}", b"[]", b'{"kind": "paired"}', b"null"]),
                    )
                )
            )
        argv = ["sequential", action, design]
        if action == "check":
            suffix, payload = data.draw(log_bytes())
            log = folder / f"log{suffix}"
            log.write_bytes(payload)
            argv += [log, "--a", data.draw(names), "--b", data.draw(names)]
        if action == "oc":
            argv += data.draw(
                st.sampled_from(
                    [
                        [],
                        ["--pa", "0.5", "--pb", "0.7"],
                        ["--pa", "2"],
                        ["--p10", "0.1", "--p01", "0.3"],
                    ]
                )
            )
        if action == "sheet":
            argv += ["--out", folder / "sheet.png"]
    run_ok(argv, capsys)
