"""Tracing every number of an answer to the step output that computed it.

A number in the answer is *computed* when some code step's output (printed text,
the value shown, a SQL table, a figure's description, the values a silent cell
assigned) holds the same number at the precision the answer shows it: ``41.2`` is
traced to ``41.2371``, ``1,235`` to ``1234.6``, ``12.5%`` to ``0.125`` or ``12.5``.
Numbers the person gave (in the question or in a file or column name) count as
given, and so do small counts and list markers (0 to 10, ``1.``): flagging them
would bury the real misses.

A date (``2012-06-24``, with its time when written) is traced the same way: to an
output that holds that day, and that time if the answer gives one.

A number the cell itself wrote as a literal (``print(23.45)``) is not computed by it.
Everything else is *not computed*: the agent asks the model once to compute it or
take it back, and the page marks what is left.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reckon.agent._types import JSONDict

__all__ = [
    "Number",
    "find_dates",
    "find_numbers",
    "ground_answer",
    "step_outputs",
    "step_sources",
]

_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+−]?)(?P<body>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?P<exp>[eE][-+]?\d+)?(?P<percent>\s?%)?(?![\w])"
)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b")
_LIST_MARKER = re.compile(r"^[ \t]*\d+[.)][ \t]", re.MULTILINE)
# Code in an answer is quoted, not claimed: `17*23+4`, a fenced snippet.
# Quoted phrases are examples, not claims ("is 97 prime", “2**100”).
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]+`|\"[^\"\n]{1,160}\"|“[^”\n]{1,160}”", re.DOTALL)
_PAIR_VALUE = re.compile(r"@[A-Za-z_]\w*\[([^\[\]]*)\]")
_SMALL = 10


@dataclass(frozen=True)
class Number:
    """A number as written: where, its value, the decimals shown, a percent sign."""

    text: str
    start: int
    end: int
    value: float
    decimals: int | None  # None: exponent notation (compare by tolerance)
    percent: bool


def find_numbers(text: str) -> list[Number]:
    """Every number written in ``text`` (dates and times are left out)."""
    blocked = [m.span() for m in _DATE.finditer(text)]
    found: list[Number] = []
    for match in _NUMBER.finditer(text):
        start, end = match.span()
        if any(a <= start < b for a, b in blocked):
            continue
        body = match.group("body").replace(",", "")
        exponent = match.group("exp") or ""
        try:
            value = float(body + exponent)
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        if match.group("sign") in ("-", "−"):
            value = -value
        decimals = None if exponent else (len(body.split(".", 1)[1]) if "." in body else 0)
        percent = bool(match.group("percent"))
        found.append(Number(match.group(0).strip(), start, end, value, decimals, percent))
    return found


def _same(answer: Number, source: Number) -> bool:
    """Whether ``source`` (from an output) is ``answer`` at the precision shown."""
    wanted = [(abs(answer.value), 0)]
    if answer.percent and not source.percent:
        wanted.append((abs(answer.value) / 100, 2))  # 12.5% is 0.125 in an output
    have = abs(source.value)
    for want, shift in wanted:
        if math.isclose(want, have, rel_tol=1e-9, abs_tol=1e-12):
            return True
        if answer.decimals is None:  # 1.5e-05: the mantissa's shown digits
            mantissa = answer.text.lower().split("e", 1)[0]
            digits = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
            if math.isclose(float(f"{have:.{digits}e}"), want, rel_tol=1e-9):
                return True
            continue
        places = answer.decimals + shift
        if math.isclose(round(have, places), want, rel_tol=1e-9, abs_tol=10.0 ** -(places + 3)):
            return True
        # Significant figures: 1.23 million written as 1230000, 45,000 for 44,987.
        zeros = _trailing_zeros(want) if answer.decimals == 0 and want >= 1000 else 0
        if zeros >= 2 and math.isclose(round(have, -zeros), want, rel_tol=1e-9):
            return True
    return False


def _trailing_zeros(value: float) -> int:
    digits = str(int(value))
    return len(digits) - len(digits.rstrip("0"))


def step_sources(steps: Iterable[JSONDict]) -> list[tuple[int | None, str]]:
    """The output text of each code step: ``(index, text)`` (index None: an earlier ask)."""
    return [(index, _without_literals(text, code)) for index, code, text in step_outputs(steps)]


def step_outputs(steps: Iterable[JSONDict]) -> list[tuple[int | None, str, str]]:
    """``(index, code, output)`` of each code step the model wrote: its printed text,
    value, figure descriptions and assigned values."""
    found: list[tuple[int | None, str, str]] = []
    for step in steps:
        result = step.get("result")
        if step.get("kind") != "code" or not isinstance(result, dict):
            continue
        if step.get("origin") == "reckon":  # a table Reckon loaded: the model never saw it
            continue
        parts = [str(result.get("stdout") or "")]
        value = result.get("result")
        if isinstance(value, dict):
            parts.append(str(value.get("text") or ""))
        for figure in result.get("figures") or []:
            if isinstance(figure, dict):
                parts.append(str(figure.get("description") or ""))
        for assigned in result.get("assigned") or []:
            if isinstance(assigned, dict):
                parts.append(str(assigned.get("text") or ""))
        index = step.get("index")
        code = str(step.get("code") or "")
        found.append((index if isinstance(index, int) else None, code, "\n".join(parts)))
    return found


def _without_literals(output: str, code: str) -> str:
    """``output`` with the numbers its own cell wrote as literals blanked out: a cell
    that prints ``23.45`` it was given (``print(23.45)``) computed nothing. Small
    counts stay, like everywhere here (``round(x, 2)`` does not hide a 2)."""
    dates = {d[2] for d in find_dates(code)}
    if dates:
        output = "".join(
            " " * (end - start) if canonical in dates else output[start:end]
            for start, end, canonical in _pieces(output)
        )
    literals = {n.value for n in find_numbers(code) if not _is_small_count(n)}
    if not literals:
        return output
    kept: list[str] = []
    last = 0
    for number in find_numbers(output):
        if number.value in literals or -number.value in literals:
            kept += [output[last : number.start], " " * (number.end - number.start)]
            last = number.end
    return "".join(kept) + output[last:]


def ground_answer(
    answer: str, sources: list[tuple[int | None, str]], *, given: Iterable[str] = ()
) -> JSONDict:
    """``{numbers: [{text, start, end, steps, computed}], ungrounded: [text]}``.

    ``sources`` are ``(step index, output text)``; ``given`` are texts whose numbers
    the person supplied (questions, file and column names).
    """
    given = list(given)
    outputs = [(index, find_numbers(text) + _date_parts(text)) for index, text in sources]
    supplied = [n for text in given for n in find_numbers(text)]
    markers = {m.end() - 2 for m in _LIST_MARKER.finditer(answer)}
    code = [m.span() for m in _CODE.finditer(answer)]
    # A value in the @name[value] form is the answer itself: never a mere count.
    claimed = [m.span(1) for m in _PAIR_VALUE.finditer(answer)]
    numbers: list[JSONDict] = []
    for number in find_numbers(answer):
        if any(a <= number.start < b for a, b in code):
            continue
        steps = sorted(
            {i for i, found in outputs if i is not None and any(_same(number, s) for s in found)}
        )
        earlier = any(i is None and any(_same(number, s) for s in found) for i, found in outputs)
        computed = bool(steps) or earlier
        in_pair = any(a <= number.start < b for a, b in claimed)
        exempt = not in_pair and (
            _is_small_count(number) or any(number.end - 1 <= m <= number.end for m in markers)
        )
        if not computed and not exempt and any(_same(number, s) for s in supplied):
            exempt = True
        entry: JSONDict = {
            "text": number.text,
            "start": number.start,
            "end": number.end,
            "steps": steps,
            "computed": computed or exempt,
        }
        if not computed and exempt:
            entry["given"] = True
        numbers.append(entry)
    numbers += _ground_dates(answer, sources, list(given), code)
    numbers.sort(key=lambda entry: int(entry["start"]))
    ungrounded = [str(entry["text"]) for entry in numbers if not entry["computed"]]
    return {"numbers": numbers, "ungrounded": ungrounded}


_FULL_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2})(?::(\d{2}))?)?\b")


def find_dates(text: str) -> list[tuple[int, int, str]]:
    """Each ``YYYY-MM-DD`` date (with its time, if written) in ``text``: ``(start, end,
    canonical)``, the canonical form without the ``T`` and without ``:00`` seconds."""
    found = []
    for match in _FULL_DATE.finditer(text):
        day, clock, seconds = match.groups()
        canonical = day if clock is None else f"{day} {clock}"
        if seconds not in (None, "00"):
            canonical += f":{seconds}"
        found.append((match.start(), match.end(), canonical))
    return found


def _pieces(text: str) -> list[tuple[int, int, str]]:
    """``text`` cut into its dates (with their canonical form) and the text between."""
    pieces, last = [], 0
    for start, end, canonical in find_dates(text):
        pieces += [(last, start, ""), (start, end, canonical)]
        last = end
    return [*pieces, (last, len(text), "")]


def _date_forms(text: str) -> set[str]:
    return {form for d in find_dates(text) for form in (d[2], d[2][:10])}


def _ground_dates(
    answer: str,
    sources: list[tuple[int | None, str]],
    given: list[str],
    skip: list[tuple[int, int]],
) -> list[JSONDict]:
    """A date is a claim like a number (``the peak was at 2012-06-24 14:00``): computed
    when an output holds the same date and time, given when the question names it."""
    # A date written without its time is any time of that day.
    outputs = [(index, _date_forms(text)) for index, text in sources]
    supplied = {form for text in given for form in _date_forms(text)}
    entries: list[JSONDict] = []
    for start, end, canonical in find_dates(answer):
        if any(a <= start < b for a, b in skip):
            continue
        steps = sorted({i for i, dates in outputs if i is not None and canonical in dates})
        earlier = any(i is None and canonical in dates for i, dates in outputs)
        entry: JSONDict = {"text": answer[start:end], "start": start, "end": end, "steps": steps,
                           "computed": bool(steps) or earlier or canonical in supplied}  # fmt: skip
        if not (steps or earlier) and canonical in supplied:
            entry["given"] = True
        entries.append(entry)
    return entries


def _date_parts(text: str) -> list[Number]:
    """The year and the hour of each printed date: an answer may state them alone
    ("the peak was in 2012, at 20:00"; ``@hour[20]``) from an output that printed the
    whole timestamp."""
    parts = []
    for match in _FULL_DATE.finditer(text):
        year, start = match.group(1)[:4], match.start()
        parts.append(Number(year, start, start + 4, float(year), 0, False))
        if match.group(2):
            hour, at = match.group(2)[:2], match.start(2)
            parts.append(Number(hour, at, at + 2, float(hour), 0, False))
    return parts


def _is_small_count(number: Number) -> bool:
    return number.decimals == 0 and not number.percent and abs(number.value) <= _SMALL
