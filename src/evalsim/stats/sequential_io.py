"""Moved to :mod:`evalsim.stats.sequential.io`; this alias of the old path stays for one release."""

from evalsim.stats.sequential.io import *  # noqa: F403
from evalsim.stats.sequential.io import __all__  # noqa: F401
