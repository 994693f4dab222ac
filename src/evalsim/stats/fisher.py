"""Moved to :mod:`evalsim.stats.two_sample.fisher`;
this alias of the old path stays for one release."""

from evalsim.stats.two_sample.fisher import *  # noqa: F403
from evalsim.stats.two_sample.fisher import __all__  # noqa: F401
