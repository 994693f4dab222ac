"""Moved to :mod:`evalsim.stats.proportion.intervals`;
this alias of the old path stays for one release."""

from evalsim.stats.proportion.intervals import *  # noqa: F403
from evalsim.stats.proportion.intervals import __all__  # noqa: F401
