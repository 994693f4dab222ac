# Every table and figure of the study: one rule per entry of the product manifest
# (src/evalsim/products/manifest.py), which holds each product's id, stage, builder, inputs,
# config keys and caption. Outputs, log and benchmark paths derive from the id; one script
# (workflow/scripts/make_product.py) runs every builder.

from evalsim.products.manifest import PRODUCTS, product_paths

# Cross-key checks the manifest's builders rely on, before any job runs.
_coverage_policy = config["experiment"].get("coverage_policy") or POLICIES[0]
if _coverage_policy not in POLICIES:
    raise ValueError(
        f"config key 'experiment.coverage_policy': unknown policy "
        f"{_coverage_policy!r}; configured policies: {', '.join(POLICIES)}"
    )
if config["experiment"]["high_score_k"] > config["experiment"]["high_score_n"]:
    raise ValueError(
        f"config key 'experiment.high_score_k': {config['experiment']['high_score_k']!r} "
        f"exceeds experiment.high_score_n = {config['experiment']['high_score_n']!r}"
    )
_multi_a = config["multi"]["policy_a"] or POLICIES[0]
_multi_b = config["multi"]["policy_b"] or (POLICIES[1] if len(POLICIES) > 1 else None)
if _multi_b is None or _multi_a == _multi_b:
    raise ValueError(
        "config key 'multi.policy_b': T34 needs two different policies; "
        f"configured policies: {', '.join(POLICIES)}"
    )


def product_outputs(product):
    """A product's outputs; its report entry (a table's HTML page, a figure's PNG) carries
    its caption, workflow/report/<caption>.rst, in the report category of its stage."""
    paths = product_paths(product)
    shown = "html" if product.kind == "table" else "png"
    paths[shown] = report(
        paths[shown], caption=f"../report/{product.caption}.rst", category=product.stage
    )
    return paths


PRODUCT_TARGETS = [path for p in PRODUCTS for path in product_paths(p).values()]


for _product in PRODUCTS:

    rule:
        name:
            _product.rule
        input:
            **_product.inputs(config),
        output:
            **product_outputs(_product),
        log:
            _product.log,
        benchmark:
            _product.benchmark
        localrule: _product.local
        threads: 1
        resources:
            mem_mb=_product.mem_mb,
            runtime=_product.runtime,
        params:
            builder=_product.builder,
            kwargs=_product.kwargs(config),
        script:
            "../scripts/make_product.py"
