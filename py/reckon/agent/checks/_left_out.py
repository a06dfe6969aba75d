"""An answer that names what the question says to leave out.

Seen in runs 12 to 15: "Leaving out the Total row, which sub-group's emissions fell
the most?" answered ``@subgroup[Total]``: the total of all sub-groups is the largest
of every measure, so a pick over all rows lands on it. Grounding cannot see this (the
cell printed "Total") and neither can the name check (the question says "Total"). So
when the answer's value in the asked form is the very thing the question leaves out
("leaving out", "excluding", "except", "other than", "apart from", "not counting",
"ignoring", "without"), the answer goes back once, asking to drop those rows first.
"""

from __future__ import annotations

import re

from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM
from reckon.agent.checks._names import plain

__all__ = ["LEFT_OUT_MESSAGE", "left_out_name"]

LEFT_OUT_MESSAGE = (
    "The question says to leave out {name}, but your answer is {name}. Drop the rows "
    "labelled {name} first (a filter on the column that holds the names), compute again "
    "on the rest, and answer from that output."
)
# The cue, an optional article, then what is left out, up to the clause's end or a
# noun for what it is ("row", "line", "category").
_CUE = re.compile(
    r"\b(?:leav(?:e|ing) out|exclud(?:e|ing)|except(?: for)?|other than|apart from|"
    r"not counting|ignor(?:e|ing)|without)\s+(?:the\s+|any\s+|all\s+)?"
    r"(?P<what>[^,.;:?!()\n]{1,60}?)"
    r"(?=\s+(?:rows?|lines?|entr(?:y|ies)|categor(?:y|ies)|groups?|records?)\b|[,.;:?!()\n]|$)",
    re.IGNORECASE,
)
# Backticks and typographic quotes read as the plain quotes ``plain`` drops.
_QUOTES = str.maketrans("`‘’“”", "'''\"\"")
_LIST = re.compile(r"\s+(?:and|or|nor)\s+|\s*/\s*", re.IGNORECASE)


def left_out_name(question: str, answer: str) -> str:
    """The message when ``answer`` fills a form ``question`` asks for with a value the
    question leaves out, else ``""``. Case, accents, quotes and spacing do not count."""
    parts = [p for m in _CUE.finditer(question) for p in _LIST.split(m.group("what"))]
    left_out = [_plain(part) for part in parts if _plain(part)]
    asked = {name.lower() for name, _ in ASKED_FORM.findall(question)}
    given = [(name.lower(), value) for name, value in GIVEN_FORM.findall(answer)]
    if not left_out or not asked:
        return ""
    for name, value in given:
        if name not in asked and len(given) > 1:
            continue
        plain = _plain(value)
        # "other than Germany exports most": what is left out leads the clause.
        if plain and any(part == plain or part.startswith(plain + " ") for part in left_out):
            value = value.strip(" '\"`")
            return LEFT_OUT_MESSAGE.format(name=repr(value))
    return ""


def _plain(text: str) -> str:
    return plain(text.translate(_QUOTES))
