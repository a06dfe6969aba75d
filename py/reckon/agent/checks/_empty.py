"""An answer of nothing: a total, mean or count of 0, a NaN, a None, worked out over files.

In the fifth real-model run, 4 of the 11 wrong answers were of this kind, each computed
and traced: ``@total[0.0]`` (a year asked of rows when the years were columns),
``@mean_value[NaN]`` (a time filter that matched no row), ``@missing[0]`` (asterisks
counted after the reader had made them missing values), ``@total_rounded[0]``. Such a
value is far more often a selection that caught nothing, or a column of text, than the
answer; so it goes back to the model once, with what to look at. A model whose zero is
right says so again, and it stands.
"""

from __future__ import annotations

import re

from reckon.agent.checks._form import GIVEN_FORM

__all__ = ["EMPTY_RESULT", "empty_message", "empty_result"]

EMPTY_RESULT = (
    "Your answer gives {value}. A result of 0, NaN or None usually means the code selected "
    "no rows (a filter on a value the column does not hold, spelt or typed otherwise), or "
    "that the column holds text or missing values rather than numbers. Check before you "
    "answer: print how many rows your selection has, and the dtype and a few values of "
    "each column it uses; fix the code and run it.{stand}"
)
# Zero can be the answer (no sales were negative); NaN and None never are: they are what
# a mean or a lookup over no rows gives. Seen: told it could, the model kept NaN.
_STAND = " If {value} is really the answer, give the same answer again."

# A value that stands for nothing: zero written any way, NaN, None, an empty list.
_NOTHING = re.compile(
    r"[-+]?(?:0+(?:\.0*)?|\.0+)|nan|none|null|n/?a|\[\s*\]|\{\s*\}|empty",
    re.IGNORECASE,
)
# An answer in prose that says NaN or None as its value (no form to read it from).
_NOTHING_WORD = re.compile(r"\b(?:NaN|None)\b(?![\w'\"])")
# pandas' text for a selection that caught nothing.
_EMPTY_OUTPUT = re.compile(r"^Empty DataFrame$|^Series\(\[\], ", re.MULTILINE)


def empty_result(answer: str, last_output: str = "") -> str | None:
    """The value of ``answer`` that stands for nothing (``0``, ``NaN``, ``None``; the last
    cell's ``last_output`` an empty selection), or None when it gives something."""
    forms = [str(match.group(2)).strip() for match in GIVEN_FORM.finditer(answer)]
    for value in forms:
        if _NOTHING.fullmatch(value.strip("'\"`").strip()):
            return value
    if not forms:
        # The last value it states: "no NaN values were left; the mean is 5.2" gives 5.2.
        said = list(_NOTHING_WORD.finditer(answer))
        if said and not re.search(r"\d", answer[said[-1].end() :]):
            return said[-1].group(0)
    if _EMPTY_OUTPUT.search(last_output):
        return "an empty selection"
    return None


def empty_message(value: str) -> str:
    """What the answer goes back with: a zero may stand, a NaN or None may not."""
    zero = re.fullmatch(r"[-+]?(?:0+(?:\.0*)?|\.0+)", value.strip()) is not None
    return EMPTY_RESULT.format(value=value, stand=_STAND.format(value=value) if zero else "")
