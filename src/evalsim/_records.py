"""JSON records of result objects: the one helper behind the ``to_dict`` methods that write
a result's attributes under their names, or under the names a file format gives them.

A record is declared once, as the keys it holds in order, instead of a hand-written dict
that repeats every attribute twice (``"pvalue": self.pvalue``).
"""

from __future__ import annotations

from dataclasses import fields

#: The odds ratio's interval, as the records write it: ``odds_ratio_ci: [lower, upper]``.
ODDS_RATIO_CI = ("odds_ratio_ci", "odds_ratio_lower", "odds_ratio_upper")


def record(obj, keys=None, *, omit=(), clean=None) -> dict:
    """The attributes of ``obj`` as a dict, in the order of ``keys``.

    Parameters
    ----------
    obj : object
        A result (usually a frozen dataclass).
    keys : iterable, optional
        The record's keys in order, each one of:

        * ``"name"``: the attribute ``name`` under its own name;
        * ``("key", "name")``: the attribute ``name`` under the key ``key``;
        * ``("key", "lower", "upper")``: two attributes as the list ``[lower, upper]`` (an
          interval's ends);
        * ``("key", function)``: ``function(obj)``, a value computed from the object.

        Default: every field of the dataclass ``obj``, in order.
    omit : iterable of str
        Fields left out when ``keys`` is not given.
    clean : callable, optional
        Applied to every attribute read (not to computed values), e.g. NaN to None.

    Returns
    -------
    dict
        Tuples become lists (JSON has no tuples); other values are the attributes themselves.
    """
    if keys is None:
        keys = [f.name for f in fields(obj) if f.name not in omit]
    get = (lambda name: getattr(obj, name)) if clean is None else (lambda n: clean(getattr(obj, n)))
    out = {}
    for entry in keys:
        if isinstance(entry, str):
            value = get(entry)
        elif len(entry) == 3:
            value = [get(entry[1]), get(entry[2])]
        elif callable(entry[1]):
            value = entry[1](obj)
        else:
            value = get(entry[1])
        out[entry if isinstance(entry, str) else entry[0]] = (
            list(value) if isinstance(value, tuple) else value
        )
    return out
