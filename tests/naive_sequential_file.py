"""Plain-Python replay of a paired design file written by ``evalsim sequential design``
(no numba, no evalsim): the file's integer rows read one pair at a time, by hand.

The study tests check the locked study's decisions against it; any test that walks a paired
design file's rows can use it.
"""

from __future__ import annotations


def paired_file_stop(design: dict, pairs) -> tuple[int, str] | None:
    """Walk (a, b) outcome pairs through a paired design file's rows.

    After pair t with d discordant pairs, w of them B-only: at ``t == n_max`` or
    ``d == d_max`` the ``final_*`` rows decide, else the interim rows; B better if
    ``w >= b_better_if_wB_at_least[d]``, A better if ``w <= a_better_if_wB_at_most[d]``.

    Parameters
    ----------
    design : dict
        The design file, parsed (its ``rows``, ``n_max`` and ``d_max``).
    pairs : iterable of (int, int)
        The (a, b) outcomes, 1 for a success, in schedule order.

    Returns
    -------
    (int, str) or None
        The pair at the stop and the verdict ("b-better", "a-better" or "no difference
        shown"), or None when the pairs end before a stop.
    """
    rows = design["rows"]
    d = w = 0
    for t, (a, b) in enumerate(pairs, start=1):
        if a != b:
            d += 1
            w += b
        final = t == design["n_max"] or d == design["d_max"]
        up = rows["final_b_better_if_wB_at_least" if final else "b_better_if_wB_at_least"][d]
        lo = rows["final_a_better_if_wB_at_most" if final else "a_better_if_wB_at_most"][d]
        if w >= up:
            return t, "b-better"
        if w <= lo:
            return t, "a-better"
        if final:
            return t, "no difference shown"
    return None
