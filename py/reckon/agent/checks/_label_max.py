"""The largest label taken for the label of the largest value: ``df['Year'].max()``
printed for "Which year has the highest January anomaly?".

Seen in the seventh real-model run: the cell filtered the January column, then printed
``jan['Year'].max()``, the table's last year, and the answer ``@year[2012]`` was traced
to that output: computed, and wrong (the year of the highest anomaly was 2007). Where
the question asks which <thing> has the highest or lowest <measure>, and a cell of the
answer takes the largest or smallest of the <thing> column itself with no step that
picks a row by another column, the answer goes back once, with the way to read the
label from the row where the measure is largest. Told so, the model answered with the
same words (run 9); so where the question names the measure's column, Reckon runs the
cell again with the label read from that row, and the model answers from its output.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from reckon.agent._steps import Correction
from reckon.agent.checks._date_parts import replace_node

__all__ = [
    "LABEL_MAX_MESSAGE",
    "Asked",
    "asked_extreme",
    "label_max_correction",
    "label_max_recheck",
    "named_measure",
]

LABEL_MAX_MESSAGE = (
    "The question asks which {noun} has the {extreme} {measure}, but your code took the "
    "{extreme} {column!r} itself ({call}): that is a {noun} of the table, not the {noun} "
    "whose {measure} is {extreme}. Take {column!r} from the row where {measure} is "
    "{extreme}, for example {example}, print it, then answer from its output."
)
# The noun may carry an aside that names its column: "which function (column F) has".
_WHICH = re.compile(
    r"\b(?:which|what)\s+(?P<noun>[A-Za-z_]\w*)(?:\s*\((?P<aside>[^()]{1,80})\))?\s+"
    r"(?:has|had|have|was|were|is|saw|shows?|showed|recorded|with|gets?|got)\b(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
_MAX = re.compile(r"\b(?:highest|largest|biggest|greatest|maximum|most(?!\s+recent))\b", re.I)
_MIN = re.compile(r"\b(?:lowest|smallest|least|fewest|minimum)\b", re.IGNORECASE)
# A step that picks a row by a value: with one, the label may be read from that row.
_PICKS = re.compile(r"\b(?:idxmax|idxmin|argmax|argmin|sort_values|nlargest|nsmallest)\b")


@dataclass(frozen=True)
class Asked:
    """A question that asks which <noun> has the highest or lowest <rest>."""

    noun: str  # lower case
    aside: str  # what the brackets after the noun say: "column F", or ""
    rest: str  # the words after the verb, where the measure is named
    extreme: str  # the question's word: "highest", "fewest"
    wants: str  # max or min
    idx: str  # idxmax or idxmin


def asked_extreme(question: str) -> Asked | None:
    """What ``question`` asks, if it asks which <noun> has the highest or lowest one."""
    asked = _WHICH.search(question)
    if asked is None:
        return None
    rest = asked.group("rest")
    extreme = _MAX.search(rest) or _MIN.search(rest)
    if extreme is None:
        return None
    wants = "max" if _MAX.search(rest) else "min"
    return Asked(
        noun=asked.group("noun").lower(),
        aside=asked.group("aside") or "",
        rest=rest,
        extreme=extreme.group(0).lower(),
        wants=wants,
        idx="idxmax" if wants == "max" else "idxmin",
    )


@dataclass(frozen=True)
class _Found:
    noun: str
    extreme: str  # the question's word: "highest", "fewest"
    idx: str  # idxmax or idxmin
    frame: str
    column: str
    call: ast.Call
    measure: str  # "" when the question names no one column for it
    code: str


def label_max_recheck(question: str, codes: list[str], columns: list[str]) -> str:
    """``LABEL_MAX_MESSAGE`` when ``question`` asks which <noun> has the highest or
    lowest <measure>, and the last of this answer's cells (``codes``) that takes the
    ``max()``/``min()`` of the <noun> column picks no row; ``columns``: the uploads'
    column names, to name the measure. Else ``""``."""
    found = _find(question, codes, columns)
    if found is None:
        return ""
    shown = repr(found.measure) if found.measure else "<the measure's column>"
    example = f"{found.frame}.loc[{found.frame}[{shown}].{found.idx}(), {found.column!r}]"
    return LABEL_MAX_MESSAGE.format(
        noun=found.noun,
        extreme=found.extreme,
        measure=found.measure or "the measure",
        column=found.column,
        call=ast.unparse(found.call),
        example=example,
    )


def label_max_correction(question: str, codes: list[str], columns: list[str]) -> Correction | None:
    """The cell with the label read from the row where the named measure is largest
    (or smallest), for Reckon to run; None when the question names no one column for
    the measure, or the call spans lines."""
    found = _find(question, codes, columns)
    if found is None or not found.measure:
        return None
    frame = found.frame
    picked = f"{frame}.loc[{frame}[{found.measure!r}].{found.idx}(), {found.column!r}]"
    fixed = replace_node(found.code, found.call, picked)
    if not fixed:
        return None
    call = ast.unparse(found.call)
    message = _RAN.format(
        noun=found.noun, extreme=found.extreme, measure=found.measure, call=call,
        picked=picked, code=fixed,
    )  # fmt: skip
    return Correction(fixed, message, f"Reckon ran the model's cell again with {picked}.")


# Begins as the recheck does; the loop adds the cell's output and what to do next.
_RAN = (
    "The question asks which {noun} has the {extreme} {measure}, but your code took the "
    "{extreme} {noun} itself ({call}). Reckon ran your cell again with the {noun} read "
    "from the row where {measure} is {extreme}, {picked}:\n```python\n{code}\n```\n"
)


def _find(question: str, codes: list[str], columns: list[str]) -> _Found | None:
    asked = asked_extreme(question)
    if asked is None:
        return None
    for code in reversed(codes):
        found = _label_extreme(code, asked.noun, asked.wants)
        if found is None:
            continue
        if _PICKS.search(code):
            return None
        frame, column, call = found
        measure = named_measure(asked.rest, columns, column)
        return _Found(asked.noun, asked.extreme, asked.idx, frame, column, call, measure, code)
    return None


def _label_extreme(code: str, noun: str, wants: str) -> tuple[str, str, ast.Call] | None:
    """``(frame, column, call)`` of the last ``frame['Noun'].max()`` (or ``.min()``,
    or ``frame.Noun.max()``) in ``code`` whose column is the asked noun, or None."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    found = None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != wants or node.args or node.keywords:
            continue
        owner = node.func.value
        column = frame = None
        if isinstance(owner, ast.Subscript) and isinstance(owner.slice, ast.Constant):
            column, frame = owner.slice.value, owner.value
        elif isinstance(owner, ast.Attribute):
            column, frame = owner.attr, owner.value
        if not isinstance(column, str) or not isinstance(frame, ast.Name):
            continue
        if column.lower() in (noun, noun.rstrip("s"), noun + "s"):
            found = (frame.id, column, node)
    return found


def named_measure(rest: str, columns: list[str], label: str) -> str:
    """The one column the question names after the extreme word, other than the label
    (``Jan`` in "the highest January (Jan) anomaly"), or ``""``."""
    named = [
        c for c in dict.fromkeys(columns)
        if c != label and c.strip() and re.search(rf"(?<!\w){re.escape(c)}(?!\w)", rest)
    ]  # fmt: skip
    return named[0] if len(named) == 1 else ""
