"""Verdicts: a claim's rule applied to its reproduced values."""

from __future__ import annotations

import math
import os
from collections import Counter

import numpy as np
import pandas as pd

from evalsim.ledger.claims import Claim, SourceError
from evalsim.ledger.models import pool_agreement, self_consistency
from evalsim.ledger.readings import Tables, _lookup, evaluate_source

# Which party differs: the document (its number does not follow from its own inputs, or
# only after a coarser rounding than its digits claim) or our simulation (the document is
# self-consistent, our pools give another number). "ambiguous": readings disagree.
VERDICTS = (
    "matches",
    "document rounding",
    "simulation differs",
    "document error",
    "ambiguous",
    "not resolvable with the pools",
    "missing source",
)
#: What a reading computed on our pools may conclude: the document cannot be shown wrong by
#: a simulation of ours, only our simulation can differ from it (or the pools cannot tell).
POOL_VERDICTS = frozenset(
    {
        "matches",
        "simulation differs",
        "not resolvable with the pools",
        "ambiguous",
        "missing source",
    }
)
GOOD = {"matches", "document rounding"}
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


def _exactly(r: np.ndarray, s: np.ndarray, tol: dict) -> bool:
    """The reproduced value is the stated one to round-off (``1/r`` for ``one_in``)."""
    if "one_in" in tol:
        with np.errstate(divide="ignore"):
            return bool(np.all((r > 0) & np.isclose(1.0 / r, float(tol["one_in"]), rtol=1e-9)))
    return bool(np.all(np.isclose(r, s, rtol=1e-9, atol=0.0)))


def _within_tolerance(claim: Claim, r: np.ndarray, s: np.ndarray) -> tuple[bool, str]:
    tol = claim.tolerance
    if "one_in" in tol:
        n = int(tol["one_in"])
        ok = bool(np.all((r > 0) & (np.round(1.0 / np.where(r > 0, r, 1.0)) == n)))
        return ok, f"1/r = {_fmt(1.0 / r)}, {'' if ok else 'not '}nearest to {n}"
    if tol.get("order_of"):
        ok = bool(np.all(np.round(np.log10(r)) == np.round(np.log10(s))))
        return ok, f"{'same' if ok else 'different'} order of magnitude"
    if "unit" in tol:
        # The printed number's own rounding: "roughly 1 000" is printed to the thousand.
        unit = float(tol["unit"])
        ok = bool(np.all(np.abs(r - s) <= unit / 2 + 1e-12))
        verb = "rounds" if ok else "does not round"
        return ok, f"{_fmt(r)} {verb} to {_fmt(s)} at the printed digit (a unit of {unit:g})"
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
        if claim.rule == "approx" and _exactly(r, s, claim.tolerance):
            # "one in five" for 1 - 0.80: the word is exact, not a rounding.
            return "matches", f"{_fmt(r / claim.scale)} is the stated {claim.stated_text} exactly"
        if claim.tolerance or claim.rule == "approx":
            ok, why = _within_tolerance(claim, r, s)
            if ok:
                return "document rounding", why
            return "document error", why
        return "document error", f"off by {_fmt(diff.max())}, more than the printed digits allow"
    if claim.rule in ("at_least", "at_most"):
        slack = float(claim.tolerance.get("abs", 0.0))
        ok = np.all(r >= s - slack) if claim.rule == "at_least" else np.all(r <= s + slack)
        op = ">=" if claim.rule == "at_least" else "<="
        why = f"{_fmt(r / claim.scale)} {op if ok else 'not ' + op} {_fmt(s / claim.scale)}"
        if slack:
            why += f" (allowing {slack / claim.scale:g} for rounding)"
        if claim.about_pools and not ok:
            return "simulation differs", why + " in our pools"
        return ("matches" if ok else "document error"), why
    if claim.rule == "roundoff":
        bound = float(claim.tolerance.get("abs", 1e-14))
        ok = bool(np.all(np.abs(r) <= bound))
        return ("matches" if ok else "document error"), (
            f"reproduced max difference {_fmt(r)} {'<=' if ok else '>'} round-off bound {bound:g}"
        )
    if claim.rule == "mc":
        half = np.nan_to_num(_half_unit(claim))
        se = np.sqrt(np.clip(r * (1 - r), 0, None) / float(claim.n_doc))
        z = _se_distance(diff, se)
        if np.all(diff <= half * 1.000001):
            return "matches", f"exact value rounds to the printed {claim.stated_text}"
        ok = bool(np.all(diff <= half + 2 * se))
        return ("matches" if ok else "document error"), (
            f"{z:.1f} SE from the exact value (SE of {claim.n_doc:,} simulated experiments)"
        )
    if claim.rule == "simulation":
        crit = claim.criterion
        if claim.model and not crit:
            # Decided by the model's two questions (_two_questions); no hand-set criterion.
            return "matches", f"{_fmt(r / claim.scale)} in our resampling"
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
                f"{n_repro:.0f} ours); criterion 2 SE; resolution: detects a difference of "
                f"{_fmt(2 * se / claim.scale)} or more"
            )
        else:
            bound = float(crit.get("abs", claim.tolerance.get("abs", 0.0)))
            ok = bool(np.all(diff <= bound + 1e-12))
            why = f"|diff| {_fmt(diff.max())} {'<=' if ok else '>'} {bound:g} (criterion)"
        return ("matches" if ok else "simulation differs"), why
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
        verdict, why = _pool_reading(src, verdict, why)
        results.append((src, r, desc, verdict, why))
    row = {
        "id": claim.id,
        "doc": claim.doc,
        "lines": ",".join(str(x) for x in claim.lines),
        "quote": claim.quote,
        "stated": claim.stated_display,
    }
    found = [x for x in results if x is not None]
    # The primary reading (claim.primary, any kind but "premise unstated") is the first
    # source and decides, as a stated method does.
    first_decides = claim.method_stated or claim.primary not in ("", "premise unstated")
    if not found or (first_decides and results[0] is None):
        what = "; ".join(m for _, m in missing) or "no source"
        return row | {
            "reproduced": "",
            "method": claim.sources[0].get("method", "") if claim.sources else "",
            "verdict": "missing source",
            "reason": what,
            "source": "",
        }
    # Readings on our pools say nothing about the document's own premises: they are reported,
    # and decide only when no other reading exists.
    deciding = [x for x in found if not x[0].get("on_pools")] or found
    if first_decides:
        chosen = results[0]
    else:
        chosen = min(deciding, key=lambda x: _RANK[x[3]])
    src, r, desc, verdict, why = chosen
    others = [x for x in found if x is not chosen]
    reason = why
    good = GOOD
    if (
        claim.premise_unstated
        and len(deciding) > 1
        and any((x[3] in good) != (verdict in good) for x in deciding)
    ):
        verdict = "ambiguous"
        reason = "the document leaves out a premise; reproduced by: " + (
            "; ".join(f"{x[0]['method']} = {_fmt(x[1])}" for x in deciding if x[3] in good)
            or "none"
        )
        reason += "; not by: " + "; ".join(
            f"{x[0]['method']} = {_fmt(x[1])}" for x in deciding if x[3] not in good
        )
    elif others:
        alts = "; ".join(f"{x[0]['method']} = {_fmt(x[1])} ({x[3]})" for x in others)
        reason += f". Other readings: {alts}"
    if missing and verdict != "missing source":
        reason += f". Not available: {'; '.join(m for _, m in missing)}"
    if claim.model and verdict != "ambiguous":
        verdict, reason = _two_questions(claim, tables, reason)
    if claim.primary:
        reason = f"Primary reading ({claim.primary}): {reason}"
    if claim.note:
        reason += f" Note: {claim.note}"
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


def _pool_reading(src: dict, verdict: str, why: str) -> tuple[str, str]:
    """A reading on our pools never finds a document error: our simulation differs instead."""
    if not src.get("on_pools"):
        return verdict, why
    if verdict == "document rounding":  # within the sentence's own tolerance, on our pools
        return "matches", why + " (on our pools)"
    if verdict == "document error":
        return "simulation differs", why + " (on our pools)"
    return verdict, why


def _two_questions(claim: Claim, tables: Tables, reason: str) -> tuple[str, str]:
    """Verdict of a claim with a ``model``: (a) the document's own inputs, then (b) the pools.

    (a) fails: "document error"; (a) holds (or the claim has no inputs of its own) and (b)
    fails: "simulation differs"; both hold: "matches". The resampled reading stays in the
    reason.
    """
    stated = claim.stated * claim.scale
    half = np.nan_to_num(_half_unit(claim))
    parts = []
    a = self_consistency(claim.model, stated, half)
    if a is not None:
        parts.append(a[1])
    resolution = None
    try:
        read = lambda spec: evaluate_source(tables, spec, claim.id)  # noqa: E731
        b_ok, b_why, _, _, resolution = pool_agreement(claim.model, read, stated, half, claim.id)
    except SourceError as err:
        b_ok, b_why = None, f"(b) not available: {err}"
    parts.append(b_why)
    if a is not None and not a[0]:
        verdict = "document error"
    elif b_ok is None:
        verdict = "missing source"
    elif b_ok and not resolution.resolves:
        # Inside a range that also holds "never", "always" or "no gap": not a match.
        verdict = "not resolvable with the pools"
    else:
        verdict = "matches" if b_ok else "simulation differs"
    return verdict, "; ".join(parts) + f". Resampled reading: {reason}"


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


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """Number of claims per verdict, in the order of :data:`VERDICTS`."""
    counts = Counter(df["verdict"])
    return {v: counts[v] for v in VERDICTS if counts[v]}
