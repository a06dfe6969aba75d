"""Reading the numbers people write: thousands separators, currency, percent signs,
accounting negatives and the markers that stand for a missing value.

``column_numbers`` decides for a whole column at once: it turns into numbers only if
every value is a number or a missing marker, so no text is ever lost to ``NaN``.
"""

from __future__ import annotations

import functools
import numbers
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NumberStyle", "Parsed", "column_numbers", "is_marker", "parse_number"]

# Text that stands for "no value": only punctuation (``.``, ``-``, ``****``, ``…``) or
# one of the usual words. Letters and digits are never a marker.
_NA_WORDS = {"na", "n/a", "n.a.", "nan", "null", "none", "#n/a", "missing", "nil", "-nan"}
_PUNCTUATION_ONLY = re.compile(r"^[^\w\s]+$")
# Group separators seen in real files: comma, dot (European), space, no-break space,
# narrow no-break space, thin space, apostrophe (Swiss), underscore (Python).
_SPACES = "\u0020\u00a0\u202f\u2009"
_CURRENCY = "$€£¥₹"
_EXACT_DIGITS = 15  # a float64 holds every integer of up to 15 digits exactly


@dataclass(frozen=True)
class NumberStyle:
    """How a file writes numbers: its decimal mark and whether a dot groups thousands
    (``2.830`` is 2830 in a German file; the reader's sniffing decides)."""

    decimal: str = "."
    dot_thousands: bool = False


@dataclass
class Parsed:
    """A column read as numbers, with what had to be read past to get them."""

    values: Any  # a float Series
    markers: dict[str, int] = field(default_factory=dict)  # marker text -> cells
    grouped: int = 0  # values written with a thousands separator
    percent: bool = False
    currency: str = ""


@dataclass(frozen=True)
class _Number:
    value: float
    grouped: bool
    percent: bool
    currency: str


def is_marker(text: str) -> bool:
    """Whether ``text`` (already stripped) stands for a missing value."""
    return not text or text.lower() in _NA_WORDS or bool(_PUNCTUATION_ONLY.match(text))


@functools.lru_cache(maxsize=8)
def _pattern(style: NumberStyle) -> re.Pattern[str]:
    decimal = re.escape(style.decimal)
    groups = ["," if style.decimal == "." else r"\.", f"[{_SPACES}]", "'", "_"]
    if style.dot_thousands and style.decimal == ".":
        groups[0] = r"[,.]"
    grouped = "|".join(rf"\d{{1,3}}(?:{g}\d{{3}})+" for g in groups)
    return re.compile(
        rf"^(?P<open>\()?(?P<sign>[-+−]?)[{_SPACES}]?(?P<cur>[{_CURRENCY}]?)[{_SPACES}]?"
        rf"(?P<int>{grouped}|\d+)?(?:{decimal}(?P<frac>\d+))?"
        rf"(?P<exp>[eE][-+]?\d+)?[{_SPACES}]?(?P<pct>%?)(?P<close>\))?$"
    )


def _read(text: str, style: NumberStyle) -> _Number | None:
    match = _pattern(style).match(text)
    if match is None or not (match.group("int") or match.group("frac")):
        return None
    if bool(match.group("open")) != bool(match.group("close")):
        return None
    whole = match.group("int") or "0"
    digits = re.sub(r"\D", "", whole)
    if len(digits) > _EXACT_DIGITS or (len(digits) > 1 and digits[0] == "0"):
        return None  # an id or a code ("007", a tweet id): a float would change it
    number = float(f"{digits}.{match.group('frac') or '0'}{match.group('exp') or ''}")
    negative = match.group("sign") in ("-", "−") or bool(match.group("open"))
    return _Number(
        -number if negative else number,
        digits != whole,
        bool(match.group("pct")),
        match.group("cur") or "",
    )


def parse_number(text: str, style: NumberStyle) -> float | None:
    """``text`` as a number in ``style`` (``"1,234"``, ``"-1 414"``, ``"(12)"``), or None."""
    found = _read(text, style)
    return None if found is None else found.value


def column_numbers(texts: Any, style: NumberStyle) -> Parsed | None:
    """``texts`` (a Series of stripped strings or NaN) as numbers, or ``None`` when any
    value is text that is neither a number nor a missing marker. A column of markers
    alone (``.`` in every row: no data for that year) is a column of ``NaN``."""
    import pandas as pd

    values: list[float] = []
    markers: dict[str, int] = {}
    grouped = percent = count = 0
    currencies: set[str] = set()
    read: dict[str, _Number | None] = {}  # each distinct text parsed once
    for text in texts:
        if not isinstance(text, str):
            if text is None or text != text:
                values.append(float("nan"))
                continue
            if isinstance(text, bool) or not isinstance(text, numbers.Real):
                return None
            values.append(float(text))
            count += 1
            continue
        found = read[text] if text in read else read.setdefault(text, _read(text, style))
        if found is None:
            if not is_marker(text):
                return None
            markers[text] = markers.get(text, 0) + 1
            values.append(float("nan"))
            continue
        values.append(found.value)
        count += 1
        grouped += found.grouped
        percent += found.percent
        if found.currency:
            currencies.add(found.currency)
    if not (count or markers) or (percent and percent != count) or len(currencies) > 1:
        return None  # mixed percentages and plain numbers are left as written
    series = pd.Series(values, index=texts.index, dtype="float64")
    return Parsed(series, markers, grouped, bool(percent), next(iter(currencies), ""))
