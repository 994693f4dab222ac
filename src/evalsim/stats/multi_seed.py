"""Moved to :mod:`evalsim.stats.multi.seeds`; this alias of the old path stays for one release."""

from evalsim.stats.multi.seeds import *  # noqa: F403
from evalsim.stats.multi.seeds import __all__  # noqa: F401
