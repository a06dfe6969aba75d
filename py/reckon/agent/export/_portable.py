"""What lets an exported notebook or script run outside the sandbox, and come back.

The sandbox reads ``/data`` and writes ``/output``; exported code reads ``data/`` and
writes ``output/`` next to the notebook (``portable_paths``, and ``sandbox_paths`` on
import), changing only string literals, never other code. ``SETUP_CODE``, the first code
cell of every export, makes ``read_table`` and ``run_sql`` work there: Reckon's own
helpers where Reckon is installed, else plain-pandas stand-ins.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

__all__ = ["SETUP_CODE", "portable_paths", "sandbox_paths"]

SETUP_CODE = """\
# Reckon ran this analysis in the browser, with the input files under /data and
# results under /output. Here they are read from ./data and written to ./output:
# copy the same input files into ./data next to this notebook.
import os
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

os.makedirs("output", exist_ok=True)
try:  # with Reckon installed (pip install -e <its checkout>): the browser's own helpers
    from reckon.kernel import read_table
    from reckon.kernel import run_sql as _run_sql

    run_sql = partial(_run_sql, data_dir="data")
except ImportError:  # plain pandas: simpler stand-ins (no sniffing of odd files)
    import re
    import sqlite3

    import pandas as pd

    def read_table(path, sheet=0, **kwargs):
        \"\"\"A table file as a DataFrame; sheet=None stacks a workbook's sheets.\"\"\"
        extension = os.path.splitext(str(path))[1].lower()
        if extension in (".xlsx", ".xlsm", ".xls", ".ods"):
            frames = pd.read_excel(path, sheet_name=sheet, **kwargs)
            if sheet is None or sheet == "*":
                parts = [f.assign(sheet=n) for n, f in frames.items()]
                return pd.concat(parts, ignore_index=True)
            return frames
        if extension in (".json", ".jsonl"):
            return pd.read_json(path, lines=extension == ".jsonl", **kwargs)
        if extension == ".parquet":
            return pd.read_parquet(path, **kwargs)
        options = {"sep": None, "engine": "python", **kwargs}  # sniffs , ; tab |
        try:
            return pd.read_csv(path, **options)
        except UnicodeDecodeError:
            return pd.read_csv(path, **{"encoding": "cp1252", **options})

    def run_sql(query, data_dir="data", limit=None):
        \"\"\"DuckDB (pip install duckdb), else SQLite, over the table files in data_dir.\"\"\"
        try:
            import duckdb
        except ImportError:
            duckdb = None
        db = duckdb.connect() if duckdb else sqlite3.connect(":memory:")
        words = set(re.findall(r"\\w+", query.lower()))
        for name in sorted(os.listdir(data_dir)):
            table = re.sub(r"[^0-9a-zA-Z_]+", "_", os.path.splitext(name)[0]).strip("_").lower()
            table = f"t_{table}" if table[:1].isdigit() else table
            if table in words:
                frame = read_table(os.path.join(data_dir, name))
                if duckdb:
                    db.register(table, frame)
                else:
                    frame.to_sql(table, db, index=False)
        if duckdb:
            result = db.sql(query)
            kinds = [str(kind) for kind in result.types]
            frame = result.df()
            for i, kind in enumerate(kinds):  # SUM of integers: a whole number, not 4.0
                if kind == "HUGEINT" and frame.iloc[:, i].notna().all():
                    frame.isetitem(i, frame.iloc[:, i].astype("int64"))
        else:
            frame = pd.read_sql_query(query, db)
        db.close()
        return frame if limit is None else frame.head(limit)"""

_SANDBOX_TO_PORTABLE = (("/data/", "data/"), ("/output/", "output/"))


def _rewrite_strings(code: str, pairs: Iterable[tuple[str, str]]) -> str:
    """Replace path prefixes inside string literals only, never in other code."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code
    pairs = list(pairs)
    lines = code.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (row, col_start, col_end, text)
    for tok in tokens:
        if tok.type != tokenize.STRING or tok.start[0] != tok.end[0]:
            continue
        text = tok.string
        prefix = re.match(r"^[A-Za-z]*['\"]{1,3}", text)
        if prefix is None:
            continue
        head = prefix.group(0)
        body = text[len(head) :]
        for old, new in pairs:
            if body.startswith(old):
                edits.append(
                    (tok.start[0], tok.start[1], tok.end[1], head + new + body[len(old) :])
                )
                break
    for row, start, end, replacement in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + replacement + line[end:]
    return "".join(lines)


def portable_paths(code: str) -> str:
    """``'/data/x.csv'`` -> ``'data/x.csv'``, ``'/output/y.png'`` -> ``'output/y.png'``."""
    return _rewrite_strings(code, _SANDBOX_TO_PORTABLE)


def sandbox_paths(code: str) -> str:
    """The reverse of `portable_paths`, for importing a notebook into a session."""
    return _rewrite_strings(code, [(new, old) for old, new in _SANDBOX_TO_PORTABLE])
