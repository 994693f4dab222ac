"""The boundary families of the sequential designs: one registry, importable without SciPy or numba.

Every place that names a boundary family reads :data:`BOUNDARY_FAMILIES`: the spending
functions and builders (:mod:`evalsim.stats.sequential.designs`,
:mod:`evalsim.stats.sequential.paired`), the ``evalsim sequential design --spending`` choices,
the config's cross-key checks (:mod:`evalsim.config`) and the T31 boundary text
(:mod:`evalsim.products.sequential.designs`). :mod:`evalsim.stats.sequential.designs` re-exports the
registry
and its :data:`SPENDING_FAMILIES` view; this module holds only names and words, so the command
line can declare its options without loading the kernels (like :mod:`evalsim.stats.names`).
The config schema's ``sequential.designs[].boundary`` enum lists the same ids (a test keeps
the two equal).

References
----------
.. [1] Lan, K. K. G. & DeMets, D. L. (1983), "Discrete sequential boundaries for clinical
   trials", Biometrika 70(3), 659-663.
.. [2] Kim, K. & DeMets, D. L. (1987), "Design and analysis of group sequential tests based
   on the type I error spending rate function", Biometrika 74(1), 149-154.
.. [3] Wang, S. K. & Tsiatis, A. A. (1987), "Approximately optimal one-parameter boundaries
   for group sequential trials", Biometrics 43(1), 193-199.
.. [4] Jennison, C. & Turnbull, B. W. (2000), *Group Sequential Methods with Applications to
   Clinical Trials*, Chapman & Hall/CRC.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalsim._registry import by_id

__all__ = [
    "BOUNDARY_FAMILIES",
    "CLI_BOUNDARY_FAMILIES",
    "DESIGN_KINDS",
    "SPENDING_FAMILIES",
    "BoundaryFamily",
    "families_for",
    "kind_problem",
    "or_list",
]

#: The two kinds of sequential design: the discordant-pair walk and the pooled z.
DESIGN_KINDS = ("paired", "unpaired")


@dataclass(frozen=True)
class BoundaryFamily:
    """One family of sequential boundaries.

    Attributes
    ----------
    id : str
        The name in configs, design files (``boundary.family``) and ``--spending``.
    label : str
        The name in tables and figures.
    parameter : str or None
        The parameter the family needs (``"rho"``, ``"b"``), None when it needs none.
    kinds : tuple of str
        The design kinds (:data:`DESIGN_KINDS`) that take it.
    cli : bool
        Whether ``evalsim sequential design --spending`` offers it.
    spending : bool
        An alpha-spending function of :func:`evalsim.stats.sequential.spending` (the boundary
        is calibrated look by look on it), rather than a boundary of its own builder.
    description : str
        One line: what the boundary is.
    reference : str
        Where the boundary is defined.
    """

    id: str
    label: str
    parameter: str | None
    kinds: tuple[str, ...]
    cli: bool
    spending: bool
    description: str
    reference: str

    def takes(self, kind: str) -> bool:
        """Whether a design of ``kind`` (paired, unpaired) can have this boundary."""
        return kind in self.kinds


# One row a family, in the order the command line and the schema list them; the columns are
# BoundaryFamily's fields: id, label, parameter, kinds, cli, spending, then the description
# and the reference on lines of their own.
# fmt: off
_FAMILY_ROWS = (
    ("pocock", "Pocock", None, DESIGN_KINDS, True, True,
        "Lan-DeMets Pocock-type spending, alpha log(1 + (e - 1) tau).",
        "Lan and DeMets (1983)"),
    ("obrien-fleming", "O'Brien-Fleming", None, DESIGN_KINDS, True, True,
        "Lan-DeMets O'Brien-Fleming-type spending, 2 - 2 Phi(z_{1-alpha/2} / sqrt(tau)).",
        "Lan and DeMets (1983)"),
    ("power", "power family", "rho", DESIGN_KINDS, True, True,
        "Power-family spending alpha tau^rho.",
        "Kim and DeMets (1987); Jennison and Turnbull (2000), chapter 7"),
    ("shape", "boundary shape", "b", ("unpaired",), True, False,
        "Critical z c_t = a (t/n_max)^-b, the scale a calibrated on alpha.",
        "Wang and Tsiatis (1987)"),
    ("optimised", "optimised shape", None, ("unpaired",), False, False,
        "The shape b of least mean expected trials at stated alternatives "
        "(config sequential.optimise, evalsim.stats.sequential.optimise).",
        "Jennison and Turnbull (2000), section 4.5"),
    ("optimal", "optimal (least expected pairs)", None, ("paired",), True, False,
        "The walk design of least expected pairs at one alternative, size <= alpha and a "
        "power floor, by Lagrangian backward induction (evalsim.stats.sequential.optimal); "
        "futility binding.",
        "Eales and Jennison (1992); Jennison and Turnbull (2000), chapter 4"),
    ("anytime", "anytime-valid e-process", None, DESIGN_KINDS, True, False,
        "Stop when a mixture e-process reaches 1/alpha (Ville's inequality: valid at any "
        "stopping time, n_max or not); evalsim.stats.sequential.anytime.",
        "Ville (1939); Grunwald, de Heide and Koolen (2024); Turner, Ly and Grunwald (2024)"),
)
# fmt: on

#: Boundary families by id, in the order the command line and the schema list them.
#: Adding a family: one row in ``_FAMILY_ROWS``; its boundary function in
#: evalsim.stats.sequential.designs (a branch of ``spending`` for a spending family, else a
#: builder in ``UNPAIRED_BUILDERS``); its id in the schema's ``sequential.designs[].boundary``
#: enum (tests/test_sequential_config.py checks the two agree); a plain-Python reference and a
#: test in tests/test_sequential.py. The command, the config checks, the T31 text and the
#: design builders read the registry.
BOUNDARY_FAMILIES = by_id(*(BoundaryFamily(*row) for row in _FAMILY_ROWS))

#: Spending families: id -> parameter name (None when the family has none).
SPENDING_FAMILIES = {f.id: f.parameter for f in BOUNDARY_FAMILIES.values() if f.spending}

#: The families ``evalsim sequential design --spending`` offers.
CLI_BOUNDARY_FAMILIES = tuple(f.id for f in BOUNDARY_FAMILIES.values() if f.cli)


def families_for(kind: str, cli: bool = False) -> tuple[str, ...]:
    """Ids of the families a design of ``kind`` takes (only those the CLI offers if ``cli``)."""
    return tuple(f.id for f in BOUNDARY_FAMILIES.values() if f.takes(kind) and (f.cli or not cli))


def or_list(names) -> str:
    """``"a, b or c"``: names for a message."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def kind_problem(family, kind: str, cli: bool = False) -> str | None:
    """Why a design of ``kind`` cannot have boundary ``family``, or None when it can.

    Parameters
    ----------
    family : str
        The boundary family's id.
    kind : {"paired", "unpaired"}
    cli : bool
        Name only the families the command line offers as the alternatives.

    Returns
    -------
    str or None
        E.g. ``"is for unpaired designs; paired designs take pocock, obrien-fleming or
        power"``, for the caller to prefix with the family as its user wrote it (option,
        config key).
    """
    allowed = f"{kind} designs take {or_list(families_for(kind, cli))}"
    found = BOUNDARY_FAMILIES.get(family) if isinstance(family, str) else None
    if found is None:
        return f"is not a boundary family; {allowed}"
    if found.takes(kind):
        return None
    return f"is for {or_list(found.kinds)} designs; {allowed}"
