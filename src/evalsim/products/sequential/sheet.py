"""F07 from the pipeline: the bench sheet of the design the rule passes.

The drawing is :func:`evalsim.figures.sequential_sheet.bench_sheet` (shared with the
``evalsim sequential sheet`` command).
"""

from __future__ import annotations

from evalsim.figures.sequential_sheet import bench_sheet
from evalsim.stats.sequential.core import SequentialDesign

__all__ = ["bench_sheet_of"]


def bench_sheet_of(designs: dict[str, SequentialDesign]):
    """F07 from the pipeline: the bench sheet of the one design passed."""
    if len(designs) != 1:
        raise ValueError(f"the bench sheet draws one design, got {len(designs)}")
    return bench_sheet(next(iter(designs.values())))
