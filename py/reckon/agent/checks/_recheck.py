"""When an answer goes back to the model before the person sees it.

Small models answer data questions with a confident guess: 10 of 20 benchmark
questions were answered at once with an invented value and no code. So an answer
is sent back, once, when files are attached and no code ran in this ask, or when
it states numbers that no step's output holds (``_grounding``), or when the
question asks for the ``@name[value]`` form and the answer lacks it. The model then
computes them, takes them back or restates the answer; what is still not computed is
marked for the person. Without files, an answer with numbers no code computed is set
aside and the next call asks, in place of the question, for a program that computes
it (``draft``): told what it did wrong, a small model argued for its first answer.
"""

from __future__ import annotations

import re

from reckon.agent._observe import trim_text, user_text
from reckon.agent._types import JSONDict
from reckon.agent.checks._date_parts import PART_MESSAGE
from reckon.agent.checks._date_strings import STRING_MESSAGE
from reckon.agent.checks._decided import DECISION_MESSAGE, NUMBER_GIVEN
from reckon.agent.checks._empty import EMPTY_RESULT, empty_message, empty_result, missing_again
from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM, filled
from reckon.agent.checks._grounding import find_numbers
from reckon.agent.checks._label_max import LABEL_MAX_MESSAGE
from reckon.agent.checks._left_out import LEFT_OUT_MESSAGE
from reckon.agent.checks._names import NAME_MESSAGE
from reckon.agent.checks._periods import PERIOD_MESSAGE
from reckon.agent.checks._row_number import ROW_NUMBER_MESSAGE
from reckon.agent.checks._unused import gives_quantities
from reckon.agent.models._code import unrun_blocks
from reckon.agent.models._retry import FRESH_START, REPEATED

__all__ = [
    "EMPTY_REPLY",
    "draft_request",
    "drafted",
    "is_question",
    "last_question",
    "opening_draft",
    "recheck_message",
]

EMPTY_REPLY = (
    "Your reply was empty. Run code that answers the question, or give the final answer "
    "from the output of the code you ran."
)

# Sent in place of the question after an answer that ran no code, the guess out of
# sight: shown its guess, the 1.5B model computed, then answered with the guess again
# ("@Other chemicals products" after a cell that printed 2001).
_NO_CODE = (
    "{question}\n\nYou have not run any code yet: compute the answer from the user's "
    "files with code first, then answer from its output."
)
# Without files too: the interpreter computes, the model does not. Told so after an
# answer worked out in its head, the 1.5B model apologised and worked it out in its
# head again (17 of 20 word problems ran no code). Asked for a program in place of the
# question, its first answer out of sight, it wrote one every time: 16 of 20 right,
# against 12 of its own answers. The loop sends this instead of the question, once.
_DRAFT = (
    "Write a short Python program that works out the answer to this question, one step "
    "per line with named variables, and prints the final answer.\n\nQuestion: {question}"
    "\n\nReply with one ```python block and nothing else."
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
# Kernel notes (reckon.kernel._notes) flag an output wrong without an error. Shown the
# note beside the output, the 1.5B model answered from the output (382 rows "not empty"
# after `!= 'nan'`, where 95 were), so the answer goes back once with the note.
_NOTED = (
    "Reckon noted on the output of your last code: {note} So the output your answer "
    "rests on may be wrong: run corrected code, then answer from its output."
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
# Not said when a form is filled under another name (seen: @mean_age[38.93], the first
# answer copied whole, where @first[value] was asked): "keep the name" keeps the wrong
# one. Naming both forms did not help either: the 1.5B model copied that sentence into
# its answer. Reckon does not move the value itself: another name may be another
# quantity (@mean given where @median was asked).
_SHOWN = 8


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
    row_number: str = "",
    column_value: str = "",
    name: str = "",
    decision: str = "",
    left_out: str = "",
    unused: str = "",
    note: str = "",
    ran_now: bool = False,
) -> tuple[str, str] | None:
    """``(kind, message)`` to send the answer back with, or ``None`` to let it stand.

    Each kind (``no-code``, ``draft``, ``unrun``, ``failed``, ``unused``, ``nothing``,
    ``missing``, ``row``, ``left-out``, ``note``, ``name``, ``decision``, ``ungrounded``,
    ``period``, ``format``) is asked at most once an ask (``asked``: those sent).
    ``last_output`` (the last cell's printed text) is quoted with the ungrounded
    numbers; ``last_error`` is the last cell's error; ``period`` is ``_periods``' message
    (a period question grouped by whole dates); ``row_number`` ``_row_number``'s (a
    row's number given for a name) or ``_label_max``'s (the largest label taken for the
    largest value's); ``column_value`` joins an answer of nothing when a column's name
    was compared as a value (``_empty``); ``name``: a name no output shows (``_names``);
    ``decision``: a rule's label no code decided (``_decided``); ``left_out``: the answer
    is what the question leaves out; ``note``: the kernel's notes on the last output;
    ``ran_code``: code ran in this conversation, ``ran_now``: in this ask.
    Without files, an answer that states a number the question does not, with no
    code run for it, is a ``draft``: the message is the request the next call sends in
    place of the question (``draft_request``); so is a ``no-code`` one, with files, and
    an ``unused`` one, the program asked for again with the numbers it left out."""
    if not ran_code and has_files and "no-code" not in asked:
        return "no-code", _NO_CODE.format(question=question.strip())
    if not has_files and "draft" not in asked and not ran_now:
        # Numbers no output holds: none was run for this question, or (after earlier
        # computations) the answer has numbers none of them printed.
        stated = states_numbers(answer, question)
        if stated and (not ran_code or grounding.get("ungrounded")):
            return "draft", draft_request(question)
    unrun = typed_not_ran(answer, grounding)
    if unrun and "unrun" not in asked:
        return "unrun", _UNRUN.format(what=unrun)
    if has_files and last_error and "failed" not in asked:
        return "failed", _FAILED.format(error=trim_text(last_error.strip(), 300))
    if unused and not has_files and ran_now and "unused" not in asked:
        return "unused", draft_request(question, note=unused)
    # Before the value's own checks: a cell Reckon put right answers them with its output.
    if period and "period" not in asked:
        return "period", period
    nothing = empty_result(answer, last_output) if has_files and ran_now else None
    if nothing is not None and "nothing" not in asked:
        # The kernel's note names why (the filter that matched no row): said here, as the
        # answer said again after this message stands before the note's own turn; a
        # column's name compared as a value says it already (``column_value``).
        told = bool(note) and ran_now and not column_value
        noted = " " + _NOTED.split(" So ", 1)[0].format(note=note) if told else ""
        return "nothing", empty_message(nothing) + column_value + noted
    again = missing_again(nothing) if nothing is not None else ""
    if again and "missing" not in asked:
        return "missing", again
    if row_number and "row" not in asked:
        return "row", row_number
    if left_out and ran_now and "left-out" not in asked:
        return "left-out", left_out
    if note and ran_now and "note" not in asked:
        return "note", _NOTED.format(note=note)
    if name and has_files and ran_now and "name" not in asked:
        message = NAME_MESSAGE.format(value=name)
        if last_output.strip():
            message += _LAST_OUTPUT.format(output=trim_text(last_output.strip(), _OUTPUT_LIMIT))
        return "name", message
    if decision and ran_now and "decision" not in asked:
        return "decision", decision
    missing = [str(n) for n in grounding.get("ungrounded") or []]
    if missing and "ungrounded" not in asked:
        unique = list(dict.fromkeys(missing))
        shown = ", ".join(unique[:_SHOWN]) + (" and more" if len(unique) > _SHOWN else "")
        message = _UNGROUNDED.format(numbers=shown)
        if last_output.strip():
            output = trim_text(last_output.strip(), _OUTPUT_LIMIT)
            message += _LAST_OUTPUT.format(output=output)
        return "ungrounded", message
    forms = [m.group(0) for m in ASKED_FORM.finditer(question)]
    if forms and "format" not in asked and not filled(question, answer):
        message = _FORMAT.format(form=" ".join(dict.fromkeys(forms)))
        return "format", message + _form_hint(forms, answer)
    return None


def _form_hint(asked: list[str], answer: str) -> str:
    """What the format message adds: to fill the form in, unless the answer gave none
    or gave one filled under another name."""
    given = list(GIVEN_FORM.finditer(answer))
    if not given:
        return ""
    form = GIVEN_FORM.fullmatch(asked[0])
    if form is None:
        return _FILL
    name, placeholder = form.group(1), form.group(2).strip()
    if len({form.lower() for form in asked}) == 1 and len(given) == 1:
        written, value = given[0].group(1), given[0].group(2).strip()
        # A filled value: @East[name] is the value where the name goes, a slip _FILL is for.
        if written.lower() != name.lower() and value.lower() not in ("", placeholder.lower()):
            return ""
    return _FILL


def draft_request(question: str, *, note: str = "") -> str:
    """What the next call asks in place of ``question``: a program that computes it
    (``note``: what went wrong with the one before, said after the question)."""
    return _DRAFT.format(question=question.strip() + (f"\n\n{note}" if note else ""))


def opening_draft(messages: list[JSONDict], *, has_files: bool) -> str:
    """The request an ask's first call sends in place of a word problem (no files, two
    given numbers or more), or ``""``. Asked the question itself, the 1.5B model
    answered from its head 19 times in 20 (the math set's grounded first answers: 5%),
    so every answer was set aside and the program asked for after it: one call in three
    was spent on a guess nobody saw."""
    question = last_question(messages)
    if has_files or not gives_quantities(question):
        return ""
    return draft_request(question)


def drafted(messages: list[JSONDict], draft: str) -> list[JSONDict]:
    """The history a call sends: as it is, or (a ``draft`` asked for) with the draft
    request in place of the person's last question and all that followed it."""
    at = next((i for i in reversed(range(len(messages))) if is_question(messages[i])), None)
    if not draft or at is None:
        return messages
    return [*messages[:at], {"role": "user", "content": draft}]


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
    if sum(c.isalpha() for c in ASKED_FORM.sub(" ", prose)) >= _WORDS:
        return ""
    if blocks:
        language = next((b for b in blocks if b), "")
        return f"a {language} block" if language else "a code block"
    return "a table you typed"


def is_question(message: JSONDict) -> bool:
    """A message the person wrote (not a cell's output or one of our rechecks)."""
    content = user_text(message)
    return content is not None and content != EMPTY_REPLY and not content.startswith(_OURS)


def last_question(messages: list[JSONDict]) -> str:
    """The person's last question in ``messages`` (not a cell's output or a recheck)."""
    return str(next((m["content"] for m in reversed(messages) if is_question(m)), ""))


# How each of our messages to the model begins (up to its first filled-in part). The
# requests sent in place of the question (``_DRAFT``, ``_NO_CODE``) are never kept in
# the history; the draft's start is listed all the same, as it always was.
_OURS = tuple(
    message.split("{", 1)[0]
    for message in (
        _DRAFT, _UNRUN, FRESH_START, _UNGROUNDED, _FAILED, EMPTY_RESULT, ROW_NUMBER_MESSAGE,
        NAME_MESSAGE, STRING_MESSAGE, _FORMAT, PERIOD_MESSAGE, PART_MESSAGE, REPEATED,
        LEFT_OUT_MESSAGE, _NOTED, LABEL_MAX_MESSAGE, DECISION_MESSAGE, NUMBER_GIVEN,
    )
)  # fmt: skip
