"""The study file: schema refusals naming the key, the example that locks as written, the
canonical hash (layout is not part of the lock, values are), the lock refused twice, the plan
against a plain exact-McNemar reference, and byte-identical locks and sheets per seed."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import shutil

import pytest
import yaml
from cli_run import run
from scipy.stats import binom, binomtest

from evalsim.study import StudyError, init_study, lock_study, open_study
from evalsim.study.example import EXAMPLE_STUDY
from evalsim.study.protocol import canonical_sha256, parse_protocol

EXAMPLE = yaml.safe_load(EXAMPLE_STUDY)


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """Two copies of the example locked with the same seed (sheets drawn), one with another."""
    base = tmp_path_factory.mktemp("protocol")
    docs = {}
    for name, seed in (("a", 11), ("b", 11), ("c", 12)):
        init_study(base / name)
        docs[name] = lock_study(base / name, seed=seed)
    return base, docs


def _bad(mutate) -> str:
    raw = copy.deepcopy(EXAMPLE)
    mutate(raw)
    with pytest.raises(StudyError) as e:
        parse_protocol(raw)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_example_parses_and_fills_defaults():
    p = parse_protocol(copy.deepcopy(EXAMPLE))
    assert p.arms == ("baseline", "candidate")
    assert len(p.positions()) == 20 and len(p.blocks()) == 2
    assert p.n == 20 and p.primary_test == "mcnemar" and p.paired
    # split assignment: the first 10 positions (rows A, B) to the first block
    conds = p.conditions()
    assert {c.position for c in conds[:10]} == {f"{r}{c}" for r in "AB" for c in range(1, 6)}
    assert {c.block for c in conds[:10]} == {"object=red_cube"}


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda d: d.update(colour="red"), "'colour'"),
        (lambda d: d["question"].update(alpha="0.05"), "question.alpha"),
        (lambda d: d["design"].update(n=25), "design.n"),
        (lambda d: d["design"].update(n=10), "design.n"),
        (lambda d: d.update(arms=[{"name": "baseline"}]), "arms"),
        (lambda d: d["arms"].append({"name": "baseline"}), "arms"),
        (lambda d: d["question"]["primary"].update(b="nobody"), "question.primary.b"),
        (lambda d: d["analysis"].update(primary="fisher"), "analysis.primary"),
        (lambda d: d["analysis"].update(primary="sequential"), "analysis.primary"),
        (lambda d: d["conditions"]["positions"]["grid"].update(rows="four"), "rows"),
        (lambda d: d["conditions"].update(replicates=0), "conditions.replicates"),
        (lambda d: d["plan"]["expected"].update(ghost=0.5), "plan.expected.ghost"),
        (lambda d: d["arms"][0].update(name="two words"), "arms[0].name"),
        (lambda d: d["rubric"].pop("success"), "rubric.success"),
    ],
)
def test_bad_study_is_refused_naming_the_key(mutate, key):
    assert key in _bad(mutate)


def test_design_n_the_conditions_cannot_fill_says_so():
    msg = _bad(lambda d: d["design"].update(n=25))
    assert "cannot fill" in msg and "20" in msg


def test_crossed_blocks_and_replicates_count_conditions():
    raw = copy.deepcopy(EXAMPLE)
    raw["conditions"]["blocks"]["assign"] = "crossed"
    raw["conditions"]["replicates"] = 2
    raw["design"]["n"] = 20 * 2 * 2
    p = parse_protocol(raw)
    ids = [c.id for c in p.conditions()]
    assert len(ids) == 80 == len(set(ids))
    assert "A1/object=blue_cube/r2" in ids


def test_canonical_hash_ignores_layout_but_not_values():
    text = EXAMPLE_STUDY
    relaid = "# a new comment\n" + text.replace("alpha: 0.05 ", "alpha:    0.05 ")
    h1 = canonical_sha256(parse_protocol(yaml.safe_load(text)).data)
    h2 = canonical_sha256(parse_protocol(yaml.safe_load(relaid)).data)
    assert h1 == h2
    h3 = canonical_sha256(parse_protocol(yaml.safe_load(text.replace("0.05 ", "0.04 "))).data)
    assert h3 != h1
    # the hash is the SHA-256 of sorted-key compact JSON, recomputed here by hand
    data = parse_protocol(yaml.safe_load(text)).data
    want = hashlib.sha256(
        json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert h1 == want


def test_same_seed_same_bytes_other_seed_other_schedule(locked):
    base, docs = locked
    for name in (
        "lock.json",
        "sheets/grid_sheet.pdf",
        "sheets/grid_sheet.png",
        "sheets/run_sheet.pdf",
    ):
        assert (base / "a" / name).read_bytes() == (base / "b" / name).read_bytes(), name
    assert docs["a"]["schedule"] != docs["c"]["schedule"]
    assert docs["a"]["study_sha256"] == docs["c"]["study_sha256"]
    pdf = (base / "a" / "sheets" / "run_sheet.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf
    # no arm name on any sheet (the codes only)
    for sheet in ("grid_sheet.pdf", "run_sheet.pdf"):
        data = (base / "a" / "sheets" / sheet).read_bytes()
        assert b"baseline" not in data and b"candidate" not in data


def test_lock_twice_is_refused(locked, capsys):
    base, _ = locked
    rc, out, err = run(capsys, "study", "lock", base / "a", "--seed", "3")
    assert rc == 2 and "already locked" in err and err.count("\n") == 1


def test_edit_after_lock_is_refused_by_every_command(locked, capsys, tmp_path):
    base, _ = locked
    d = tmp_path / "s"
    shutil.copytree(base / "a", d)
    (d / "study.yaml").write_text(EXAMPLE_STUDY.replace("alpha: 0.05 ", "alpha: 0.10 "))
    for argv in (
        ("status", d),
        ("record", d, "T001", "success"),
        ("export", d),
        ("unblind", d, "--by", "x"),
    ):
        rc, out, err = run(capsys, "study", *argv)
        assert rc == 2, argv
        assert "changed since the lock" in err and err.count("\n") == 1, err
    # a comment-only edit is not a change
    (d / "study.yaml").write_text("# reviewed\n" + EXAMPLE_STUDY)
    assert run(capsys, "study", "status", d)[0] == 0


def test_lock_refuses_a_bad_file_in_one_line(tmp_path, capsys):
    d = tmp_path / "bad"
    init_study(d)
    (d / "study.yaml").write_text(EXAMPLE_STUDY.replace("n: 20 ", "n: 21 "))
    rc, out, err = run(capsys, "study", "lock", d)
    assert rc == 2 and "design.n" in err and err.count("\n") == 1
    (d / "study.yaml").write_text("version: [1\n")
    rc, out, err = run(capsys, "study", "lock", d)
    assert rc == 2 and "not valid YAML" in err
    rc, out, err = run(capsys, "study", "init", d)
    assert rc == 2 and "already exists" in err


def _naive_mcnemar_power(n: int, p10: float, p01: float, alpha: float) -> float:
    """Exact power of the exact McNemar test, summed with SciPy's binomtest (a reference)."""
    psi = p10 + p01
    theta = p10 / psi
    total = 0.0
    for d in range(n + 1):
        pd = binom.pmf(d, n, psi)
        if d == 0:
            continue
        rej = sum(
            binom.pmf(b, d, theta) for b in range(d + 1) if binomtest(b, d, 0.5).pvalue < alpha
        )
        total += pd * rej
    return total


def test_plan_is_stored_in_the_lock_and_matches_a_plain_reference(locked):
    _, docs = locked
    plan = docs["a"]["plan"]
    pa, pb = EXAMPLE["plan"]["expected"]["baseline"], EXAMPLE["plan"]["expected"]["candidate"]
    psi = pa * (1 - pb) + pb * (1 - pa)
    assert math.isclose(plan["paired"]["discordance"], psi)
    want = _naive_mcnemar_power(20, (psi + pa - pb) / 2, (psi - pa + pb) / 2, 0.05)
    assert plan["paired"]["power"] == pytest.approx(want, abs=1e-9)
    # the MDE is where the power reaches 80%: just below it the reference power is below 80%
    mde = plan["paired"]["mde"]
    below = mde - 1e-3
    assert _naive_mcnemar_power(20, (psi + below) / 2, (psi - below) / 2, 0.05) < 0.8
    assert _naive_mcnemar_power(20, (psi + mde) / 2, (psi - mde) / 2, 0.05) >= 0.8 - 1e-9


def test_plan_command_before_the_lock(tmp_path, capsys):
    d = tmp_path / "p"
    init_study(d)
    rc, out, err = run(capsys, "study", "plan", d, "--json")
    assert rc == 0, err
    plan = json.loads(out)["plan"]
    assert plan["n"] == 20 and 0 < plan["paired"]["power"] < 1
    assert 0 < plan["unpaired"]["mde"] < 1


def test_open_study_refuses_an_unlocked_folder(tmp_path):
    init_study(tmp_path / "u")
    with pytest.raises(StudyError, match="not locked"):
        open_study(tmp_path / "u")


def test_grid_sheet_is_drawn_to_scale(locked):
    """One centimetre on the table is one centimetre on the printed page (scale 1:1 when the
    grid fits A4), in x and in y."""
    from evalsim.study.sheets import grid_figure

    _, docs = locked
    fig = grid_figure(docs["a"])
    ax = fig.axes[0]
    box = ax.get_position()
    for (lo, hi), frac, size in (
        (ax.get_xlim(), box.width, fig.get_figwidth()),
        (ax.get_ylim(), box.height, fig.get_figheight()),
    ):
        assert frac * size * 2.54 == pytest.approx(hi - lo, rel=1e-9)
    xs = sorted({t["x_cm"] for t in docs["a"]["schedule"]})
    assert xs == [0, 4, 8, 12, 16]  # the example's 4 cm spacing, A1 at the origin


def _pdf_text(path) -> str:
    """The text drawn in a PDF of the 14 core fonts: its zlib streams, inflated."""
    import zlib

    out = []
    for m in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", path.read_bytes(), re.S):
        try:
            out.append(zlib.decompress(m.group(1)).decode("latin-1"))
        except zlib.error:
            continue
    return "".join(out)


def test_run_sheet_has_one_row_per_trial_in_order(locked):
    base, docs = locked
    text = _pdf_text(base / "a" / "sheets" / "run_sheet.pdf")
    rows = re.findall(r"\((T\d{3})\s+(\S{4})\s+(\S+)\s.*?(object=\S+)\s+\[ \]S  \[ \]F", text)
    want = [(t["trial"], t["code"], t["position"], t["block"]) for t in docs["a"]["schedule"]]
    assert rows == want
