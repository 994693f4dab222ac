"""Moved to :mod:`evalsim.stats.two_sample.unconditional_power`;
this alias of the old path stays for one release."""

from evalsim.stats.two_sample.unconditional_power import *  # noqa: F403
from evalsim.stats.two_sample.unconditional_power import __all__  # noqa: F401
