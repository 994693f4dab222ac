"""The one error type of a study: a user error, reported in one line (exit status 2)."""

from __future__ import annotations

__all__ = ["StudyError"]


class StudyError(ValueError):
    """A study that cannot be read, changed after its lock, or asked something it refuses.

    The message is one line that names the file, key or trial at fault; the ``evalsim``
    command prints it on stderr and exits with status 2.
    """
