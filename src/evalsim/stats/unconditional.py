"""Moved to :mod:`evalsim.stats.two_sample.unconditional`;
this alias of the old path stays for one release."""

from evalsim.stats.two_sample.unconditional import *  # noqa: F403
from evalsim.stats.two_sample.unconditional import __all__  # noqa: F401
