"""Moved to :mod:`evalsim.stats.multi.rank`; this alias of the old path stays for one release."""

from evalsim.stats.multi.rank import *  # noqa: F403
from evalsim.stats.multi.rank import __all__  # noqa: F401
