"""The sandbox side of Reckon: run cells in a persistent session, read uploaded tables.

Runs on CPython and in Pyodide alike; only ``_host`` (written separately) talks
to JavaScript.
"""

from __future__ import annotations

from reckon.kernel._files import list_files
from reckon.kernel._inspect import inspect
from reckon.kernel._read import read_table
from reckon.kernel._session import Kernel
from reckon.kernel._sql import run_sql, sql_tables, table_name
from reckon.kernel._tools import ToolError, Tools, set_replay, set_transport

__all__ = [
    "Kernel",
    "ToolError",
    "Tools",
    "inspect",
    "list_files",
    "read_table",
    "run_sql",
    "set_replay",
    "set_transport",
    "sql_tables",
    "table_name",
]
