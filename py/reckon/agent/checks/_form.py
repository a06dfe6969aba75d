"""The ``@name[value]`` form a question asks the answer to end with: whether an answer
fills it, and the form put right where the model wrote it wrongly but computed the value
(the value where the name goes, the form left unfilled or left out beside one computed
number, a timestamp given for an hour or a year)."""

from __future__ import annotations

import json
import re

from reckon.agent._types import JSONDict
from reckon.agent.checks._grounding import find_numbers
from reckon.agent.checks._one_value import LABEL_PLACEHOLDER, lone_value
from reckon.agent.models._fences import only_block

__all__ = ["ASKED_FORM", "GIVEN_FORM", "filled", "repair_form", "values_after", "variable_form"]

ASKED_FORM = re.compile(r"@([A-Za-z_]\w*)\[([^\[\]]*)\]")
GIVEN_FORM = re.compile(r"@([^\s\[\]@]+)\[([^\[\]]*)\]")


def filled(question: str, answer: str) -> bool:
    """Does ``answer`` fill every ``@name[…]`` the question asks for, under its name and
    with something other than the question's placeholder?"""
    given: dict[str, list[str]] = {}
    for name, value in GIVEN_FORM.findall(answer):
        given.setdefault(name.lower(), []).append(value.strip().lower())
    for name, placeholder in ASKED_FORM.findall(question):
        values = [v for v in given.get(name.lower(), []) if v and v != placeholder.strip().lower()]
        if not values:
            return False
    return True


def repair_form(
    question: str, answer: str, grounding: JSONDict, *, last_value: str = ""
) -> str | None:
    """The answer with the one form the question asks for put right, or ``None``.

    Slips of small models are repaired, only when nothing else could be meant: the
    value written where the name goes (``@3.17[value]`` or the whole answer ``@3.17``
    for ``@mean[value]``), the answer given as JSON under the asked name
    (``{"mean": 3.17}``, ``{"mean": {"value": 3.17}}``, ``{"mean": [3.17]}``, fenced or
    not), and the form copied unfilled beside exactly one computed number (``The mean is
    3.17. @mean[value]``) or left out (``The mean is 3.17.``), and a word given as both
    name and value (``@East[East]`` for ``@region[name]``), or as the name with anything
    but a number inside when the last cell printed it alone (``@management[mean_salary]``
    after ``Management``), or a label it printed with one number inside where a name or
    a code is asked (``@NY[-74.42]`` for ``@state[code]``). The value is the model's
    own; grounding still checks it. A form copied unfilled with no number beside it
    takes ``last_value``, the output of the last cell that ran, when that output is one
    value (``North``). Where several forms are asked, only an answer of as many
    ``@value``s and nothing else is put right (``_bare_values``), or forms copied with
    their placeholder and each value after a colon, or alone after it
    (``values_after``). A form filled with a number no output holds takes the last
    cell's lone output when the answer's prose states it (``_stated_value``)."""
    asked = list(dict.fromkeys((n, p.strip().lower()) for n, p in ASKED_FORM.findall(question)))
    if not filled(question, answer) and (after := values_after(question, answer)):
        return after
    if len(asked) > 1:
        return _bare_values([name for name, _ in asked], answer)
    if len(asked) != 1:
        return None
    name, placeholder = asked[0]
    if filled(question, answer):
        stated = _stated_value(answer, name, grounding, last_value)
        return stated or _timestamp_part(answer, name, placeholder)
    forms = list(GIVEN_FORM.finditer(answer))
    if not forms:
        value = _json_value(answer, name)
        if value:
            return f"@{name}[{value}]"
        if not _AT.search(answer):
            return _lone_number(answer, name, placeholder, grounding)
        bare = _BARE.search(answer)
        if bare is None or len(_AT.findall(answer)) != 1:
            return None
        # "@East", "... is @41.8.": the value with the name and brackets left out.
        return f"{answer[: bare.start()]}@{name}[{bare.group(1)}]{answer[bare.end(1) :]}"
    if len(forms) != 1:
        return None
    form = forms[0]
    inside = form.group(2).strip()
    written = form.group(1)
    printed = lone_value(last_value)
    if printed and written.lower() == printed.lower() != name.lower() and not find_numbers(inside):
        # Seen in run 11: @management[mean_salary] for @department[name], after a cell
        # printed Management: the value where the name goes, a variable's name inside.
        return f"{answer[: form.start()]}@{name}[{printed}]{answer[form.end() :]}"
    label = _label_measure(written, inside, name=name, placeholder=placeholder, printed=last_value)
    if label:
        # Seen on a question not written for the agent: @NY[-74.42] for @state[code],
        # after a cell printed f"@{state}[{longitude}]" and a form message: the label
        # asked for where the name goes, its measure inside.
        return f"{answer[: form.start()]}@{name}[{label}]{answer[form.end() :]}"
    if inside.lower() not in (placeholder, "", written.lower()):
        return None
    numbers = find_numbers(written)
    unfilled = inside.lower() in (placeholder, "")
    if unfilled and len(numbers) == 1 and numbers[0].text == written:
        value = written  # @3.17[value]
    elif written.lower() == inside.lower() and written.lower() != name.lower() and not numbers:
        value = inside  # @East[East] for @region[name]: the value in both places
    elif unfilled and written.lower() == name.lower():
        computed = {
            str(n["text"]) for n in grounding.get("numbers") or []
            if n.get("computed") and not n.get("given") and n.get("steps")
        }  # fmt: skip
        if len(computed) == 1:
            value = computed.pop()
        elif not computed and lone_value(last_value):
            value = lone_value(last_value)  # the form alone, after a cell printed one value
        else:
            return None
    else:
        return None
    return f"{answer[: form.start()]}@{name}[{value}]{answer[form.end() :]}"


# One of an answer's values alone, after an @ where its name should be (seen after a
# form message: "@DCG - District of Columbia Public Schools (DCPS) @6" for
# "@parent[name], @active[value]"); the sentence's full stop is not the last value's.
_VALUE = re.compile(r"\s*@([^@\[\]\n]+?)(?:,?(?=\s+@)|[.,]?\s*$)")


def _bare_values(names: list[str], answer: str) -> str | None:
    """Several forms asked, and the answer nothing but as many ``@value``s, in order:
    each value under its name; otherwise ``None``."""
    written, values, end = answer.strip(), list[str](), 0
    while found := _VALUE.match(written, end):
        values.append(found.group(1).strip())
        end = found.end()
    if end != len(written) or len(values) != len(names):
        return None
    return ", ".join(f"@{name}[{value}]" for name, value in zip(names, values, strict=True))


# A form copied with its placeholder, its value after a colon ("@parent[name]: DCG ...
# @active[value]: 126", seen on a question not written for the agent); the value runs
# to the next form or the line's end. Without the colon, one word or number and nothing
# else before the next form or the line's end ("@latest[name] Ian @days[value] 1858",
# printed by ``print(f"@latest[name] {who}")``).
_AFTER = (
    r"@{}\[{}\](?:[ \t]*[:=][ \t]*([^@\[\]\n]*?)|[ \t]+([^\s@\[\]]+?))"
    r"[ \t]*(?=,?\s+@|[.,]?[ \t]*(?:\n|$))"
)


def values_after(question: str, answer: str) -> str | None:
    """The answer with every asked form filled by the value after it, or ``None``."""
    asked = list(dict.fromkeys((n, p.strip().lower()) for n, p in ASKED_FORM.findall(question)))
    for name, placeholder in asked:
        after = re.compile(_AFTER.format(re.escape(name), re.escape(placeholder)), re.I)
        form = after.search(answer)
        value = form and (form.group(1) or form.group(2))
        if form is not None and value:
            answer = f"{answer[: form.start()]}@{name}[{value}]{answer[form.end() :]}"
    return answer if filled(question, answer) else None


def _stated_value(answer: str, name: str, grounding: JSONDict, last_value: str) -> str | None:
    """The answer with its form's number put as the value its own prose states, when
    the form holds a number no output holds and the prose the last cell's lone output
    (seen: "there are 95 attractions ... @with_parking[0]" after a cell printed 95)."""
    forms = [f for f in GIVEN_FORM.finditer(answer) if f.group(1).lower() == name.lower()]
    printed = lone_value(last_value)
    if len(forms) != 1 or not printed or len(find_numbers(printed)) != 1:
        return None
    form = forms[0]
    inside = form.group(2).strip()
    if inside not in {str(n) for n in grounding.get("ungrounded") or []}:
        return None
    prose = answer[: form.start()] + answer[form.end() :]
    if printed not in {n.text for n in find_numbers(prose)}:
        return None
    return f"{answer[: form.start()]}@{form.group(1)}[{printed}]{answer[form.end() :]}"


def _lone_number(answer: str, name: str, placeholder: str, grounding: JSONDict) -> str | None:
    """A prose answer with no form at all, its one number computed by code, with that
    number put in the form (seen after the format recheck: "The number of distinct
    cities in people.csv is 4."). Not where the form asks for a name, nor where the
    answer holds code, JSON or a table: there the one number may be something else."""
    if "name" in placeholder or any(c in answer for c in "{}[]`|"):
        return None
    numbers = find_numbers(answer)
    entries = grounding.get("numbers") or []
    if len(numbers) != 1 or len(entries) != 1:
        return None
    entry, number = entries[0], numbers[0]
    if entry.get("text") != number.text or not entry.get("computed") or not entry.get("steps"):
        return None
    if entry.get("given"):
        return None
    return f"{answer[: number.start]}@{name}[{number.text}]{answer[number.end :]}"


# Seen: "@hour[2012-06-26T20:00:00.000000000]", an idxmax printed whole where the hour
# was asked. Only the parts a timestamp holds one way are taken (not a month or a day).
_TIMESTAMP = re.compile(r"(\d{4})-\d{2}-\d{2}(?:[T ](\d{2}):\d{2}(?::\d{2}(?:\.\d+)?)?)?")
_PARTS = {"hour": 2, "year": 1}


def _timestamp_part(answer: str, name: str, placeholder: str) -> str | None:
    """The answer with a date or timestamp given for ``@hour[…]`` or ``@year[…]`` put
    as that part of it, or a timestamp given for ``[YYYY-MM-DD]`` as its date (seen:
    ``@date[1998-12-31T00:00:00.000000000]``, a ``.values[0]`` printed), or ``None``."""
    group = _PARTS.get(name.lower())
    forms = [f for f in GIVEN_FORM.finditer(answer) if f.group(1) == name]
    if (group is None and placeholder != "yyyy-mm-dd") or len(forms) != 1:
        return None
    if group is not None and ("hh" in placeholder or "yyyy-mm-dd" in placeholder):
        return None  # @hour[YYYY-MM-DD HH:MM:SS]: the timestamp is what is asked
    form = forms[0]
    stamp = _TIMESTAMP.fullmatch(form.group(2).strip())
    if group is None:
        if stamp is None or stamp.group(2) is None:
            return None
        value = stamp.group(0)[:10]
    elif stamp is None or stamp.group(group) is None:
        return None
    else:
        value = str(int(stamp.group(group)))
    return f"{answer[: form.start()]}@{name}[{value}]{answer[form.end() :]}"


# One @value at the end of the answer or of a line (seen in run 14: "is:\n\n@Energía\n\n
# This is because …"), not an e-mail's @: a word or a number, with nothing after it on
# its line but a full stop; or a date with its time ("@2012-06-26 20:00:00", seen for
# @hour[YYYY-MM-DD HH:MM:SS]). Words with spaces are left: "@Food and drink" may be
# "@Food" and more words.
_BARE = re.compile(
    r"(?:^|(?<=[\s(:]))@(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?|-?[\w.,\-–]*\w)"
    r"(?=\.?[ \t]*(?:\n|$))"
)
_AT = re.compile(r"(?:^|(?<=[\s(:]))@")


def _json_value(answer: str, name: str) -> str:
    """The one scalar an answer that is only JSON gives under ``name``, or ``""``."""
    try:
        data = json.loads(only_block(answer) or answer)
    except ValueError:
        return ""
    if not isinstance(data, dict) or len(data) != 1:
        return ""
    key, value = next(iter(data.items()))
    if str(key).lower() != name.lower():
        return ""
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return ""
    text = str(value).strip()
    return text if text and "[" not in text and "]" not in text and "\n" not in text else ""


def _label_measure(written: str, inside: str, *, name: str, placeholder: str, printed: str) -> str:
    """``@NY[-74.42]`` for ``@state[code]``: a label the last cell printed where the name
    goes, one number inside, and the question asking for a label, not a number. The
    label as printed, or ``""``."""
    if (
        not LABEL_PLACEHOLDER.search(placeholder)
        or written.lower() == name.lower()
        or find_numbers(written)
    ):
        return ""
    numbers = find_numbers(inside)
    if len(numbers) != 1 or numbers[0].text != inside:
        return ""
    found = re.search(rf"(?<!\w){re.escape(written)}(?!\w)", printed, re.IGNORECASE)
    return found.group(0) if found else ""


def variable_form(question: str, answer: str, cells: list[tuple[str, str]]) -> str | None:
    """The answer with a form named after a variable put as the asked form, filled with
    what that variable printed, or ``None``.

    Seen: a cell ran ``print(total_rounded)`` and printed the right 2622527.9, and the
    model answered ``@total_rounded[0]`` where ``@total[value]`` was asked; sent back
    twice, it wrote the same. Only when the question asks for one form, the answer gives
    one under another name, and a cell of this answer (``cells``: code and stdout, in
    order) printed that variable and nothing else."""
    asked = list(dict.fromkeys(n for n, _ in ASKED_FORM.findall(question)))
    forms = list(GIVEN_FORM.finditer(answer))
    if len(asked) != 1 or len(forms) != 1 or forms[0].group(1).lower() == asked[0].lower():
        return None
    variable = forms[0].group(1)
    printed = re.compile(rf"^\s*print\(\s*{re.escape(variable)}\s*\)\s*$", re.MULTILINE)
    for code, stdout in reversed(cells):
        if printed.search(code) and len(re.findall(r"\bprint\(", code)) == 1:
            value = lone_value(stdout)
            if not value:
                return None
            form = forms[0]
            return f"{answer[: form.start()]}@{asked[0]}[{value}]{answer[form.end() :]}"
    return None
