"""Moved to :mod:`evalsim.stats.proportion.budget`;
this alias of the old path stays for one release."""

from evalsim.stats.proportion.budget import *  # noqa: F403
from evalsim.stats.proportion.budget import __all__  # noqa: F401
