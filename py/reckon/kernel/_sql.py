"""SQL over the uploaded tables with DuckDB: each table file under /data is a view.

``run_sql("SELECT region, AVG(price) FROM sales GROUP BY region")`` queries
``/data/sales.csv`` in place: the first time a query names a table, its file becomes
a DuckDB view over ``read_csv``/``read_parquet``/``read_json`` (scanned as the query
runs, never loaded whole), and again only when the file changes. A file DuckDB
cannot read itself (a spreadsheet, a zip, text that is not UTF-8, ragged rows) is
read with ``read_table`` and handed over as a table; a Parquet file the engine
cannot scan (the browser's), only the columns queries name (``_sql_columns``). The
result is a pandas DataFrame, so it shows as a table like any trailing value.

This module is the entry (``run_sql``, ``query_file``) and the one database of the
process. The engines (DuckDB-wasm in the browser; on CPython the ``duckdb`` package,
else SQLite) are in ``_sql_engines``; how a file becomes a table or a view, and which
version of it each holds, in ``_sql_database``; what a failed query says, in
``_sql_errors``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from reckon.kernel._sql_database import (
    _Database,
    _ensure_loaded,
    _register,
    _short,
    _table_columns,
)
from reckon.kernel._sql_engines import SqlError, _BrowserDuckDB, _ident, _NativeDuckDB, _SQLite
from reckon.kernel._sql_errors import _label, _query_error, _quoted
from reckon.kernel._sql_note import caught_nothing, no_match_note

__all__ = [
    "SQL_NOT_LOADED",
    "query_file",
    "run_sql",
    "sql_engine",
    "sql_tables",
    "table_name",
    "take_sql_notes",
]

_TABLE_SUFFIXES = {
    ".csv", ".tsv", ".psv", ".ssv", ".txt", ".xlsx", ".xlsm", ".xls", ".ods", ".json",
    ".jsonl", ".ndjson", ".parquet", ".zip", ".gz",
}  # fmt: skip
# The worker looks for this sentence to load DuckDB after such a cell (sql.js).
SQL_NOT_LOADED = "DuckDB loads on the first cell that calls run_sql"


_db: _Database | None = None


def _database() -> _Database:
    global _db
    if _db is None:
        _db = _make_database()
    return _db


def _make_database() -> _Database:
    if sys.platform == "emscripten":
        try:
            import _reckon_duckdb as bridge
        except ImportError:
            raise RuntimeError(f"{SQL_NOT_LOADED}; it is loaded now: run the cell again.") from None
        failure = getattr(bridge, "failure", None)
        if failure:
            note = f"DuckDB could not be loaded ({failure}); SQLite answers instead."
            return _Database(_SQLite(), note)
        return _Database(_BrowserDuckDB(bridge))
    try:
        return _Database(_NativeDuckDB())
    except ImportError:
        return _Database(_SQLite(), "The duckdb package is not installed; SQLite answers instead.")


def sql_engine() -> str:
    """The engine run_sql uses here: ``"DuckDB"`` or ``"SQLite"``."""
    return _database().engine.name


def table_name(path: str) -> str:
    """The SQL name of a file: its stem in lower case, other characters as ``_``."""
    stem = os.path.basename(path)
    for suffix in (".gz", ".zip"):
        stem = stem.removesuffix(suffix)
    stem = os.path.splitext(stem)[0]
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", stem).strip("_").lower() or "table"
    return f"t_{name}" if name[0].isdigit() else name


def _table_files(data_dir: str) -> dict[str, str]:
    found: dict[str, str] = {}
    if not os.path.isdir(data_dir):
        return found
    for entry in sorted(os.listdir(data_dir)):
        path = os.path.join(data_dir, entry)
        if os.path.isfile(path) and os.path.splitext(entry)[1].lower() in _TABLE_SUFFIXES:
            found.setdefault(table_name(entry), path)
    return found


def sql_tables(data_dir: str = "/data") -> dict[str, str]:
    """Table name -> file path, for every table file under ``data_dir``."""
    return _table_files(data_dir)


def _mentioned(query: str, names: dict[str, str]) -> list[str]:
    words = {w.lower() for w in re.findall(r'[A-Za-z_][A-Za-z0-9_]*|"[^"]+"', query)}
    words |= {w.strip('"').lower() for w in words}
    return [name for name in names if name in words]


def _paths_in(query: str) -> list[str]:
    """Files a query names by path (``FROM '/data/x.parquet'``, ``read_csv('...')``)."""
    found = []
    for literal in re.findall(r"'((?:[^']|'')+)'", query):
        path = literal.replace("''", "'")
        if path.startswith("/") and os.path.isfile(path):
            found.append(path)
    return found


def run_sql(query: str, *, data_dir: str = "/data", limit: int | None = None) -> Any:
    """Run a SQL query (DuckDB's dialect) over the files in ``data_dir``; returns a
    pandas DataFrame.

    Tables are named after their files (``sales 2024.csv`` -> ``sales_2024``); a
    query may also read a file by its path (``SELECT * FROM '/data/x.parquet'``).
    Raises ``ValueError`` naming the tables and their columns when the query does
    not fit them, so a model (or a person) can fix it from the message.
    """
    db = _database()
    files = _table_files(data_dir)
    query = _double_quoted(query)
    # A word of the query that names a file may be a column or an alias: a file that
    # cannot be loaded fails the query only if the query then needs it.
    unloaded: dict[str, str] = {}
    for name in _mentioned(query, files):
        try:
            _ensure_loaded(db, name, files[name], query=query)
        except Exception as exc:  # whatever reading the file raised: said below if needed
            plain = isinstance(exc, ValueError)
            unloaded[name] = str(exc) if plain else f"{type(exc).__name__}: {exc}"
    if db.engine.name == "DuckDB":
        for path in _paths_in(query):
            _register(db, path)
    try:
        frame = db.engine.query(query)
    except SqlError as exc:
        for name, why in unloaded.items():
            if re.search(rf"\b{re.escape(name)}\b", str(exc), flags=re.I):
                raise ValueError(f"{name} ({files[name]}) could not be loaded: {why}") from None
        raise _query_error(db, str(exc), files) from None
    if caught_nothing(frame):
        queried = {n: files[n] for n in _mentioned(query, files) if n not in unloaded}
        note = no_match_note(db, query, queried)
        if note and note not in db.said:
            db.said.append(note)
    return frame.head(limit) if limit is not None else frame


def take_sql_notes() -> list[str]:
    """The notes on the queries run since the last call (``_sql_note``), once."""
    if _db is None:
        return []
    said, _db.said = _db.said, []
    return said


_BACKTICKED = re.compile(r"'(?:[^']|'')*'|`([^`\n]+)`")


def _double_quoted(query: str) -> str:
    """MySQL's `name` quoting, which DuckDB does not know, as "name": what small
    models write most for a column with spaces (DuckDB fails with a parser error that
    says nothing of quotes). String literals are left as they are."""
    return _BACKTICKED.sub(
        lambda m: m.group(0) if m.group(1) is None else '"' + m.group(1).replace('"', '""') + '"',
        query,
    )


def query_file(path: str, *, columns: list[str] | None = None, where: str | None = None) -> Any:
    """The rows of the table file ``path`` that match the SQL condition ``where``, with
    only ``columns``: the engine scans the file and returns only those (read_table's
    ``columns=``/``where=``)."""
    if not os.path.isfile(path):
        raise ValueError(f"{path} does not exist; list the files to see what is there.")
    db = _database()
    name = "__file_" + table_name(path)
    wanted = None if not columns else " ".join(_ident(str(c)) for c in columns) + f" {where or ''}"
    _ensure_loaded(db, name, path, query=wanted)
    chosen = ", ".join(_ident(str(c)) for c in columns) if columns else "*"
    sql = f"SELECT {chosen} FROM {_ident(name)}" + (f" WHERE {where}" if where else "")
    try:
        return db.engine.query(sql)
    except SqlError as exc:
        shown = ", ".join(_quoted(c) for c in _table_columns(db, name, path))
        raise ValueError(
            f"{_label(db)}: {_short(str(exc))}\n{os.path.basename(path)} has the columns: {shown}"
        ) from None
