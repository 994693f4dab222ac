"""``evalsim._records.record``: the one helper behind the results' JSON records."""

from __future__ import annotations

import math
from dataclasses import dataclass

from evalsim._records import ODDS_RATIO_CI, record


@dataclass(frozen=True)
class _Result:
    pvalue: float
    odds_ratio: float
    odds_ratio_lower: float
    odds_ratio_upper: float
    support: tuple
    hidden: str = "x"


R = _Result(0.25, 2.0, 1.5, 3.0, (0, 7))


def test_every_entry_form_in_the_order_given():
    got = record(
        R, ("odds_ratio", ("p", "pvalue"), ODDS_RATIO_CI, ("twice", lambda r: 2 * r.pvalue))
    )
    assert list(got.items()) == [
        ("odds_ratio", 2.0),
        ("p", 0.25),
        ("odds_ratio_ci", [1.5, 3.0]),
        ("twice", 0.5),
    ]


def test_default_keys_are_the_fields_in_order_tuples_as_lists():
    got = record(R, omit=("hidden",))
    assert list(got) == ["pvalue", "odds_ratio", "odds_ratio_lower", "odds_ratio_upper", "support"]
    assert got["support"] == [0, 7] and isinstance(got["support"], list)


def test_clean_applies_to_attributes_not_to_computed_values():
    nan = _Result(math.nan, 1.0, math.nan, 2.0, ())
    none = lambda v: None if isinstance(v, float) and math.isnan(v) else v  # noqa: E731
    got = record(nan, ("pvalue", ODDS_RATIO_CI, ("raw", lambda r: r.pvalue)), clean=none)
    assert got["pvalue"] is None and got["odds_ratio_ci"] == [None, 2.0]
    assert math.isnan(got["raw"])
