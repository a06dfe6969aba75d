"""A word problem's numbers that its program never uses.

Without files, Reckon asks the model for a program that works the answer out. In the
math set, four of the six wrong answers came from programs that left out a number the
question gives ("in 4 weeks", "5 pizzas", "Four roommates", "8:00 in the evening"),
while the arithmetic of what they did use was right. So once an ask, when the program
that ran uses none of the literals a given number could be written as, the answer is
set aside and a program is asked for again, the first one out of sight, with those
numbers and the words around them. A fraction in words counts as used when the
program writes it (2/3, ``2 * x / 3``, 0.67), or, when the question asks what is left,
the other part. Told instead "fix it, or give the same answer
again", the 1.5B model gave the same answer all four times. A number the answer does
not depend on costs one more program: the next answer stands.

Only without files: with a table, the question's numbers are often years or names of
columns, used as strings or not at all.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable

from reckon.agent.checks._grounding import find_numbers

__all__ = ["UNUSED_MESSAGE", "gives_quantities", "unused_numbers"]

UNUSED_MESSAGE = (
    "A program written for it before did not use {numbers} from the question: work "
    "every number the question gives into the program."
)
# Number words a word problem gives counts in ("Eight friends", "twice"); a word before
# a fraction ("three quarters", "two thirds") is the fraction's (``_FRACTION``).
_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twice": 2, "double": 2,
    "triple": 3, "dozen": 12,
}  # fmt: skip
# "the other three", "the two of them": a count given before, named again.
_WORD = re.compile(
    r"(?<!\bthe )(?<!\bother )\b(" + "|".join(_WORDS) + r")\b"
    r"(?![\s-]+(?:halves|thirds?|quarters?|fourths?|fifths?|sixths?|eighths?|tenths?)\b)",
    re.I,
)
# "saves two thirds of": written 2/3, 2 * x / 3 or 0.67; seen as `x / 3`, one third.
# One part is a fraction only before "of" ("a third worker" is not), and not of an
# hour ("a quarter of an hour" is written as 15); a half is left out ("half an hour").
_PARTS = {"third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6, "eighth": 8, "tenth": 10}
_FRACTION = re.compile(
    r"\b(?:(?:a|one)[\s-]+(?P<one>" + "|".join(_PARTS) + r")(?=\s+of\b(?!\s+an?\s+hour))"
    r"|(?P<count>"
    + "|".join(list(_WORDS)[:9])
    + r")[\s-]+(?P<parts>"
    + "|".join(_PARTS)
    + r")s\b)",
    re.I,
)
_REST = re.compile(r"\b(?:left|rest|remain\w*)\b", re.I)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_YEAR = range(1900, 2101)  # "in 2020": a date, rarely a quantity the answer needs
_SHOWN = 4


def unused_numbers(question: str, codes: Iterable[str]) -> str:
    """The message for the numbers ``question`` gives that none of ``codes`` (the
    cells that ran for it) uses, or ``""`` (all used, or code that does not parse)."""
    written = _literals(codes)
    if written is None or not written[0]:
        return ""
    literals, ratios = written
    given = _given(question)
    values = [entry[0] for entry in given]
    if len(set(values)) < 2:  # one number: a label more often than a quantity
        return ""
    # A product written out (two $100 notes as 200, 14 trays of 12 as 168) uses both.
    products = {
        value
        for i, a in enumerate(values)
        for b in values[i + 1 :]
        if any(math.isclose(a * b, literal, rel_tol=1e-9) for literal in literals)
        for value in (a, b)
    }
    missing: dict[float, str] = {}
    for value, start, end, kind in given:
        if kind == "fraction":
            # What is left of a whole ("sells three quarters ... how many are left") is
            # the other part: 168 / 4.
            wanted = [value, 1 - value] if _REST.search(question) else [value]
            forms = literals | ratios
            if not any(math.isclose(w, r, rel_tol=0.02) for w in wanted for r in forms):
                missing[value] = _context(question, start, end)
            continue
        if value in missing or value in products or _used(value, kind, literals):
            continue
        missing[value] = _context(question, start, end)
    if not missing:
        return ""
    shown = list(missing.values())[:_SHOWN]
    numbers = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return UNUSED_MESSAGE.format(numbers=numbers)


def gives_quantities(question: str) -> bool:
    """Whether ``question`` reads as a word problem: it gives two numbers or more. One
    number is more often a label ("ask 12", "question 5") than a quantity."""
    return len({entry[0] for entry in _given(question)}) >= 2


def _given(question: str) -> list[tuple[float, int, int, str]]:
    """``(value, start, end, kind)`` of each number ``question`` gives that a program
    would write: digits (kind ``number`` or ``percent``), counts in words, a time's
    ``hour``, a fraction in words (``fraction``)."""
    found = [
        (n.value, n.start, n.end, "percent" if n.percent else "number")
        for n in find_numbers(question)
        if abs(n.value) > 1 and not (n.decimals == 0 and n.value in _YEAR and "," not in n.text)
    ]
    for word in _WORD.finditer(question):
        found.append((float(_WORDS[word.group(1).lower()]), *word.span(), "number"))
    for match in _FRACTION.finditer(question):
        count = _WORDS[match["count"].lower()] if match["count"] else 1
        part = _PARTS[(match["one"] or match["parts"]).lower()]
        found.append((count / part, *match.span(), "fraction"))
    for match in _TIME.finditer(question):
        hour = float(match.group(1))
        if hour > 1:
            found.append((hour, match.start(), match.end(), "hour"))
    return sorted(found, key=lambda entry: entry[1])


def _literals(codes: Iterable[str]) -> tuple[set[float], set[float]] | None:
    """The numbers ``codes`` write (literals, and strings that are only a number: '2021'
    as a key; comments and other text left out), and the fractions their products
    write (``2 * x / 3`` as 2/3); None when one does not parse. Read from the syntax
    tree, so that an f-string's ``{4}`` counts on every Python."""
    values: set[float] = set()
    ratios: set[float] = set()
    for code in codes:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return None
        for node in ast.walk(tree):
            value = _number(node)
            if value is not None:
                values.add(value)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
                above, below = _product(node, ([], []))
                ratios.update(a / b for a in [1.0, *above] for b in below if b)
    return values, ratios


def _number(node: ast.AST) -> float | None:
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return None
    value = node.value
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _product(
    node: ast.AST, found: tuple[list[float], list[float]], *, below: bool = False
) -> tuple[list[float], list[float]]:
    """The numbers a product of ``*`` and ``/`` multiplies by and divides by, its
    names and other terms left out."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
        _product(node.left, found, below=below)
        _product(node.right, found, below=below != isinstance(node.op, ast.Div))
    elif (value := _number(node)) is not None:
        found[below].append(value)
    return found


def _used(value: float, kind: str, literals: set[float]) -> bool:
    """Whether ``value`` is among ``literals`` as it is, as a fraction when a percent,
    an hour plus 12 (8:00 in the evening as 20), or as the whole or the part of an hour
    of a decimal (2 hours 15 minutes as 2.25)."""
    wanted = [value, value / 100] if kind == "percent" else [value]
    if kind == "hour":
        wanted.append(value + 12)  # in the afternoon or evening
    for literal in literals:
        for want in wanted:
            if math.isclose(literal, want, rel_tol=1e-9):
                return True
        whole = math.floor(literal)
        part = literal - whole
        if part and (whole == value or (value < 60 and math.isclose(part, value / 60))):
            return True
    return False


def _context(question: str, start: int, end: int) -> str:
    """The number as written, with the word before it and up to two after (to the end
    of the clause), quoted."""
    while start > 0 and not question[start - 1].isspace():
        start -= 1
    before = question[:start].split()[-1:]
    after: list[str] = []
    for word in question[end:].split()[:2]:
        after.append(word)
        if word[-1] in ",.;:?!":
            break
    words = " ".join([*before, question[start:end], *after]).strip(" ,.;:?!")
    return f"{question[start:end].strip()} ({words!r})"
