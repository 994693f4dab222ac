"""The tables the claims of the ledger read, for the tests of the pipeline and the report."""

from __future__ import annotations


def claim_tables(claims) -> set[str]:
    """Every table id named in the claims' sources and criteria.

    Parameters
    ----------
    claims : iterable of evalsim.ledger.Claim
        The claims.

    Returns
    -------
    set of str
        The ``table`` values found at any depth of their sources and criteria.
    """
    refs = set()

    def visit(spec):
        if isinstance(spec, dict):
            if "table" in spec:
                refs.add(spec["table"])
            for value in spec.values():
                visit(value)
        elif isinstance(spec, list):
            for value in spec:
                visit(value)

    for c in claims:
        visit(list(c.sources))
        visit(c.criterion)
    return refs
