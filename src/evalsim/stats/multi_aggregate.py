"""Moved to :mod:`evalsim.stats.multi.aggregate`;
this alias of the old path stays for one release."""

from evalsim.stats.multi.aggregate import *  # noqa: F403
from evalsim.stats.multi.aggregate import __all__  # noqa: F401
