"""Helpers shared by the product builders."""

from __future__ import annotations

import pandas as pd


def titled_frame(rows: list[dict], title: str, note: str) -> pd.DataFrame:
    """A table's DataFrame with its title and note.

    Parameters
    ----------
    rows : list of dict
        The table's rows, one dict a row.
    title : str
        ``attrs["title"]``: the table's heading.
    note : str
        ``attrs["note"]``: the text under the table.

    Returns
    -------
    pandas.DataFrame
        ``pd.DataFrame(rows)`` with the two attributes set.
    """
    df = pd.DataFrame(rows)
    df.attrs["title"] = title
    df.attrs["note"] = note
    return df
