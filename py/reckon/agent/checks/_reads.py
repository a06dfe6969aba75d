"""A model's own pandas read of an upload, run as Reckon's ``read_table``.

The table is loaded before the model's first turn, tidied (a header over several
lines, "2.830" as 2830, "****" as missing). A small model still starts its cell with
``df = pd.read_table('/data/x.csv')`` (pandas' tab reader, for a CSV) or
``pd.read_csv`` with a guessed encoding: in a benchmark run that undid the load in
most failed questions (KeyError on every column, UnicodeDecodeError). Such a call,
with no option beyond how to parse the text (encoding, delimiter, engine, …), reads
what ``read_table`` reads better, so it is rewritten to it; the step shows the code
that ran and keeps the model's as ``proposed``, and the model is told. A sheet named
as pandas names it (``sheet_name=``) or as ``read_table`` does (``sheet=``) goes with
it: ``pd.read_table('/data/x.xlsx', sheet='data')``, pandas' text reader given a
workbook, failed three times in a row on a question not written for the agent, each
time with a hint the model did not follow. A cell that asks for a column by the name
pandas gives one without a name (``'Unnamed: 8'``) means pandas' own reading, as
questions written against ``pd.read_csv`` do: its ``pd.read_csv`` and ``pd.read_excel``
run as written.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Rewrite", "rewrite_reads"]

_READERS = {"read_csv", "read_table", "read_excel"}
_MODULES = {"pd", "pandas"}
# Options that only say how to parse the file, which read_table finds out itself.
_PARSING = {
    "encoding", "encoding_errors", "sep", "delimiter", "engine", "on_bad_lines",
    "low_memory", "skipinitialspace", "thousands", "decimal", "header", "skiprows",
    "error_bad_lines", "warn_bad_lines", "quotechar", "escapechar", "dtype_backend",
}  # fmt: skip
_SHEET = {"sheet", "sheet_name"}
_PANDAS_NAME = re.compile(r"""['"]Unnamed: \d+['"]""")


@dataclass(frozen=True)
class Rewrite:
    """The code to run and what was rewritten in it (``pd.read_csv(...)`` calls)."""

    code: str
    calls: tuple[str, ...] = ()

    def note(self) -> str:
        if not self.calls:
            return ""
        shown = ", ".join(self.calls[:3])
        return (
            f"\nnote: {shown} ran as read_table(path), which reads this file's layout "
            "(encoding, delimiter, header rows, numbers) as the loaded table does; use the "
            "loaded variable, or read_table, not pandas' readers"
        )


def rewrite_reads(code: str, uploads: Iterable[str]) -> Rewrite:
    """``code`` with each pandas read of one of ``uploads`` (paths) as ``read_table``."""
    paths = {os.path.normpath(p): p for p in uploads}
    if not paths or not any(f"read_{kind}" in code for kind in ("csv", "table", "excel")):
        return Rewrite(code)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return Rewrite(code)
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    found: list[tuple[int, int, str, str]] = []
    listed = _sheet_loops(tree)
    pandas_names = _PANDAS_NAME.search(code) is not None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if pandas_names and getattr(node.func, "attr", "") in ("read_csv", "read_excel"):
            continue
        read = _upload_read(node, paths, code, listed)
        if read is None or node.end_lineno is None or node.end_col_offset is None:
            continue
        path, sheet = read
        start = _offset(lines, starts, node.lineno, node.col_offset)
        end = _offset(lines, starts, node.end_lineno, node.end_col_offset)
        sheet_option = "" if sheet is None else f", sheet={sheet}"
        found.append((start, end, code[start:end], f"read_table({path!r}{sheet_option})"))
    if not found:
        return Rewrite(code)
    out, last = [], 0
    for start, end, _, replacement in sorted(found):
        out += [code[last:start], replacement]
        last = end
    out.append(code[last:])
    return Rewrite("".join(out), tuple(original for _, _, original, _ in sorted(found)))


def _sheet_loops(tree: ast.AST) -> set[str]:
    """The names a loop or a comprehension takes from a written list of sheet names or
    positions (``for s in ['2007-08', '2008-09']``): each is one sheet, never None."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name):
            items = node.iter.elts if isinstance(node.iter, ast.List | ast.Tuple) else []
            values = [i.value for i in items if isinstance(i, ast.Constant)]
            sheets = [v for v in values if isinstance(v, str | int) and not isinstance(v, bool)]
            if sheets and len(sheets) == len(items):
                names.add(node.target.id)
    return names


def _upload_read(
    node: ast.Call, paths: dict[str, str], code: str, listed: set[str]
) -> tuple[str, str | None] | None:
    """The upload a ``pd.read_csv('<path>', <parsing options>)`` call reads and the
    sheet it names, as code (``'data'``, ``2``, or a loop's name over written sheets:
    seen, ``sheet=s`` for each ``s`` in the six sheets' names), or None."""
    if not isinstance(node.func, ast.Attribute):
        return None
    func = node.func
    if func.attr not in _READERS or not isinstance(func.value, ast.Name):
        return None
    if func.value.id not in _MODULES or len(node.args) != 1:
        return None
    argument = node.args[0]
    if not isinstance(argument, ast.Constant) or not isinstance(argument.value, str):
        return None
    sheets = [k.value for k in node.keywords if k.arg in _SHEET]
    if len(sheets) > 1:
        return None
    sheet = ast.get_source_segment(code, sheets[0]) if sheets else None
    if sheets and not isinstance(sheets[0], ast.Constant):
        if not (isinstance(sheets[0], ast.Name) and sheets[0].id in listed):
            return None  # sheet_name=names may be a list or None: a dict of tables
    elif sheets and isinstance(sheets[0], ast.Constant):
        named = sheets[0].value
        if not isinstance(named, str | int) or isinstance(named, bool):
            return None  # sheet_name=None: a dict of tables
        sheet = repr(named)
    options = [k.arg for k in node.keywords if k.arg not in _SHEET]
    if any(option is None or option not in _PARSING for option in options):
        return None
    if func.attr == "read_excel" and options:
        return None
    path = _match(argument.value, paths)
    return None if path is None else (path, sheet)


def _match(written: str, paths: dict[str, str]) -> str | None:
    key = os.path.normpath(written)
    if key in paths:
        return paths[key]
    if os.path.dirname(written) in ("", "data", "./data"):
        named = [p for k, p in paths.items() if os.path.basename(k) == os.path.basename(key)]
        return named[0] if len(named) == 1 else None
    return None


def _offset(lines: list[str], starts: list[int], lineno: int, column: int) -> int:
    # ast columns count UTF-8 bytes; the line's text is needed to turn them into characters.
    line = lines[lineno - 1] if lineno - 1 < len(lines) else ""
    return starts[lineno - 1] + len(line.encode()[:column].decode(errors="ignore"))
