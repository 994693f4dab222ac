"""A new policy reaches every per-pair table: `experiment.comparisons` defaults to all pairs."""

from __future__ import annotations

import contextlib
import copy
import io
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_experiment import SPEC, TASK, make_pools

from evalsim.config import ConfigError, check_config, policy_pairs
from evalsim.products.design import pools as design_pools
from evalsim.products.resample import compare as experiment_compare
from evalsim.products.settings import Bootstrap


@pytest.fixture(scope="module")
def smoke(repo) -> dict:
    return yaml.safe_load((repo / "config" / "smoke.yaml").read_text(encoding="utf-8"))


def with_policy_c(cfg: dict) -> dict:
    cfg = copy.deepcopy(cfg)
    cfg["policies"].append({"name": "C", "sigma_mm": 12.0})
    return cfg


def test_policy_pairs_in_config_order():
    assert policy_pairs(["B", "A", "C"]) == [["B", "A"], ["B", "C"], ["A", "C"]]
    assert policy_pairs(["A"]) == []
    names = [f"P{i}" for i in range(5)]
    pairs = policy_pairs(names)
    assert len(pairs) == 5 * 4 // 2 and len({tuple(p) for p in pairs}) == len(pairs)
    assert all(names.index(a) < names.index(b) for a, b in pairs)


def test_comparisons_default_to_every_pair_and_the_config_narrows(smoke):
    assert "comparisons" not in smoke["experiment"] or smoke["experiment"]["comparisons"] is None
    assert check_config(smoke)["experiment"]["comparisons"] == [["A", "B"]]
    three = with_policy_c(smoke)
    assert check_config(three)["experiment"]["comparisons"] == [
        ["A", "B"],
        ["A", "C"],
        ["B", "C"],
    ]
    narrowed = copy.deepcopy(three)
    narrowed["experiment"]["comparisons"] = [["C", "B"]]
    assert check_config(narrowed)["experiment"]["comparisons"] == [["C", "B"]]
    narrowed["experiment"]["comparisons"] = [["C", "Z"]]
    with pytest.raises(ConfigError, match=r"experiment.comparisons\[0\].*'Z'.*A, B, C"):
        check_config(narrowed)
    narrowed["experiment"]["comparisons"] = []
    with pytest.raises(ConfigError, match="experiment.comparisons"):
        check_config(narrowed)
    one = copy.deepcopy(smoke)
    one["policies"] = one["policies"][:1]
    with pytest.raises(ConfigError, match=r"'experiment.comparisons'.*only one \(A\)"):
        check_config(one)


def _builder_kwargs(repo: Path, configfile: Path, *rules: str) -> list[dict]:
    """The kwargs the workflow passes to each rule's builder under ``configfile``."""
    from snakemake.api import ConfigSettings, OutputSettings, ResourceSettings, SnakemakeApi

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        with SnakemakeApi(OutputSettings()) as api:
            wapi = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(configfiles=[configfile]),
                snakefile=repo / "Snakefile",
                workdir=repo,
            )
            wf = wapi._workflow
            return [dict(wf.get_rule(rule).params.kwargs) for rule in rules]


def test_adding_policy_c_to_the_smoke_config_puts_c_in_t10(repo, smoke, tmp_path):
    """Only `policies` changes; T10's rule then compares C with A and B, and the table has
    C's rows while A vs B's rows stay as they were."""
    configfile = tmp_path / "smoke_c.yaml"
    configfile.write_text(yaml.safe_dump(with_policy_c(smoke)), encoding="utf-8")
    kwargs, t18, t27 = _builder_kwargs(
        repo,
        configfile,
        "resample_T10_compare",
        "design_T18_mcnemar_vs_unpaired",
        "design_T27_paired_contingency",
    )
    assert t18["pairs"] == t27["pairs"] == [["A", "B"], ["A", "C"], ["B", "C"]]
    assert kwargs["comparisons"] == [["A", "B"], ["A", "C"], ["B", "C"]]

    pools = make_pools({**SPEC, "C": (12.0, [180, 170, 190], [240, 230, 250])})
    kwargs.update(draws=replace(kwargs["draws"], task=TASK, evaluations=200), n_grid=[10, 20])
    t10 = experiment_compare.table_e(pools, **kwargs)
    pairs = list(dict.fromkeys(zip(t10["policy_a"], t10["policy_b"], strict=True)))
    assert pairs == [("A", "B"), ("A", "C"), ("B", "C")]
    c_rows = t10[t10["policy_b"] == "C"]
    assert c_rows["p_b"].tolist() == pytest.approx([180 / 300] * 4)
    two = experiment_compare.table_e(pools, **{**kwargs, "comparisons": [["A", "B"]]})
    ab = t10[(t10["policy_a"] == "A") & (t10["policy_b"] == "B")].reset_index(drop=True)
    cols = ["n", "fisher_p_lt_alpha", "wilson_disjoint", "b_not_better"]
    assert ab[cols].equals(two[cols])


def test_paired_pool_tables_have_one_block_per_pair():
    pools = make_pools({**SPEC, "C": (12.0, [180, 170, 190], [240, 230, 250])})
    pairs = [["A", "B"], ["A", "C"], ["B", "C"]]
    t18 = design_pools.mcnemar_vs_unpaired(pools, task=TASK, pairs=pairs)
    boot = Bootstrap(confidence=0.95, reps=200, study_seed=1)
    t27 = design_pools.paired_contingency_table(pools, boot, task=TASK, pairs=pairs)
    for t in (t18, t27):
        assert list(t.columns[:2]) == ["policy_a", "policy_b"]
        blocks = list(dict.fromkeys(zip(t["policy_a"], t["policy_b"], strict=True)))
        assert blocks == [("A", "B"), ("A", "C"), ("B", "C")]
        assert t.groupby(["policy_a", "policy_b"]).size().tolist() == [3, 3, 3]  # seeds
        assert "A vs B; A vs C; B vs C" in t.attrs["note"]
    # a pair's rows do not depend on the other pairs listed
    alone = design_pools.paired_contingency_table(
        pools, boot, policy_a="B", policy_b="C", task=TASK
    )
    bc = t27[t27["policy_a"] == "B"].drop(columns=["policy_a", "policy_b"])
    pd.testing.assert_frame_equal(bc.reset_index(drop=True), alone, check_like=False)
    # B-only successes of the pair (A, C) seed 0, counted by hand from the pools
    sel = pools[(pools["task"] == TASK) & (pools["seed"] == 0)]
    a = sel[sel["policy"] == "A"].sort_values("trial")["success"].to_numpy()
    c = sel[sel["policy"] == "C"].sort_values("trial")["success"].to_numpy()
    row = t18[(t18["policy_b"] == "C") & (t18["policy_a"] == "A") & (t18["seed"] == 0)].iloc[0]
    assert (row["a_only_b"], row["b_only_c"]) == (int((a & ~c).sum()), int((~a & c).sum()))
    with pytest.raises(ValueError, match="pairs: empty"):
        design_pools.mcnemar_vs_unpaired(pools, task=TASK, pairs=[])
