"""Names the ``evalsim`` command offers as choices, importable without SciPy or numba.

The statistics modules that own these registries re-export them
(:data:`evalsim.stats.unconditional_power.POWER_TESTS`, :data:`evalsim.stats.simreal.METHODS`),
so the command line can declare its options without loading the kernels.
"""

from __future__ import annotations

__all__ = ["POWER_TESTS", "SIMREAL_DEFAULT_REAL_SHARE", "SIMREAL_METHODS"]

#: Unpaired two-sample tests with exact power and sample size.
POWER_TESTS = ("fisher", "boschloo", "barnard")

#: Sim + real interval methods (:mod:`evalsim.stats.simreal`).
SIMREAL_METHODS = ("clopper_pearson", "wilson", "ppi", "ppi_plus", "stratified_exact")

#: Default share of alpha spent on the real-only Clopper-Pearson interval (simreal).
SIMREAL_DEFAULT_REAL_SHARE = 0.8
