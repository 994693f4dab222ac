"""The product manifest (evalsim.products.manifest): every entry resolves to a builder that
takes exactly what the workflow passes, every caption exists, and the config keys it
declares are the keys its arguments really depend on."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path

import pytest
import yaml

from evalsim.config import canonical, check_config
from evalsim.products.build import resolve_builder
from evalsim.products.manifest import (
    PRODUCTS,
    STAGES,
    Product,
    config_keys,
    product_paths,
    products_of,
)

REPO = Path(__file__).resolve().parents[1]
CAPTIONS = REPO / "workflow" / "report"


@pytest.fixture(scope="module")
def config():
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return canonical(check_config(raw))


def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    else:
        yield path


def _set(config, path, value):
    out = copy.deepcopy(config)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def test_keys_rules_logs_and_outputs_are_unique():
    for attr in ("key", "rule", "log", "benchmark"):
        values = [getattr(p, attr) for p in PRODUCTS]
        assert len(values) == len(set(values)), attr
    outputs = [f for p in PRODUCTS for f in product_paths(p).values()]
    assert len(outputs) == len(set(outputs))
    assert [p.stage for p in PRODUCTS] == sorted((p.stage for p in PRODUCTS), key=STAGES.index)
    assert sum(len(products_of(s)) for s in STAGES) == len(PRODUCTS)


@pytest.mark.parametrize("product", PRODUCTS, ids=lambda p: p.rule)
def test_builder_takes_exactly_the_inputs_and_arguments_the_workflow_passes(product, config):
    builder = resolve_builder(product.builder)
    assert callable(builder)
    args = {**dict.fromkeys(product.inputs(config)), **product.kwargs(config)}
    sig = inspect.signature(builder)
    sig.bind(**args)  # TypeError on a missing or unknown argument
    required = {
        n
        for n, p in sig.parameters.items()
        if p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD
    }
    assert required <= set(args)


@pytest.mark.parametrize("product", PRODUCTS, ids=lambda p: p.rule)
def test_caption_exists_and_names_what_it_shows(product):
    caption = CAPTIONS / f"{product.caption}.rst"
    assert caption.is_file(), caption
    text = caption.read_text()
    if product.kind == "table":  # the note fragment the table's rule writes
        assert ".. include:: {{ snakemake.output.rst }}" in text
    assert len(text.split()) > 15


def test_every_caption_belongs_to_a_product_or_a_named_rule():
    used = {p.caption for p in PRODUCTS}
    # the report's own page, F04 (rendered by simulate.smk), the ledger (report.smk) and the
    # locked study S01 (studies.smk)
    own_rules = {"workflow", "F04_scene", "claims_ledger", "S01_study"}
    stray = sorted(c.stem for c in CAPTIONS.glob("*.rst") if c.stem not in used | own_rules)
    assert not stray


@pytest.mark.parametrize("product", PRODUCTS, ids=lambda p: p.rule)
def test_declared_config_keys_are_exactly_what_the_product_depends_on(product, config):
    keys = config_keys(product, config)
    sentinel = object()

    def depends(path):
        try:
            changed = _set(config, path, sentinel)
            return (product.kwargs(changed), product.inputs(changed)) != (
                product.kwargs(config),
                product.inputs(config),
            )
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            return True

    def covered(path):
        dotted = ".".join(str(k) for k in path)
        return any(dotted == k or dotted.startswith(k + ".") for k in keys)

    leaves = list(_leaves(config))
    for path in leaves:
        if depends(path):
            assert covered(path), f"{product.id} depends on {path} but does not declare it"
    # every declared key is a real key of the config, and at least one leaf under it matters
    for k in keys:
        under = [
            p
            for p in leaves
            if ".".join(map(str, p)) == k or ".".join(map(str, p)).startswith(k + ".")
        ]
        assert under, k
        assert any(depends(p) for p in under), f"{product.id} declares {k} but ignores it"


def test_product_checks_its_fields():
    with pytest.raises(ValueError, match="stage must be one of"):
        Product("X", "nowhere", "table", "m:f")
    with pytest.raises(ValueError, match="kind must be table or figure"):
        Product("X", "exact", "chart", "m:f")
    p = Product("T99_x", "exact", "table", "m:f")
    assert (p.key, p.caption, p.rule, p.log) == (
        "T99_x",
        "T99_x",
        "exact_T99_x",
        "logs/exact/T99_x.log",
    )


def test_a_settings_group_is_one_argument_bound_from_the_keys_it_names(config):
    from evalsim.products.settings import Bootstrap, Draws, Sizing

    by_id = {p.key: p for p in PRODUCTS}
    changed = _set(_set(config, ("design", "power"), 0.9), ("hierarchy", "bootstrap_reps"), 7)
    for key in (
        "T13_paired_vs_unpaired_sizing",
        "T17_mde_and_n_per_arm",
        "T26_estimation_vs_detection",
    ):
        p = by_id[key]
        d = config["design"]
        assert p.kwargs(config)["sizing"] == Sizing(config["alpha"], d["power"], d["exact_fisher"])
        assert p.kwargs(changed)["sizing"].power == 0.9
        assert {"alpha", "design.power", "design.exact_fisher"} <= set(config_keys(p, config))
        assert not {"power", "exact_fisher"} & set(p.kwargs(config))  # not also loose
    # one group, each product's own keys: T28's replicates are the hierarchy section's
    t28, t34 = by_id["T28_hierarchical_bootstrap"], by_id["T34_per_task"]
    seed, level = config["study_seed"], config["confidence"]
    assert t28.kwargs(changed)["bootstrap"] == Bootstrap(level, 7, seed)
    assert t34.kwargs(changed)["bootstrap"] == Bootstrap(
        level, config["multi"]["bootstrap_reps"], seed
    )
    assert "hierarchy.bootstrap_reps" in config_keys(t28, config)
    assert "hierarchy.bootstrap_reps" not in config_keys(t34, config)
    # T10 draws pairs of evaluations: its count is experiment.pairs, T08's experiment.evaluations
    task, ex = config["tasks"][0]["name"], config["experiment"]
    t08, t10 = by_id["T08_trials_width_coverage"], by_id["T10_compare"]
    assert t08.kwargs(config)["draws"] == Draws(task, ex["evaluations"], seed)
    assert t10.kwargs(config)["draws"] == Draws(task, ex["pairs"], seed)
