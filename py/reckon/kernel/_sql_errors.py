"""What a failed SQL query says: the engine's message, a hint at the fix, the tables.

A model (or a person) fixes a query from its error alone, so the message names what
to write instead for the slips made most (a column with spaces, a function SQLite
lacks, LIKE on dates, an extension the sandbox cannot load, a row DuckDB cannot parse) and lists
every table with its columns.
"""

from __future__ import annotations

import os
import re

from reckon.kernel._sql_database import _Database, _short, _table_columns
from reckon.kernel._sql_engines import SqlError

__all__ = ["_label", "_query_error", "_quoted"]


def _label(db: _Database) -> str:
    return f"SQL error ({db.engine.name})"


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
# DuckDB's binder on LIKE (~~, !~~, ~~*) or a text function given a date or a time.
_TEXT_ON_DATES = re.compile(
    r"No function matches the given name and argument types "
    r"'(?:!?~~\*?|contains|starts_with|ends_with|prefix|suffix|regexp_matches|substring)"
    r"\((TIMESTAMP|DATE|TIME)\w*,"
)


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
    typed = _TEXT_ON_DATES.search(message)
    if typed:
        # Seen in a real-model run: date LIKE '2024-02-%' on a column DuckDB read as
        # dates, failing twice with the same query.
        return (
            f"\nLIKE and text functions take text, and this column holds {typed.group(1)}s: "
            "compare them as dates (date >= '2024-02-01' AND date < '2024-03-01'), take "
            "their parts (year(date) = 2024 AND month(date) = 2), or make them text first "
            "(strftime(date, '%Y-%m') = '2024-02')."
        )
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
