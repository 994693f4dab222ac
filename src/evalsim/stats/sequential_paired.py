"""Moved to :mod:`evalsim.stats.sequential.paired`;
this alias of the old path stays for one release."""

from evalsim.stats.sequential.paired import *  # noqa: F403
from evalsim.stats.sequential.paired import __all__  # noqa: F401
