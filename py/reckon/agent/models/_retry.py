"""A run of failed cells: when to go on, when to start again fresh, when to give up.

A small model patching its own failed cell tends to patch the patch: the third try
carries the first two's mistakes (six of nine misses on a hidden set were errors the
error itself named, unfixed in three tries). So after two failures in a row the
failed attempts leave the history and the model is told, in one message, what went
wrong each time (with the kernel's hints), and writes the code again from the last
good state. And an answer gives up only when the failures stop being different:
three in a row of which the newest repeats an earlier error, or twice the limit.

The same goes for a cell that runs without error: a small model that ran the same
code with the same output keeps doing so (seen: eleven times, to the call limit), with
the history full of the exchange it copies. So the repeat leaves the history, one
message says what it is and asks the question again, and the fourth run in a row of
the same code ends the answer; when the kernel noted that output, the message gives the
note again and asks for the change it names. (A cell that printed the asked form
filled gives its answer without another call: ``checks/_printed``.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reckon.agent._steps import Progress
from reckon.agent._types import JSONDict

__all__ = [
    "FRESH_START",
    "REPEATED",
    "cut_repeat",
    "gives_up",
    "repeats_out",
    "start_fresh",
]

FRESH_START = "Your code failed {count} times in a row:"
_AGAIN = (
    "Start again from the question: write new code, from the variables as they were "
    "before these attempts, that avoids these errors."
)
_AFTER = 2  # failures in a row before the fresh start
REPEATED = "You ran the same code again, with the same output as before ({count} times now)."
_ANSWER_NOW = (
    "Running it again will not change it. Give the final answer from that output now, "
    "or, if it does not answer the question, write different code that does."
)
# Seen: a cell with two kernel notes run four times unchanged, then the stop; told to
# answer from the output, the model had nothing it trusted to answer with.
_NOTED = (
    "Reckon's note on that output still holds: {notes} Running the same code again will "
    "not change it: change the code as the note says, run it, then answer from its output."
)
_MOST_REPEATS = 3  # the fourth run in a row of the same cell ends the answer
# Seen: "How many cells hold asterisks?" answered by a count per row, printed four times:
# the model had no single number to give and no idea what else to write.
_REDUCE = (
    " Its output is {count} values, one per row or group, and the question asks for one "
    "number: reduce them to it (for example .sum() over the values) and print that."
)
_SERIES_LENGTH = re.compile(r"^Length: (\d+), dtype: \w+", re.MULTILINE)
_ONE_NUMBER = re.compile(
    r"@\w+\[(?:value|number|count|total|n)\]|\bhow many\b|\b(?:the )?(?:total|sum)\b", re.I
)


def start_fresh(progress: Progress, messages: list[JSONDict]) -> bool:
    """After the second failure in a row (once a run of failures): the failed
    attempts cut from ``messages`` and one message listing their errors put in their
    place. Whether it was done."""
    if progress.failures != _AFTER or progress.restarted or progress.streak_start is None:
        return False
    errors = progress.streak_errors
    listed = "\n".join(f"{n}. {error}" for n, error in enumerate(errors, start=1))
    del messages[progress.streak_start :]
    messages.append(
        {"role": "user", "content": f"{FRESH_START.format(count=len(errors))}\n{listed}\n{_AGAIN}"}
    )
    progress.restarted = True
    return True


def gives_up(progress: Progress, max_failures: int) -> str:
    """Why the run of failures ends the answer, or ``""`` while it goes on."""
    if progress.failures < max_failures:
        return ""
    errors = progress.streak_errors
    if progress.failures < 2 * max_failures and errors[-1] not in errors[:-1]:
        return ""
    return (
        f"The code failed {progress.failures} times in a row, so I stopped. "
        f"Last error: {progress.last_error}"
    )


def cut_repeat(
    repeats: int,
    messages: list[JSONDict],
    progress: Progress,
    question: str,
    results: Sequence[tuple[str, JSONDict]] = (),
) -> bool:
    """After a reply that ran the last cell again with the same output (``repeats``:
    how many times in a row, from ``Cells``; ``results``: the reply's cells and what
    they gave): that exchange cut from ``messages`` and one message in its place; when
    the kernel noted the output, the exchange it repeats goes too. Whether it was done."""
    if repeats < 1 or not results or results[-1][1].get("status") != "ok":
        return False  # a failed cell's repeat is the run of failures' (``start_fresh``)
    repeated, mark = progress.ok_marks  # where the two replies began (``Progress.tally``)
    output = str(results[-1][1].get("stdout") or "")
    notes = results[-1][1].get("notes")
    noted = " ".join(str(n) for n in notes) if isinstance(notes, list) else ""
    # Seen: a noted cell run four times, the note said each time: the model copies the
    # code it sees. Out of view, it wrote the cell again (in one of two such loops).
    cut = repeated if noted and repeats == 1 and repeated is not None else mark
    if cut is None:
        return False
    del messages[cut:]
    if messages and str(messages[-1].get("content", "")).startswith(REPEATED[:30]):
        messages.pop()  # the note after the last repeat: one note says it all
    asked = f"\nThe question: {question}" if question else ""
    then = _NOTED.format(notes=noted) if noted else _ANSWER_NOW + _reduce(output, question)
    said = f"{REPEATED.format(count=repeats + 1)} {then}{asked}"
    messages.append({"role": "user", "content": said})
    return True


def repeats_out(repeats: int) -> str:
    """The message that ends an answer whose model keeps running one cell, or ``""``."""
    if repeats < _MOST_REPEATS:
        return ""
    return (
        f"The model ran the same code {repeats + 1} times in a row, with the same output, "
        "without answering, so I stopped."
    )


def _reduce(output: str, question: str) -> str:
    """``_REDUCE`` when ``output`` is a long pandas Series and ``question`` asks for one
    number, else ``""``."""
    length = _SERIES_LENGTH.search(output)
    if length is None or not _ONE_NUMBER.search(question):
        return ""
    return _REDUCE.format(count=length.group(1))
