"""``evalsim simreal``: values against the library, every format, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_run import run

from evalsim.cli import simreal as cli_simreal
from evalsim.stats.simreal import full_joint, joint
from evalsim.stats.simreal import methods as sr


def bad(capsys, *argv) -> str:
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == "" and "Traceback" not in err and err.count("\n") == 1, err
    return err


def write_logs(tmp: Path, real, twin, further, policy="pi", sim_policy=None, extra_sim=()):
    rp, sp = tmp / "real.csv", tmp / "sim.csv"
    lines = ["policy,condition,success"]
    lines += [f"{policy},c{i},{y}" for i, y in enumerate(real)]
    rp.write_text("\n".join(lines) + "\n")
    sp_name = sim_policy or policy
    lines = ["policy,condition,success"]
    lines += [f"{sp_name},c{i},{t}" for i, t in enumerate(twin)]
    lines += [f"{sp_name},s{j},{v}" for j, v in enumerate(further)]
    lines += list(extra_sim)
    sp.write_text("\n".join(lines) + "\n")
    return rp, sp


@pytest.fixture
def logs(tmp_path):
    rng = np.random.default_rng(7)
    real = (rng.random(40) < 0.8).astype(int)
    twin = np.where(rng.random(40) < 0.95, real, 1 - real)
    further = (rng.random(3000) < 0.8).astype(int)
    return real, twin, further, write_logs(tmp_path, real, twin, further)


def test_json_values_are_the_library_values(capsys, logs):
    real, twin, further, (rp, sp) = logs
    rc, out, err = run(capsys, "simreal", rp, sp, "--json")
    assert rc == 0, err
    got = json.loads(out)
    d = sr.simreal_data(real, twin, int(further.sum()), further.size)
    want = sr.simreal_intervals(d)
    assert got["n_real"] == 40 and got["n_sim"] == 3000 and got["k_sim"] == int(further.sum())
    assert got["k_real"] == int(real.sum())
    for m, r in want.items():
        assert got["methods"][m]["interval"] == pytest.approx([r.lower, r.upper], abs=1e-15)
    # the verdict uses the registry's recommended finite-sample method
    assert got["method"] == sr.recommended(40, 3000) == "joint_exact"  # N > 20 n
    assert got["validity"] == "finite-sample"
    fs = want[got["method"]]
    assert got["interval"] == pytest.approx([fs.lower, fs.upper], abs=1e-15)
    cp = want["clopper_pearson"]
    assert got["real_only_interval"] == pytest.approx([cp.lower, cp.upper], abs=1e-15)
    assert got["correlation"] == pytest.approx(np.corrcoef(real, twin)[0, 1], rel=1e-12)
    if fs.width < cp.width:
        m = fs.effective_n - 40
        assert got["verdict"] == f"the simulation was worth about {m:.0f} real trials"
    else:
        assert got["verdict"] == "the simulation did not help; use the real-only interval"


def test_verdict_without_correlation_says_it_did_not_help(capsys, tmp_path):
    rng = np.random.default_rng(3)
    real = (rng.random(30) < 0.7).astype(int)
    twin = (rng.random(30) < 0.7).astype(int)  # independent of the real outcome
    further = (rng.random(2000) < 0.7).astype(int)
    rp, sp = write_logs(tmp_path, real, twin, further)
    rc, out, err = run(capsys, "simreal", rp, sp)
    assert rc == 0, err
    assert "Verdict: the simulation did not help; use the real-only interval." in out
    d = sr.simreal_data(real, twin, int(further.sum()), further.size)
    r = sr.simreal_interval(d, sr.recommended(30, 2000))
    assert f"[{r.lower:.4f}, {r.upper:.4f}]; real-only" in out


def test_default_method_follows_the_design(capsys, tmp_path):
    """With N <= 20 n the command reports full_joint_exact by default (labelled as such);
    the rule switches exactly at N = 20 n."""
    rng = np.random.default_rng(5)
    real = (rng.random(40) < 0.9).astype(int)
    twin = np.where(rng.random(40) < 0.95, real, 1 - real)
    further = (rng.random(800) < 0.9).astype(int)
    rp, sp = write_logs(tmp_path, real, twin, further)
    rc, out, err = run(capsys, "simreal", rp, sp)
    assert rc == 0, err
    d = sr.simreal_data(real, twin, int(further.sum()), further.size)
    r = sr.simreal_interval(d, "full_joint_exact")
    assert f"full joint exact (sim + real) (finite-sample): [{r.lower:.4f}, {r.upper:.4f}]" in out
    assert [sr.recommended(40, big) for big in (800, 801)] == ["full_joint_exact", "joint_exact"]


def test_method_choices_are_the_registry(capsys, logs):
    from evalsim.cli.simreal import METHOD_CHOICES

    assert tuple(METHOD_CHOICES) == tuple(sr.METHODS)
    real, twin, further, (rp, sp) = logs
    for m in ("stratified_exact", "discordant_exact"):
        for share in (None, "0.5"):
            argv = ["simreal", rp, sp, "--json", "--method", m]
            argv += [] if share is None else ["--real-share", share]
            rc, out, err = run(capsys, *argv)
            assert rc == 0, err
            got = json.loads(out)
            d = sr.simreal_data(real, twin, int(further.sum()), further.size)
            r = sr.simreal_interval(d, m, 0.95, None if share is None else float(share))
            assert got["method"] == m
            assert got["interval"] == pytest.approx([r.lower, r.upper], abs=1e-15)


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "json"])
def test_every_format(capsys, logs, fmt):
    real, twin, further, (rp, sp) = logs
    rc, out, err = run(capsys, "simreal", rp, sp, "--format", fmt)
    assert rc == 0, err
    d = sr.simreal_data(real, twin, int(further.sum()), further.size)
    r = sr.simreal_interval(d, "ppi_plus")
    if fmt == "json":
        assert json.loads(out)["methods"]["ppi_plus"]["interval"][0] == pytest.approx(r.lower)
    else:
        assert f"{r.lower:.4f}" in out and "Verdict:" in out
        assert {"markdown": "| method |", "latex": "\\toprule", "text": "effective n"}[fmt] in out


def _dir(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    return d


def test_bad_input_one_line_exit_2(capsys, tmp_path):
    real, twin, further = [1, 0, 1, 1, 1], [1, 0, 1, 1, 0], [1] * 20
    rp, sp = write_logs(_dir(tmp_path, "a"), real, twin[:4], further)
    assert "no simulated twin for real condition c4" in bad(capsys, "simreal", rp, sp)
    rp, sp = write_logs(_dir(tmp_path, "b"), real, twin, further, sim_policy="other")
    assert "policy 'pi' is only in the real log" in bad(capsys, "simreal", rp, sp)
    rp, sp = write_logs(_dir(tmp_path, "c"), real, twin, further[:3])
    err = bad(capsys, "simreal", rp, sp)
    assert "N = 3 simulated trials beyond the twins, fewer than the n = 5" in err
    rp, sp = write_logs(_dir(tmp_path, "d"), [1, 2, 1], [1, 1, 1], further)
    assert "success" in bad(capsys, "simreal", rp, sp)
    d = _dir(tmp_path, "e")
    _, sp = write_logs(d, [1], [1], further)
    (d / "real.csv").write_text("policy,condition,success\n")  # n = 0
    assert "no trials" in bad(capsys, "simreal", d / "real.csv", sp)
    # c0 twice with another outcome (an exact duplicate row is refused by the reader: issue 45)
    rp, sp = write_logs(_dir(tmp_path, "f"), real, twin, further, extra_sim=["pi,c0,0"])
    assert "condition c0 appears more than once" in bad(capsys, "simreal", rp, sp)
    d = _dir(tmp_path, "g")
    (d / "real.csv").write_text("policy,success\npi,1\npi,0\n")
    assert "no condition column" in bad(capsys, "simreal", d / "real.csv", sp)
    assert "no such file" in bad(capsys, "simreal", d / "missing.csv", sp)
    assert "policy 'zz' is not in the real log" in bad(capsys, "simreal", rp, sp, "--policy", "zz")
    assert "--real-share" in bad(capsys, "simreal", rp, sp, "--real-share", "1.5")


@pytest.mark.parametrize(
    ("method", "module", "limit_name", "instead", "n_sim"),
    [
        ("joint_exact", joint, "JOINT_MAX_N", "discordant_exact", 4000),
        ("full_joint_exact", full_joint, "FULL_JOINT_MAX_N", "joint_exact", 600),
    ],
)
def test_a_joint_method_beyond_its_tables_says_so(
    capsys, tmp_path, monkeypatch, method, module, limit_name, instead, n_sim
):
    """Above a joint method's largest n the command names the interval it prints instead; at
    the limit it does not. The limit is lowered to 30 in both places that hold it, so the
    tables stay small (the methods' own tests build them at the real limits)."""
    monkeypatch.setattr(module, "MAX_N", 30)
    monkeypatch.setattr(cli_simreal, limit_name, 30)
    rng = np.random.default_rng(11)
    for n, noted in ((31, True), (30, False)):
        real = (rng.random(n) < 0.85).astype(int)
        twin = np.where(rng.random(n) < 0.97, real, 1 - real)
        further = (rng.random(n_sim) < 0.85).astype(int)
        rp, sp = write_logs(tmp_path, real, twin, further)
        rc, out, err = run(capsys, "simreal", rp, sp, "--method", method)
        assert rc == 0, err
        note = f"note: {method} builds its exact tables for n <= 30; at n = {n} its row"
        assert (note in " ".join(out.split())) is noted
        d = sr.simreal_data(real, twin, int(further.sum()), further.size)
        r = sr.simreal_interval(d, method)
        other = sr.simreal_interval(d, instead)
        assert ((r.lower, r.upper) == (other.lower, other.upper)) is noted
        assert f"[{r.lower:.4f}, {r.upper:.4f}]" in out


def test_table_limits_agree_with_the_library():
    assert cli_simreal.FULL_JOINT_MAX_N == full_joint.MAX_N
    assert cli_simreal.JOINT_MAX_N == joint.MAX_N


def test_real_share_says_which_methods_use_it(capsys, logs):
    """--real-share changes discordant_exact's row and not joint_exact's; with joint_exact
    chosen the command says the share is not used, with discordant_exact it does not."""
    real, twin, further, (rp, sp) = logs
    d = sr.simreal_data(real, twin, int(further.sum()), further.size)
    note = "note: --real-share applies to stratified_exact and discordant_exact only"
    rc, out, err = run(capsys, "simreal", rp, sp, "--real-share", "0.3")
    assert rc == 0, err
    flat = " ".join(out.split())  # the report wraps long lines
    assert note in flat and "joint_exact does not use it." in flat
    rc, out2, err = run(
        capsys, "simreal", rp, sp, "--real-share", "0.3", "--method", "discordant_exact"
    )
    assert rc == 0, err
    assert note not in " ".join(out2.split())
    shared = sr.simreal_interval(d, "discordant_exact", real_share=0.3)
    assert f"[{shared.lower:.4f}, {shared.upper:.4f}]" in out2
    for share in (0.3, 0.9):
        a = sr.simreal_interval(d, "joint_exact", real_share=share)
        assert (a.lower, a.upper) == (
            sr.simreal_interval(d, "joint_exact").lower,
            sr.simreal_interval(d, "joint_exact").upper,
        )
    assert tuple(cli_simreal.SHARED_METHODS) == tuple(
        m for m in sr.METHODS if m in ("stratified_exact", "discordant_exact")
    )
