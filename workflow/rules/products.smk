# Every table and figure of the study: one rule per entry of the product manifest
# (src/evalsim/products/manifest.py), which holds each product's id, stage, builder, inputs,
# config keys and caption. Outputs, log and benchmark paths derive from the id; one script
# (workflow/scripts/make_product.py) runs every builder.

from evalsim.products.manifest import PRODUCTS, product_paths

# The cross-key checks of the keys the manifest reads (experiment.coverage_policy,
# experiment.high_score_k, multi.policy_a/policy_b) and their defaults live in evalsim.config
# (check_config runs in common.smk, before any job).


def product_outputs(product):
    """A product's outputs; its report entry (a table's HTML page, a figure's PNG) carries
    its caption, workflow/report/<caption>.rst, in the report category of its stage, and is
    listed by the documents' name for it with the id beside (Product.report_label)."""
    paths = product_paths(product)
    shown = "html" if product.kind == "table" else "png"
    paths[shown] = report(
        paths[shown],
        caption=f"../report/{product.caption}.rst",
        category=product.stage,
        labels=product.report_label,
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
