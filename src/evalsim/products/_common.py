"""Helpers shared by the product builders."""

from __future__ import annotations

import pandas as pd


def captioned(df: pd.DataFrame, title: str, note: str) -> pd.DataFrame:
    """Give a table's DataFrame its title and note.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; changed in place.
    title : str
        ``attrs["title"]``: the table's heading.
    note : str
        ``attrs["note"]``: the text under the table.

    Returns
    -------
    pandas.DataFrame
        ``df``, with the two attributes set.
    """
    df.attrs["title"] = title
    df.attrs["note"] = note
    return df


def titled_frame(rows: list[dict], title: str, note: str) -> pd.DataFrame:
    """A table's DataFrame with its title and note.

    Parameters
    ----------
    rows : list of dict
        The table's rows, one dict a row.
    title, note : str
        The table's heading and the text under it, as in :func:`captioned`.

    Returns
    -------
    pandas.DataFrame
        ``pd.DataFrame(rows)`` with the two attributes set.
    """
    return captioned(pd.DataFrame(rows), title, note)
