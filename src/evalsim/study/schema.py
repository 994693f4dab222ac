"""The JSON Schema of ``study.yaml`` (draft 2020-12) and its one-line error messages."""

from __future__ import annotations

__all__ = ["ALTERNATIVES", "PRIMARY_TESTS", "SCHEMA_VERSION", "STUDY_SCHEMA", "schema_message"]

SCHEMA_VERSION = 1

#: The primary tests a study can lock, with the design each needs (paired, sequential).
PRIMARY_TESTS = {
    "mcnemar": {"paired": True, "sequential": False, "label": "exact McNemar test"},
    "fisher": {"paired": False, "sequential": False, "label": "Fisher's exact test"},
    "boschloo": {"paired": False, "sequential": False, "label": "Boschloo's exact test"},
    "sequential": {"paired": None, "sequential": True, "label": "the sequential design's rule"},
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
                    "items": {"enum": [t for t in PRIMARY_TESTS if t != "sequential"]},
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
