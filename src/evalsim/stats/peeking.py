"""Moved to :mod:`evalsim.stats.sequential.peeking`;
this alias of the old path stays for one release."""

from evalsim.stats.sequential.peeking import *  # noqa: F403
from evalsim.stats.sequential.peeking import __all__  # noqa: F401
