"""Checks that a log's trials are independent and identically distributed (:mod:`.checks`:
runs, trend and halves tests, their exact null laws and power); kernels in ``_kernels``.

The package re-exports :mod:`.checks`, what ``evalsim.stats.independence`` held before it
became a package.
"""

from evalsim.stats.independence.checks import *  # noqa: F403
from evalsim.stats.independence.checks import __all__  # noqa: F401
