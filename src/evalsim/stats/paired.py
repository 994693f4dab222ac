"""Moved to :mod:`evalsim.stats.two_sample.paired`;
this alias of the old path stays for one release."""

from evalsim.stats.two_sample.paired import *  # noqa: F403
