"""A name the answer gives that no output shows: ``@function[Legislación]`` when no
cell printed "Legislación".

Numbers are traced to the outputs that printed them (``_grounding``); names were not.
Seen in the fifth real-model run: "Which function has the largest 'Gasto total 2011'?"
answered ``@function[Legislación]``, a name from the file's first rows that no cell
printed (the cells had printed a row's number). Such an answer goes back once, asking
for the name to be printed from the data. Words a printed number stands for (a month,
a weekday, yes or no) are left alone: ``3`` printed for "Which month…?" is March.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from reckon.agent.checks._form import ASKED_FORM, GIVEN_FORM

__all__ = ["NAME_MESSAGE", "plain", "unprinted_name"]

NAME_MESSAGE = (
    "Your answer gives {value}, but no output of the code you ran shows it, so it was "
    "not computed. Print the name from the data (for example the row or group your "
    "code picked, with the column that holds the names), then answer from that output."
)
# Words a printed number can stand for.
_NUMBER_WORDS = frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday", "mon", "tue", "tues", "wed", "thu", "thur", "thurs",
    "fri", "sat", "sun", "yes", "no", "true", "false", "none", "nan",
))  # fmt: skip
_BARE = re.compile(r"(?:^|(?<=[\s(:]))@([^\W\d_][^@\[\]\n]*?)\.?\s*$")
_STRING = re.compile(r"""(['"])((?:\\.|(?!\1)[^\\\n])*)\1""")
# pandas cuts a long text in a printed table to its first characters and "...".
_CUT = 16


def unprinted_name(question: str, answer: str, cells: Iterable[tuple[str, str]]) -> str:
    """The value ``answer`` gives in a form ``question`` asks for when it is a name (it
    has letters, and is not a number's word) that neither the question nor any cell's
    output shows; else ``""``. ``cells`` are ``(code, output)``; a cell whose code writes
    the name as a string (``print("Energía")``) does not show it: it was typed, not
    computed. Case, accents, quotes and spacing do not count."""
    asked = {name.lower() for name, _ in ASKED_FORM.findall(question)}
    if not asked:
        return ""
    given = [(str(n).lower(), str(v).strip()) for n, v in GIVEN_FORM.findall(answer)]
    values = [v for n, v in given if n in asked or len(given) == 1]
    bare = _BARE.search(answer) if not given and len(asked) == 1 else None
    if bare:  # "… is @Other chemicals products.": the form without its brackets
        values = [bare.group(1).strip()]
    names = [v for v in values if _is_name(v)]
    if not names:
        return ""
    shown = [(plain(_literals(code)), plain(output)) for code, output in cells]
    asked_text = plain(question)
    for value in names:
        loose = plain(value)
        if loose in asked_text:
            continue
        if not any(_shown(loose, text) and loose not in wrote for wrote, text in shown):
            return value
    return ""


def _literals(code: str) -> str:
    """The text of the string literals of ``code``, one a line."""
    return "\n".join(str(m.group(2)) for m in _STRING.finditer(code))


def _is_name(value: str) -> bool:
    words = re.findall(r"[^\W\d_]+", value)
    if sum(len(w) for w in words) < 2:
        return False
    return not all(w.lower() in _NUMBER_WORDS for w in words)


def plain(text: str) -> str:
    """Lower case, accents and quotes dropped, runs of spaces as one."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.replace("'", " ").replace('"', " ").split())


def _shown(value: str, text: str) -> bool:
    if value in text:
        return True
    return len(value) > _CUT + 4 and f"{value[:_CUT]}" in text
