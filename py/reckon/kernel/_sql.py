"""SQL over the uploaded tables: each file under /data becomes a SQLite table on demand.

``run_sql("SELECT region, AVG(price) FROM sales GROUP BY region")`` loads
``/data/sales.csv`` (with ``read_table``, so messy files work too) into an
in-memory SQLite database the first time a query names it, and again only when
the file changes. The result is a DataFrame, so it shows as a table like any
trailing value.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from reckon.kernel.tables import read_table

if TYPE_CHECKING:
    import sqlite3

__all__ = ["run_sql", "sql_tables", "table_name"]

_TABLE_SUFFIXES = {
    ".csv", ".tsv", ".psv", ".ssv", ".txt", ".xlsx", ".xlsm", ".xls", ".ods", ".json",
    ".jsonl", ".parquet", ".zip", ".gz",
}  # fmt: skip


class _Database:
    """One connection per process; remembers which file version each table holds."""

    def __init__(self) -> None:
        # Imported here: in Pyodide sqlite3 is a package of its own, and the kernel
        # must import even before it is installed.
        import sqlite3

        self.connection: sqlite3.Connection = sqlite3.connect(":memory:")
        self.loaded: dict[str, tuple[str, int, int]] = {}  # table -> (path, mtime_ns, size)


_db: _Database | None = None


def _database() -> _Database:
    global _db
    if _db is None:
        _db = _Database()
    return _db


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


def _ensure_loaded(db: _Database, name: str, path: str) -> None:
    stat = os.stat(path)
    version = (path, stat.st_mtime_ns, stat.st_size)
    if db.loaded.get(name) == version:
        return
    frame = read_table(path)
    # Column names that SQL can use without quoting surprises.
    frame.columns = [
        str(c) if str(c).strip() else f"column_{i}" for i, c in enumerate(frame.columns)
    ]
    frame.to_sql(name, db.connection, if_exists="replace", index=False)
    db.loaded[name] = version


def _mentioned(query: str, names: dict[str, str]) -> list[str]:
    words = {w.lower() for w in re.findall(r'[A-Za-z_][A-Za-z0-9_]*|"[^"]+"', query)}
    words |= {w.strip('"').lower() for w in words}
    return [name for name in names if name in words]


def run_sql(query: str, *, data_dir: str = "/data", limit: int | None = None) -> Any:
    """Run a SQL query over the files in ``data_dir``; returns a pandas DataFrame.

    Tables are named after their files (``sales 2024.csv`` -> ``sales_2024``).
    Raises ``ValueError`` naming the tables and their columns when the query does
    not fit them, so a model (or a person) can fix it from the message.
    """
    import sqlite3

    import pandas as pd

    db = _database()
    files = _table_files(data_dir)
    for name in _mentioned(query, files):
        _ensure_loaded(db, name, files[name])
    try:
        frame = pd.read_sql_query(query, db.connection)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        message, tables = _clean(exc), _describe_tables(db, files)
        hint = _hint(message, _columns(db, files))
        raise ValueError(f"{message}{hint}\n{tables}") from None
    return frame.head(limit) if limit is not None else frame


def _clean(exc: BaseException) -> str:
    text = str(exc)
    # pandas wraps sqlite's message in "Execution failed on sql '...': <message>".
    match = re.search(r"Execution failed on sql .*?: (.*)$", text, re.S)
    return f"SQL error: {match.group(1) if match else text}"


# What SQLite lacks that a question often needs, and the pandas method that does it.
_PANDAS_FOR = {
    "median": "median", "stdev": "std", "stddev": "std", "std": "std", "variance": "var",
    "var": "var", "percentile": "quantile", "quantile": "quantile", "mode": "mode",
}  # fmt: skip
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quoted(column: str) -> str:
    """``column`` as a query must write it: in double quotes unless a plain name."""
    return column if _PLAIN_NAME.fullmatch(column) else '"' + column.replace('"', '""') + '"'


def _hint(message: str, columns: list[str]) -> str:
    """What to write instead, for the two slips models make most: a column with spaces
    written with underscores (or no quotes), and a function SQLite does not have."""
    missing = re.search(r"no such column: (\S+)", message)
    if missing:
        wanted = _folded(missing.group(1).split(".")[-1])
        close = [c for c in columns if _folded(c) == wanted]
        if close:
            return f"\nDid you mean {_quoted(close[0])}? Names with spaces go in double quotes."
        return ""
    function = re.search(r"no such function: (\w+)", message)
    if function:
        name = function.group(1)
        method = _PANDAS_FOR.get(name.lower())
        example = f' (df["column"].{method}())' if method else ""
        return f"\nSQLite has no {name}(); compute it in Python with pandas instead{example}."
    return ""


def _folded(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", name.strip('"`[]').lower())


def _columns(db: _Database, files: dict[str, str]) -> list[str]:
    """The columns of the tables loaded so far (the listing below loads the rest)."""
    import sqlite3

    found: list[str] = []
    for name in files:
        try:
            found += [row[1] for row in db.connection.execute(f'PRAGMA table_info("{name}")')]
        except sqlite3.Error:
            continue
    return found


def _describe_tables(db: _Database, files: dict[str, str]) -> str:
    import sqlite3

    if not files:
        return "There are no table files under /data: upload a CSV or spreadsheet first."
    lines = ["Tables you can query:"]
    for name, path in files.items():
        try:
            _ensure_loaded(db, name, path)
            columns = [row[1] for row in db.connection.execute(f'PRAGMA table_info("{name}")')]
            shown = ", ".join(_quoted(str(c)) for c in columns)
            lines.append(f"  {name} ({os.path.basename(path)}): {shown}")
        except (ValueError, OSError, sqlite3.Error) as exc:
            lines.append(f"  {name} ({os.path.basename(path)}): cannot be read: {exc}")
    return "\n".join(lines)
