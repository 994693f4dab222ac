"""Many simulated trials and a few real ones: intervals for the real success rate and their
exact operating characteristics (:mod:`.methods`); kernels in ``_kernels``.

The package re-exports :mod:`.methods`, what ``evalsim.stats.simreal`` held before it became
a package.
"""

from evalsim.stats.simreal.methods import (
    COMBINE_GRID,
    DEFAULT_REAL_SHARE,
    DISCORDANT_REAL_SHARE,
    FULL_JOINT_RATIO,
    METHODS,
    SIM_SHARE,
    STRATUM_SHARE,
    VALIDITY,
    SimRealData,
    SimRealOC,
    SimRealResult,
    joint_law,
    operating_characteristics,
    recommended,
    simreal_data,
    simreal_interval,
    simreal_intervals,
)

__all__ = [
    "COMBINE_GRID",
    "FULL_JOINT_RATIO",
    "DEFAULT_REAL_SHARE",
    "DISCORDANT_REAL_SHARE",
    "METHODS",
    "SIM_SHARE",
    "STRATUM_SHARE",
    "SimRealData",
    "SimRealOC",
    "SimRealResult",
    "VALIDITY",
    "joint_law",
    "operating_characteristics",
    "recommended",
    "simreal_data",
    "simreal_interval",
    "simreal_intervals",
]
