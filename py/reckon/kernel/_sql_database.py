"""How a table file becomes a table or a view of the SQL database, and stays current.

A file DuckDB can scan is a view over it; a small text table is the frame
``read_table`` tidies (so SQL and pandas see one table); anything else is loaded
whole with ``read_table``, up to a limit; a Parquet file the engine cannot scan is
loaded a few columns at a time (``_sql_columns``). ``_Database`` remembers which
version of its file each table holds, so a table is made again only when its file
changes. ``_sql`` keeps the one database of the process.
"""

from __future__ import annotations

import os
from typing import Any

from reckon.kernel._sql_columns import needed_columns, parquet_columns, read_parquet_columns
from reckon.kernel._sql_engines import SqlError, _Engine, _ident, _string
from reckon.kernel.tables import load_table, read_table

__all__ = ["_Database", "_ensure_loaded", "_register", "_short", "_table_columns"]

# A file DuckDB cannot read in place is loaded whole with read_table: only up to this.
_FRAME_LIMIT = 512 * 1024 * 1024
_TEXT_SUFFIXES = (".csv", ".tsv", ".psv", ".ssv", ".txt")
# Up to this a text table is the table read_table gives, tidied (a header over several
# lines, "2.830" as 2830, "****" as missing), so SQL and pandas see the same table;
# above it DuckDB scans the file in place, as it is written.
_TIDY_LIMIT = 5_000_000


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
        self.said: list[str] = []  # notes on this cell's queries (_sql_note), taken once


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


def _short(message: str) -> str:
    """An engine's message, cut to its first 1500 characters: it can run to pages."""
    return message if len(message) <= 1500 else message[:1500] + " …"
