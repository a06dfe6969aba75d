"""Text-to-SQL in the demo model: rankings, group-bys, counts and filters as one
SQL query through the ``run_sql`` tool, when the person asks in SQL words.

A question takes this path when it says "sql" or "query", or uses SQL phrasing
("select … from", "group by", "order by", "limit 5"). The query's column names
are the labels the Python cells print (``matching_rows``, ``total_rows`` …), so
the answer is written the same way, quoting the table the query returned. If
the query fails, the next attempt is the Python cell that reads the file with
``read_table``.
"""

from __future__ import annotations

import os
import re

from reckon.agent._types import JSONDict
from reckon.agent.demo._columns import Column
from reckon.agent.demo._intent import Intent

__all__ = ["literal_query", "plan_sql", "sql_answer", "sql_stdout", "wants_sql"]

_SQL_WORDS = re.compile(
    r"\bsql\b|\bquery\b|\bselect\b.+\bfrom\b|\bgroup\s+by\b|\border\s+by\b|\blimit\s+\d+\b", re.I
)
_SQL_AGG = {"mean": "AVG", "sum": "SUM", "max": "MAX", "min": "MIN", "count": "COUNT"}
_ROW = re.compile(r"^\s*\S+\s+(?P<key>.+?)\s+(?P<value>\S+)\s*$")


_LITERAL = re.compile(r"(?is)\bselect\b.*?\bfrom\s+\"?(?P<table>[A-Za-z_][\w]*)\"?[^;]*")


def literal_query(question: str, files: list[JSONDict]) -> str | None:
    """A whole ``SELECT … FROM <table> …`` statement typed in the question, over one
    of the uploaded tables: run as it is."""
    match = _LITERAL.search(question)
    if match is None:
        return None
    tables = {str(f.get("sql_table") or "").lower() for f in files}
    if match.group("table").lower() not in tables:
        return None
    query = match.group(0).strip().rstrip("?.!").strip()
    # "select the rows from sales" is English, not SQL: require SQL punctuation or clauses.
    if not re.search(r"[*,()]|\b(where|group|order|limit|join)\b", query, re.I):
        return None
    return query


def sql_answer(table_text: str) -> str:
    """The answer to a query the person wrote: the rows it returned, quoted."""
    lines = [line.rstrip() for line in table_text.splitlines() if line.strip()]
    if not lines:
        return "The query ran but returned no table."
    shown = re.search(r"^\[(\d+) rows x", lines[-1])
    rows = [line.split()[1:] for line in lines[1:] if not re.match(r"^\s*(\.\.\.|\[\d)", line)]
    count = int(shown.group(1)) if shown else len(rows)
    # No code fence: a fenced block in an answer would be taken for a new cell.
    listed = "; ".join(" ".join(row) for row in rows[:10])
    more = f"; and {count - 10} more" if count > 10 else ""
    columns = ", ".join(lines[0].split())
    return (
        f"The query returned {count} row{'s' if count != 1 else ''} "
        f"(columns: {columns}): {listed}{more}."
    )


def wants_sql(question: str) -> bool:
    """Did the person ask in SQL words (or for a query)?"""
    return _SQL_WORDS.search(question) is not None


def _table(intent: Intent) -> str:
    entry = intent.file or {}
    if entry.get("sql_table"):
        return _ident(str(entry["sql_table"]))
    # The sandbox names tables this way too (reckon.kernel._sql.table_name).
    stem = os.path.basename(str(entry.get("path") or entry.get("name") or "table"))
    for suffix in (".gz", ".zip"):
        stem = stem.removesuffix(suffix)
    stem = os.path.splitext(stem)[0]
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", stem).strip("_").lower() or "table"
    return _ident(f"t_{name}" if name[0].isdigit() else name)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _col(column: Column) -> str:
    return _ident(column.name)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def plan_sql(intent: Intent) -> str | None:
    """The query for ``intent``, or ``None`` when SQL is not the way (the Python cell is)."""
    if intent.file is None or intent.period:
        return None  # a period of dates ("per month"): the Python cell groups by it
    table = _table(intent)
    if intent.kind == "groupby":
        return _groupby(intent, table)
    if intent.kind == "top":
        return _top(intent, table)
    if intent.kind == "count":
        return _count(intent, table)
    if intent.kind == "aggregate" and intent.agg in _SQL_AGG and intent.numeric:
        column = _col(intent.numeric[0])
        agg = _SQL_AGG[intent.agg]
        return (
            f'SELECT ROUND({agg}({column}), 4) AS "{intent.agg}",\n'
            f'       COUNT({column}) AS "values_used"\nFROM {table}'
        )
    return None


def _groupby(intent: Intent, table: str) -> str | None:
    group = intent.categorical[0]
    values = [c for c in intent.numeric if c != group]
    agg = intent.agg or "sum"
    if agg == "count" or not values:
        measure = "COUNT(*)"
    elif agg in _SQL_AGG:
        measure = f"ROUND({_SQL_AGG[agg]}({_col(values[0])}), 4)"
    else:
        return None  # a median: the Python cell computes it (as before DuckDB)
    key = _label(group)
    return (
        f'SELECT {key} AS {_ident(group.name)}, {measure} AS "value"\n'
        f'FROM {table}\nGROUP BY {key}\nORDER BY "value" DESC'
    )


def _label(column: Column) -> str:
    # Padded text labels ("East   ") are one group with "East", as in the Python cells.
    return f"TRIM({_col(column)})"


def _top(intent: Intent, table: str) -> str | None:
    numeric = intent.numeric or [c for c in intent.all_columns if c.numeric]
    labels = intent.categorical or [c for c in intent.all_columns if not c.numeric]
    if intent.group is not None:  # "which <group> has the most <measure>"
        labels, numeric = [intent.group], [intent.measure] if intent.measure else []
    grouped = bool(intent.categorical) or intent.group is not None
    order = "ASC" if intent.ascending else "DESC"
    if grouped and (intent.agg == "count" or not numeric):
        measure = "COUNT(*)"
    elif grouped and intent.agg in {"mean", "sum", ""}:
        value = _col(numeric[0])
        value = value if numeric[0].numeric else f"CAST({value} AS REAL)"  # numbers as text
        measure = f"ROUND({_SQL_AGG[intent.agg or 'sum']}({value}), 4)"
    elif grouped or not numeric:
        return None  # a median per group, or nothing to rank: the Python cell
    if grouped:
        label = _label(labels[0])
        return (
            f'SELECT {label} AS {_ident(labels[0].name)}, {measure} AS "value"\n'
            f'FROM {table}\nGROUP BY {label}\nORDER BY "value" {order}\nLIMIT {intent.n}'
        )
    value = _col(numeric[0])
    label = _col(labels[0]) if labels else 'rowid - 1 AS "row"'
    return (
        f'SELECT {label}, ROUND({value}, 4) AS "value"\nFROM {table}\n'
        f"WHERE {value} IS NOT NULL\nORDER BY {value} {order}\nLIMIT {intent.n}"
    )


def _count(intent: Intent, table: str) -> str | None:
    if intent.op == "rows":
        return f'SELECT COUNT(*) AS "rows" FROM {table}'
    if intent.op == "unique" and intent.columns:
        column = _col(intent.columns[0])
        return f'SELECT COUNT(DISTINCT {column}) AS "unique", COUNT(*) AS "rows" FROM {table}'
    if intent.op == "text" and intent.columns:
        column = _col(intent.columns[0])
        condition = f"LOWER(TRIM(CAST({column} AS TEXT))) = {_literal(intent.value.casefold())}"
    elif intent.op in {">", "<", ">=", "<=", "==", "!="} and intent.numeric:
        op = {"==": "=", "!=": "<>"}.get(intent.op, intent.op)
        condition = f"CAST({_col(intent.numeric[0])} AS REAL) {op} {intent.value}"
    else:
        return None
    return (
        f'SELECT COUNT(*) AS "matching_rows",\n'
        f'       (SELECT COUNT(*) FROM {table}) AS "total_rows"\n'
        f"FROM {table}\nWHERE {condition}"
    )


def sql_stdout(intent: Intent, table_text: str) -> str:
    """The query's result table as the ``label: value`` lines the Python cells print,
    so one answer writer serves both (every value is quoted from the table)."""
    lines = [line for line in table_text.splitlines() if line.strip()]
    if not lines:
        return ""
    header = lines[0].split()
    rows = [line for line in lines[1:] if not re.match(r"^\s*(\.\.\.|\[\d+ rows)", line)]
    if intent.kind in {"groupby", "top"}:
        items = [m.group("key", "value") for m in map(_ROW.match, rows) if m is not None]
        shown = re.search(r"^\[(\d+) rows x", lines[-1])  # pandas elides long tables
        count = shown.group(1) if shown else str(len(items))
        out = [f"groups: {count}"] if intent.kind == "groupby" else []
        return "\n".join(out + [f"  {key}: {value}" for key, value in items]) + "\n"
    if len(rows) != 1:
        return ""
    values = rows[0].split()[1:]  # after the index
    if len(values) != len(header):
        return ""
    pairs = zip(header, values, strict=True)
    return "".join(f"{name.replace('_', ' ')}: {value}\n" for name, value in pairs)
