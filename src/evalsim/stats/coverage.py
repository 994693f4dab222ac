"""Moved to :mod:`evalsim.stats.proportion.coverage`;
this alias of the old path stays for one release."""

from evalsim.stats.proportion.coverage import *  # noqa: F403
from evalsim.stats.proportion.coverage import __all__  # noqa: F401
