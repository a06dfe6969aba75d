"""Hints for errors of reading a table and of filtering its text: the fix, with the
cell's own names, for three a small model could not make in three tries.

Seen with questions nobody wrote for the model: ``df[df['票價及相關價格資料'].str
.contains('全票')]`` on a text column with empty cells; ``pd.read_table(xlsx,
sheet_name='data')``, pandas' text reader taken for Reckon's ``read_table``; and
``df['RptDate']`` of a workbook read by ``pd.read_excel`` whose title line pandas took
as the header. Like ``_hints``, these read the failing frames and the cells' source
(kept in ``linecache``), never run anything.
"""

from __future__ import annotations

import ast
import linecache
import re
from types import TracebackType
from typing import Any

from reckon.kernel._frames import cell_frame, frame_locals

__all__ = ["header_row_hint", "nan_mask_hint", "plain_read_hint", "reader_hint"]

_NAN_MASK = "Cannot mask with non-boolean array containing NA"
_STR_METHODS = {"contains", "startswith", "endswith", "match", "fullmatch"}
_KEYWORD = re.compile(
    r"^(read_table|read_csv|read_excel)\(\) got an unexpected keyword argument '(\w+)'"
)
_READERS = {"read_excel", "read_csv", "read_table"}
_HEADER_ROWS = 20  # a header further down is not a header pandas missed
_NAMED = 4  # header names shown
_WORKBOOKS = (".xls", ".xlsx", ".xlsm", ".ods")
_UNNAMED = re.compile(r"Unnamed: \d+")  # pandas' name for a column without one


def _tree(filename: str) -> ast.Module | None:
    """A cell's source parsed, or ``None`` when it does not parse."""
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None


def _calls(filename: str, line: int = 0) -> list[ast.Call]:
    """The calls of a cell's source (those spanning ``line``, when given)."""
    tree = _tree(filename)
    return [
        node
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.Call)
        and (not line or node.lineno <= line <= (node.end_lineno or node.lineno))
    ]


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _literal(node: ast.expr | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except ValueError:
        return None


def nan_mask_hint(exc: BaseException) -> str:
    """For a row filter whose mask holds NaN: a ``.str`` method of a text column with
    empty cells gives NaN there, and ``na=False`` makes it False instead."""
    import pandas as pd

    if not isinstance(exc, ValueError) or _NAN_MASK not in str(exc):
        return ""
    # The innermost Series with NaN: the mask pandas refused.
    masks = frame_locals(exc.__traceback__, lambda v: isinstance(v, pd.Series) and v.isna().any())
    mask: Any = masks[-1] if masks else None
    filename, line, _ = cell_frame(exc.__traceback__)
    said = "the mask has missing values (NaN)"
    if mask is not None and isinstance(mask.name, str):
        missing = int(mask.isna().sum())
        said = (
            f"the column {mask.name!r} has {missing} missing value{'s' * (missing != 1)} "
            f"(of {len(mask)}), so the mask has NaN there too"
        )
    for call in [*_calls(filename, line), *_calls(filename)]:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _STR_METHODS:
            given = {k.arg for k in call.keywords}
            text = isinstance(func.value, ast.Attribute) and func.value.attr == "str"
            if text and "na" not in given:
                fixed = ast.Call(call.func, call.args, [*call.keywords, _na_false()])
                return (
                    f"{said}: pass na=False so that they count as no match: "
                    f"{ast.unparse(fixed)} (the same for .str.startswith/endswith/match)"
                )
    if mask is not None and mask.dtype.kind != "O":
        return f"{said}: fill them before filtering, e.g. df[mask.fillna(False)]"
    return (
        f"{said}: pass na=False to the text test, e.g. .str.contains('…', na=False) (the "
        f"same for .str.startswith/endswith/match), or filter with mask.fillna(False)"
    )


def _na_false() -> ast.keyword:
    return ast.keyword(arg="na", value=ast.Constant(False))


def reader_hint(exc: BaseException) -> str:
    """For a sheet asked of the wrong reader: ``pd.read_table`` (pandas' reader of text
    files) for Reckon's ``read_table``, or ``sheet=`` of ``pd.read_excel``."""
    asked = _KEYWORD.search(str(exc)) if isinstance(exc, TypeError) else None
    if asked is None or asked.group(2) not in ("sheet", "sheet_name"):
        return ""
    reader, keyword = asked.groups()
    filename, line, _ = cell_frame(exc.__traceback__)
    path, sheet = "path", "'<sheet name>'"
    for call in _calls(filename, line):
        if _name(call) == reader:
            given = _literal(call.args[0]) if call.args else None
            path = repr(given) if isinstance(given, str) else path
            named = [k.value for k in call.keywords if k.arg == keyword]
            value = _literal(named[0]) if named else None
            sheet = repr(value) if isinstance(value, str | int) else sheet
    reckon = f"read_table({path}, sheet={sheet})"
    if reader == "read_excel":
        return (
            f"pandas' read_excel calls it sheet_name: pd.read_excel({path}, sheet_name="
            f"{sheet}); or use Reckon's {reckon} (no pd.), which also finds the header line"
        )
    return (
        f"pd.{reader} is pandas' reader of text files and takes no {keyword}=; Reckon's "
        f"read_table (no pd.) reads workbooks too and finds the header line: {reckon}"
    )


def header_row_hint(key: str, frames: list[Any], tb: TracebackType | None) -> str:
    """For a column asked of a table whose names sit in one of its rows: pandas took a
    title line above them as the header (the names beside ``key``, and the lines above
    them emptier, say so; a row label's row holds numbers, or no fewer names)."""
    for frame in frames:
        if not [c for c in frame.columns if isinstance(c, str)] or key in frame.columns:
            continue
        head = frame.head(_HEADER_ROWS)
        above = [sum(not str(c).startswith("Unnamed: ") for c in frame.columns)]
        for position in range(len(head)):
            cells = head.iloc[position].dropna().tolist()
            if not any(isinstance(v, str) and v == key for v in cells):
                above.append(len(cells))
                continue
            names = [v for v in cells if isinstance(v, str)]
            if len(cells) < 2 or 2 * len(names) < len(cells) or max(above) >= len(cells):
                return ""
            return _header_said(key, frame, position, names, tb)
        return ""
    return ""


def _header_said(key: str, frame: Any, position: int, names: list[str], tb: Any) -> str:
    others = ", ".join(repr(n) for n in [n for n in names if n != key][:_NAMED])
    table, reader, path, sheet = _read_call(frame, tb)
    sheet_name = f", sheet_name={sheet!r}" if sheet is not None and reader == "read_excel" else ""
    pandas = f"pd.{reader}({path}{sheet_name}, header={position + 1})"
    return (
        f"{key!r} is in row {position} of {table}, beside {others}: the file's header is on "
        f"a lower line than the first, and pandas took a line above it as the header. Read "
        f"it with Reckon's read_table (no pd.), which finds the header line: {table} = "
        f"read_table({path}{'' if sheet is None else f', sheet={sheet!r}'}); or {pandas}"
    )


def plain_read_hint(key: str, frames: list[Any], tb: TracebackType | None) -> str:
    """For pandas' name of a column without one (``'Unnamed: 8'``) asked of a table
    Reckon's ``read_table`` read, when pandas reading the file as written names a column
    so. Seen in a public benchmark question, whose questions are written against
    ``pd.read_csv``: read_table had found the header below a title line and left the
    empty columns out, and the model asked for another column in its place."""
    import pandas as pd

    if not _UNNAMED.fullmatch(key):
        return ""
    for frame in frames:
        if key in frame.columns:
            continue
        table, reader, path, sheet = _read_call(frame, tb)
        options = {"sheet_name": sheet} if sheet is not None and reader == "read_excel" else {}
        sheet_name = f", sheet_name={sheet!r}" if options else ""
        try:
            file = str(ast.literal_eval(path))
            reader = "read_excel" if file.lower().endswith(_WORKBOOKS) else reader
            if reader == "read_csv" and not file.lower().endswith(".csv"):
                continue  # pandas' names for a .tsv or .txt depend on a separator it guessed
            plain = getattr(pd, reader)(file, nrows=0, **options)
        except Exception:  # a hint is a courtesy: a file pandas will not read says nothing
            continue
        if key in plain.columns:
            return (
                f"{table} was read by Reckon's read_table, which finds the header line and "
                f"leaves empty columns out; {key!r} is the name pandas gives a column when it "
                f"reads the file as written: {table} = pd.{reader}({path}{sheet_name})"
            )
    return ""


def _read_call(frame: Any, tb: TracebackType | None) -> tuple[str, str, str, Any]:
    """The name ``frame`` has in the cells' namespace, and the reader, file and sheet of
    the newest cell that assigned that name a file read with pandas (as written there)."""
    failing, _, namespace = cell_frame(tb)
    table = next((k for k, v in namespace.items() if v is frame and not k.startswith("_")), "df")
    cells = [f for f in list(linecache.cache) if re.fullmatch(r"<cell-\d+>", str(f))]
    # Cells after the failing one are another session's, left in linecache (in one
    # process, as in tests): this session has not run that far.
    last = int(failing[6:-1]) if re.fullmatch(r"<cell-\d+>", failing) else None
    cells = [f for f in cells if last is None or int(f[6:-1]) <= last]
    for filename in sorted(cells, key=lambda f: int(f[6:-1]), reverse=True):
        tree = _tree(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
                continue
            call, targets = node.value, [getattr(t, "id", None) for t in node.targets]
            path = _literal(call.args[0]) if call.args else None
            if table in targets and _name(call) in _READERS and isinstance(path, str):
                named = [k.value for k in call.keywords if k.arg in ("sheet", "sheet_name")]
                reader = "read_csv" if _name(call) == "read_table" else _name(call)
                return table, reader, repr(path), _literal(named[0]) if named else None
    return table, "read_excel", "path", None
