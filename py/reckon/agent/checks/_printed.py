"""An answer a cell's output already gives, taken as the model's answer without another
model call.

After a cell that printed what the question asks, the next call has the model copy that
output into the asked ``@name[value]`` form: one call of two on most questions, 2-11 s
of a 1.5B model at one thread (measured on the project's questions), for nothing a check
could not write. So when the question asks for the form and the reply's last cell ran
without error, kernel note or chart, its output is the answer when nothing else could be
meant: lines that fill every asked form, one value for the one form asked (``4``,
``East``, or a bare last expression's ``np.float64(4.0)`` when nothing was printed), or
``label: value`` lines whose labels name the asked forms (``Mean price: 3.5`` for
``@mean_price``), or the forms printed with their placeholder and the value after each
(``@latest[name] Ian``). The answer is then checked as the model's would be (the
rechecks, grounding, the method line), so a row number given for a name or a NaN still
goes back to the model.

Left to the model: a value the cell's code holds as a literal (a guess printed is not
computed), a number where a name is asked, any output of more than one value, every
output under schema privacy (the answer joins the history the model reads, and the model
may not read the values), a noted cell (its note asks for a change), and a chart (the
model may say what it shows)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from reckon.agent._types import JSONDict
from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM, filled, values_after
from reckon.agent.checks._one_value import fitting_value, shown_value

__all__ = ["printed_answer"]

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ROUND = re.compile(r"\bround(?:ed|ing)?\b[^.?!\n]{0,30}?\b(\d|one|two|three|four|five|six)\s+"
                    r"decimal", re.IGNORECASE)  # fmt: skip
# "Mean price: 3.5", "total = 12": a value printed after its label.
_LABELLED = re.compile(r"([A-Za-z][\w .%()/-]{0,40}?)\s*[:=]\s*(\S.*?)")


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
    output = shown_value(result)
    lines = "\n".join(line for line in output.splitlines() if GIVEN_FORM.search(line)).strip()
    if repeats:
        return lines if lines and filled(question, lines) else ""
    if result.get("notes") or result.get("figures"):
        return ""
    # The forms printed with their placeholder and the value after each: filled.
    lines = values_after(question, lines) or lines if lines else lines
    if lines and filled(question, lines):
        given = [value for _, value in GIVEN_FORM.findall(lines)]
        return "" if any(_typed(value, code) for value in given) else lines
    if lines:
        return ""
    values = _labelled_values(output, asked)
    if len(asked) == 1 and not values:
        name, placeholder = asked[0]
        value = fitting_value(output, placeholder)
        values = {name: value} if value else {}
    if not values or any(_typed(value, code) for value in values.values()):
        return ""
    return " ".join(f"@{name}[{_rounded(value, question)}]" for name, value in values.items())


def _labelled_values(output: str, asked: list[tuple[str, str]]) -> dict[str, str]:
    """Each asked form's value from an output of ``label: value`` lines whose label is
    the form's name in words (``Mean price: 3.5`` for ``@mean_price``), or ``{}`` unless
    each line is one form's and each form has one line, its value fit for the
    placeholder (``Rows: 1000`` then ``Rows after dropna: 950`` is left to the model)."""
    pairs = [_LABELLED.fullmatch(line.strip()) for line in output.splitlines() if line.strip()]
    if len(pairs) != len(asked) or any(pair is None for pair in pairs):
        return {}
    labelled = [(_words(pair.group(1)), pair.group(2)) for pair in pairs if pair is not None]
    values: dict[str, str] = {}
    used: set[int] = set()
    for name, placeholder in asked:
        named = _words(name)
        found = [i for i, (words, _) in enumerate(labelled) if words == named]
        found = found or [i for i, (words, _) in enumerate(labelled) if words and words <= named]
        found = found or [i for i, (words, _) in enumerate(labelled) if named and named <= words]
        value = fitting_value(labelled[found[0]][1], placeholder) if len(found) == 1 else ""
        if not value or found[0] in used:
            return {}
        used.add(found[0])
        values[name] = value
    return values


def _words(label: str) -> frozenset[str]:
    """The words of a label or a form's name: ``Mean price`` and ``mean_price`` alike."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", label)
    return frozenset(re.findall(r"[a-z0-9]+", spaced.lower())) - {"the", "of", "in", "a"}


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
