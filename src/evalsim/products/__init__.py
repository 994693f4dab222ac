"""Table and figure builders for the study's targets, grouped by stage: a module per stage, or
a subpackage where a stage's builders fill several modules (:mod:`.design`, :mod:`.resample`,
:mod:`.sequential`; fisher and peeking keep two flat modules each).

Each builder takes DataFrames (read from other rules' products) and plain parameters from
the config, and returns a ``pandas.DataFrame`` (a table, T-ids) or a matplotlib ``Figure``
(F-ids). The product manifest (:mod:`evalsim.products.manifest`) names each product's builder,
inputs and config keys; ``workflow/rules/products.smk`` makes one rule per entry and
``workflow/scripts/make_product.py`` runs it (:mod:`evalsim.products.build`), so a number's
origin is: target id → manifest entry → builder here → ``evalsim.stats``.
"""
