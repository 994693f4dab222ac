"""Pool tables for ledger tests: T07 (seed 0) and the T30 rows the pool checks read.

The ledger's pool checks read the largest honest sample, T30's "pooled seeds" rows (issue 46);
a test that sets our pools' rates builds both tables from one T07-shaped frame.
"""

from __future__ import annotations

import pandas as pd


def t30_from(t07: pd.DataFrame) -> pd.DataFrame:
    """T30's strict and loose "pooled seeds" rows with T07's rates and trials."""
    rows = []
    for r in t07.itertuples():
        rows.append(
            {"policy": r.policy, "criterion": "strict", "scope": "pooled seeds"}
            | {"rate": r.rate, "n": r.trials}
        )
        if hasattr(r, "loose_rate"):
            rows.append(
                {"policy": r.policy, "criterion": "loose", "scope": "pooled seeds"}
                | {"rate": r.loose_rate, "n": r.trials}
            )
    return pd.DataFrame(rows)


def pools(t07: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Overrides for both tables."""
    return {"T07": t07, "T30": t30_from(t07)}
