"""Claims file: the expanded :class:`Claim` records of ``config/claims.yaml``."""

from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np
import yaml

from evalsim.ledger.checks import CHECKS
from evalsim.ledger.models import check_model
from evalsim.safe_expr import ExpressionError, evaluate, parse

RULES = ("value", "approx", "at_least", "at_most", "roundoff", "mc", "simulation", "judgement")

#: The primary reading of a claim: the reading the sentence states, chosen by the first kind
#: in this order that fits the sentence (the claims file names it in each claim's
#: ``primary``). The claim's FIRST source is that reading and decides the verdict; the other
#: sources are reported beside it. Only ``premise unstated`` lets several readings decide
#: together (they disagree: "ambiguous").
PRIMARY = {
    "table": "the sentence restates the document's own table: that table, as printed",
    "derivation": "the sentence restates the document's own derivation: that derivation "
    "recomputed from the document's inputs",
    "stated method": "the document names its method: that method at the document's inputs",
    "document inputs": "no method named: the exact computation at the document's printed "
    "inputs (never our pools)",
    "library": "a statement about a library: the installed library itself",
    "pools": "the number comes from the document's own simulation: our pools, with the "
    "sampling error of both",
    "premise unstated": "the document leaves out a premise: every plausible reading, "
    "'ambiguous' when they disagree",
    "judgement": "not a number a rule can decide",
}


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
    model: dict = field(default_factory=dict)
    # A bound about robot tasks in general that our pools are one instance of: when it fails
    # on the pools, the party that differs is the simulation, not the document.
    about_pools: bool = False
    # Which reading the sentence states (a key of PRIMARY); "" only in hand-built test claims.
    primary: str = ""
    # One sentence the ledger adds to the row's reason (e.g. a calibration that makes the
    # agreement partly true by construction).
    note: str = ""

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
        # A string is the document's own formula at its own inputs ("1.96 ** 2 / (2 * 10)").
        values = [
            float(evaluate(v, {})) if isinstance(v, str) else float(v)
            for v in _as_list(raw["stated_value"])
        ]
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
    formulas = [v for v in _as_list(raw.get("stated_value", [])) if isinstance(v, str)]
    if formulas and len(values) == 1:
        text = f"{formulas[0]} = {values[0]:.4g}"  # the document's formula, evaluated
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
    if "model" in item:
        raw["model"] = {**raw.get("model", {}), **copy.deepcopy(item["model"])}
    if "args" in item and "model" in raw:
        raw["model"].setdefault("args", {}).update(item["args"])
    crit = raw.get("criterion", {}).get("se2", {})
    if isinstance(crit.get("n_repro"), dict) and "where" in item:
        crit["n_repro"].setdefault("where", {}).update(item["where"])
    return raw


CLAIM_KEYS = {
    "id", "doc", "lines", "quote", "printed", "stated", "stated_value", "scale", "rule",
    "tolerance", "criterion", "n_doc", "sources", "method_stated", "premise_unstated",
    "reason", "context", "expand", "model", "about_pools", "primary", "note",
}  # fmt: skip
# ``on_pools``: the reading is computed on our pools (it can only "match" or find that the
# "simulation differs"); ``claim``: the document's own printed number of another claim (a
# restated table cell); ``check`` + ``args``: a function of evalsim.ledger.checks.CHECKS.
SOURCE_KEYS = {
    "method", "table", "column", "where", "agg", "expr", "values", "multiply", "on_pools",
    "claim", "check", "args",
}  # fmt: skip


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
        if "check" in src and src["check"] not in CHECKS:
            raise ValueError(
                f"claim {raw['id']!r}: unknown check {src['check']!r}; allowed: {sorted(CHECKS)}"
            )
        if "expr" in src:
            try:
                parse(src["expr"], src.get("values") or {})
            except ExpressionError as err:
                raise ExpressionError(f"claim {raw['id']!r}: expr {src['expr']!r}: {err}") from None
    if raw.get("primary", "") and raw["primary"] not in PRIMARY:
        raise ValueError(
            f"claim {raw['id']!r}: unknown primary {raw['primary']!r}; allowed: {list(PRIMARY)}"
        )
    if raw["rule"] not in RULES:
        raise ValueError(f"claim {raw['id']!r}: unknown rule {raw['rule']!r}; allowed: {RULES}")
    if "model" in raw:
        check_model(str(raw["id"]), raw["model"])
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
        model=dict(raw.get("model", {})),
        about_pools=bool(raw.get("about_pools", False)),
        primary=str(raw.get("primary", "")),
        note=str(raw.get("note", "")),
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
    _resolve_claim_sources(claims)
    return claims


def _resolve_claim_sources(claims: list[Claim]) -> None:
    """Give each ``claim:`` source the printed number of the claim it names (in place)."""
    by_id = {c.id: c for c in claims}
    for c in claims:
        for src in c.sources:
            if "claim" not in src:
                continue
            other = by_id.get(str(src["claim"]))
            if other is None:
                raise ValueError(f"claim {c.id!r}: source names unknown claim {src['claim']!r}")
            src["printed_value"] = [float(v) * other.scale for v in other.stated]
            src["printed_text"] = other.stated_text


def load_skipped(path: str | os.PathLike) -> list[dict]:
    """The statements the claims file deliberately does not check, with reasons."""
    with open(path, encoding="utf-8") as fh:
        return list(yaml.safe_load(fh).get("skipped", []))
