"""Finding the code in a model reply: fenced blocks and tool-call arguments."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from reckon.agent._fences import fenced_blocks, prose_around
from reckon.agent._toolcalls import lenient_json

__all__ = ["CodeBlocks", "ToolArguments", "extract_code_blocks", "parse_tool_arguments"]

_RUNNABLE = {"", "python", "py", "python3", "py3", "ipython", "pycon"}
_TOOL_NAMES = {"run_python", "python", "run_code", "execute_python", "code_interpreter", "exec"}


@dataclass
class CodeBlocks:
    """The runnable code of a reply, the prose before and between its blocks, and the
    prose ``after`` the last one (written before the code ran: see ``Move.after``)."""

    code: str
    text: str
    after: str = ""


@dataclass
class ToolArguments:
    """The code of a tool call, or why it could not be read."""

    code: str | None
    problem: str | None = None


def extract_code_blocks(reply: str) -> CodeBlocks | None:
    """All runnable fenced blocks of ``reply``, joined in order, or ``None``.

    We run every ``python``/``py``/untagged block rather than only the last one:
    in code-block mode models often split one program (imports, then the work)
    across blocks, and running only the last would lose its setup. Blocks tagged
    with another language (``text``, ``bash``, ``json``…) are shown, not run.
    """
    blocks: list[str] = []
    spans: list[tuple[int, int]] = []
    for block in fenced_blocks(reply):
        if block.language not in _RUNNABLE:
            continue
        body = block.body
        if block.language == "pycon":
            body = "\n".join(
                line[4:] for line in body.splitlines() if line.startswith((">>> ", "... "))
            )
        if body.strip():
            blocks.append(body.rstrip())
        spans.append((block.start, block.end))
    if not blocks:
        return None
    text, after = prose_around(reply, spans)
    return CodeBlocks(code="\n\n".join(blocks), text=text, after=after)


def parse_tool_arguments(name: str, arguments: str) -> ToolArguments:
    """The ``code`` of a ``run_python`` call, recovering from the usual model slips.

    Recovered: arguments that are a bare JSON string, an object with another
    single string field, raw Python instead of JSON, or JSON broken only by
    unescaped newlines/quotes inside ``"code"``. Anything else is a problem the
    model is told about, so it can call again.
    """
    if name in _SQL_NAMES:
        return _sql_arguments(arguments)
    if name not in _TOOL_NAMES:
        return ToolArguments(
            None, f"there is no tool named {name!r}; the tools are run_python and run_sql"
        )
    raw = arguments.strip()
    if not raw:
        return ToolArguments(None, 'run_python was called without arguments; pass {"code": ...}')
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return _recover(raw, exc)
    if isinstance(value, str):
        # Arguments encoded twice ("{\"code\": …}" as a JSON string): a chat template
        # that writes `arguments | tojson` teaches small models this form.
        inner = _json_object(value)
        value = inner if inner is not None else value
    if isinstance(value, str):
        return ToolArguments(value)
    if isinstance(value, dict):
        if isinstance(value.get("code"), str):
            return ToolArguments(value["code"])
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1:
            return ToolArguments(strings[0])
    return ToolArguments(
        None, f'run_python expects a JSON object {{"code": "..."}}, got {raw[:200]}'
    )


def _json_object(text: str) -> dict[str, object] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _recover(raw: str, exc: json.JSONDecodeError) -> ToolArguments:
    if not raw.startswith("{"):
        # Raw Python sent as the arguments string (some local models do this).
        return ToolArguments(raw)
    repaired = lenient_json(raw)  # triple-quoted strings, raw newlines, Python literals
    if isinstance(repaired, dict) and isinstance(repaired.get("code"), str):
        return ToolArguments(repaired["code"])
    match = re.match(r'^\{\s*"code"\s*:\s*"(?P<body>.*)"\s*\}$', raw, re.DOTALL)
    if match:
        body = match.group("body")
        # Newlines and tabs that should have been escaped are the common breakage.
        repaired = body.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
        try:
            code = json.loads(f'"{repaired}"')
        except json.JSONDecodeError:
            code = _unescape(body)
        if isinstance(code, str) and code.strip():
            return ToolArguments(code)
    return ToolArguments(
        None,
        f"the arguments of run_python are not valid JSON ({exc.msg} at character {exc.pos}); "
        'call it again with {"code": "<python source>"}',
    )


_SQL_NAMES = {"run_sql", "sql", "query_sql"}


def _sql_arguments(arguments: str) -> ToolArguments:
    """A run_sql call becomes a cell that calls the sandbox's ``run_sql`` helper, so
    it runs, shows, persists and replays like any other cell."""
    raw = arguments.strip()
    try:
        value = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        value = raw  # a bare query string instead of JSON
    if isinstance(value, dict):
        value = value.get("query", value.get("sql"))
    if not isinstance(value, str) or not value.strip():
        return ToolArguments(None, 'run_sql expects {"query": "<one DuckDB SQL query>"}')
    return ToolArguments(sql_cell(value))


def sql_cell(query: str) -> str:
    """The Python cell for a SQL query: readable when it spans lines."""
    query = query.strip()
    if "\n" in query and '"""' not in query and "\\" not in query:
        return f'run_sql("""\n{query}\n""")'
    return f"run_sql({query!r})"


def _unescape(body: str) -> str:
    # Last resort for quotes left unescaped: undo the escapes we can recognise.
    return body.replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
