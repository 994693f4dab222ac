"""Issue 24's multi-task and multi-seed defects of the ``evalsim`` command, each with a test
that failed before its fix (items 2, 7 for ``--by task``, 15, 17, 18, 19, 20).

Expected numbers come from SciPy / statsmodels / plain arithmetic on the same counts, never
from the command's own helpers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_run import run, run_json
from PIL import Image
from scipy import stats
from scipy.stats import binomtest, fisher_exact

from evalsim.stats.independence.checks import independence_checks

# Per task: (A-only, B-only, both, neither) pairs, on conditions c0, c1, ...
PAIRED = {"pick": (2, 7, 10, 3), "place": (4, 6, 5, 5), "pour": (1, 5, 8, 2)}


def paired_log(path, cells=PAIRED):
    rows = []
    for task, (a_only, b_only, both, neither) in cells.items():
        outcomes = [(1, 0)] * a_only + [(0, 1)] * b_only + [(1, 1)] * both + [(0, 0)] * neither
        for i, (sa, sb) in enumerate(outcomes):
            rows.append({"task": task, "policy": "base", "condition": f"c{i}", "success": sa})
            rows.append({"task": task, "policy": "new", "condition": f"c{i}", "success": sb})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def by_task(capsys, log, *extra):
    return run_json(capsys, "compare", log, "--a", "base", "--b", "new", "--by", "task", *extra)


# --------------------------------------------------------------------------- item 2


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_item02_by_task_honours_alternative(tmp_path, capsys, alternative):
    log = paired_log(tmp_path / "log.csv")
    two = by_task(capsys, log)
    one = by_task(capsys, log, "--alternative", alternative)
    assert one["alternative"] == alternative
    for t in one["tasks"]:
        a_only, b_only, _, _ = PAIRED[t["task"]]
        want = binomtest(b_only, a_only + b_only, 0.5, alternative=alternative).pvalue
        assert t["pvalue"] == pytest.approx(want, rel=1e-12)
    s_b = sum(c[1] for c in PAIRED.values())
    m = sum(c[0] + c[1] for c in PAIRED.values())
    want = binomtest(s_b, m, 0.5, alternative=alternative).pvalue
    assert one["stratified_mcnemar"]["pvalue"] == pytest.approx(want, rel=1e-12)
    assert one["verdict"] != two["verdict"]
    if alternative == "less":  # B is better everywhere: "B < A" is far from shown
        assert "is not shown worse" in one["verdict"]


def test_item02_unpaired_one_sided_fisher(tmp_path, capsys):
    log = paired_log(tmp_path / "log.csv")
    data = by_task(capsys, log, "--alternative", "greater", "--unpaired")
    for t in data["tasks"]:
        want = fisher_exact(
            [[t["k_b"], t["n_b"] - t["k_b"]], [t["k_a"], t["n_a"] - t["k_a"]]],
            alternative="greater",
        ).pvalue
        assert t["test"] == "fisher" and t["pvalue"] == pytest.approx(want, rel=1e-12)
    assert data["stratified_mcnemar"] is None and data["decided_by"] == "exact stratified"


# --------------------------------------------------------------------------- item 18


def test_item18_paired_stratified_test_decides_when_paired(tmp_path, capsys):
    log = paired_log(tmp_path / "log.csv")
    data = by_task(capsys, log)
    assert data["paired"] and data["decided_by"].startswith("exact stratified McNemar")
    s_b = sum(c[1] for c in PAIRED.values())
    m = sum(c[0] + c[1] for c in PAIRED.values())
    smc = data["stratified_mcnemar"]
    assert (smc["b_only"], smc["discordant"]) == (s_b, m)
    assert smc["pvalue"] == pytest.approx(binomtest(s_b, m, 0.5).pvalue, rel=1e-12)
    assert smc["odds_ratio"] == pytest.approx(s_b / (m - s_b), rel=1e-12)
    assert "exact stratified McNemar (paired) p = 0.043" in data["verdict"]


# --------------------------------------------------------------------------- item 7


def blocked_log(path):
    """Two policies, two tasks; the session: A's tasks then B's, trial index `t`.

    base fails every trial of its second half (drift); new is steady."""
    rows, t = [], 0
    steady = np.random.default_rng(7).random(30) < 0.7
    for policy in ("base", "new"):
        for task in ("pick", "place"):
            for i in range(30):
                drift = policy == "base" and task == "place"
                s = 0 if drift else int(steady[i])
                rows.append(
                    {"task": task, "policy": policy, "condition": f"c{i}", "success": s, "t": t}
                )
                t += 1
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, pd.DataFrame(rows)


def test_item07_by_task_order_runs_per_task_checks(tmp_path, capsys):
    log, df = blocked_log(tmp_path / "log.csv")
    data = by_task(capsys, log, "--order", "t")
    groups = {(g["policy"], g["task"]): g for g in data["independence"]["groups"]}
    assert set(groups) == {(p, t) for p in ("base", "new") for t in ("pick", "place")}
    for (p, t), g in groups.items():
        x = df[(df.policy == p) & (df.task == t)].sort_values("t")["success"].to_numpy(bool)
        want = independence_checks(x, 0.05)
        assert g["n"] == 30 and g["runs"]["pvalue"] == pytest.approx(want.runs.pvalue)
    assert data["independence"]["interleaving"]["status"] == "blocked"
    rc, out, err = run(
        capsys, "compare", log, "--a", "base", "--b", "new", "--by", "task", "--order", "t"
    )
    assert rc == 0 and "Independence over trial order" in out


def test_item07_by_task_plot_writes_the_file(tmp_path, capsys):
    log = paired_log(tmp_path / "log.csv")
    fig = tmp_path / "f.png"
    data = by_task(capsys, log, "--plot", fig)
    assert data["plot"] == str(fig)
    with Image.open(fig) as im:
        assert im.format == "PNG" and im.size[0] > 100 and im.size[1] > 100
    rc, out, err = run(
        capsys,
        "compare",
        log,
        "--a",
        "base",
        "--b",
        "new",
        "--by",
        "task",
        "--plot",
        tmp_path / "f.txt",
    )
    assert rc == 2 and out == "" and err.count("\n") == 1 and ".png" in err


# --------------------------------------------------------------------------- item 19


def test_item19_whole_session_drift_across_tasks(tmp_path, capsys):
    """base's tasks ran in blocks and its second block fails: each per-task sequence is
    constant or periodic, the drift shows only over base's whole session."""
    log, df = blocked_log(tmp_path / "log.csv")
    data = by_task(capsys, log, "--order", "t")
    sess = {g["policy"]: g for g in data["session_independence"]["groups"]}
    for p in ("base", "new"):
        x = df[df.policy == p].sort_values("t")["success"].to_numpy(bool)
        want = independence_checks(x, 0.05)
        assert sess[p]["n"] == 60
        assert sess[p]["trend_pvalue"] == pytest.approx(want.trend.pvalue, rel=1e-12)
        assert sess[p]["dependent"] == want.dependent
        assert sess[p]["blocked"] and sess[p]["task_order"] == ["pick", "place"]
    assert sess["base"]["dependent"] and not sess["new"]["dependent"]
    # the same check beside summarize's per-task ones
    summ = run_json(capsys, "summarize", log, "--order", "t")
    assert {g["policy"] for g in summ["session_independence"]["groups"]} == {"base", "new"}
    rc, out, _ = run(capsys, "summarize", log, "--order", "t")
    assert "Whole session per policy" in out and "warning: base: its success rate moves" in out


# --------------------------------------------------------------------------- items 15, 17

# 4 tasks x 100 episodes: diffusion far ahead on two tasks, level on two -- the exact test
# (tasks fixed) is sure, a bootstrap over 4 tasks is not.
RATES = {"t1": (20, 70), "t2": (90, 90), "t3": (50, 51), "t4": (60, 62)}  # (act, diffusion)


def rank_log(path):
    rows = []
    for task, ks in RATES.items():
        for policy, k in zip(("act", "diffusion"), ks, strict=True):
            rows += [{"task": task, "policy": policy, "success": int(i < k)} for i in range(100)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_item17_rank_letters_and_intervals_agree_by_default(tmp_path, capsys):
    log = rank_log(tmp_path / "log.csv")
    data = run_json(capsys, "rank", log, "--bootstrap-reps", 1000)
    assert data["tasks_as"] == "fixed"
    (q,) = data["pairs"]
    # the test: exact stratified over the tasks, tiny p
    assert q["differ"] and q["pvalue_holm"] < 1e-3
    lo, hi = q["diff_macro_simultaneous_ci"]
    want = np.mean([d - a for a, d in RATES.values()]) / 100
    assert q["diff_macro"] == pytest.approx(want, abs=1e-12)
    # tasks fixed: the interval's half-width is about 1.96 x the binomial SE of the
    # difference of macro rates (4 tasks, 100 episodes each), and it excludes 0 like the test
    se = np.sqrt(sum(a * (100 - a) + d * (100 - d) for a, d in RATES.values()) / 1e6) / 4
    assert (hi - lo) / 2 == pytest.approx(1.96 * se, rel=0.2)
    assert lo > 0 and q["interval_excludes_0"]
    letters = {row["policy"]: row["letters"] for row in data["ranking"]}
    assert set(letters["act"]).isdisjoint(letters["diffusion"])
    assert not any("warning" in n for n in data["notes"])


def test_item17_tasks_as_sample_is_opt_in_and_warned(tmp_path, capsys):
    log = rank_log(tmp_path / "log.csv")
    data = run_json(capsys, "rank", log, "--bootstrap-reps", 1000, "--tasks-as-sample")
    assert data["tasks_as"] == "sample"
    (q,) = data["pairs"]
    lo, hi = q["diff_macro_simultaneous_ci"]
    # over 4 tasks the per-task differences (50, 0, 1, 2 points) give an interval with 0
    assert lo < 0 < hi and not q["interval_excludes_0"]
    letters = {row["policy"]: row["letters"] for row in data["ranking"]}
    assert set(letters["act"]) & set(letters["diffusion"])  # not detectably different
    assert any("4 task(s)" in n and "cannot support" in n for n in data["notes"])
    rc, out, err = run(capsys, "rank", log, "--bootstrap-reps", 200, "--tasks-as-sample")
    assert rc == 0 and "warning: --tasks-as-sample with 4 task(s)" in out


def test_item15_rank_plot_in_percent(tmp_path, capsys):
    import matplotlib.pyplot as plt

    from evalsim.cli.rank import ranking_axes

    log = rank_log(tmp_path / "log.csv")
    fig_path = tmp_path / "rank.png"
    data = run_json(capsys, "rank", log, "--bootstrap-reps", 200, "--plot", fig_path)
    with Image.open(fig_path) as im:
        assert im.format == "PNG" and im.size[0] > 100
    frame = pd.DataFrame(data["ranking"])
    fig = ranking_axes(frame, 0.95, "fixed")
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.0, 100.0) and "%" in ax.get_xlabel()
    xs = sorted(float(x) for x in ax.lines[0].get_xdata())
    want = sorted(np.mean([k[i] for k in RATES.values()]) for i in (0, 1))
    assert xs == pytest.approx(want, abs=1e-9)
    plt.close(fig)


def test_item15_plot_titles_name_a_and_b_as_given(tmp_path, capsys, monkeypatch):
    from evalsim.cli import by_task, compare

    titles = []
    monkeypatch.setattr(compare, "plot_rates", lambda rows, path, title, conf: titles.append(title))
    monkeypatch.setattr(by_task, "plot_rates", lambda rows, path, title, conf: titles.append(title))
    log = paired_log(tmp_path / "log.csv")
    for extra in ((), ("--by", "task")):
        rc, _, err = run(
            capsys,
            "compare",
            log,
            "--a",
            "new",
            "--b",
            "base",
            "--plot",
            tmp_path / "x.png",
            *extra,
        )
        assert rc == 0, err
    assert titles[0] == "new vs base" and titles[1].startswith("new vs base")


# --------------------------------------------------------------------------- item 20

SEEDS = {"act": [(36, 40), (24, 40), (30, 40)], "bc": [(28, 40), (29, 40), (28, 40), (29, 40)]}


def seed_log(path, column="seed"):
    rows = []
    for policy, cells in SEEDS.items():
        for s, (k, n) in enumerate(cells):
            rows += [{"policy": policy, column: f"s{s}", "success": int(i < k)} for i in range(n)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_item20_summarize_per_seed_spread_design_effect(tmp_path, capsys):
    from evalsim.stats.multi.hierarchy import two_spreads

    data = run_json(capsys, "summarize", seed_log(tmp_path / "log.csv"))
    groups = {g["policy"]: g for g in data["clusters"]["groups"]}
    for policy, cells in SEEDS.items():
        g = groups[policy]
        assert [(s["k"], s["n"]) for s in g["seeds"]] == cells
        rates = np.array([k / n for k, n in cells])
        assert g["seed_sd"] == pytest.approx(rates.std(ddof=1), rel=1e-12)
        # one-way ANOVA on the 0/1 outcomes by hand: design effect 1 + (m - 1) ICC
        k, n = np.array(cells).T
        p, m, g_n = k.sum() / n.sum(), n[0], len(cells)
        msb = (n * (rates - p) ** 2).sum() / (g_n - 1)
        msw = (k * (1 - rates)).sum() / (n.sum() - g_n)
        icc = ((msb - msw) / m) / ((msb - msw) / m + msw)
        assert g["design_effect"] == pytest.approx(1 + (m - 1) * max(icc, 0), rel=1e-9)
        assert g["design_effect"] == pytest.approx(two_spreads(k, n).design_effect, rel=1e-12)
        half = stats.t.ppf(0.975, g_n - 1) * rates.std(ddof=1) / np.sqrt(g_n)
        lo, hi = g["seed_t_ci"]
        assert lo == pytest.approx(max(rates.mean() - half, 0), rel=1e-12)
        assert hi == pytest.approx(min(rates.mean() + half, 1), rel=1e-12)
        # the hierarchical interval is wider than the naive one when seeds spread
        h, nv = g["hierarchical_ci"], g["naive_ci"]
        if policy == "act":
            assert g["seed_spread_dominates"] and (h[1] - h[0]) > 1.5 * (nv[1] - nv[0])
        else:
            assert not g["seed_spread_dominates"]
    rc, out, _ = run(capsys, "summarize", seed_log(tmp_path / "log.csv"))
    assert "warning: act: seed spread dominates trial spread" in out


def test_item20_compare_with_seeds_as_replicates(tmp_path, capsys):
    log = seed_log(tmp_path / "ckpt.csv", column="checkpoint")
    data = run_json(capsys, "compare", log, "--a", "act", "--b", "bc", "--cluster", "checkpoint")
    st = data["clusters"]["seed_test"]
    ra = [k / n for k, n in SEEDS["act"]]
    rb = [k / n for k, n in SEEDS["bc"]]
    want = stats.ttest_ind(rb, ra, equal_var=False)
    assert st["welch_pvalue"] == pytest.approx(float(want.pvalue), rel=1e-12)
    assert st["welch_df"] == pytest.approx(float(want.df), rel=1e-12)
    assert data["clusters"]["se_ratio"] > 1.5
    rc, out, _ = run(capsys, "compare", log, "--a", "act", "--b", "bc", "--cluster", "checkpoint")
    assert "warning: seed spread dominates trial spread" in out and "Welch t" in out
    # without a cluster column nothing is added; a missing column is one line, exit 2
    assert "clusters" not in run_json(capsys, "compare", log, "--a", "act", "--b", "bc")
    rc, out, err = run(capsys, "compare", log, "--a", "act", "--b", "bc", "--cluster", "nope")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "nope" in err
