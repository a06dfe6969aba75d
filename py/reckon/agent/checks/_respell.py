"""A column name a failed cell spelt otherwise than its table, put right when the error
names the one column it is (the same letters and digits, whatever the case, spaces,
underscores or punctuation), so the cell can run again as the model meant it.

Seen on a question not written for the agent: ``run_sql("... WHERE Financial_Year =
'2010-11'")`` failed three times in a row beside DuckDB's "Did you mean "Financial
Year"? Names with spaces go in double quotes.", and the ask ended in failure. The
error names its fix; a 1.5B model did not take it. Only string literals are changed:
a key (``df['Financial_Year']``) that is the misspelt name whole, or the name as an
identifier inside a query; f-strings and names in code are left to the model. The
same for a cell that ran beside the kernel's note that it took a header a sheet holds
twice from the wrong table (seen: told, the model ran the same cell twice more).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass

from reckon.agent._types import JSONDict

__all__ = ["Respelling", "respell_columns"]

# The kernel's hints (kernel/_hints.py, kernel/_sql_errors.py) when the folded names match.
_PANDAS = re.compile(r"there is no column ('[^'\n]*'|\"[^\"\n]*\"); the table's column is "
                     r"spelled ('[^'\n]*'|\"[^\"\n]*\")")  # fmt: skip
_SQL = re.compile(r'Referenced column "([^"]+)" not found[^\n]*\n(?:[^\n]*\n)*?'
                  r'Did you mean ("(?:[^"]|"")+"|[A-Za-z_]\w*)\? Names with spaces')  # fmt: skip
_PLAIN_STRING = re.compile(r"[rRuU]?('''|\"\"\"|'|\")")
# The kernel's note (kernel/_repeat_note.py) on a header a sheet holds twice.
_TWIN = re.compile(r"so the ('[^'\n]*'|\"[^\"\n]*\") of their own rows is \w+\[('[^'\n]*'|"
                   r"\"[^\"\n]*\")\], not")  # fmt: skip


@dataclass(frozen=True)
class Respelling:
    """The cell with the column's name as its table spells it, and what to tell the model."""

    code: str
    note: str


def respell_columns(code: str, result: JSONDict) -> Respelling | None:
    """The cell put right, when ``result`` failed on a column the error says is spelt
    otherwise (or ran beside the note that names the twin column meant), and the name
    stands in the cell's string literals; else ``None``."""
    error, notes = result.get("error"), result.get("notes")
    if result.get("status") == "ok" and isinstance(notes, list):
        said = "\n".join(str(note) for note in notes)
    elif result.get("status") == "error" and isinstance(error, dict):
        said = f"{error.get('message') or ''}\n{error.get('hint') or ''}"
    else:
        return None
    pandas = _PANDAS.search(said) or _TWIN.search(said)
    why = "as the table spells it"
    if pandas and pandas.re is _TWIN:
        why = "the one of the table the cell's other columns stand in"
    if pandas:
        try:
            wrong, right = (ast.literal_eval(group) for group in pandas.groups())
        except (ValueError, SyntaxError):
            return None  # a name with a backslash the repr does not read back
        fixed = _in_strings(code, lambda text: right if text == wrong else text)
    else:
        sql = _SQL.search(said)
        if sql is None:
            return None
        wrong, right = sql.group(1), sql.group(2)
        name = re.compile(rf'(?<![\w"]){re.escape(wrong)}(?![\w"])')
        fixed = _in_strings(code, lambda text: name.sub(lambda _: right, text))
    if fixed is None or fixed == code:
        return None
    note = (f"\nnote: Reckon ran your code again with the column {right!r} where it said "
            f"{wrong!r}, {why}; use that name from now on")  # fmt: skip
    return Respelling(fixed, note)


def _in_strings(code: str, change: Callable[[str], str]) -> str | None:
    """``code`` with ``change`` applied to the text of each plain string literal, each
    written back in its own quotes; ``None`` when the code does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    for token in tokens:
        quote = _PLAIN_STRING.match(token.string) if token.type == tokenize.STRING else None
        if quote is None or token.string[0] in "rR":
            continue
        try:
            text = ast.literal_eval(token.string)
        except (SyntaxError, ValueError):
            continue
        if not isinstance(text, str) or change(text) == text:
            continue
        new = change(text)
        mark = quote.group(1)
        body = new.replace("\\", "\\\\") if len(mark) == 3 else _escaped(new, mark)
        start = starts[token.start[0] - 1] + token.start[1]
        end = starts[token.end[0] - 1] + token.end[1]
        edits.append((start, end, token.string[: quote.start(1)] + mark + body + mark))
    for start, end, written in reversed(edits):
        code = code[:start] + written + code[end:]
    return code


def _escaped(text: str, mark: str) -> str:
    """``text`` as the inside of a one-line string literal quoted with ``mark``."""
    text = text.replace("\\", "\\\\").replace("\n", "\\n")
    return text.replace(mark, "\\" + mark)
