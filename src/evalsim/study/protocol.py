"""The study file (``study.yaml``): its schema, its conditions, its canonical form and hash.

A study is a folder. Before the lock, ``study.yaml`` is the protocol being written; the lock
(:mod:`evalsim.study.lock`) freezes its *canonical form* -- the parsed file, defaults filled
in, serialised as sorted-key compact JSON -- and the SHA-256 of that text. Comments and
layout are not part of the canonical form, so reformatting is not an amendment; any change
of a value is.

The schema (:data:`STUDY_SCHEMA`, JSON Schema draft 2020-12) refuses unknown keys and wrong
types; :func:`load_protocol` then checks what a schema cannot say (at least two arms with
distinct names, a primary test that fits the design, a design n the conditions fill) and
names the key in one line.

References
----------
.. [1] Nosek, B. A. et al. (2018), "The preregistration revolution", PNAS 115(11), 2600-2606.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path

from evalsim.study.errors import StudyError
from evalsim.study.schema import (
    ALTERNATIVES,
    PRIMARY_TESTS,
    SCHEMA_VERSION,
    STUDY_SCHEMA,
    schema_message,
)

#: Largest study file read (bytes).
MAX_STUDY_BYTES = 1 << 20

__all__ = [
    "STUDY_FILE",
    "SCHEMA_VERSION",
    "PRIMARY_TESTS",
    "ALTERNATIVES",
    "STUDY_SCHEMA",
    "Condition",
    "Protocol",
    "canonical_json",
    "canonical_sha256",
    "load_protocol",
    "parse_protocol",
    "read_study_file",
]

STUDY_FILE = "study.yaml"


@dataclass(frozen=True)
class Condition:
    """One scheduled condition: a start position in a block, one replicate.

    Attributes
    ----------
    id : str
        ``<position>`` plus ``/<factor>=<level>`` per blocking factor and ``/r<k>`` when
        there are replicates (the ``condition`` column of the exported log).
    position : str
    x_cm, y_cm : float
        Coordinates on the table grid, in centimetres.
    block : str
        The block's label, ``factor=level`` joined by ``,`` (``"all"`` without factors).
    levels : tuple of (str, str)
        The block's (factor, level) pairs.
    replicate : int
        1-based.
    """

    id: str
    position: str
    x_cm: float
    y_cm: float
    block: str
    levels: tuple
    replicate: int


@dataclass(frozen=True)
class Protocol:
    """A checked study file.

    Attributes
    ----------
    data : dict
        The parsed file with its defaults filled in (what the canonical form serialises).
    sequential_design : dict or None
        The sequential design file's content (JSON) when the design names one.
    sequential_sha256 : str or None
        SHA-256 of the design file's bytes.
    """

    data: dict
    sequential_design: dict | None = None
    sequential_sha256: str | None = None

    @property
    def arms(self) -> tuple[str, ...]:
        return tuple(a["name"] for a in self.data["arms"])

    @property
    def arm_a(self) -> str:
        return self.data["question"]["primary"]["a"]

    @property
    def arm_b(self) -> str:
        return self.data["question"]["primary"]["b"]

    @property
    def alpha(self) -> float:
        return float(self.data["question"]["alpha"])

    @property
    def alternative(self) -> str:
        return self.data["question"]["alternative"]

    @property
    def paired(self) -> bool:
        return bool(self.data["design"]["paired"])

    @property
    def primary_test(self) -> str:
        return self.data["analysis"]["primary"]

    @property
    def secondary_tests(self) -> tuple[str, ...]:
        return tuple(self.data["analysis"]["secondary"])

    @property
    def failure_types(self) -> tuple[str, ...]:
        return tuple(self.data["rubric"]["failure_types"])

    @property
    def n(self) -> int:
        """Pairs (paired) or trials per arm (unpaired) the design runs at most."""
        return len(self.conditions())

    def positions(self) -> list[tuple[str, float, float]]:
        """``(name, x_cm, y_cm)`` of every start position, in the file's order."""
        return _positions(self.data["conditions"]["positions"])

    def blocks(self) -> list[tuple[str, tuple]]:
        """``(label, ((factor, level), ...))`` of every block, in the file's order."""
        factors = self.data["conditions"]["blocks"]["factors"]
        if not factors:
            return [("all", ())]
        names = list(factors)
        out = []
        for combo in itertools.product(*(factors[f] for f in names)):
            levels = tuple(zip(names, combo, strict=True))
            out.append((",".join(f"{f}={v}" for f, v in levels), levels))
        return out

    def conditions(self) -> list[Condition]:
        """Every condition, grouped by block in the file's order."""
        return _conditions(self)

    def to_dict(self) -> dict:
        return dict(self.data)


def _positions(spec: dict) -> list[tuple[str, float, float]]:
    if "list" in spec:
        return [(p["name"], float(p["x_cm"]), float(p["y_cm"])) for p in spec["list"]]
    g = spec["grid"]
    x0, y0 = (float(v) for v in g.get("origin_cm", [0, 0]))
    step = float(g["spacing_cm"])
    out = []
    for r in range(int(g["rows"])):
        for c in range(int(g["columns"])):
            out.append((f"{chr(ord('A') + r)}{c + 1}", x0 + c * step, y0 + r * step))
    return out


def _conditions(p: Protocol) -> list[Condition]:
    positions = p.positions()
    blocks = p.blocks()
    reps = int(p.data["conditions"]["replicates"])
    assign = p.data["conditions"]["blocks"]["assign"]
    if assign == "crossed":
        per_block = [positions] * len(blocks)
    else:  # split: contiguous groups, sizes differing by at most one
        q, r = divmod(len(positions), len(blocks))
        per_block, start = [], 0
        for i in range(len(blocks)):
            size = q + (1 if i < r else 0)
            per_block.append(positions[start : start + size])
            start += size
    out = []
    for (label, levels), pos in zip(blocks, per_block, strict=True):
        for name, x, y in pos:
            for rep in range(1, reps + 1):
                parts = [name, *(f"{f}={v}" for f, v in levels)]
                if reps > 1:
                    parts.append(f"r{rep}")
                out.append(Condition("/".join(parts), name, x, y, label, levels, rep))
    return out


def canonical_json(data: dict) -> str:
    """The canonical text of a parsed study: sorted keys, compact, UTF-8 kept as is."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(data: dict) -> str:
    """SHA-256 (hex) of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def read_study_file(path: str | os.PathLike) -> dict:
    """Parse ``study.yaml`` (YAML, one mapping) without checking it.

    Raises
    ------
    StudyError
        Missing, not a regular file, too large, not YAML, or not a mapping.
    """
    import yaml

    p = Path(path)
    if not p.exists():
        raise StudyError(f"{p}: no study file (start one with `evalsim study init`)")
    if not p.is_file():
        raise StudyError(f"{p}: not a regular file")
    if p.stat().st_size > MAX_STUDY_BYTES:
        raise StudyError(f"{p}: larger than {MAX_STUDY_BYTES} bytes; not a study file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise StudyError(f"{p}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise StudyError(f"{p}: not valid YAML{where}") from None
    if not isinstance(data, dict):
        raise StudyError(f"{p}: expected a mapping of keys (version, question, arms, ...)")
    return data


def _fill_defaults(node, schema: dict):
    """A copy of ``node`` with the schema's defaults filled in (objects only)."""
    if isinstance(node, dict) and schema.get("type") == "object":
        out = dict(node)
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key not in out and "default" in sub:
                out[key] = json.loads(json.dumps(sub["default"]))
            if key in out:
                out[key] = _fill_defaults(out[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in out:
                if key not in props:
                    out[key] = _fill_defaults(out[key], extra)
        return out
    if isinstance(node, list) and isinstance(schema.get("items"), dict):
        return [_fill_defaults(x, schema["items"]) for x in node]
    return node


def _check_values(p: Protocol, where: str) -> None:
    """The checks a schema cannot say, each naming its key."""
    d = p.data
    names = [a["name"] for a in d["arms"]]
    if len(names) < 2:
        raise StudyError(
            f"{where}: key 'arms': a study compares at least two arms, got {len(names)}"
        )
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise StudyError(f"{where}: key 'arms': arm name {dup[0]!r} appears twice")
    for side in ("a", "b"):
        name = d["question"]["primary"][side]
        if name not in names:
            raise StudyError(
                f"{where}: key 'question.primary.{side}': {name!r} is not an arm "
                f"(arms: {', '.join(names)})"
            )
    if d["question"]["primary"]["a"] == d["question"]["primary"]["b"]:
        raise StudyError(f"{where}: key 'question.primary': a and b name the same arm")
    pos_spec = d["conditions"]["positions"]
    if ("grid" in pos_spec) == ("list" in pos_spec):
        raise StudyError(
            f"{where}: key 'conditions.positions': give exactly one of 'grid' or 'list'"
        )
    pos = [n for n, _, _ in p.positions()]
    dup = sorted({n for n in pos if pos.count(n) > 1})
    if dup:
        raise StudyError(f"{where}: key 'conditions.positions': position {dup[0]!r} appears twice")
    blocks = p.blocks()
    for f, levels in d["conditions"]["blocks"]["factors"].items():
        if len(set(levels)) != len(levels):
            raise StudyError(f"{where}: key 'conditions.blocks.factors.{f}': a level repeats")
    if d["conditions"]["blocks"]["assign"] == "split" and len(blocks) > len(pos):
        raise StudyError(
            f"{where}: key 'conditions.blocks': {len(blocks)} blocks but only {len(pos)} "
            "positions to split among them"
        )
    test = d["analysis"]["primary"]
    need = PRIMARY_TESTS[test]
    seq = d["design"]["sequential"]
    if need.sequential and not seq:
        raise StudyError(
            f"{where}: key 'analysis.primary': 'sequential' needs 'design.sequential' "
            "(a file from `evalsim sequential design`)"
        )
    if seq and not need.sequential:
        raise StudyError(
            f"{where}: key 'design.sequential': a sequential design needs "
            "'analysis.primary: sequential'"
        )
    if need.paired is not None and need.paired != p.paired:
        kind = "paired" if need.paired else "unpaired"
        raise StudyError(
            f"{where}: key 'analysis.primary': {test} is a {kind} test but design.paired is "
            f"{str(p.paired).lower()}"
        )
    for t in d["analysis"]["secondary"]:
        if PRIMARY_TESTS[t].paired and not p.paired:
            raise StudyError(f"{where}: key 'analysis.secondary': {t} needs design.paired: true")
    n_cond = p.n
    n = d["design"]["n"]
    what = f"{len(pos)} positions, {len(blocks)} blocks ({d['conditions']['blocks']['assign']})"
    what += f", {d['conditions']['replicates']} replicates"
    unit = "pairs" if p.paired else "trials per arm"
    if n is not None and n != n_cond:
        verb = "cannot fill it" if n > n_cond else "would leave conditions unscheduled"
        raise StudyError(
            f"{where}: key 'design.n': {n} {unit}, but the conditions give {n_cond} ({what}); "
            f"the conditions {verb}"
        )
    if n is None and not seq:
        raise StudyError(f"{where}: key 'design.n': a fixed design needs n (here {n_cond})")
    plan = d.get("plan", {})
    for arm in plan.get("expected", {}):
        if arm not in names:
            raise StudyError(
                f"{where}: key 'plan.expected.{arm}': not an arm (arms: {', '.join(names)})"
            )
    if p.sequential_design is not None:
        sd = p.sequential_design
        kind = sd.get("kind")
        if (kind == "paired") != p.paired:
            raise StudyError(
                f"{where}: key 'design.sequential': the design file is {kind} but "
                f"design.paired is {str(p.paired).lower()}"
            )
        if sd.get("n_max") != n_cond:
            raise StudyError(
                f"{where}: key 'design.sequential': the design runs at most {sd.get('n_max')} "
                f"{unit}, but the conditions give {n_cond} ({what})"
            )
        if abs(float(sd.get("alpha", -1)) - p.alpha) > 1e-12:
            raise StudyError(
                f"{where}: key 'question.alpha': {p.alpha:g} but the sequential design is "
                f"built at alpha {sd.get('alpha')}"
            )
        sd_alt = sd.get("alternative")
        if sd_alt == "one-sided" and p.alternative != "b-better":
            raise StudyError(
                f"{where}: key 'question.alternative': the sequential design is one-sided "
                "(B better); set it to b-better"
            )
        if sd_alt == "two-sided" and p.alternative != "two-sided":
            raise StudyError(
                f"{where}: key 'question.alternative': the sequential design is two-sided"
            )


def parse_protocol(
    raw: dict, where: str = STUDY_FILE, folder: str | os.PathLike | None = None
) -> Protocol:
    """Check a parsed study file and fill in its defaults.

    Parameters
    ----------
    raw : dict
        The parsed YAML.
    where : str
        The file's name, for messages.
    folder : path, optional
        The study folder, where a sequential design file named by the study is read.

    Returns
    -------
    Protocol

    Raises
    ------
    StudyError
        One line naming the key: an unknown key, a wrong type, fewer than two arms, a
        design n the conditions cannot fill, a test that does not fit the design.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(STUDY_SCHEMA)
    errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.absolute_path))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise StudyError(f"{where}: {schema_message(best)}")
    data = _fill_defaults(raw, STUDY_SCHEMA)
    seq = data["design"]["sequential"]
    design, sha = None, None
    if seq:
        design, sha = _read_design_file(Path(folder or ".") / seq, where)
    p = Protocol(data, design, sha)
    _check_values(p, where)
    return p


def _read_design_file(path: Path, where: str) -> tuple[dict, str]:
    if not path.is_file():
        raise StudyError(f"{where}: key 'design.sequential': {path}: no such design file")
    raw = path.read_bytes()
    try:
        content = json.loads(raw.decode("utf-8"))
        from evalsim.stats.sequential.io import design_from_dict

        design_from_dict(content)
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError, KeyError, TypeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise StudyError(
            f"{where}: key 'design.sequential': {path}: not a sequential design file ({msg})"
        ) from None
    return content, hashlib.sha256(raw).hexdigest()


def load_protocol(folder: str | os.PathLike) -> Protocol:
    """Read and check ``folder/study.yaml`` (see :func:`parse_protocol`)."""
    path = Path(folder) / STUDY_FILE
    return parse_protocol(read_study_file(path), str(path), folder)
