"""The system prompt: what the sandbox has, what the user uploaded, the rules."""

from __future__ import annotations

from typing import Any

from reckon.agent._privacy import Privacy
from reckon.agent._types import JSONDict

__all__ = ["build_system_prompt", "describe_file"]

_MAX_COLUMNS = 40
_MAX_PACKAGES = 60

_RULES = """\
How to work:
- Compute, don't guess: every number in your answer must come from code you ran.
- Keep each cell short; print what you need to see (shapes, heads, the numbers), not whole tables.
- Variables persist between cells, so build on earlier results instead of reloading.
- Read the files with the `read_with` line given below. If a file is messy (odd encoding,
  delimiter, header rows), `read_table(path)` is pre-loaded and guesses these for you.
- Matplotlib figures are captured automatically when the cell ends: do not call plt.show()
  or savefig for display. You get a text description of each figure; the user sees the image.
- Files you write under {output_dir} can be downloaded by the user; say so when you write one.
- There is no network and no pip install: use only the packages listed.
- Make the work reproducible: seed any randomness (`np.random.default_rng(0)`,
  `random.seed(0)`, `random_state=0`) and do not use the current date or time
  (`datetime.now()`, `time.time()`) unless the question asks for it.
- If a cell fails, read the traceback, fix the cause and run again.
- Run code with the run_python tool. For filtering, grouping, joining and ranking tables
  you may use the run_sql tool instead (SQLite; each table file is a table, named below).
  If you have no tools, put the code in one ```python block and nothing else runnable
  (`run_sql("SELECT …")` works there too); the output comes back in the next message.
- If the question asks for the answer in a particular format (for example @name[value]),
  give the final answer in exactly that format.
- When you are done, answer in plain words without code: lead with the result, quote the
  numbers you computed, and mention files or figures you produced."""


_SCHEMA_ONLY = """\
Privacy: the user shares only schemas, shapes, dtypes and aggregates with you. Values
from their files are replaced by [hidden] in every output you see{allowed}. Do not print
rows; compute counts, sums, means and other aggregates, and answer from those."""


def build_system_prompt(environment: JSONDict, *, privacy: Privacy | None = None) -> str:
    """The system message for ``environment`` (python, packages, files, data_dir, output_dir)."""
    python = str(environment.get("python") or "3")
    data_dir = str(environment.get("data_dir") or "/data")
    output_dir = str(environment.get("output_dir") or "/output")
    lines = [
        "You are Reckon, a data analyst who answers by running Python in a sandbox "
        "(Pyodide in the user's browser).",
        "",
        f"Environment: Python {python}.",
    ]
    packages = [str(p) for p in environment.get("packages") or []]
    if packages:
        shown = ", ".join(packages[:_MAX_PACKAGES])
        more = f" and {len(packages) - _MAX_PACKAGES} more" if len(packages) > _MAX_PACKAGES else ""
        lines.append(f"Packages you can import: {shown}{more}.")
    lines.append(f"The user's files are in {data_dir}; write results to {output_dir}.")
    files = [f for f in environment.get("files") or [] if isinstance(f, dict)]
    if files:
        lines += ["", f"Files in {data_dir}:"]
        lines += [describe_file(f) for f in files]
    else:
        lines += ["", "The user has not uploaded any files yet."]
    lines += ["", _RULES.format(output_dir=output_dir)]
    if privacy is not None and privacy.hides:
        allowed = sorted(privacy.allow_columns)
        shown = f" (except the columns {', '.join(allowed)})" if allowed else ""
        lines += ["", _SCHEMA_ONLY.format(allowed=shown)]
    return "\n".join(lines)


def describe_file(entry: JSONDict) -> str:
    """One file's entry in the prompt, from its inspect dict (PROTOCOL section 2)."""
    path = str(entry.get("path") or entry.get("name") or "?")
    if entry.get("status") == "error":
        return f"- {path}: cannot be read ({entry.get('message', 'unknown problem')})"
    kind = entry.get("kind")
    if kind == "table":
        head = f"- {path}: table"
        if entry.get("format"):
            head += f" ({entry['format']})"
        if entry.get("rows") is not None:
            head += f", {entry['rows']} rows"
        lines = [head]
        columns = _columns(entry.get("columns"))
        if columns:
            shown = ", ".join(columns[:_MAX_COLUMNS])
            more = (
                f", … ({len(columns) - _MAX_COLUMNS} more)" if len(columns) > _MAX_COLUMNS else ""
            )
            lines.append(f"  columns: {shown}{more}")
        if entry.get("read_with"):
            lines.append(f"  read with: {entry['read_with']}")
        if entry.get("sql_table"):
            lines.append(f"  SQL table: {entry['sql_table']}")
        notes = [str(n) for n in entry.get("notes") or []]
        if notes:
            lines.append(f"  notes: {'; '.join(notes)}")
        return "\n".join(lines)
    if kind == "text":
        line = f"- {path}: text"
        if entry.get("size") is not None:
            line += f", {entry['size']} bytes"
        preview = str(entry.get("preview") or "").strip()
        if preview:
            first = preview.splitlines()[0][:120]
            line += f"; starts with: {first!r}"
        return line
    size = f", {entry['size']} bytes" if entry.get("size") is not None else ""
    return f"- {path}: {kind or 'file'}{size}"


def _columns(raw: Any) -> list[str]:
    columns: list[str] = []
    for column in raw or []:
        if isinstance(column, dict):
            dtype = f" ({column['dtype']})" if column.get("dtype") else ""
            columns.append(f"{column.get('name')!s}{dtype}")
        else:
            columns.append(str(column))
    return columns
