"""Moved to :mod:`evalsim.stats.multi.hierarchy`;
this alias of the old path stays for one release."""

from evalsim.stats.multi.hierarchy import *  # noqa: F403
from evalsim.stats.multi.hierarchy import __all__  # noqa: F401
