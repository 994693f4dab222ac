"""Many simulated trials and a few real ones: intervals for the real success rate and their
exact operating characteristics (:mod:`.methods`); kernels in ``_kernels``.

The package re-exports :mod:`.methods` (its ``__all__``), what ``evalsim.stats.simreal``
held before it became a package.
"""

from evalsim.stats.simreal.methods import *  # noqa: F403
from evalsim.stats.simreal.methods import __all__  # noqa: F401
