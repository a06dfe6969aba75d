"""JSON in and out of the relay, with numbers JSON can hold only.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``1e999`` (a float too large, read as
``inf``) and writes them back as ``NaN`` / ``Infinity``, which no other JSON parser
accepts: a request the relay forwarded that way fails upstream with a confusing error,
or is read by an upstream parser differently from the relay's. So every body the relay
reads (from the browser or an upstream) refuses them, and every body it writes is
checked.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "loads"]


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for JSON")
    return value


def loads(data: str | bytes) -> Any:
    """``json.loads``, refusing NaN, Infinity and numbers that overflow a float
    (``ValueError``)."""
    return json.loads(data, parse_constant=_constant, parse_float=_finite)


def dumps(value: Any) -> bytes:
    """UTF-8 JSON of ``value``; ``ValueError`` for a non-finite float."""
    return json.dumps(value, allow_nan=False).encode()
