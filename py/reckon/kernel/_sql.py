"""SQL over the uploaded tables with DuckDB: each table file under /data is a view.

``run_sql("SELECT region, AVG(price) FROM sales GROUP BY region")`` queries
``/data/sales.csv`` in place: the first time a query names a table, its file becomes
a DuckDB view over ``read_csv``/``read_parquet``/``read_json`` (scanned as the query
runs, never loaded whole), and again only when the file changes. A file DuckDB
cannot read itself (a spreadsheet, a zip, text that is not UTF-8, ragged rows) is
read with ``read_table`` and handed over as a table; a Parquet file the engine cannot
scan (the browser's), only the columns queries name (``_sql_columns``). The result is a pandas
DataFrame, so it shows as a table like any trailing value.

Engines: in the browser, DuckDB-wasm in the sandbox worker (the module
``_reckon_duckdb`` that web/sandbox/worker/sql.js registers; results arrive as
Arrow IPC bytes); on CPython, the ``duckdb`` package when it is installed, else
SQLite with every table loaded whole (the engine before DuckDB).
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from typing import Any

from reckon.kernel._sql_columns import needed_columns, parquet_columns, read_parquet_columns
from reckon.kernel.tables import read_head, read_table
from reckon.kernel.tables._encoding import TextScan
from reckon.kernel.tables._sniff import WHITESPACE, sniff_layout

__all__ = ["SQL_NOT_LOADED", "query_file", "run_sql", "sql_engine", "sql_tables", "table_name"]

_TABLE_SUFFIXES = {
    ".csv", ".tsv", ".psv", ".ssv", ".txt", ".xlsx", ".xlsm", ".xls", ".ods", ".json",
    ".jsonl", ".ndjson", ".parquet", ".zip", ".gz",
}  # fmt: skip
_TEXT = {".csv", ".tsv", ".psv", ".ssv", ".txt", ".tab", ".dat"}
# A file DuckDB cannot read in place is loaded whole with read_table: only up to this.
_FRAME_LIMIT = 512 * 1024 * 1024
# The worker looks for this sentence to load DuckDB after such a cell (sql.js).
SQL_NOT_LOADED = "DuckDB loads on the first cell that calls run_sql"
_SQL_STOPPED = "the query was stopped"  # the bridge's word for a cancelled query (sql.js)


class SqlError(Exception):
    """A query the engine refused, with the engine's message."""


class _Engine:
    """What run_sql needs of a database: run a query, make a file a table."""

    name = "DuckDB"

    def query(self, sql: str) -> Any:  # -> pandas.DataFrame; raises SqlError
        raise NotImplementedError

    def execute(self, sql: str) -> None:
        self.query(sql)

    def register(self, path: str) -> None:
        """Make the file at ``path`` readable under that name (the browser's DuckDB)."""

    def source(self, path: str) -> str | None:
        """The SQL that scans ``path`` in place, or ``None`` when it cannot."""
        return _duckdb_source(path)

    def load_frame(self, name: str, frame: Any) -> None:
        raise NotImplementedError

    def drop(self, name: str, kind: str) -> None:
        self.execute(f"DROP {kind} IF EXISTS {_ident(name)}")

    def columns(self, name: str) -> list[str]:
        return [str(c) for c in self.query(f"SELECT * FROM {_ident(name)} LIMIT 0").columns]


class _NativeDuckDB(_Engine):
    """The ``duckdb`` package on CPython (tests, benchmarks, exported notebooks)."""

    def __init__(self) -> None:
        import duckdb

        self._errors = (duckdb.Error,)
        self.connection = duckdb.connect(":memory:")
        for statement in _SETTINGS:
            self.connection.execute(statement)

    def query(self, sql: str) -> Any:
        try:
            relation = self.connection.sql(sql)
            if relation is None:  # a statement with no result (CREATE, SET)
                import pandas as pd

                return pd.DataFrame()
            kinds = [str(kind) for kind in relation.types]
            frame = relation.df()
        except self._errors as exc:
            raise SqlError(str(exc)) from None
        for i, kind in enumerate(kinds):
            # SUM and friends of integers are HUGEINT, which pandas gets as floats.
            if kind == "HUGEINT" and frame.iloc[:, i].notna().all():
                frame.isetitem(i, frame.iloc[:, i].astype("int64"))
        return frame

    def load_frame(self, name: str, frame: Any) -> None:
        self.connection.register("__reckon_frame", frame)
        try:
            self.execute(f"CREATE TABLE {_ident(name)} AS SELECT * FROM __reckon_frame")
        finally:
            self.connection.unregister("__reckon_frame")


class _BrowserDuckDB(_Engine):
    """DuckDB-wasm in the sandbox worker, called synchronously through ``bridge``."""

    def __init__(self, bridge: Any) -> None:
        self.bridge = bridge

    def query(self, sql: str) -> Any:
        import pyarrow as pa

        try:
            data = self.bridge.query(sql)
        except Exception as exc:  # pyodide.ffi.JsException: DuckDB's message
            message = _js_message(exc)
            if message == _SQL_STOPPED:  # the cell's deadline, or interrupt()
                raise KeyboardInterrupt from None
            raise SqlError(message) from None
        buffer = pa.py_buffer(data.to_py())
        # DuckDB-wasm answers with the Arrow IPC file format ("ARROW1" first).
        is_file = buffer.size >= 6 and buffer.slice(0, 6).to_pybytes() == b"ARROW1"
        reader = pa.ipc.open_file(buffer) if is_file else pa.ipc.open_stream(buffer)
        table = reader.read_all()
        frame = table.to_pandas()
        for i, field in enumerate(table.schema):
            # SUM and friends of integers are HUGEINT: Arrow decimals of scale 0.
            if pa.types.is_decimal(field.type) and field.type.scale == 0:
                column = frame.iloc[:, i]
                if column.notna().all():
                    frame.isetitem(i, column.map(int).astype("int64"))
        return frame

    def register(self, path: str) -> None:
        self.bridge.register(path)

    def source(self, path: str) -> str | None:
        # DuckDB-wasm's npm package has no Parquet (nor JSON) extension built in, and
        # the sandbox downloads none: read_table reads those files (with pyarrow).
        if os.path.splitext(path)[1].lower() == ".parquet":
            return None
        return _duckdb_source(path)

    def load_frame(self, name: str, frame: Any) -> None:
        import pyarrow as pa
        from pyodide.ffi import to_js

        table = pa.Table.from_pandas(frame, preserve_index=False)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        try:
            self.bridge.insertArrow(name, to_js(memoryview(sink.getvalue())))
        except Exception as exc:
            raise SqlError(_js_message(exc)) from None


class _SQLite(_Engine):
    """SQLite, every table loaded whole: only where DuckDB is missing."""

    name = "SQLite"

    def __init__(self) -> None:
        # Imported here: in Pyodide sqlite3 is a package of its own.
        import sqlite3

        self.connection = sqlite3.connect(":memory:")
        self._errors = (sqlite3.Error,)

    def query(self, sql: str) -> Any:
        import pandas as pd

        try:
            return pd.read_sql_query(sql, self.connection)
        except (*self._errors, pd.errors.DatabaseError) as exc:
            text = str(exc)
            # pandas wraps sqlite's message in "Execution failed on sql '...': <message>".
            match = re.search(r"Execution failed on sql .*?: (.*)$", text, re.S)
            raise SqlError(match.group(1) if match else text) from None

    def execute(self, sql: str) -> None:
        try:
            self.connection.execute(sql)
        except self._errors as exc:
            raise SqlError(str(exc)) from None

    def source(self, path: str) -> str | None:
        return None

    def load_frame(self, name: str, frame: Any) -> None:
        frame.to_sql(name, self.connection, if_exists="replace", index=False)

    def columns(self, name: str) -> list[str]:
        return [row[1] for row in self.connection.execute(f"PRAGMA table_info({_ident(name)})")]


# No network and no extension beyond those built in (the sandbox's DuckDB sets the
# same, then locks them: web/sandbox/worker/sql.js).
_SETTINGS = (
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
)


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


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _duckdb_source(path: str) -> str | None:
    """DuckDB's scan of ``path`` with what read_table would detect, or ``None`` when
    DuckDB cannot read it as read_table does (read_table reads it then). JSON goes
    through read_table: the sandbox's DuckDB has no JSON extension (it loads none),
    and JSON lines are the same table either way."""
    extension = os.path.splitext(path)[1].lower()
    if extension == ".parquet":
        return f"read_parquet({_string(path)})"
    if extension in _TEXT:
        return _csv_source(path, extension)
    return None


def _csv_source(path: str, extension: str) -> str | None:
    head = read_head(path)
    if not head or head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head[:8192]:
        return None
    try:
        # The head may end inside a character: only a wrong byte before that counts.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return None  # read_table finds the encoding
    scan = TextScan(encoding="utf-8", lines=0, size=os.path.getsize(path))
    layout = sniff_layout(path, scan, extension=extension)
    if layout.ragged or layout.sep == WHITESPACE or layout.thousands or layout.skipinitialspace:
        return None
    options = [f"delim = {_string(layout.sep)}", f"header = {layout.header is not None}"]
    if layout.skiprows:
        options.append(f"skip = {layout.skiprows}")
    if layout.decimal != ".":
        options.append(f"decimal_separator = {_string(layout.decimal)}")
    return f"read_csv({_string(path)}, {', '.join(options)})"


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
    frame = read_table(path)
    # Column names that SQL can use without quoting surprises.
    frame.columns = [
        str(c) if str(c).strip() else f"column_{i}" for i, c in enumerate(frame.columns)
    ]
    db.engine.load_frame(name, _one_type_a_column(frame))
    db.loaded[name] = (path, mtime, size, "TABLE")


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


def _js_message(exc: BaseException) -> str:
    text = str(exc)
    # A JsException reads "Error: <DuckDB's message>".
    return text.removeprefix("Error: ")
