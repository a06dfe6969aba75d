"""When an answer goes back to the model before the person sees it.

Small models answer data questions with a confident guess: 10 of 20 benchmark
questions were answered at once with an invented value and no code. So an answer
is sent back, once, when files are attached and no code ran in this ask, or when
it states numbers that no step's output holds (``_grounding``), or when the
question asks for the ``@name[value]`` form and the answer lacks it. The model then
computes them, takes them back or restates the answer; what is still not computed is
marked for the person.
"""

from __future__ import annotations

import json
import re

from reckon.agent._observe import trim_text, user_text
from reckon.agent._types import JSONDict
from reckon.agent.checks._date_parts import PART_MESSAGE
from reckon.agent.checks._grounding import find_numbers
from reckon.agent.checks._periods import PERIOD_MESSAGE
from reckon.agent.models._code import unrun_blocks
from reckon.agent.models._fences import only_block
from reckon.agent.models._retry import FRESH_START

__all__ = ["EMPTY_REPLY", "is_question", "recheck_message", "repair_form"]

EMPTY_REPLY = (
    "Your reply was empty. Run code that answers the question, or give the final answer "
    "from the output of the code you ran."
)

_NO_CODE = (
    "You answered without running any code. Compute the answer from the user's files "
    "with code first, then answer from its output."
)
# Without files too: the interpreter computes, the model does not (a small model's
# mental arithmetic was wrong in 11 of 14 word problems it answered so).
_WORK_IT_OUT = (
    "You answered with numbers you did not compute. Work them out with Python code "
    "first (even simple arithmetic), then answer from its output."
)
# An answer that is only a block that did not run, or a table the model typed.
_UNRUN = (
    "Your reply is {what}, not an answer: nothing in it ran. To run code, reply with one "
    "```python block; otherwise give the answer in words, from the output of code you ran."
)
# Seen: after a failed cell a small model answers in prose, from nothing.
_FAILED = (
    "Your last code failed ({error}). Fix it and run the corrected code, then answer "
    "from its output."
)
_UNGROUNDED = (
    "These numbers in your answer appear in no output of the code you ran: {numbers}. "
    "Run code that prints them, or give the answer again without them."
)
# The last output, quoted under the list: a small model that answered with a guess
# written before the output came takes the right number when it sees it again.
_LAST_OUTPUT = "\nThe last output was:\n{output}"
_OUTPUT_LIMIT = 600
_FORMAT = (
    "The question asks for the answer in the form {form}. Give the final answer again, "
    "ending with exactly that form filled with the computed values."
)
# Said when the form is there but not filled in: small models copy `@total[value]`
# as it stands, or write the number where the name goes (`@127[value]`).
_FILL = " Keep the name before the brackets and put the computed value inside them."
_SHOWN = 8
_ASKED_FORM = re.compile(r"@[A-Za-z_]\w*\[[^\[\]]*\]")


def recheck_message(
    grounding: JSONDict,
    has_files: bool,
    ran_code: bool,
    *,
    question: str = "",
    answer: str = "",
    asked: frozenset[str] = frozenset(),
    last_output: str = "",
    last_error: str = "",
    period: str = "",
) -> tuple[str, str] | None:
    """``(kind, message)`` to send the answer back with, or ``None`` to let it stand.

    Each kind (``no-code``, ``unrun``, ``failed``, ``ungrounded``, ``period``,
    ``format``) is asked at most once an ask: ``asked`` holds those already sent.
    ``last_output`` (the last cell's printed text) is quoted with the ungrounded
    numbers; ``last_error`` is the error of the last cell when it failed; ``period`` is
    ``_periods``' message when the code grouped a period question by whole dates.
    Without files, an answer is sent back when no code ran and it states a number the
    question does not."""
    if not ran_code and "no-code" not in asked:
        if has_files:
            return "no-code", _NO_CODE
        if states_numbers(answer, question):
            return "no-code", _WORK_IT_OUT
    unrun = typed_not_ran(answer, grounding)
    if unrun and "unrun" not in asked:
        return "unrun", _UNRUN.format(what=unrun)
    if has_files and last_error and "failed" not in asked:
        return "failed", _FAILED.format(error=trim_text(last_error.strip(), 300))
    missing = [str(n) for n in grounding.get("ungrounded") or []]
    if missing and "ungrounded" not in asked:
        unique = list(dict.fromkeys(missing))
        shown = ", ".join(unique[:_SHOWN]) + (" and more" if len(unique) > _SHOWN else "")
        message = _UNGROUNDED.format(numbers=shown)
        if last_output.strip():
            output = trim_text(last_output.strip(), _OUTPUT_LIMIT)
            message += _LAST_OUTPUT.format(output=output)
        return "ungrounded", message
    if period and "period" not in asked:
        return "period", period
    forms = _ASKED_FORM.findall(question)
    if forms and "format" not in asked and not _filled(question, answer):
        message = _FORMAT.format(form=" ".join(dict.fromkeys(forms)))
        return "format", message + (_FILL if _GIVEN_FORM.search(answer) else "")
    return None


_NAMED = re.compile(r"@([A-Za-z_]\w*)\[([^\[\]]*)\]")
_GIVEN_FORM = re.compile(r"@([^\s\[\]@]+)\[([^\[\]]*)\]")


def _filled(question: str, answer: str) -> bool:
    """Does ``answer`` fill every ``@name[…]`` the question asks for, under its name and
    with something other than the question's placeholder?"""
    given: dict[str, list[str]] = {}
    for name, value in _GIVEN_FORM.findall(answer):
        given.setdefault(name.lower(), []).append(value.strip().lower())
    for name, placeholder in _NAMED.findall(question):
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
    3.17. @mean[value]``). The value is the model's own; grounding still checks it. A
    form copied unfilled with no number beside it takes ``last_value``, the output of
    the last cell that ran, when that output is one value (``North``)."""
    asked = list(dict.fromkeys((n, p.strip().lower()) for n, p in _NAMED.findall(question)))
    if len(asked) != 1:
        return None
    name, placeholder = asked[0]
    if _filled(question, answer):
        return _timestamp_part(answer, name)
    forms = list(_GIVEN_FORM.finditer(answer))
    if not forms:
        value = _json_value(answer, name)
        if value:
            return f"@{name}[{value}]"
        bare = _BARE.search(answer)
        if bare is None or len(_AT.findall(answer)) != 1:
            return None
        # "@East", "... is @41.8.": the value with the name and brackets left out.
        return f"{answer[: bare.start()]}@{name}[{bare.group(1)}]{answer[bare.end(1) :]}"
    if len(forms) != 1:
        return None
    form = forms[0]
    inside = form.group(2).strip()
    if inside.lower() not in (placeholder, ""):
        return None
    written = form.group(1)
    numbers = find_numbers(written)
    if len(numbers) == 1 and numbers[0].text == written:
        value = written  # @3.17[value]
    elif written.lower() == name.lower():
        computed = {
            str(n["text"]) for n in grounding.get("numbers") or []
            if n.get("computed") and not n.get("given") and n.get("steps")
        }  # fmt: skip
        if len(computed) == 1:
            value = computed.pop()
        elif not computed and _lone_value(last_value):
            value = _lone_value(last_value)  # the form alone, after a cell printed one value
        else:
            return None
    else:
        return None
    return f"{answer[: form.start()]}@{name}[{value}]{answer[form.end() :]}"


# Seen: "@hour[2012-06-26T20:00:00.000000000]", an idxmax printed whole where the hour
# was asked. Only the parts a timestamp holds one way are taken (not a month or a day).
_TIMESTAMP = re.compile(r"(\d{4})-\d{2}-\d{2}(?:[T ](\d{2}):\d{2}(?::\d{2}(?:\.\d+)?)?)?")
_PARTS = {"hour": 2, "year": 1}


def _timestamp_part(answer: str, name: str) -> str | None:
    """The answer with a date or timestamp given for ``@hour[…]`` or ``@year[…]`` put
    as that part of it, or ``None``."""
    group = _PARTS.get(name.lower())
    forms = [f for f in _GIVEN_FORM.finditer(answer) if f.group(1) == name]
    if group is None or len(forms) != 1:
        return None
    form = forms[0]
    stamp = _TIMESTAMP.fullmatch(form.group(2).strip())
    if stamp is None or stamp.group(group) is None:
        return None
    return f"{answer[: form.start()]}@{name}[{int(stamp.group(group))}]{answer[form.end() :]}"


# One @value at the end of the answer, not an e-mail's @: a word or a number, with
# nothing after it but a full stop. A value with spaces ("@Food and drink") is not
# taken: where it ends cannot be told.
_BARE = re.compile(r"(?:^|(?<=[\s(:]))@(-?[\w.,\-–]*\w)(?=\.?\s*$)")
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


def _lone_value(output: str) -> str:
    """The one value a cell's output is (``North``, ``'North'``, ``42.5``), or ``""``
    when it is more than one (a table, a Series, several lines, a tuple)."""
    text = output.strip()
    if "\n" in text or not text or len(text) > 60 or text[0] in "([{<":
        return ""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    return text if text and "[" not in text and "]" not in text else ""


def states_numbers(answer: str, question: str) -> bool:
    """Whether ``answer`` states a number that ``question`` does not (list markers and
    code spans are not statements)."""
    given = {n.value for n in find_numbers(question)}
    prose = _LIST_MARKER.sub(" ", _CODE_SPAN.sub(" ", answer))
    return any(n.value not in given for n in find_numbers(prose))


_LIST_MARKER = re.compile(r"^[ \t]*\d+[.)][ \t]", re.MULTILINE)
_CODE_SPAN = re.compile(r"```.*?(?:```|$)|`[^`\n]+`", re.DOTALL)
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}", re.MULTILINE)
_WORDS = 40  # letters of prose that make a reply an answer beside a block or table


def typed_not_ran(answer: str, grounding: JSONDict) -> str:
    """What ``answer`` is when it is only code that did not run, or a table of numbers
    the model typed (some not computed), with hardly a word beside it; else ``""``."""
    blocks = unrun_blocks(answer)
    table = bool(_TABLE_RULE.search(answer)) and len(_TABLE_ROW.findall(answer)) >= 2
    if not blocks and not (table and grounding.get("ungrounded")):
        return ""
    prose = _TABLE_ROW.sub(" ", _CODE_SPAN.sub(" ", answer))
    if sum(c.isalpha() for c in _ASKED_FORM.sub(" ", prose)) >= _WORDS:
        return ""
    if blocks:
        language = next((b for b in blocks if b), "")
        return f"a {language} block" if language else "a code block"
    return "a table you typed"


def is_question(message: JSONDict) -> bool:
    """A message the person wrote (not a cell's output or one of our rechecks)."""
    content = user_text(message)
    return (
        content is not None
        and content not in (_NO_CODE, _WORK_IT_OUT, EMPTY_REPLY)
        and not content.startswith(_UNRUN.split("{", 1)[0])
        and not content.startswith(FRESH_START.split("{", 1)[0])
        and not content.startswith(_UNGROUNDED.split("{", 1)[0])
        and not content.startswith(_FAILED.split("{", 1)[0])
        and not content.startswith(_FORMAT.split("{", 1)[0])
        and not content.startswith(PERIOD_MESSAGE.split("{", 1)[0])
        and not content.startswith(PART_MESSAGE.split("{", 1)[0])
    )
