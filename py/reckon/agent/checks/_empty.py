"""An answer of nothing: a total, mean or count of 0, a NaN, a None, worked out over files.

In the fifth real-model run, 4 of the 11 wrong answers were of this kind, each computed
and traced: ``@total[0.0]`` (a year asked of rows when the years were columns),
``@mean_value[NaN]`` (a time filter that matched no row), ``@missing[0]`` (asterisks
counted after the reader had made them missing values), ``@total_rounded[0]``. Such a
value is far more often a selection that caught nothing, or a column of text, than the
answer; so it goes back to the model once, with what to look at. A model whose zero is
right says so again, and it stands. A NaN or None given again goes back once more, with
the other common cause: the row picked has that column empty (seen: a budget's largest
row was its group's total, with the function column blank, and the model picked it
twice; the message about empty selections did not fit).
"""

from __future__ import annotations

import ast
import re

from reckon.agent._types import JSONDict
from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM, filled

__all__ = [
    "EMPTY_RESULT",
    "MISSING_AGAIN",
    "column_as_value",
    "empty_message",
    "empty_result",
    "missing_again",
    "stood_by",
]

EMPTY_RESULT = (
    "Your answer gives {value}. A result of 0, NaN or None usually means the code selected "
    "no rows (a filter on a value the column does not hold, spelt or typed otherwise), or "
    "that the column holds text or missing values rather than numbers. Check before you "
    "answer: print how many rows your selection has, and the dtype and a few values of "
    "each column it uses; fix the code and run it.{stand}"
)
# Zero can be the answer (no sales were negative); NaN and None never are: they are what
# a mean or a lookup over no rows gives. Seen: told it could, the model kept NaN.
_STAND_WORDS = "give the same answer again"
_STAND = " If {value} is really the answer, " + _STAND_WORDS + "."
# Seen: years that were columns ('2010') filtered as values of the label column; told
# the selection was empty, the model ran the same cell again.
_COLUMN_AS_VALUE = (
    " Note: {value!r} is the name of a column of the table, not a value of {column!r}: "
    "its numbers are {frame}[{value!r}]."
)

MISSING_AGAIN = (
    "Your answer gives {value} again: NaN and None are not answers. When a value is read "
    "from a picked row (idxmax, .loc, .values[0], a filter then its first row), {value} "
    "means that row has no value in the column read; in tables with total or subtotal "
    "rows, those rows are often the largest and leave label columns empty. Leave out the "
    "rows where that column is missing (for example df.dropna(subset=['column'])), pick "
    "again, print the row you picked, and answer from it."
)

# A value that stands for nothing: zero written any way, NaN, None, an empty list.
_NOTHING = re.compile(
    r"[-+]?(?:0+(?:\.0*)?|\.0+)|nan|none|null|n/?a|\[\s*\]|\{\s*\}|empty",
    re.IGNORECASE,
)
# An answer in prose that says NaN or None as its value (no form to read it from).
_NOTHING_WORD = re.compile(r"\b(?:NaN|None)\b(?![\w'\"])")
# A p-value of 0 is a test's strong result printed at a few decimals, not a selection that
# caught nothing (a test over no rows gives NaN). Seen: @p_value[0.0] beside r = 0.828.
_P_VALUE = re.compile(r"(?:\w+_)?p(?:_?val(?:ue)?)?|p_?val(?:ue)?_\w+", re.IGNORECASE)
# pandas' text for a selection that caught nothing.
_EMPTY_OUTPUT = re.compile(r"^Empty DataFrame$|^Series\(\[\], ", re.MULTILINE)


def empty_result(answer: str, last_output: str = "") -> str | None:
    """The value of ``answer`` that stands for nothing (``0``, ``NaN``, ``None``; the last
    cell's ``last_output`` an empty selection), or None when it gives something."""
    pairs = [(m.group(1), str(m.group(2)).strip()) for m in GIVEN_FORM.finditer(answer)]
    forms = [value for _, value in pairs]
    for name, value in pairs:
        if _NOTHING.fullmatch(value.strip("'\"`").strip()) and not _P_VALUE.fullmatch(name):
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


def missing_again(value: str) -> str:
    """The second message for an answer of NaN or None (``""`` for a zero: it stands)."""
    if re.fullmatch(r"[-+]?(?:0+(?:\.0*)?|\.0+)", value.strip()) or value == "an empty selection":
        return ""
    return MISSING_AGAIN.format(value=value)


def stood_by(question: str, reply: str, steps: list[JSONDict]) -> str | None:
    """The answer a zero went back with, when the reply to that message ran no code and
    fills none of the asked form: the model, told to give the same answer again if it
    is right, answered the message's checklist instead. Seen in 2 of 30 public benchmark
    questions: a right ``@outlier_count[0]`` became "there are no outliers in the
    column", and a right p-value of 0.0 became "the selection has 3141 rows" (numbers
    no output held). ``None`` otherwise: the reply stands or is checked as any answer."""
    said = [s for s in steps if s.get("kind") != "thinking"]
    last = said[-1] if said else {}
    if last.get("kind") != "recheck" or _STAND_WORDS not in str(last.get("message")):
        return None
    earlier, grounding = str(last.get("text") or ""), last.get("grounding") or {}
    if grounding.get("ungrounded") or not ASKED_FORM.search(question):
        return None
    return earlier if filled(question, earlier) and not filled(question, reply) else None


def column_as_value(codes: list[str], names: set[str]) -> str:
    """``_COLUMN_AS_VALUE`` for the first ``df['a'] == 'b'`` (or ``.isin([...])``) of
    ``codes`` whose text ``b`` is itself a column name (``names``), or ``""``."""
    for code in reversed(codes):
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            compared = _compared_texts(node)
            if compared is None:
                continue
            frame, column, texts = compared
            for text in texts:
                if text in names and text != column:
                    return _COLUMN_AS_VALUE.format(value=text, column=column, frame=frame)
    return ""


def _compared_texts(node: ast.AST) -> tuple[str, str, list[str]] | None:
    """``(frame, column, texts)`` of ``frame['column'] == 'text'`` or
    ``frame['column'].isin(['text', …])``."""
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq | ast.NotEq)
    ):
        return _texts_of(node.left, [node.comparators[0]])
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "isin"
        and node.args
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        return _texts_of(node.func.value, list(node.args[0].elts))
    return None


def _texts_of(reference: ast.expr, values: list[ast.expr]) -> tuple[str, str, list[str]] | None:
    if not (
        isinstance(reference, ast.Subscript)
        and isinstance(reference.value, ast.Name)
        and isinstance(reference.slice, ast.Constant)
        and isinstance(reference.slice.value, str)
    ):
        return None
    texts = [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return reference.value.id, reference.slice.value, texts
