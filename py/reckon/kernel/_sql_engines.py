"""The engines run_sql runs on, and DuckDB's scan of a file in place.

In the browser, DuckDB-wasm in the sandbox worker (the module ``_reckon_duckdb`` that
web/sandbox/worker/sql.js registers; results arrive as Arrow IPC bytes); on CPython,
the ``duckdb`` package when it is installed, else SQLite with every table loaded whole
(the engine before DuckDB). ``_sql`` picks one; ``_sql_database`` keeps which file each
table holds.
"""

from __future__ import annotations

import abc
import codecs
import os
import re
from typing import Any

from reckon.kernel.tables import read_head
from reckon.kernel.tables._encoding import TextScan
from reckon.kernel.tables._sniff import WHITESPACE, sniff_layout

__all__ = ["SqlError", "_BrowserDuckDB", "_Engine", "_NativeDuckDB", "_SQLite"]

_TEXT = {".csv", ".tsv", ".psv", ".ssv", ".txt", ".tab", ".dat"}
_SQL_STOPPED = "the query was stopped"  # the bridge's word for a cancelled query (sql.js)


class SqlError(Exception):
    """A query the engine refused, with the engine's message."""


class _Engine(abc.ABC):
    """What run_sql needs of a database: run a query, make a file a table."""

    name = "DuckDB"

    @abc.abstractmethod
    def query(self, sql: str) -> Any:  # -> pandas.DataFrame; raises SqlError
        """The query's result as a pandas DataFrame; ``SqlError`` with the engine's message."""

    def execute(self, sql: str) -> None:
        self.query(sql)

    def register(self, path: str) -> None:  # noqa: B027 (only the browser's DuckDB needs it)
        """Make the file at ``path`` readable under that name (the browser's DuckDB)."""

    def source(self, path: str) -> str | None:
        """The SQL that scans ``path`` in place, or ``None`` when it cannot."""
        return _duckdb_source(path)

    @abc.abstractmethod
    def load_frame(self, name: str, frame: Any) -> None:
        """Make the pandas DataFrame ``frame`` the table ``name``."""

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


def _js_message(exc: BaseException) -> str:
    text = str(exc)
    # A JsException reads "Error: <DuckDB's message>".
    return text.removeprefix("Error: ")
