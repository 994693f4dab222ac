"""Moved to :mod:`evalsim.stats.multi.paired`; this alias of the old path stays for one release."""

from evalsim.stats.multi.paired import *  # noqa: F403
from evalsim.stats.multi.paired import __all__  # noqa: F401
