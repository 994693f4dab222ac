"""Moved to :mod:`evalsim.stats.two_sample.design`;
this alias of the old path stays for one release."""

from evalsim.stats.two_sample.design import *  # noqa: F403
