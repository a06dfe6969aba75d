"""The JSON-schema subset of host tools, on the relay: the same keywords and the same
messages as the page's ``web/tool-schema.js``, so a relay tool's arguments are checked on
the server by the rules the browser showed (the browser is not trusted to have checked).

`schema_problem` says why a schema cannot be used (at start, from the config file);
`validate` lists what is wrong with a value (a few messages, each naming where).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["schema_problem", "validate"]

_KEYWORDS = (
    *("type", "properties", "required", "additionalProperties", "enum", "items"),
    *("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"),
    *("description", "title", "default", "examples"),
)
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
_MAX_ERRORS = 5


def schema_problem(schema: object, where: str = "schema") -> str | None:
    if not isinstance(schema, dict):
        return f"{where} must be a table (a JSON schema)"
    for key in schema:
        if key not in _KEYWORDS:
            return (
                f'{where}: the keyword "{key}" is not supported (supported: {", ".join(_KEYWORDS)})'
            )
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        for kind in types:
            if kind not in _TYPES:
                return f'{where}.type: "{kind}" is not a JSON-schema type'
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            return f"{where}.properties must be a table"
        for name, sub in props.items():
            if problem := schema_problem(sub, f"{where}.properties.{name}"):
                return problem
    required = schema.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        return f"{where}.required must be a list of names"
    if "additionalProperties" in schema and not isinstance(schema["additionalProperties"], bool):
        return f"{where}.additionalProperties must be true or false"
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{where}.enum must be a list"
    if "items" in schema and (problem := schema_problem(schema["items"], f"{where}.items")):
        return problem
    for key in _BOUNDS:
        value = schema.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"{where}.{key} must be a number"
    return None


def _type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"  # as in JS: 3.0 is an integer
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is_type(value: object, kind: str) -> bool:
    actual = _type_of(value)
    return actual == kind or (kind == "number" and actual == "integer")


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f"{text[:57]}..." if len(text) > 60 else text


def validate(value: object, schema: dict[str, Any], where: str = "") -> list[str]:
    errors: list[str] = []
    _check(value, schema, where, errors)
    return errors[:_MAX_ERRORS]


def _check(value: object, s: dict[str, Any], where: str, errors: list[str]) -> None:
    if len(errors) >= _MAX_ERRORS:
        return
    at = where or "the value"
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_is_type(value, t) for t in types):
            errors.append(
                f"{at} must be {' or '.join(types)}, not {_type_of(value)} {_shown(value)}"
            )
            return
    if "enum" in s and not any(_same(option, value) for option in s["enum"]):
        options = ", ".join(_shown(o) for o in s["enum"])
        errors.append(f"{at} must be one of {options}, not {_shown(value)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if s.get("minimum") is not None and value < s["minimum"]:
            errors.append(f"{at} must be at least {s['minimum']}, not {value}")
        if s.get("maximum") is not None and value > s["maximum"]:
            errors.append(f"{at} must be at most {s['maximum']}, not {value}")
    if isinstance(value, str):
        if s.get("minLength") is not None and len(value) < s["minLength"]:
            errors.append(f"{at} must have at least {s['minLength']} characters")
        if s.get("maxLength") is not None and len(value) > s["maxLength"]:
            errors.append(f"{at} must have at most {s['maxLength']} characters")
    if isinstance(value, list):
        if s.get("minItems") is not None and len(value) < s["minItems"]:
            errors.append(f"{at} must have at least {s['minItems']} items")
        if s.get("maxItems") is not None and len(value) > s["maxItems"]:
            errors.append(f"{at} must have at most {s['maxItems']} items")
        if "items" in s:
            for i, item in enumerate(value):
                _check(item, s["items"], f"{where}[{i}]", errors)
    if isinstance(value, dict):
        props: dict[str, Any] = s.get("properties") or {}
        prefix = f"{where}." if where else ""
        for name in s.get("required") or []:
            if name not in value:
                errors.append(f"{prefix}{name} is required")
        for name, item in value.items():
            if name in props:
                _check(item, props[name], f"{prefix}{name}", errors)
            elif s.get("additionalProperties") is False:
                known = ", ".join(props) or "none"
                errors.append(
                    f"{prefix}{name} is not an argument of this tool (its arguments: {known})"
                )


def _same(a: object, b: object) -> bool:
    # As the page compares (JSON texts): 1 and true differ, 1 and 1.0 do not.
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b))
    if numbers:
        return a == b
    return _type_of(a) == _type_of(b) and json.dumps(a, sort_keys=True) == json.dumps(
        b, sort_keys=True
    )
