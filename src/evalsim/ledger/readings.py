"""Reading a claim's values from the pipeline's result tables."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
import pandas as pd

from evalsim.ledger.checks import CHECKS
from evalsim.ledger.claims import SourceError, _as_list
from evalsim.safe_expr import ExpressionError, evaluate


class Tables:
    """Reads result tables once; ``T03`` means ``<root>/results/tables/T03_*.csv``."""

    def __init__(self, root: str | os.PathLike, overrides: dict | None = None):
        self.root = Path(root)
        self._cache: dict[str, tuple[str, pd.DataFrame]] = {}
        self._overrides = overrides or {}

    def path(self, ref: str) -> str:
        if ref.endswith(".csv"):
            return ref
        hits = sorted(glob.glob(str(self.root / "results" / "tables" / f"{ref}_*.csv")))
        hits = [h for h in hits if Path(h).name.startswith(f"{ref}_")]
        if not hits:
            raise SourceError(f"no table results/tables/{ref}_*.csv")
        if len(hits) > 1:
            names = ", ".join(Path(h).name for h in hits)
            raise SourceError(f"{ref} matches several tables: {names}")
        return str(Path(hits[0]).relative_to(self.root))

    def get(self, ref: str) -> tuple[str, pd.DataFrame]:
        if ref in self._overrides:
            return ref, self._overrides[ref]
        if ref not in self._cache:
            rel = self.path(ref)
            self._cache[ref] = (rel, pd.read_csv(self.root / rel))
        return self._cache[ref]


def _match(column: pd.Series, wanted) -> pd.Series:
    if isinstance(wanted, list):
        out = pd.Series(False, index=column.index)
        for w in wanted:
            out |= _match(column, w)
        return out
    if isinstance(wanted, str) and wanted.startswith("~"):
        # "~text": the cell contains text (case-insensitive), for long descriptive labels.
        return column.astype(str).str.lower().str.contains(wanted[1:].lower(), regex=False)
    if isinstance(wanted, bool) or isinstance(wanted, str):
        return column.astype(str).str.strip().str.lower() == str(wanted).strip().lower()
    numeric = pd.to_numeric(column, errors="coerce")
    return pd.Series(np.isclose(numeric, float(wanted), rtol=1e-9, atol=1e-12), index=column.index)


def _where_text(where: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in where.items())


def _lookup(tables: Tables, spec: dict) -> tuple[np.ndarray, str]:
    """Values of ``spec`` = {table, column (str or list), where, agg}; and a description."""
    rel, df = tables.get(spec["table"])
    where = spec.get("where", {}) or {}
    rows = pd.Series(True, index=df.index)
    for key, wanted in where.items():
        if key not in df.columns:
            raise SourceError(f"{rel}: no column {key!r} to select rows (has {list(df.columns)})")
        rows &= _match(df[key], wanted)
    sel = df[rows]
    columns = _as_list(spec["column"])
    aggs = _as_list(spec.get("agg"))
    if len(aggs) == 1:
        aggs = aggs * len(columns)
    values = []
    for col, agg in zip(columns, aggs, strict=True):
        if col not in df.columns:
            raise SourceError(f"{rel}: no column {col!r} (has {list(df.columns)})")
        series = pd.to_numeric(sel[col], errors="coerce")
        if sel.empty:
            raise SourceError(f"{rel}: no row with {_where_text(where)}")
        if agg is None:
            if len(series) != 1:
                raise SourceError(f"{rel}: {len(series)} rows with {_where_text(where)}, need 1")
            values.append(float(series.iloc[0]))
        elif agg == "all":
            values.extend(series.to_numpy(dtype=float))
        elif agg == "first":
            values.append(float(series.iloc[0]))
        elif agg in ("min", "max", "mean"):
            values.append(float(getattr(series, agg)()))
        else:
            raise ValueError(f"unknown agg {agg!r}; allowed: first, min, max, mean, all")
    desc = f"{rel}: {'/'.join(columns)}"
    if where:
        desc += f" [{_where_text(where)}]"
    if any(a is not None for a in aggs):
        desc += f" ({'/'.join(str(a) for a in aggs)})"
    return np.asarray(values, dtype=float), desc


def evaluate_source(tables: Tables, source: dict, claim_id: str = "?") -> tuple[np.ndarray, str]:
    """The reproduced value(s) of one source and where they came from.

    Raises
    ------
    SourceError
        If a table, column or row is missing.
    evalsim.safe_expr.ExpressionError
        If the source's ``expr`` is outside the whitelist of :mod:`evalsim.safe_expr`,
        naming ``claim_id``.
    """
    if "claim" in source:
        # A restatement: the document's own printed number (resolved by load_claims).
        if "printed_value" not in source:
            raise SourceError(f"the claim {source['claim']!r} is not in the claims loaded")
        desc = f"the document's own {source.get('printed_text', '')} (claim {source['claim']})"
        return np.asarray(source["printed_value"], dtype=float), desc
    if "check" in source:
        if source["check"] not in CHECKS:
            raise ValueError(
                f"claim {claim_id!r}: unknown check {source['check']!r}; allowed: {sorted(CHECKS)}"
            )
        values, desc = CHECKS[source["check"]](**(source.get("args") or {}))
        values, desc = np.atleast_1d(np.asarray(values, dtype=float)), f"ledger check: {desc}"
        if "multiply" in source:
            values = values * float(source["multiply"])
            desc += f" x {source['multiply']}"
        return values, desc
    if "expr" in source:
        names, descs = {}, []
        for name, spec in (source.get("values") or {}).items():
            vals, desc = _lookup(tables, spec)
            names[name] = vals[0] if len(vals) == 1 else vals
            descs.append(f"{name} = {desc}")
        try:
            value = evaluate(source["expr"], names)
        except ExpressionError as err:
            raise ExpressionError(f"claim {claim_id!r}: expr {source['expr']!r}: {err}") from None
        desc = f"expr {source['expr']}" + (f" with {'; '.join(descs)}" if descs else "")
        return np.atleast_1d(np.asarray(value, dtype=float)), desc
    if "table" not in source:
        raise SourceError("source has neither table nor expr")
    values, desc = _lookup(tables, source)
    if "multiply" in source:
        # The table's unit differs from the claim's (e.g. a fraction where the claim is in points).
        values = values * float(source["multiply"])
        desc += f" x {source['multiply']}"
    return values, desc
