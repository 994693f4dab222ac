"""Builders of the stage ``design``: planning an evaluation from the config's ``design``
section and the pools.

The sizing tables (T13, T21, T26, T29) are in :mod:`.sizing`, the detection tables (T14,
T17, T19, T20) in :mod:`.detection`, the interval tables (T15, T16, T23-T25) in
:mod:`.intervals`, the tables built from the MuJoCo pools (T18, T27) in :mod:`.pools`, and
the figures mde_vs_n and power_vs_n in :mod:`.figures`. The product manifest names them
``"design.<module>:<function>"``.
"""
