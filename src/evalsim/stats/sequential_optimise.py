"""Moved to :mod:`evalsim.stats.sequential.optimise`;
this alias of the old path stays for one release."""

from evalsim.stats.sequential.optimise import *  # noqa: F403
from evalsim.stats.sequential.optimise import __all__  # noqa: F401
