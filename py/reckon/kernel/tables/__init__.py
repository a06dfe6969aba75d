"""The table reader: ``read_table`` reads what people really upload.

Delimited text of any encoding and layout (``_encoding``/``_detect`` name the
encoding, ``_sniff`` the layout, ``_delimited`` parses) and spreadsheets
(``_workbook`` opens the file, ``_ods`` streams OpenDocument, ``_sheets`` picks
and cleans a sheet). ``_tables`` chooses between them. Runs on CPython and in
Pyodide alike; nothing here knows about cells or the page.
"""

from __future__ import annotations

from reckon.kernel.tables._delimited import Loaded, read_delimited
from reckon.kernel.tables._encoding import head_encoding, looks_binary, read_head, scan_text
from reckon.kernel.tables._tables import load_table, read_table, table_format, tidy_loaded

__all__ = [
    "Loaded",
    "head_encoding",
    "load_table",
    "looks_binary",
    "read_delimited",
    "read_head",
    "read_table",
    "scan_text",
    "table_format",
    "tidy_loaded",
]
