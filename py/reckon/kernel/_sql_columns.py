"""Which columns of a Parquet file a query needs, where DuckDB cannot scan the file.

The sandbox's DuckDB-wasm has no Parquet extension (the npm package builds none in,
and the sandbox downloads none), so a Parquet upload is read with pyarrow and handed
to DuckDB as a table. pyarrow reads only the column chunks it is asked for, straight
from the mounted file: loading only the columns a query names keeps a file larger
than memory usable, as a CSV view is. A later query that needs more columns loads
them then.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["needed_columns", "parquet_columns", "read_parquet_columns"]

_WORD = re.compile(r'"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*)')
# `SELECT *`, `SELECT DISTINCT *`, `, *`, `t.*`, COLUMNS(...): every column.
_EVERY = re.compile(r"\bselect\s+(?:distinct\s+)?\*|,\s*\*|\.\*|\bcolumns\s*\(", re.I)


def parquet_columns(path: str) -> list[str]:
    """The file's column names, from its footer (nothing else is read)."""
    import pyarrow.parquet as pq

    return [str(name) for name in pq.read_schema(path).names]


def needed_columns(text: str | None, columns: list[str]) -> list[str]:
    """The columns of ``columns`` that ``text`` (a query, or a column list and a
    condition) names, in the file's order; all of them for ``SELECT *`` and the like,
    or when ``text`` is None; the first when it names none (``COUNT(*)`` needs the
    rows, not the values)."""
    if text is None or _EVERY.search(text):
        return list(columns)
    words = set()
    for quoted, plain in _WORD.findall(text):
        words.add((quoted.replace('""', '"') if quoted else plain).lower())
    chosen = [c for c in columns if c.lower() in words]
    return chosen or columns[:1]


def read_parquet_columns(path: str, columns: list[str]) -> Any:
    """Those columns of the file as a pandas DataFrame."""
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=columns).to_pandas()
