"""The JSON Schema of ``study.yaml`` (draft 2020-12) and its one-line error messages."""

from __future__ import annotations

from dataclasses import dataclass

from evalsim.stats.names import TWO_SAMPLE_TESTS

__all__ = [
    "ALTERNATIVES",
    "PRIMARY_TESTS",
    "SCHEMA_VERSION",
    "STUDY_SCHEMA",
    "StudyTest",
    "schema_message",
]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class StudyTest:
    """A test a study can lock as primary (or declare as secondary), and the design it needs.

    Attributes
    ----------
    id : str
        Its name in ``study.yaml`` (``analysis.primary``, ``analysis.secondary``).
    label : str
        Its name in the report's headline (e.g. "Fisher's exact test").
    paired : bool or None
        True for a test of pairs (the design must be paired), False for a test of two
        independent arms, None when the design decides (the sequential rule).
    sequential : bool
        The test is the locked sequential design's rule (``design.sequential`` must be set);
        it has no p-value and cannot be a secondary test.
    """

    id: str
    label: str
    paired: bool | None
    sequential: bool


#: The tests a study can lock: the exact McNemar test of pairs, every unpaired test of the
#: two-sample registry (:data:`evalsim.stats.names.TWO_SAMPLE_TESTS`), and the sequential rule.
PRIMARY_TESTS: dict[str, StudyTest] = {
    t.id: t
    for t in (
        StudyTest("mcnemar", "exact McNemar test", paired=True, sequential=False),
        *(
            StudyTest(t.id, f"{t.label} test", paired=False, sequential=False)
            for t in TWO_SAMPLE_TESTS.values()
        ),
        StudyTest("sequential", "the sequential design's rule", paired=None, sequential=True),
    )
}

#: The alternatives of the primary comparison: is arm b different from a, better, worse.
ALTERNATIVES = ("two-sided", "b-better", "a-better")


_NAME = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}$"}
_RATE = {"type": "number", "minimum": 0, "maximum": 1}

STUDY_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "evalsim study file",
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "question", "arms", "conditions", "rubric", "design", "analysis"],
    "properties": {
        "version": {"const": SCHEMA_VERSION, "description": "schema version of the file"},
        "title": {"type": "string", "maxLength": 200, "default": ""},
        "question": {
            "type": "object",
            "additionalProperties": False,
            "required": ["primary"],
            "properties": {
                "primary": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["a", "b"],
                    "properties": {"a": _NAME, "b": _NAME},
                },
                "alternative": {"enum": list(ALTERNATIVES), "default": "two-sided"},
                "alpha": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "exclusiveMaximum": 0.5,
                    "default": 0.05,
                },
            },
        },
        "arms": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {
                    "name": _NAME,
                    "runner": {"type": ["string", "object", "null"], "default": None},
                },
            },
        },
        "conditions": {
            "type": "object",
            "additionalProperties": False,
            "required": ["positions"],
            "properties": {
                "positions": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "grid": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["rows", "columns", "spacing_cm"],
                            "properties": {
                                "rows": {"type": "integer", "minimum": 1, "maximum": 26},
                                "columns": {"type": "integer", "minimum": 1, "maximum": 99},
                                "spacing_cm": {"type": "number", "exclusiveMinimum": 0},
                                "origin_cm": {
                                    "type": "array",
                                    "items": {"type": "number"},
                                    "minItems": 2,
                                    "maxItems": 2,
                                    "default": [0, 0],
                                },
                            },
                        },
                        "list": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["name", "x_cm", "y_cm"],
                                "properties": {
                                    "name": _NAME,
                                    "x_cm": {"type": "number"},
                                    "y_cm": {"type": "number"},
                                    "yaw_deg": {"type": "number", "default": 0},
                                },
                            },
                        },
                    },
                },
                "blocks": {
                    "type": "object",
                    "additionalProperties": False,
                    "default": {},
                    "properties": {
                        "factors": {
                            "type": "object",
                            "propertyNames": _NAME,
                            "additionalProperties": {
                                "type": "array",
                                "minItems": 1,
                                "items": _NAME,
                            },
                            "default": {},
                        },
                        "assign": {"enum": ["split", "crossed"], "default": "split"},
                    },
                },
                "replicates": {"type": "integer", "minimum": 1, "default": 1},
            },
        },
        "rubric": {
            "type": "object",
            "additionalProperties": False,
            "required": ["success"],
            "properties": {
                "success": {"type": "string", "minLength": 1},
                "failure_types": {"type": "array", "items": _NAME, "default": []},
            },
        },
        "design": {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {
                "paired": {"type": "boolean", "default": True},
                "n": {"type": ["integer", "null"], "minimum": 1, "default": None},
                "sequential": {"type": ["string", "null"], "default": None},
            },
        },
        "analysis": {
            "type": "object",
            "additionalProperties": False,
            "required": ["primary"],
            "properties": {
                "primary": {"enum": list(PRIMARY_TESTS)},
                "secondary": {
                    "type": "array",
                    "items": {"enum": [t.id for t in PRIMARY_TESTS.values() if not t.sequential]},
                    "default": [],
                },
            },
        },
        "plan": {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {
                "expected": {
                    "type": "object",
                    "propertyNames": _NAME,
                    "additionalProperties": _RATE,
                    "default": {},
                },
                "discordance": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                "power": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            },
        },
    },
}


def _key_path(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def schema_message(err) -> str:
    """One line naming the key of a schema error."""
    where = _key_path(err.absolute_path)
    v = err.validator
    if v == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        key = f"{where}.{extra[0]}" if err.absolute_path else extra[0]
        allowed = ", ".join(err.schema.get("properties", {}))
        return f"unknown key {key!r} (allowed here: {allowed})"
    if v == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        key = f"{where}.{missing}" if err.absolute_path else missing
        return f"missing key {key!r}"
    if v == "type":
        want = err.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        return f"key {where!r}: expected {want}, got {err.instance!r}"
    if v in ("enum", "const"):
        allowed = err.validator_value if v == "enum" else [err.validator_value]
        return f"key {where!r}: {err.instance!r} is not one of {', '.join(map(str, allowed))}"
    if v == "pattern":
        return (
            f"key {where!r}: {err.instance!r} is not a name (letters, digits, _ . -; "
            "at most 40 characters)"
        )
    return f"key {where!r}: {err.message}"
