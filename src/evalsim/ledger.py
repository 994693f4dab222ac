"""The claims ledger: every number of the four documents, stated vs reproduced.

``config/claims.yaml`` lists each quantitative claim (document, lines, quote, stated value,
rule, tolerance) and one or more *sources*: a result table of the pipeline, a column and a
row selector, or a small expression over such values. :func:`build_ledger` reads the values
from the pipeline's products (never from the claims file), applies the claim's rule and
writes one row per claim with a verdict and a one-line reason:

- ``matches``: the reproduced value rounds to the printed digits;
- ``matches approximately``: within the stated tolerance (or, for a document's Monte Carlo
  estimate of an exact number, within 2 standard errors of that simulation);
- ``depends on the simulation``: a number of the document's own MuJoCo pools, consistent with
  ours under the claim's statistical criterion (within 2 standard errors of the difference of
  two independent binomial estimates, or an absolute tolerance);
- ``differs``: none of the above;
- ``ambiguous``: the document leaves out a premise and the plausible readings disagree, or the
  claim is not a number a rule can decide.

A claim whose sources cannot be read yet (the table does not exist, a column or row is
missing) gets ``missing source`` and names what is missing.

The rules are spelled out at the top of ``config/claims.yaml``. Run as
``python -m evalsim.ledger build`` (the Snakemake rule does) or
``python -m evalsim.ledger readme`` to regenerate the README's generated sections.
"""

from __future__ import annotations

import argparse
import copy
import glob
import math
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from evalsim.io import atomic_path, write_text_atomic
from evalsim.safe_expr import ExpressionError, evaluate, parse

__all__ = [
    "VERDICTS",
    "Claim",
    "SourceError",
    "build_ledger",
    "judge_claim",
    "ledger_markdown",
    "load_claims",
    "load_skipped",
    "readme_disagreements",
    "replace_section",
    "section",
    "verdict_counts",
    "write_ledger",
]

VERDICTS = (
    "matches",
    "matches approximately",
    "depends on the simulation",
    "differs",
    "ambiguous",
    "missing source",
)
RULES = ("value", "approx", "at_least", "at_most", "roundoff", "mc", "simulation", "judgement")
COLUMNS = [
    "id",
    "doc",
    "lines",
    "quote",
    "stated",
    "reproduced",
    "method",
    "verdict",
    "reason",
    "source",
]
# Better first: the best candidate source decides when the document does not name its method.
_RANK = {v: i for i, v in enumerate(VERDICTS)}


class SourceError(LookupError):
    """A claim's source cannot be read: missing table, column or row."""


@dataclass(frozen=True)
class Claim:
    """One expanded claim of ``claims.yaml`` (see that file for the fields)."""

    id: str
    doc: str
    lines: tuple[int, ...]
    quote: str
    stated_text: str
    stated: np.ndarray
    decimals: tuple[int | None, ...]
    rule: str
    sources: tuple[dict, ...]
    scale: float = 1.0
    tolerance: dict = field(default_factory=dict)
    criterion: dict = field(default_factory=dict)
    n_doc: int | None = None
    method_stated: bool = False
    premise_unstated: bool = False
    reason: str = ""
    printed: str = ""
    context: dict = field(default_factory=dict)

    @property
    def stated_display(self) -> str:
        """The stated value as the ledger shows it: the printed words and the number used."""
        if self.printed:
            return f"{self.printed} (= {self.stated_text})"
        return self.stated_text


# ----------------------------------------------------------------------------- claims file
def _decimals(text: str) -> int | None:
    """Printed decimals of a number as written ("0.960" -> 3, "94" -> 0); None if not plain."""
    if re.fullmatch(r"[+-]?\d+", text):
        return 0
    m = re.fullmatch(r"[+-]?\d*\.(\d+)", text)
    return len(m.group(1)) if m else None


def _as_list(value) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def _parse_stated(raw: dict) -> tuple[str, np.ndarray, tuple[int | None, ...]]:
    stated = raw.get("stated")
    texts = [str(s) for s in _as_list(stated)]
    if "stated_value" in raw:
        values = [float(v) for v in _as_list(raw["stated_value"])]
        decimals = tuple(None for _ in values)
    else:
        values, decimals = [], []
        for t in texts:
            try:
                values.append(float(t))
            except ValueError:
                values.append(math.nan)
            decimals.append(_decimals(t))
        decimals = tuple(decimals)
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return text, np.asarray(values, dtype=float), decimals


def _merge_item(base: dict, item: dict) -> dict:
    """Apply one ``expand`` item to a claim template."""
    raw = copy.deepcopy(base)
    raw.pop("expand", None)
    raw["id"] = f"{base['id']}.{item['suffix']}"
    for key in ("stated", "stated_value", "lines", "tolerance", "criterion"):
        if key in item:
            raw[key] = copy.deepcopy(item[key])
    if "quote" in item:
        raw["quote"] = item["quote"]
    for src in raw.get("sources", []):
        if "where" in item:
            if "values" in src:
                for lookup in src["values"].values():
                    lookup.setdefault("where", {}).update(item["where"])
            else:
                src.setdefault("where", {}).update(item["where"])
        if "column" in item and "table" in src:
            src["column"] = item["column"]
    for lookup in raw.get("context", {}).values():
        if "where" in item:
            lookup.setdefault("where", {}).update(item["where"])
    crit = raw.get("criterion", {}).get("se2", {})
    if isinstance(crit.get("n_repro"), dict) and "where" in item:
        crit["n_repro"].setdefault("where", {}).update(item["where"])
    return raw


CLAIM_KEYS = {
    "id", "doc", "lines", "quote", "printed", "stated", "stated_value", "scale", "rule",
    "tolerance", "criterion", "n_doc", "sources", "method_stated", "premise_unstated",
    "reason", "context", "expand",
}  # fmt: skip
SOURCE_KEYS = {"method", "table", "column", "where", "agg", "expr", "values", "multiply"}


def _claim_from_raw(raw: dict, docs: dict) -> Claim:
    for key in ("id", "doc", "quote", "rule", "sources"):
        if key not in raw:
            raise ValueError(f"claim {raw.get('id', '?')!r}: missing key {key!r}")
    unknown = sorted(set(raw) - CLAIM_KEYS)
    if unknown:
        raise ValueError(
            f"claim {raw['id']!r}: unknown key(s) {unknown}; allowed: {sorted(CLAIM_KEYS)}"
        )
    for src in raw["sources"]:
        bad = sorted(set(src) - SOURCE_KEYS)
        if bad:
            raise ValueError(
                f"claim {raw['id']!r}: unknown source key(s) {bad}; allowed: {sorted(SOURCE_KEYS)}"
            )
        if "expr" in src:
            try:
                parse(src["expr"], src.get("values") or {})
            except ExpressionError as err:
                raise ExpressionError(f"claim {raw['id']!r}: expr {src['expr']!r}: {err}") from None
    if raw["rule"] not in RULES:
        raise ValueError(f"claim {raw['id']!r}: unknown rule {raw['rule']!r}; allowed: {RULES}")
    doc = docs.get(str(raw["doc"]), str(raw["doc"]))
    text, stated, decimals = _parse_stated(raw)
    return Claim(
        id=str(raw["id"]),
        doc=doc,
        lines=tuple(int(x) for x in _as_list(raw.get("lines", []))),
        quote=str(raw["quote"]),
        stated_text=text,
        stated=stated,
        decimals=decimals,
        rule=raw["rule"],
        sources=tuple(raw["sources"]),
        scale=float(raw.get("scale", 1.0)),
        tolerance=dict(raw.get("tolerance", {})),
        criterion=dict(raw.get("criterion", {})),
        n_doc=raw.get("n_doc"),
        method_stated=bool(raw.get("method_stated", False)),
        premise_unstated=bool(raw.get("premise_unstated", False)),
        reason=str(raw.get("reason", "")),
        printed=str(raw.get("printed", "")),
        context=dict(raw.get("context", {})),
    )


def load_claims(path: str | os.PathLike) -> list[Claim]:
    """Read ``claims.yaml`` and expand table-shaped claims into one claim per cell.

    Raises
    ------
    ValueError
        On a missing key, an unknown rule or a duplicate id (quoting it).
    """
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    docs = {str(k): v for k, v in data.get("docs", {}).items()}
    claims: list[Claim] = []
    for raw in data["claims"]:
        items = raw.get("expand")
        raws = [_merge_item(raw, item) for item in items] if items else [raw]
        claims.extend(_claim_from_raw(r, docs) for r in raws)
    ids = [c.id for c in claims]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"claims file {path}: duplicate claim id(s) {dup}")
    return claims


def load_skipped(path: str | os.PathLike) -> list[dict]:
    """The statements the claims file deliberately does not check, with reasons."""
    with open(path, encoding="utf-8") as fh:
        return list(yaml.safe_load(fh).get("skipped", []))


# ----------------------------------------------------------------------------- reading values
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


# ----------------------------------------------------------------------------- verdicts
def _fmt(values: np.ndarray) -> str:
    parts = [f"{v:.6g}" for v in np.atleast_1d(values)]
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def _half_unit(claim: Claim) -> np.ndarray:
    return np.array(
        [math.nan if d is None else 0.5 * 10.0 ** (-d) * abs(claim.scale) for d in claim.decimals]
    )


def _se_distance(diff: np.ndarray, se: np.ndarray) -> float:
    """Largest ``diff / se``; a difference with zero standard error is infinitely far."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.max(np.where(diff > 0, diff / se, 0.0)))


def _within_tolerance(claim: Claim, r: np.ndarray, s: np.ndarray) -> tuple[bool, str]:
    tol = claim.tolerance
    if "one_in" in tol:
        n = int(tol["one_in"])
        ok = bool(np.all((r > 0) & (np.round(1.0 / np.where(r > 0, r, 1.0)) == n)))
        return ok, f"1/r = {_fmt(1.0 / r)}, {'' if ok else 'not '}nearest to {n}"
    if tol.get("order_of"):
        ok = bool(np.all(np.round(np.log10(r)) == np.round(np.log10(s))))
        return ok, f"{'same' if ok else 'different'} order of magnitude"
    if "abs" in tol:
        bound = float(tol["abs"])
        ok = bool(np.all(np.abs(r - s) <= bound + 1e-12))
        return ok, f"|diff| {_fmt(np.max(np.abs(r - s)))} {'<=' if ok else '>'} {bound:g}"
    rel = float(tol.get("rel", 0.10))
    bound = rel * np.abs(s)
    ok = bool(np.all(np.abs(r - s) <= bound + 1e-12))
    rel_diff = np.max(np.abs(r - s) / np.where(s != 0, np.abs(s), 1.0))
    return ok, f"relative diff {rel_diff:.1%} {'<=' if ok else '>'} {rel:.0%}"


def _judge(claim: Claim, tables: Tables, r: np.ndarray) -> tuple[str, str]:
    """Verdict and reason for one reproduced value under the claim's rule."""
    s = claim.stated * claim.scale
    if claim.rule == "judgement":
        return "ambiguous", claim.reason or "not decidable by a number rule"
    if r.shape != s.shape:
        return "missing source", f"source gives {r.size} value(s), the claim states {s.size}"
    diff = np.abs(r - s)
    if claim.rule in ("value", "approx"):
        half = _half_unit(claim)
        if claim.rule == "value" and not np.isnan(half).any() and np.all(diff <= half * 1.000001):
            return "matches", f"rounds to the printed {claim.stated_text}"
        if claim.tolerance or claim.rule == "approx":
            ok, why = _within_tolerance(claim, r, s)
            if ok:
                return "matches approximately", why
            return "differs", why
        return "differs", f"off by {_fmt(diff.max())}, more than the printed digits allow"
    if claim.rule in ("at_least", "at_most"):
        slack = float(claim.tolerance.get("abs", 0.0))
        ok = np.all(r >= s - slack) if claim.rule == "at_least" else np.all(r <= s + slack)
        op = ">=" if claim.rule == "at_least" else "<="
        why = f"{_fmt(r / claim.scale)} {op if ok else 'not ' + op} {_fmt(s / claim.scale)}"
        if slack:
            why += f" (allowing {slack / claim.scale:g} for rounding)"
        return ("matches" if ok else "differs"), why
    if claim.rule == "roundoff":
        bound = float(claim.tolerance.get("abs", 1e-14))
        ok = bool(np.all(np.abs(r) <= bound))
        return ("matches" if ok else "differs"), (
            f"reproduced max difference {_fmt(r)} {'<=' if ok else '>'} round-off bound {bound:g}"
        )
    if claim.rule == "mc":
        half = np.nan_to_num(_half_unit(claim))
        se = np.sqrt(np.clip(r * (1 - r), 0, None) / float(claim.n_doc))
        z = _se_distance(diff, se)
        if np.all(diff <= half * 1.000001):
            return "matches", f"exact value rounds to the printed {claim.stated_text}"
        ok = bool(np.all(diff <= half + 2 * se))
        return ("matches approximately" if ok else "differs"), (
            f"{z:.1f} SE from the exact value (SE of {claim.n_doc:,} simulated experiments)"
        )
    if claim.rule == "simulation":
        crit = claim.criterion
        if "se2" in crit:
            c = crit["se2"]
            n_repro = c["n_repro"]
            if isinstance(n_repro, dict):
                n_repro = float(_lookup(tables, n_repro)[0][0])
            n_doc = float(c["n_doc"])
            se = np.sqrt(np.clip(r * (1 - r), 0, None) / n_repro + s * (1 - s) / n_doc)
            z = _se_distance(diff, se)
            ok = bool(np.all(diff <= 2 * se + 1e-12))
            why = (
                f"{z:.1f} SE apart (two independent estimates, n = {n_doc:.0f} document, "
                f"{n_repro:.0f} ours); criterion 2 SE"
            )
        else:
            bound = float(crit.get("abs", claim.tolerance.get("abs", 0.0)))
            ok = bool(np.all(diff <= bound + 1e-12))
            why = f"|diff| {_fmt(diff.max())} {'<=' if ok else '>'} {bound:g} (criterion)"
        return ("depends on the simulation" if ok else "differs"), why
    raise ValueError(f"claim {claim.id!r}: unknown rule {claim.rule!r}")


def judge_claim(claim: Claim, tables: Tables) -> dict:
    """One ledger row for ``claim``: evaluate every source and decide the verdict."""
    results = []
    missing = []
    for src in claim.sources:
        try:
            r, desc = evaluate_source(tables, src, claim.id)
        except SourceError as err:
            missing.append((src, str(err)))
            results.append(None)
            continue
        try:
            verdict, why = _judge(claim, tables, r)
        except SourceError as err:  # e.g. the n behind a simulation criterion
            missing.append((src, str(err)))
            results.append(None)
            continue
        results.append((src, r, desc, verdict, why))
    row = {
        "id": claim.id,
        "doc": claim.doc,
        "lines": ",".join(str(x) for x in claim.lines),
        "quote": claim.quote,
        "stated": claim.stated_display,
    }
    found = [x for x in results if x is not None]
    if not found or (claim.method_stated and results[0] is None):
        what = "; ".join(m for _, m in missing) or "no source"
        return row | {
            "reproduced": "",
            "method": claim.sources[0].get("method", "") if claim.sources else "",
            "verdict": "missing source",
            "reason": what,
            "source": "",
        }
    if claim.method_stated:
        chosen = results[0]
    else:
        chosen = min(found, key=lambda x: _RANK[x[3]])
    src, r, desc, verdict, why = chosen
    others = [x for x in found if x is not chosen]
    reason = why
    good = {"matches", "matches approximately", "depends on the simulation"}
    if (
        claim.premise_unstated
        and others
        and any((x[3] in good) != (verdict in good) for x in found)
    ):
        verdict = "ambiguous"
        reason = "the document leaves out a premise; reproduced by: " + (
            "; ".join(f"{x[0]['method']} = {_fmt(x[1])}" for x in found if x[3] in good) or "none"
        )
        reason += "; not by: " + "; ".join(
            f"{x[0]['method']} = {_fmt(x[1])}" for x in found if x[3] not in good
        )
    elif others:
        alts = "; ".join(f"{x[0]['method']} = {_fmt(x[1])} ({x[3]})" for x in others)
        reason += f". Other readings: {alts}"
    if missing and verdict != "missing source":
        reason += f". Not available: {'; '.join(m for _, m in missing)}"
    if claim.context:
        # Values that explain a simulation-dependent number, e.g. our pools' rates.
        shown = []
        for name, spec in claim.context.items():
            try:
                shown.append(f"{name} = {_fmt(_lookup(tables, spec)[0])}")
            except SourceError:
                continue
        if shown:
            reason += f" [ours: {', '.join(shown)}]"
    return row | {
        # In the document's unit (the stated value's), e.g. percent when scale = 0.01.
        "reproduced": _fmt(r / claim.scale),
        "method": src.get("method", ""),
        "verdict": verdict,
        "reason": reason,
        "source": desc,
    }


def build_ledger(
    claims: list[Claim], root: str | os.PathLike = ".", overrides: dict | None = None
) -> pd.DataFrame:
    """The ledger: one row per claim (columns :data:`COLUMNS`).

    Parameters
    ----------
    claims : list of Claim
        From :func:`load_claims`.
    root : path
        Folder holding ``results/tables``.
    overrides : dict, optional
        Table id -> DataFrame used instead of the file (tests).
    """
    tables = Tables(root, overrides)
    df = pd.DataFrame([judge_claim(c, tables) for c in claims], columns=COLUMNS)
    df.attrs["title"] = "Claims ledger: the documents' numbers, stated vs reproduced"
    return df


# ----------------------------------------------------------------------------- output
def _md_cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(df: pd.DataFrame, columns: list[str]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for _, row in df.iterrows():
        out.append("| " + " | ".join(_md_cell(row[c]) for c in columns) + " |")
    return out


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """Number of claims per verdict, in the order of :data:`VERDICTS`."""
    counts = Counter(df["verdict"])
    return {v: counts[v] for v in VERDICTS if counts[v]}


def ledger_markdown(df: pd.DataFrame, skipped: list[dict] | None = None) -> str:
    """The ledger as Markdown: counts by verdict, then one table per document."""
    parts = [f"# {df.attrs.get('title', 'Claims ledger')}", ""]
    parts.append(
        "Generated by `python -m evalsim.ledger build` from `config/claims.yaml` and the "
        "pipeline's result tables. Rules and tolerances: the header of `config/claims.yaml`."
    )
    parts += ["", "| verdict | claims |", "|---|---|"]
    parts += [f"| {v} | {n} |" for v, n in verdict_counts(df).items()]
    parts.append(f"| total | {len(df)} |")
    for doc, sub in df.groupby("doc", sort=True):
        parts += ["", f"## {doc}", ""]
        parts += _md_table(
            sub, ["id", "lines", "quote", "stated", "reproduced", "verdict", "reason", "method"]
        )
    if skipped:
        parts += ["", "## Statements not checked", ""]
        parts += ["| document | statement | why not |", "|---|---|---|"]
        parts += [
            f"| {_md_cell(s['doc'])} | {_md_cell(s['quote'])} | {_md_cell(s['reason'])} |"
            for s in skipped
        ]
    return "\n".join(parts) + "\n"


def write_ledger(df: pd.DataFrame, csv_path, md_path, skipped: list[dict] | None = None) -> None:
    """Write the ledger as CSV and Markdown (atomically)."""
    with atomic_path(csv_path) as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
    write_text_atomic(md_path, ledger_markdown(df, skipped))


# ----------------------------------------------------------------------------- README
BEGIN = "<!-- BEGIN generated:{name} -->"
END = "<!-- END generated:{name} -->"


def readme_disagreements(df: pd.DataFrame) -> str:
    """The README section body: every ledger row whose verdict is not "matches"."""
    rows = df[df["verdict"] != "matches"]
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(df).items())
    lines = [
        "A snapshot of `results/claims.csv` after `make reproduce` on the full study "
        f"(`config/config.yaml`; {len(df)} claims: {counts}), written by "
        "`.venv/bin/python -m evalsim.ledger readme`; every run regenerates the live ledger "
        '`results/claims.md`. "Depends on the simulation" means consistent with our MuJoCo '
        'pools under the claim\'s criterion; "differs" on a simulation claim means our pools '
        "give a different number (the reason shows our pool rates). Rows whose verdict is not "
        '"matches":',
        "",
    ]
    lines += _md_table(rows, ["id", "stated", "reproduced", "verdict", "reason"])
    return "\n".join(lines)


def replace_section(text: str, name: str, body: str) -> str:
    """Replace the text between the ``name`` markers of ``text`` with ``body``.

    Raises
    ------
    ValueError
        If the markers are missing, naming them.
    """
    begin, end = BEGIN.format(name=name), END.format(name=name)
    if begin not in text or end not in text:
        raise ValueError(f"README has no section markers {begin!r} ... {end!r}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body.rstrip()}\n{end}{tail}"


def section(text: str, name: str) -> str:
    """The current body of section ``name`` (between its markers)."""
    begin, end = BEGIN.format(name=name), END.format(name=name)
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


# ----------------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    """``build``: write the ledger; ``readme``: regenerate the README's generated sections."""
    parser = argparse.ArgumentParser(prog="python -m evalsim.ledger", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="join claims.yaml with the result tables")
    b.add_argument("--claims", default="config/claims.yaml")
    b.add_argument("--root", default=".")
    b.add_argument("--csv", default="results/claims.csv")
    b.add_argument("--md", default="results/claims.md")
    r = sub.add_parser("readme", help="regenerate README sections from the ledger and captions")
    r.add_argument("--ledger", default="results/claims.csv")
    r.add_argument("--readme", default="README.md")
    r.add_argument("--check", action="store_true", help="exit 1 if the README is stale")
    r.add_argument(
        "--sections",
        default="gallery,disagreements",
        help="which generated sections to rewrite (gallery needs no results)",
    )
    args = parser.parse_args(argv)
    if args.cmd == "build":
        claims = load_claims(args.claims)
        df = build_ledger(claims, args.root)
        write_ledger(df, args.csv, args.md, load_skipped(args.claims))
        for verdict, n in verdict_counts(df).items():
            print(f"{n:4d}  {verdict}")
        return 0
    from evalsim.products.report import gallery_markdown

    wanted = {s.strip() for s in args.sections.split(",")}
    text = Path(args.readme).read_text(encoding="utf-8")
    new = text
    if "disagreements" in wanted:
        df = pd.read_csv(args.ledger, dtype=str, keep_default_na=False)
        new = replace_section(new, "disagreements", readme_disagreements(df))
    if "gallery" in wanted:
        new = replace_section(new, "gallery", gallery_markdown(Path(args.readme).parent))
    if args.check:
        if new != text:
            print(f"{args.readme} is stale: run python -m evalsim.ledger readme", file=sys.stderr)
            return 1
        return 0
    write_text_atomic(args.readme, new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
