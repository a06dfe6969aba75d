"""Columns of dates written as text ("2012-06-22 00:00:00", "Jan 1 2000", "24/06/2012")
read as dates, so "per month" and "over time" work without the model knowing to parse.

Only text that names a day is a date: "2010-11" (a financial year) and "09:00" (a
time of day) stay text. The format is pandas' guess from the first value, month
first and then day first; a column becomes dates only if every value reads in it.
Failing one format, the values may be read each in its own ("8/24/11 14:06" beside
"12/07/2011 20:32": a directory's UpdatedOn, written by two systems), as an analyst
would with ``format="mixed"``, but only in one order of day and month: a value whose
month could only be its other number ("24/06/2012" in a month-first column) keeps the
column text, rather than reading the others the wrong way round. That reading takes
about 50 µs a distinct value, so past ``_MIXED`` values the column stays text.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

__all__ = ["Dates", "column_dates"]

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_TIME = (
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?[ap]\.?m\.?)?"
    r"(?:Z|\s?[+-]\d{2}:?\d{2}|\s?UTC)?)?"
)
_DAY = re.compile(
    rf"^(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{4}}/\d{{1,2}}/\d{{1,2}}"
    rf"|\d{{1,2}}[/.-]\d{{1,2}}[/.-](?:\d{{4}}|\d{{2}})"
    rf"|(?:[a-z]{{3,9}},?\s)?{_MONTH}\s\d{{1,2}}(?:st|nd|rd|th)?,?\s\d{{4}}"
    rf"|(?:[a-z]{{3,9}},?\s)?\d{{1,2}}(?:st|nd|rd|th)?\s{_MONTH},?\s\d{{4}}"
    rf"|\d{{1,2}}-{_MONTH}-(?:\d{{4}}|\d{{2}}))"
    rf"{_TIME}$",
    re.IGNORECASE,
)
_SAMPLE = 200
_MIXED = 20_000
_NUMERIC = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-]\d")


@dataclass
class Dates:
    values: Any  # a datetime64 Series
    dayfirst: bool


def column_dates(texts: Any) -> Dates | None:
    """``texts`` (stripped strings or NaN) as dates, or ``None``."""
    present = texts.dropna()
    if present.empty or not all(isinstance(v, str) for v in present.head(_SAMPLE)):
        return None
    if present.head(_SAMPLE).str.contains(r"\s\s", regex=True).any():
        # "Apr 13  2017 12:00:00 AM" (a call centre's export, days padded to two places
        # with a space): pandas infers no format with the double space and would read
        # each value on its own, about 50 µs each; one space between parts reads as one.
        collapsed = texts.str.replace(r"\s+", " ", regex=True)
        if collapsed.notna().sum() != len(present):  # a value that is not text
            return None
        texts, present = collapsed, collapsed.dropna()
    if not all(_DAY.match(v) for v in present.head(_SAMPLE)):
        return None
    # The rest need no look of ours: pandas applies the format it guessed from the
    # first value to every value, strictly ("2010-11" after "2012-06-22" fails).
    for dayfirst in (False, True):
        dates = _parsed(texts, present, dayfirst=dayfirst)
        if dates is not None:
            return dates
    return _mixed(texts, present)


def _mixed(texts: Any, present: Any) -> Dates | None:
    """``texts`` read a value at a time, in the one order of day and month that every
    value written in numbers fits, or ``None``."""
    if len(present) > _MIXED:
        return None
    numeric = present.str.extract(_NUMERIC).dropna().astype(int)
    for dayfirst in (False, True):
        month = numeric[1] if dayfirst else numeric[0]
        if (month > 12).any():
            continue
        dates = _parsed(texts, present, dayfirst=dayfirst, mixed=True)
        if dates is not None:
            return dates
    return None


def _parsed(texts: Any, present: Any, *, dayfirst: bool, mixed: bool = False) -> Dates | None:
    """``texts`` as dates in one order of day and month, or ``None`` when pandas
    fails or leaves any of the ``present`` values unread."""
    import pandas as pd

    options = {"format": "mixed"} if mixed else {}
    with warnings.catch_warnings():
        # "Could not infer format": the values then do not share one.
        warnings.simplefilter("ignore")
        try:
            parsed = pd.to_datetime(texts, dayfirst=dayfirst, **options)
        except (ValueError, TypeError, OverflowError):
            return None
    if pd.api.types.is_datetime64_any_dtype(parsed) and parsed.notna().sum() == len(present):
        return Dates(parsed, dayfirst)
    return None
