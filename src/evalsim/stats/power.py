"""Moved to :mod:`evalsim.stats.two_sample.power`;
this alias of the old path stays for one release."""

from evalsim.stats.two_sample.power import *  # noqa: F403
from evalsim.stats.two_sample.power import __all__  # noqa: F401
