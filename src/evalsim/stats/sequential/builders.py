"""Builders of the boundary families that are neither spending functions nor shapes.

:data:`FAMILY_BUILDERS` maps a family id of :data:`evalsim.stats.boundaries.BOUNDARY_FAMILIES`
(``optimal``, ``anytime``) to a function ``(kind, alpha, n_max, alternative, p_a, p_b,
power) -> SequentialDesign``; the command line (``evalsim sequential design --family``) and
the config's design list build them through it.
"""

from __future__ import annotations

from evalsim.stats.sequential.core import SequentialDesign

__all__ = ["FAMILY_BUILDERS", "anytime_family_design", "optimal_family_design"]


def _one_sided(family: str, alternative: str) -> None:
    if alternative != "one-sided":
        raise ValueError(f"family {family} is one-sided (B better); got {alternative!r}")


def anytime_family_design(
    kind, alpha, n_max, alternative="one-sided", p_a=None, p_b=None, power=None
) -> SequentialDesign:
    """The anytime-valid e-process of ``kind`` (:mod:`evalsim.stats.sequential.anytime`)."""
    from evalsim.stats.sequential.anytime import paired_anytime_design
    from evalsim.stats.sequential.designs import unpaired_family_design

    _one_sided("anytime", alternative)
    if kind == "paired":
        return paired_anytime_design(alpha, n_max)
    return unpaired_family_design("anytime", alpha, n_max)


def optimal_family_design(
    kind, alpha, n_max, alternative="one-sided", p_a=None, p_b=None, power=0.8
) -> SequentialDesign:
    """The optimal paired design at (p_a, p_b) (:mod:`evalsim.stats.sequential.optimal`)."""
    from evalsim.stats.sequential.optimal import optimal_paired_design

    _one_sided("optimal", alternative)
    if kind != "paired":
        raise ValueError("family optimal is for paired designs")
    if p_a is None or p_b is None:
        raise ValueError("family optimal needs the alternative: p_a and p_b (--pa, --pb)")
    return optimal_paired_design(p_a, p_b, alpha, 0.8 if power is None else power, n_max).design


#: Family id -> builder (see the module docstring).
FAMILY_BUILDERS = {"anytime": anytime_family_design, "optimal": optimal_family_design}
