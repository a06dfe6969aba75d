"""SQL over the uploaded tables with DuckDB: each table file under /data is a view.

``run_sql("SELECT region, AVG(price) FROM sales GROUP BY region")`` queries
``/data/sales.csv`` in place: the first time a query names a table, its file becomes
a DuckDB view over ``read_csv``/``read_parquet``/``read_json`` (scanned as the query
runs, never loaded whole), and again only when the file changes. A file DuckDB
cannot read itself (a spreadsheet, a zip, text that is not UTF-8, ragged rows) is
read with ``read_table`` and handed over as a table; a Parquet file the engine
cannot scan (the browser's), only the columns queries name (``_sql_columns``). The
result is a pandas DataFrame, so it shows as a table like any trailing value.

The engines (DuckDB-wasm in the browser; on CPython the ``duckdb`` package, else
SQLite) are in ``_sql_engines``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from reckon.kernel._sql_columns import needed_columns, parquet_columns, read_parquet_columns
from reckon.kernel._sql_engines import (
    SqlError,
    _BrowserDuckDB,
    _Engine,
    _ident,
    _NativeDuckDB,
    _SQLite,
    _string,
)
from reckon.kernel.tables import load_table, read_table

__all__ = ["SQL_NOT_LOADED", "query_file", "run_sql", "sql_engine", "sql_tables", "table_name"]

_TABLE_SUFFIXES = {
    ".csv", ".tsv", ".psv", ".ssv", ".txt", ".xlsx", ".xlsm", ".xls", ".ods", ".json",
    ".jsonl", ".ndjson", ".parquet", ".zip", ".gz",
}  # fmt: skip
# A file DuckDB cannot read in place is loaded whole with read_table: only up to this.
_FRAME_LIMIT = 512 * 1024 * 1024
_TEXT_SUFFIXES = (".csv", ".tsv", ".psv", ".ssv", ".txt")
# Up to this a text table is the table read_table gives, tidied (a header over several
# lines, "2.830" as 2830, "****" as missing), so SQL and pandas see the same table;
# above it DuckDB scans the file in place, as it is written.
_TIDY_LIMIT = 5_000_000
# The worker looks for this sentence to load DuckDB after such a cell (sql.js).
SQL_NOT_LOADED = "DuckDB loads on the first cell that calls run_sql"


class _Database:
    """One engine per process; remembers which file version each table holds."""

    def __init__(self, engine: _Engine, note: str = "") -> None:
        self.engine = engine
        self.note = note  # why this is not DuckDB, when it is not
        self.loaded: dict[str, tuple[str, int, int, str]] = {}  # name -> (path, mtime, size, kind)
        self.registered: dict[str, tuple[int, int]] = {}  # path -> (mtime, size)
        self.unread: dict[str, str] = {}  # table -> why DuckDB could not read its file in place
        # table -> (the columns it holds, every column of its file): Parquet files
        # the engine cannot scan are loaded a few columns at a time (_sql_columns)
        self.partial: dict[str, tuple[list[str], list[str]]] = {}


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


def _version(path: str) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_mtime_ns, stat.st_size


def _register(db: _Database, path: str) -> None:
    version = _version(path)
    if db.registered.get(path) != version:
        db.engine.register(path)
        db.registered[path] = version


def _by_columns(db: _Database, path: str) -> bool:
    """A Parquet file the engine cannot scan in place (DuckDB-wasm, SQLite)."""
    return path.lower().endswith(".parquet") and db.engine.source(path) is None


def _ensure_loaded(db: _Database, name: str, path: str, *, query: str | None = None) -> None:
    """Make ``name`` the table or view of the file ``path`` as it is now; ``query``
    says which columns are needed, where only those are loaded."""
    if _by_columns(db, path):
        _load_columns(db, name, path, query)
        return
    mtime, size = _version(path)
    old = db.loaded.get(name)
    if old is not None and old[:3] == (path, mtime, size):
        return
    if old is not None:
        db.engine.drop(name, old[3])
        del db.loaded[name]
    db.partial.pop(name, None)
    tidied = _tidied(path, size)
    if tidied is not None:
        db.engine.load_frame(name, _one_type_a_column(_sql_names(tidied)))
        db.loaded[name] = (path, mtime, size, "TABLE")
        return
    source = db.engine.source(path)
    failure = ""
    if source is not None:
        _register(db, path)
        try:
            db.engine.execute(f"CREATE VIEW {_ident(name)} AS SELECT * FROM {source}")
            db.loaded[name] = (path, mtime, size, "VIEW")
            return
        except SqlError as exc:
            failure = db.unread[name] = str(exc)
    if size > _FRAME_LIMIT and failure:
        raise ValueError(
            f"{os.path.basename(path)} could not be read in place by DuckDB ({_short(failure)}), "
            f"and at {size / 1e6:.0f} MB it is too big to load whole. Query it with explicit "
            f"options, e.g. run_sql(\"SELECT * FROM read_csv({_string(path)}, delim = ';', "
            'header = true, all_varchar = true)"), or fix the file.'
        )
    db.engine.load_frame(name, _one_type_a_column(_sql_names(read_table(path))))
    db.loaded[name] = (path, mtime, size, "TABLE")


def _sql_names(frame: Any) -> Any:
    """Column names that SQL can use without quoting surprises."""
    frame.columns = [
        str(c) if str(c).strip() else f"column_{i}" for i, c in enumerate(frame.columns)
    ]
    return frame


def _tidied(path: str, size: int) -> Any | None:
    """A small text table that read_table tidies (its read_with says read_table): that
    frame, so SQL and pandas see one table; ``None`` for DuckDB to read the file."""
    if size > _TIDY_LIMIT or not path.lower().endswith(_TEXT_SUFFIXES):
        return None
    try:
        loaded = load_table(path)
    except ValueError:
        return None  # DuckDB may still read it, or say why not
    return loaded.frame if loaded.read_with.startswith("read_table(") else None


def _load_columns(db: _Database, name: str, path: str, query: str | None) -> None:
    mtime, size = _version(path)
    old = db.loaded.get(name)
    current = old is not None and old[:3] == (path, mtime, size) and name in db.partial
    held, every = db.partial[name] if current else ([], parquet_columns(path))
    needed = needed_columns(query, every)
    if current and set(needed) <= set(held):
        return
    chosen = [c for c in every if c in held or c in needed]  # the file's order
    frame = read_parquet_columns(path, chosen)
    if old is not None:
        db.engine.drop(name, old[3])
        del db.loaded[name]
    db.engine.load_frame(name, frame)
    db.loaded[name] = (path, mtime, size, "TABLE")
    db.partial[name] = (chosen, every)


def _table_columns(db: _Database, name: str, path: str) -> list[str]:
    """Every column of the table's file, loaded or not."""
    if _by_columns(db, path):
        return parquet_columns(path)
    _ensure_loaded(db, name, path)
    return db.engine.columns(name)


def _one_type_a_column(frame: Any) -> Any:
    """``frame`` with every column of mixed Python types (numbers and text in one
    spreadsheet column, common in real files) as text, missing values kept: Arrow and
    DuckDB take one type per column, and would refuse the whole table."""
    import pandas as pd

    frame = frame.copy(deep=False)
    for i in range(frame.shape[1]):
        column = frame.iloc[:, i]
        if column.dtype != object or column.dropna().map(type).nunique() <= 1:
            continue
        frame.isetitem(i, column.map(lambda v: v if pd.isna(v) else str(v)))
    return frame


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
    return frame.head(limit) if limit is not None else frame


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


def _label(db: _Database) -> str:
    return f"SQL error ({db.engine.name})"


def _short(message: str) -> str:
    return message if len(message) <= 1500 else message[:1500] + " …"


def _query_error(db: _Database, message: str, files: dict[str, str]) -> ValueError:
    tables = _describe_tables(db, files)
    message, hint = _extension_hint(message)
    hint += _hint(db, message, _columns(db, files))
    note = f"\n{db.note}" if db.note else ""
    bad_file = _file_hint(message)
    return ValueError(f"{_label(db)}: {_short(message)}{hint}{bad_file}{note}\n{tables}")


def _extension_hint(message: str) -> tuple[str, str]:
    """DuckDB's advice to INSTALL and LOAD an extension (read_parquet, read_json in the
    browser) cannot work in the sandbox, which loads none: a model that follows it
    fails again. It is replaced by what works."""
    found = re.search(r"exists in the (\w+) extension", message)
    if not found:
        return message, ""
    message = re.sub(r"\s*Please try installing.*", "", message, flags=re.S)
    return message, (
        f"\nThe {found.group(1)} extension cannot be loaded here (no network). Every "
        "uploaded table file is already a table under its own name (listed below): query "
        "it by that name, or read the file with read_table() in Python."
    )


def _file_hint(message: str) -> str:
    """For a row DuckDB cannot parse, deep in a file it read in place: what to do."""
    if not re.search(r"CSV Error|Conversion Error|Invalid Input Error|Invalid unicode", message):
        return ""
    return (
        "\nA row of the file does not fit what DuckDB detected from its first rows. "
        "Read every column as text with read_csv('/data/<file>', all_varchar = true) "
        "and cast what you need, skip bad rows with ignore_errors = true, or fix the file."
    )


# What SQLite lacks that a question often needs, and the pandas method that does it.
_PANDAS_FOR = {
    "median": "median", "stdev": "std", "stddev": "std", "std": "std", "variance": "var",
    "var": "var", "percentile": "quantile", "quantile": "quantile", "mode": "mode",
}  # fmt: skip
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quoted(column: str) -> str:
    """``column`` as a query must write it: in double quotes unless a plain name."""
    return column if _PLAIN_NAME.fullmatch(column) else '"' + column.replace('"', '""') + '"'


def _hint(db: _Database, message: str, columns: list[str]) -> str:
    """What to write instead, for the slips models make most: a column with spaces
    written with underscores (or no quotes), and (SQLite) a function it lacks."""
    missing = re.search(r'no such column: (\S+)|Referenced column "([^"]+)" not found', message)
    if missing:
        wanted = _folded((missing.group(1) or missing.group(2)).split(".")[-1])
        close = [c for c in columns if _folded(c) == wanted]
        if close:
            return f"\nDid you mean {_quoted(close[0])}? Names with spaces go in double quotes."
        return ""
    function = re.search(r"no such function: (\w+)", message)
    if function and db.engine.name == "SQLite":
        name = function.group(1)
        method = _PANDAS_FOR.get(name.lower())
        example = f' (df["column"].{method}())' if method else ""
        return f"\nSQLite has no {name}(); compute it in Python with pandas instead{example}."
    return ""


def _folded(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", name.strip('"`[]').lower())


def _columns(db: _Database, files: dict[str, str]) -> list[str]:
    """The columns of the tables loaded so far (the listing below loads the rest)."""
    found: list[str] = []
    for name in files:
        if name not in db.loaded:
            continue
        try:
            found += _table_columns(db, name, files[name])
        except SqlError:
            continue
    return found


def _describe_tables(db: _Database, files: dict[str, str]) -> str:
    if not files:
        return "There are no table files under /data: upload a CSV or spreadsheet first."
    lines = ["Tables you can query:"]
    for name, path in files.items():
        try:
            shown = ", ".join(_quoted(str(c)) for c in _table_columns(db, name, path))
            lines.append(f"  {name} ({os.path.basename(path)}): {shown}")
        except (ValueError, OSError, SqlError) as exc:
            lines.append(f"  {name} ({os.path.basename(path)}): cannot be read: {exc}")
    return "\n".join(lines)
