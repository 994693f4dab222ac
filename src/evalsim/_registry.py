"""The one shape of every registry: its entries keyed by their ``id``, in their order."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["by_id"]

T = TypeVar("T")


def by_id(*entries: T) -> dict[str, T]:
    """Key registry entries by their ``id``, keeping the order they are given in.

    Parameters
    ----------
    *entries
        The entries, each with a string attribute ``id``.

    Returns
    -------
    dict of str to entry
        ``{entry.id: entry}``, in the order of ``entries``.
    """
    return {e.id: e for e in entries}  # type: ignore[attr-defined]
