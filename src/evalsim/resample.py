"""Moved to :mod:`evalsim.stats.resample.draws`;
this alias of the old path stays for one release."""

from evalsim.stats.resample.draws import *  # noqa: F403
from evalsim.stats.resample.draws import __all__  # noqa: F401
