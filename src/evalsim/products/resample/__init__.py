"""Builders of the stage ``resample``: lesson 25's experiment replayed from the pools.

The pools and Tables A-C (T07-T09) are in :mod:`.experiment`, Table E, "Break it" and the
seeds exercise (T10-T12) in :mod:`.compare`, and Figure B (F01) in :mod:`.figures`. The
product manifest names them ``"resample.<module>:<function>"``.
"""
