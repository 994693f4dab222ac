"""What the design stage's builders share: NaN for a cell with no value, and points."""

from __future__ import annotations

NAN = float("nan")


def _pts(x: float) -> float:
    """A proportion as percentage points."""
    return 100.0 * float(x)
