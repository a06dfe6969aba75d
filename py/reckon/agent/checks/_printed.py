"""An answer a cell's output already gives, taken as the model's answer without another
model call.

After a cell that printed what the question asks, the next call has the model copy
that output into the asked ``@name[value]`` form: one call of two on most questions,
2-11 s of a 1.5B model at one thread (measured on the project's questions), for
nothing a check could not write. So when the question asks for the form and the
reply's last cell ran without error, kernel note or chart, its output is the
answer when nothing else could be meant: lines that fill every asked form, or one
value for the one form asked (``4``, ``East``). The answer is then checked as the
model's would be (the rechecks, grounding, the method line), so a row number given
for a name or a NaN still goes back to the model.

Left to the model: a value the cell's code holds as a literal (a guess printed is not
computed), a number where a name is asked, any output of more than one value, every
output under schema privacy (the answer joins the history the model reads, and the
model may not read the values), a noted cell (its note asks for a change), and a chart
(the model may say what it shows)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from reckon.agent._types import JSONDict
from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM, filled
from reckon.agent.checks._grounding import find_numbers

__all__ = ["printed_answer"]

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ROUND = re.compile(r"\bround(?:ed|ing)?\b[^.?!\n]{0,30}?\b(\d|one|two|three|four|five|six)\s+"
                    r"decimal", re.IGNORECASE)  # fmt: skip
_LABEL = re.compile(r"name|code|label|category|word|text|string|id\b", re.IGNORECASE)
# One value as print() writes it: a number, or a word or a few (a name, a date).
_VALUE = re.compile(r"[^\s()\[\]{}<>@=:,;|][^\n()\[\]{}<>@=:;|]{0,58}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}(?::\d{2})?)?")
_DATE_FORM = re.compile(r"YYYY|HH:MM", re.IGNORECASE)


def printed_answer(
    question: str, results: Sequence[tuple[str, JSONDict]], repeats: int = 0, private: bool = False
) -> str:
    """The answer the last cell's output gives to ``question``, or ``""``.

    ``results``: the reply's cells (code and result); ``repeats``: how many times in a
    row that cell ran with this output (``Cells``); ``private``: schema privacy is on
    (the model reads only what it lets through, and the answer joins that history).
    Run again, the form lines it printed are its answer even with a note (seen:
    ``print(f'@items[{n}]')`` four times until the stop)."""
    asked = list(dict.fromkeys(ASKED_FORM.findall(question)))
    if not asked or not results or private:
        return ""
    code, result = results[-1]
    if result.get("status") != "ok":
        return ""
    output = str(result.get("stdout") or "")
    lines = "\n".join(line for line in output.splitlines() if GIVEN_FORM.search(line)).strip()
    if repeats:
        return lines if lines and filled(question, lines) else ""
    if result.get("notes") or result.get("figures"):
        return ""
    if lines and filled(question, lines):
        given = [value for _, value in GIVEN_FORM.findall(lines)]
        return "" if any(_typed(value, code) for value in given) else lines
    if len(asked) != 1 or lines:
        return ""
    name, placeholder = asked[0]
    value = _one_value(output, placeholder)
    if not value or _typed(value, code):
        return ""
    return f"@{name}[{_rounded(value, question)}]"


def _one_value(output: str, placeholder: str) -> str:
    """The one value ``output`` is, fit for ``placeholder``, or ``""``."""
    text = output.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    if _DATE_FORM.search(placeholder):
        return text if _DATE.fullmatch(text) else ""
    if not _VALUE.fullmatch(text) or text.lower() in {"nan", "none", "nat", "<na>", ""}:
        return ""
    numbers = find_numbers(text)
    number = len(numbers) == 1 and numbers[0].text == text
    if _LABEL.search(placeholder):
        return "" if number else text
    return text if number else ""


def _typed(value: str, code: str) -> bool:
    """Whether ``value`` is written in the cell's code itself, outside a comment."""
    source = "\n".join(line.split("#", 1)[0] for line in code.splitlines())
    return re.search(rf"(?<![\w.]){re.escape(value.strip())}(?![\w.])", source) is not None


def _rounded(value: str, question: str) -> str:
    """``value`` to the decimals the question asks for, when it shows more."""
    asked = {_WORDS.get(m.lower(), 0) if not m.isdigit() else int(m)
             for m in _ROUND.findall(question)}  # fmt: skip
    if len(asked) != 1 or "." not in value or "e" in value.lower():
        return value
    places = asked.pop()
    if len(value.split(".", 1)[1]) <= places:
        return value
    try:
        return f"{float(value):.{places}f}"
    except ValueError:
        return value
