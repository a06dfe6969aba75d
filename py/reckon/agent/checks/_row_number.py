"""A row number given for a name: ``df['sales'].idxmax()`` printed for "Which region…?".

Seen in the fifth real-model run: "Which function (column F) has the largest 'Gasto
total 2011'?" answered ``@function[39]``. The cell printed
``df['Gasto total 2011'].idxmax()``: on a table numbered 0, 1, 2, … that is the number
of the row, and the small model took it for the name. It is sent back once, with the
way to read the name from that row. A table indexed by something else (``set_index``,
a ``groupby`` result) gives a label, and is left alone.
"""

from __future__ import annotations

import re

from reckon.agent.checks._form import GIVEN_FORM

__all__ = ["ROW_NUMBER_MESSAGE", "row_number_recheck"]

ROW_NUMBER_MESSAGE = (
    "Your answer gives {value}, but the question asks for a name, and {call} gives the "
    "number of a row (the table's rows are numbered 0, 1, 2, …), not a name. Take the "
    "name from that row, for example {frame}.loc[{call}, <the column that holds the "
    "names>], print it, then answer from its output."
)
_COLUMN = r"(?:\[\s*(?:'[^'\n]*'|\"[^\"\n]*\")\s*\]|\.[A-Za-z_]\w*)"
_CALL = re.compile(
    rf"(?<![\w.\]])(?P<frame>[A-Za-z_]\w*)\s*{_COLUMN}\s*\.\s*(?:idxmax|idxmin|argmax|argmin)"
    r"\s*\(\s*\)"
)
# A name that holds a table indexed by labels, not by row numbers.
_RELABELLED = r"\s*=.*(?:groupby|set_index|pivot|value_counts|crosstab|resample)"
_LABELLED_LINE = re.compile(r"groupby|set_index|pivot")
_READ_AT = re.compile(r"\b(?:i?loc|i?at)\s*\[\s*$")
_ASKED_NAME = re.compile(r"@(?P<form>[A-Za-z_]\w*)\[(?P<slot>[^\[\]]*)\]")
_NAME_SLOTS = {"name", "names", "label", "category", "country", "city", "region"}
_WHICH = re.compile(r"^\W*(?:which|who)\b", re.IGNORECASE)


def row_number_recheck(question: str, answer: str, codes: list[str]) -> str:
    """``ROW_NUMBER_MESSAGE`` when ``question`` asks for a name, ``answer`` gives a whole
    number, and one of this answer's cells (``codes``) took ``idxmax``/``argmax`` of a
    column of a table numbered by rows; else ``""``."""
    value = _given_number(question, answer)
    if value is None:
        return ""
    for code in reversed(codes):
        for match in _CALL.finditer(code):
            frame = match.group("frame")
            if re.search(rf"^\s*{re.escape(frame)}{_RELABELLED}", code, re.MULTILINE):
                continue
            line = code[code.rfind("\n", 0, match.start()) + 1 : match.start()]
            # Inside .loc[…] the row number is used to read a name: the way asked for.
            if _LABELLED_LINE.search(line) or _READ_AT.search(line):
                continue
            return ROW_NUMBER_MESSAGE.format(value=value, call=match.group(0), frame=frame)
    return ""


def _given_number(question: str, answer: str) -> str | None:
    """The whole number ``answer`` gives where ``question`` asks for a name, or None."""
    slots = {m.group("form").lower(): m.group("slot").strip().lower()
             for m in _ASKED_NAME.finditer(question)}  # fmt: skip
    named = {form for form, slot in slots.items() if slot in _NAME_SLOTS}
    if slots and not named:
        return None
    if not slots and not _WHICH.search(question):
        return None
    given = [(name.lower(), value.strip()) for name, value in GIVEN_FORM.findall(answer)]
    if slots:
        values = [value for name, value in given if name in named or len(given) == 1]
    else:
        bare = re.fullmatch(r"\D*?(\d+)\.?\s*", answer.strip())
        values = [bare.group(1)] if bare else []
    return next((v for v in values if re.fullmatch(r"\d+", v)), None)
