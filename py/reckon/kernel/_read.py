"""``read_table`` as cells call it: the table reader, or DuckDB for part of a file.

With ``columns=`` or ``where=`` the file is read through run_sql's engine, which scans
it and keeps only those columns and rows; otherwise ``tables.read_table`` reads it
whole. Kept apart from both, so that neither the reader nor the SQL side (which
reads with it what DuckDB cannot) imports the other.
"""

from __future__ import annotations

from typing import Any

from reckon.kernel import tables
from reckon.kernel._sql import query_file

__all__ = ["read_table"]


def read_table(
    path: str,
    *,
    sheet: str | int | None = 0,
    columns: list[str] | None = None,
    where: str | None = None,
    tidy: bool = True,
    **kwargs: Any,
) -> Any:
    """Read a table file into a ``pandas.DataFrame``, whatever its format or encoding.

    Sniffs the encoding (BOM, UTF-16, UTF-8; else a detector: Big5, Shift-JIS,
    GB18030, cp1251, cp1252, ...), the delimiter, junk lines above the header and
    rows longer than the header; reads spreadsheets, JSON, Parquet and a zip
    holding one table. For a workbook, ``sheet`` picks the sheet by name or
    position (the first by default); ``sheet=None`` (or ``"*"``) reads every
    sheet into one table with a ``sheet`` column. Extra keyword arguments go to
    the pandas reader. Raises ``ValueError`` with what to do when the file
    cannot be read.

    Without pandas options the table is tidied as an analyst would (``tidy=False``
    reads it as the file writes it): a header over several lines gives one name per
    column, notes below the table are left out, padding around names and text values
    goes, numbers with thousands separators, currency or percent signs and missing
    markers (``****``, ``.``, ``n/a``) are read as numbers, and dates as dates.

    ``columns=[...]`` and ``where="<SQL condition>"`` read through DuckDB (run_sql's
    engine), which scans the file and keeps only those columns and the rows that
    match: a file larger than memory gives a small frame
    (``read_table("/data/big.csv", columns=["region", "price"], where="price > 100")``).
    """
    if columns is not None or where is not None:
        if kwargs or sheet != 0:
            raise ValueError(
                "columns= and where= read the file through DuckDB; they cannot be combined "
                "with sheet= or pandas options. Read it whole with those options instead."
            )
        return query_file(path, columns=None if columns is None else list(columns), where=where)
    return tables.read_table(path, sheet=sheet, tidy=tidy, **kwargs)
