"""The user-error type of the ``evalsim`` command, in a module of its own so that the helpers
of :mod:`evalsim.cli._common` and :mod:`evalsim.cli._safe_output` share it without importing
each other."""

from __future__ import annotations

__all__ = ["BadInput"]


class BadInput(Exception):
    """A user error: reported as one line on stderr, exit status 2."""
