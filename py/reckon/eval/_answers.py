"""Checking answers: the ``@name[value]`` closed form, numbers at printed precision,
and ``check`` expressions in a restricted namespace.

Rules (docs/evaluation.md):

- ``@name[value]`` pairs are read from the expected string and from the answer.
  **Strict** (``matches_expected(..., strict=True)``, the headline accuracy): every
  expected name must be in the answer as ``@name[value]`` with a matching value,
  as the question asked. **Lenient** (reported beside it): if the answer has no
  pairs (the demo model writes prose), each expected value may instead appear as
  a number (or, for text values, as a phrase) anywhere in the answer.
- Numbers match when they are within a relative 1e-6, or when the answer's
  number rounded to the decimals printed in the expected value equals it
  (expected ``0.74`` matches ``0.7431``; expected ``0.7431`` does not match ``0.74``).
- Text matches case-insensitively after trimming and collapsing whitespace.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

__all__ = [
    "appears",
    "compile_check",
    "matches_expected",
    "normalized_answer",
    "numbers_in",
    "pairs_in",
    "run_check",
    "values_match",
]

_PAIR = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)\[([^\[\]]*)\]")
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])"
    r"|(?<![\w.])[-+]?\.\d+(?![\w])"
)
_REL_TOL = 1e-6

# What a check expression may call; no imports, no attribute access to dunders.
_SAFE_BUILTINS: dict[str, Any] = {
    f.__name__: f
    for f in (abs, all, any, bool, float, int, len, list, max, min, round, set, sorted, str, sum)
}


def pairs_in(text: str) -> dict[str, str]:
    """``{name: value}`` for every ``@name[value]`` in ``text`` (the last one wins)."""
    return {name: value.strip() for name, value in _PAIR.findall(text)}


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, as written (thousands separators removed)."""
    return [m.group(0).replace(",", "") for m in _NUMBER.finditer(text)]


def _as_number(text: str) -> float | None:
    cleaned = text.strip().replace(",", "")
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _decimals(text: str) -> int | None:
    """Decimal places printed in ``text``; None for exponent notation (compare by tolerance)."""
    cleaned = text.strip().replace(",", "")
    if "e" in cleaned.lower():
        return None
    return len(cleaned.split(".", 1)[1]) if "." in cleaned else 0


def _text(value: str) -> str:
    return " ".join(value.split()).lower()


def values_match(expected: str, got: str) -> bool:
    """One expected value against one answered value (numbers or text)."""
    want, have = _as_number(expected), _as_number(got)
    if want is None or have is None:
        return _text(expected) == _text(got)
    if math.isclose(want, have, rel_tol=_REL_TOL, abs_tol=1e-12):
        return True
    places, shown = _decimals(expected), _decimals(got)
    if places is None or shown is None or shown < places:
        return False
    return math.isclose(round(have, places), want, rel_tol=_REL_TOL, abs_tol=1e-12)


def matches_expected(expected: str, answer: str, *, strict: bool = False) -> bool:
    """Whether ``answer`` states the values of ``expected`` (a string of @name[value]);
    ``strict``: in the @name[value] form the question asked for."""
    want = pairs_in(expected)
    got = pairs_in(answer)
    if got or (strict and want):
        return all(name in got and values_match(value, got[name]) for name, value in want.items())
    return all(appears(value, answer) for value in want.values())


def appears(value: str, answer: str) -> bool:
    """Whether ``value`` is written in ``answer``: as a number, or as a whole phrase."""
    if _as_number(value) is not None:
        return any(values_match(value, n) for n in numbers_in(answer))
    return re.search(rf"(?<!\w){re.escape(_text(value))}(?!\w)", _text(answer)) is not None


def normalized_answer(answer: str) -> str:
    """What two runs must share to count as the same answer: the @name[value] pairs
    if any, else the numbers in the answer, else its text (trimmed, lowercased);
    numbers compare by value to 10 significant digits."""
    pairs = pairs_in(answer)
    if pairs:
        return " ".join(f"@{k}[{_canonical(v)}]" for k, v in sorted(pairs.items()))
    numbers = numbers_in(answer)
    if numbers:
        return " ".join(_canonical(n) for n in numbers)
    return _text(answer)


def _canonical(value: str) -> str:
    """``10``, ``10.0`` and ``1e1`` are one answer; text is trimmed and lowercased."""
    number = _as_number(value)
    return _text(value) if number is None else f"{number:.10g}"


def compile_check(source: str) -> ast.Expression:
    """Parse a check expression, refusing names and attributes with dunders."""
    tree = ast.parse(source, mode="eval")
    for node in ast.walk(tree):
        name = getattr(node, "id", None) or getattr(node, "attr", None)
        if isinstance(name, str) and name.startswith("__"):
            raise ValueError(f"{name!r} is not allowed in a check expression")
        if isinstance(node, ast.Lambda | ast.NamedExpr):
            raise ValueError("lambdas and assignments are not allowed in a check expression")
    return tree


def run_check(tree: ast.Expression, answer: str) -> bool:
    """Evaluate a compiled check over ``answer``, ``values``, ``numbers`` and helpers."""
    namespace: dict[str, Any] = {
        "__builtins__": _SAFE_BUILTINS,
        "answer": answer,
        "values": pairs_in(answer),
        "numbers": [float(n) for n in numbers_in(answer)],
        "close": lambda a, b, rel=1e-6: math.isclose(float(a), float(b), rel_tol=rel),
        "has": lambda value: appears(str(value), answer),
        "lower": answer.lower(),
    }
    code = compile(tree, "<check>", "eval")
    return bool(eval(code, namespace))
