"""Builders of the stage ``sequential``: sequential designs and how they behave.

The designs themselves and their tables -- boundaries and certified type-I error (T31),
operating characteristics (T32), the pools check (T33) -- are in :mod:`.designs`, the figures
F05 and F06 in :mod:`.figures`, and the bench sheet (F07) in :mod:`.sheet`. The product
manifest names them ``"sequential.<module>:<function>"``; rule ``sequential_design`` builds
the design files with :func:`.designs.build_design`.
"""
