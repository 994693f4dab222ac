"""Moved to :mod:`evalsim.stats.proportion.binomial`;
this alias of the old path stays for one release."""

from evalsim.stats.proportion.binomial import *  # noqa: F403
from evalsim.stats.proportion.binomial import __all__  # noqa: F401
