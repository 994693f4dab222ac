"""Table and figure builders for the study's targets, one module per stage.

Each builder takes DataFrames (read from other rules' products) and plain parameters from
the config, and returns a ``pandas.DataFrame`` (a table, T-ids) or a matplotlib ``Figure``
(F-ids). ``workflow/scripts/make_table.py`` and ``make_figure.py`` call them by name, so a
number's origin is: target id → rule in ``workflow/rules/`` → builder here → ``evalsim.stats``.
"""
