"""The system prompt: what the sandbox has, what the user uploaded, the rules."""

from __future__ import annotations

import re
from typing import Any

from reckon.agent._preload import TOO_BIG_TO_LOAD
from reckon.agent._tools_prompt import describe_tools
from reckon.agent._types import JSONDict
from reckon.agent.privacy._privacy import Privacy

__all__ = ["build_system_prompt", "describe_file"]

_MAX_COLUMNS = 40
_MAX_PACKAGES = 60
# Each file's part of the prompt is capped, whatever its inspect dict holds (an upload
# can be made to describe itself at length: a 5 MB column name, a thousand sheets, a
# cell that patches inspect), and so is the whole list: no upload pushes a request past
# the relay's body limit (4 MB by default), and the other files are still described.
_NAME_CHARS = 80  # a path, a column or sheet name
_NOTE_CHARS = 300  # one note, the read line, an error message
_NOTES_CHARS = 1_200
_MAX_SHEETS = 10
_MAX_HEAD_ROWS = 3
_FILE_CHARS = 4_000
_FILES_CHARS = 40_000  # past this, files are named only
_MAX_FILES = 200  # and past this many, counted

# Every sentence here was read against what small local models do with it: no
# function-like names they might call (`read_with`), one rule about the final format,
# and the cell-writing rule said once for the dialect in use. Short, because a
# laptop model reads this prompt at ~40 tokens/s before its first word.
_RULES = """\
Rules:
- Never guess. Every number in your answer must come from the output of code you ran.
- {how_to_run}
- {loaded}
- Print the values you need to see (shapes, heads, results), not whole tables.
- If the code fails, read the error, fix the cause and run the code again.
- Matplotlib figures are captured when the cell ends (no plt.show()); you get a text
  description of each. Files written under {output_dir} can be downloaded by the user.
- No network and no pip install. Use a fixed seed (random_state=0); do not use the
  current date or time (datetime.now()) unless the question asks for it.
- When the output has the result, give the final answer briefly, with the computed
  numbers. If the question asks for a format such as @name[value], end the answer with
  exactly that format, filled with the computed values."""

_NOTHING_LOADED = """\
pd (pandas), np (numpy) and plt (matplotlib.pyplot) are imported; no file is loaded:
  load each file as shown below before using it. Variables persist between cells."""
_LOADED = """\
pd (pandas), np (numpy) and plt (matplotlib.pyplot) are imported, and the files are
  loaded into the variables named below: use them, do not read the files again.
  Variables persist between cells."""

# pandas first: with run_sql offered on an equal footing, the small model below wrote
# MySQL backticks and invented column names in SQL, where pandas would have worked.
_RUN_TOOLS = (
    "Run Python with the run_python tool and work with pandas on the loaded tables; "
    "run_sql (DuckDB's SQL) is for files too big to load."
)
_RUN_BLOCKS = (
    "To run Python, reply with one ```python code block and nothing else runnable; its "
    "output comes back in the next message. Work with pandas on the loaded tables; "
    'run_sql("SELECT …") (DuckDB SQL) is for files too big to load.'
)


# Without files the interpreter still computes: a small model's mental arithmetic
# was wrong in 11 of the 14 word problems it answered without code.
_NO_FILES = (
    "The user has not uploaded any files. Work out every number with code, even simple "
    "arithmetic: write the quantities of the question as variables, compute, print."
)

_SCHEMA_ONLY = """\
Privacy: the user shares only schemas, shapes, dtypes and aggregates with you. Values
from their files are replaced by [hidden] in every output you see{allowed}. Do not print
rows; compute counts, sums, means and other aggregates, and answer from those."""


def build_system_prompt(
    environment: JSONDict,
    *,
    privacy: Privacy | None = None,
    tools: bool = True,
    loaded: dict[str, str] | None = None,
) -> str:
    """The system message for ``environment`` (python, packages, files, data_dir, output_dir);
    ``tools``: the model calls tools (else it writes fenced code blocks); ``loaded``: the
    variable that already holds each table, by path.

    What stays the same from question to question comes first (who it is, the rules,
    the packages) and the files last: a server's prompt cache then keeps the first part
    across questions, and across the switch to code blocks in the middle of one."""
    loaded = loaded or {}
    python = str(environment.get("python") or "3")
    data_dir = str(environment.get("data_dir") or "/data")
    output_dir = str(environment.get("output_dir") or "/output")
    files = [f for f in environment.get("files") or [] if isinstance(f, dict)]
    hides = privacy is not None and privacy.hides
    lines = [
        "You are Reckon, a data analyst who answers questions by running Python code "
        f"(Python {python} in the user's browser).",
    ]
    how = _RUN_TOOLS if tools else _RUN_BLOCKS
    state = _LOADED if loaded else _NOTHING_LOADED
    lines += ["", _RULES.format(output_dir=output_dir, how_to_run=how, loaded=state)]
    packages = [str(p) for p in environment.get("packages") or []]
    if packages:
        shown = ", ".join(packages[:_MAX_PACKAGES])
        more = f" and {len(packages) - _MAX_PACKAGES} more" if len(packages) > _MAX_PACKAGES else ""
        lines.append(f"Packages: {shown}{more}.")
    if privacy is not None and privacy.hides:
        allowed = sorted(privacy.allow_columns)
        shown = f" (except the columns {', '.join(allowed)})" if allowed else ""
        lines += ["", _SCHEMA_ONLY.format(allowed=shown)]
    if files:
        lines += ["", f"The user's files (in {data_dir}):"]
        lines += _describe_files(files, loaded, rows=not hides)
        lines.append(
            # "pre-loaded read_table" was read as pandas' tab reader: say whose it is.
            "read_table(path) is Reckon's reader (not pandas'), already defined: it reads "
            "messy tables (encodings, delimiters, header rows, sheets) into a DataFrame."
        )
    else:
        lines += ["", _NO_FILES]
    lent = describe_tools(list(environment.get("tools") or []))
    if lent:
        lines += ["", *lent]
    return "\n".join(lines)


def _describe_files(files: list[JSONDict], loaded: dict[str, str], *, rows: bool) -> list[str]:
    """Each file's entry until the list's budget is spent, then the rest by name."""
    lines: list[str] = []
    spent = 0
    for number, entry in enumerate(files):
        if number == _MAX_FILES:
            lines.append(f"- … and {len(files) - number} more files (list them with code)")
            break
        if spent > _FILES_CHARS:
            name = _clip(entry.get("path") or entry.get("name") or "?", _NAME_CHARS)
            line = f"- {name}: not described here (many files; look at it with code)"
        else:
            line = describe_file(entry, loaded_as=loaded.get(str(entry.get("path"))), rows=rows)
        spent += len(line)
        lines.append(line)
    return lines


def describe_file(entry: JSONDict, *, loaded_as: str | None = None, rows: bool = True) -> str:
    """One file's entry in the prompt, from its inspect dict (PROTOCOL section 2), at most
    ``_FILE_CHARS`` long; ``loaded_as``: the variable that already holds it; ``rows``:
    its first rows may be shown (never under schema privacy)."""
    text = _describe(entry, loaded_as=loaded_as, rows=rows)
    return text if len(text) <= _FILE_CHARS else text[: _FILE_CHARS - 1] + "…"


def _describe(entry: JSONDict, *, loaded_as: str | None, rows: bool) -> str:
    path = _clip(entry.get("path") or entry.get("name") or "?", _NAME_CHARS * 3)
    if entry.get("status") == "error":
        problem = _clip(entry.get("message", "unknown problem"), _NOTE_CHARS * 2)
        return f"- {path}: cannot be read ({problem})"
    kind = entry.get("kind")
    if kind == "table":
        head = f"- {path}: table"
        if entry.get("format"):
            head += f" ({_clip(entry['format'], 20)})"
        if entry.get("rows") is not None:
            head += f", {_clip(entry['rows'], 20)} rows"
        lines = [head]
        raw_columns = entry.get("columns")
        listed: list[Any] = raw_columns if isinstance(raw_columns, list) else []
        columns = _columns(listed[:_MAX_COLUMNS])
        if columns:
            more = f", … ({len(listed) - _MAX_COLUMNS} more)" if len(listed) > _MAX_COLUMNS else ""
            lines.append(f"  columns: {', '.join(columns)}{more}")
        sheets = [s for s in entry.get("sheets") or [] if isinstance(s, dict | str)]
        if len(sheets) > 1:
            names = [
                _quoted(s.get("name") if isinstance(s, dict) else s) for s in sheets[:_MAX_SHEETS]
            ]
            more = f", … ({len(sheets) - _MAX_SHEETS} more)" if len(sheets) > _MAX_SHEETS else ""
            lines.append(f"  sheets: {', '.join(names)}{more}")
        size = entry.get("size")
        read_with = _clip(entry.get("read_with") or "", _NOTE_CHARS)
        if read_with and loaded_as:
            run = f"{loaded_as} = {read_with}"
            lines.append(f"  loaded as {loaded_as}: use {loaded_as} (Reckon ran: {run})")
        elif isinstance(size, int) and size > TOO_BIG_TO_LOAD:
            # A runnable example: small models copy what they are shown.
            raw = [c.get("name") if isinstance(c, dict) else c for c in entry.get("columns") or []]
            example = ", ".join(_quoted(c) for c in raw[:2])
            lines.append(
                f"  too big to load whole ({size / 1e6:,.0f} MB): query it with run_sql, or "
                f"read only the columns you need: df = read_table({path!r}, "
                f'columns=[{example}]) (where="<SQL condition>" keeps only matching rows)'
            )
        elif read_with:
            lines.append(f"  load it: df = {read_with}")
        if entry.get("sql_table"):
            lines.append(f"  SQL table: {_clip(entry['sql_table'], _NAME_CHARS)}")
        notes = [_clip(n, _NOTE_CHARS) for n in list(entry.get("notes") or [])[:20]]
        if loaded_as:
            # Loaded already: how the reader got there is noise; what the data means is not.
            notes = [n for n in notes if _MEANING.search(n)]
        if notes:
            lines.append(f"  notes: {_clip('; '.join(notes), _NOTES_CHARS)}")
        shown_rows = [r for r in entry.get("head") or [] if isinstance(r, list)][:_MAX_HEAD_ROWS]
        if rows and shown_rows:
            lines.append("  first rows:")
            lines += [f"    {_row(r)}" for r in shown_rows]
        return "\n".join(lines)
    if kind == "text":
        line = f"- {path}: text"
        if entry.get("size") is not None:
            line += f", {_clip(entry['size'], 20)} bytes"
        preview = str(entry.get("preview") or "").strip()
        if preview:
            first = preview[:2000].splitlines()[0][:120]
            line += f"; starts with: {first!r}"
        return line
    size = f", {_clip(entry['size'], 20)} bytes" if entry.get("size") is not None else ""
    return f"- {path}: {_clip(kind or 'file', 20)}{size}"


# Notes that change what the data means (missing values, rows left out, a header over
# several lines, dates, units, sheets), kept when the reader's mechanics are not.
_MEANING = re.compile(
    r"missing|left out|header spans|dates parsed|percent|currency|sheet|more fields|extra_"
    r"|rows \(counted|dtypes from",
)
_ROW_CHARS = 240


def _row(cells: list[Any]) -> str:
    return _clip(" | ".join(_clip(c, _ROW_CHARS) for c in cells[:_MAX_COLUMNS]), _ROW_CHARS)


def _clip(value: Any, limit: int) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _columns(raw: Any) -> list[str]:
    """Column names quoted as Python strings: a leading space or a trailing one is then
    visible (``' WINDSPEED'``), and the model copies the name as it must be written."""
    columns: list[str] = []
    for column in raw or []:
        if isinstance(column, dict):
            dtype = f" ({_clip(column['dtype'], 20)})" if column.get("dtype") else ""
            columns.append(f"{_quoted(column.get('name'))}{dtype}")
        else:
            columns.append(_quoted(column))
    return columns


def _quoted(name: Any) -> str:
    """Quoted whole when short; a longer name is cut, and says so (the model then
    prints the columns to get it)."""
    text = name if isinstance(name, str) else str(name)
    if len(text) <= _NAME_CHARS:
        return repr(text)
    return f"{text[: _NAME_CHARS - 20]!r}… ({len(text):,} characters)"
