"""Finding the code in a model reply: fenced blocks and tool-call arguments."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass

from reckon.agent.models._fences import Fenced, fenced_blocks, prose_around
from reckon.agent.models._toolcalls import lenient_json

__all__ = [
    "CodeBlocks",
    "ToolArguments",
    "extract_code_blocks",
    "parse_tool_arguments",
    "unrun_blocks",
]

_RUNNABLE = {"", "python", "py", "python3", "py3", "ipython", "pycon", "sql"}
_TAGGED = _RUNNABLE - {""}
# Prose that announces what follows as output, not code: "The output will be:",
# "This prints:", "Result:". A small model writes its guess of the output in an
# untagged block after its code; run, it was a SyntaxError the model never wrote.
_ANNOUNCES_OUTPUT = re.compile(
    r"\b(output|outputs|prints|printed|will print|expected|will be|would be|should be|"
    r"looks? like)\b[^\n]*:?\s*$",
    re.IGNORECASE,
)
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


def extract_code_blocks(reply: str, *, quoted: tuple[str, ...] = ()) -> CodeBlocks | None:
    """All runnable fenced blocks of ``reply``, joined in order, or ``None``.

    We run every ``python``/``py`` block rather than only the last one: in code-block
    mode models often split one program (imports, then the work) across blocks, and
    running only the last would lose its setup. A ``sql`` block runs as ``run_sql``.
    An untagged block runs only when it is code: it compiles as Python, no block of
    the reply is tagged (a model that tags its code does not leave code untagged),
    and the prose before it does not announce output ("The output will be:"). Blocks
    of another language (``text``, ``bash``, ``json``…) are shown, not run. A block that
    is ``quoted`` (an earlier cell) beside other code is the old cell shown, not run: seen,
    a fix followed by the failed cell again, which ran and failed after the fix printed.
    A block whose every line an earlier block holds is that code explained, not run.
    """
    blocks: list[str] = []
    spans: list[tuple[int, int]] = []
    fenced = fenced_blocks(reply)
    for block in fenced:
        if not _runs(block, reply, fenced):
            continue
        body = block.body
        if block.language == "pycon":
            body = "\n".join(
                line[4:] for line in body.splitlines() if line.startswith((">>> ", "... "))
            )
        if block.language == "sql":
            body = sql_cell(body) if body.strip() else ""
        # A fence under a list item is indented with it: as a cell, an IndentationError.
        body = textwrap.dedent(body)
        if body.strip() and not _repeats(body, blocks):
            blocks.append(body.rstrip())
        spans.append((block.start, block.end))
    old = {q.strip() for q in quoted if q.strip()}
    blocks = [b for b in blocks if b.strip() not in old] or blocks
    if not blocks:
        return None
    text, after = prose_around(reply, spans)
    return CodeBlocks(code="\n\n".join(blocks), text=text, after=after)


def _repeats(body: str, earlier: list[str]) -> bool:
    """Whether every line of ``body`` stands in a block before it: the explanation
    quoting the code piece by piece (seen: "### Explanation: 1. Load the DataFrame:"
    with the code's lines again in fences under each item, joined to the code and run
    as a second copy, which failed twice)."""
    seen = {line.strip() for block in earlier for line in block.splitlines()}
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    return bool(earlier) and all(line in seen for line in lines)


def unrun_blocks(reply: str) -> list[str]:
    """The languages of the fenced blocks of ``reply`` that do not run (``""`` for an
    untagged one): an answer that is only these is code the model typed, not ran."""
    fenced = fenced_blocks(reply)
    return [b.language for b in fenced if b.body.strip() and not _runs(b, reply, fenced)]


def _runs(block: Fenced, reply: str, fenced: list[Fenced]) -> bool:
    if block.language not in _RUNNABLE:
        return False
    if block.language:
        return True
    if any(other.language in _TAGGED for other in fenced):
        return False
    return _is_code(block.body) and not _ANNOUNCES_OUTPUT.search(reply[: block.start])


def _is_code(body: str) -> bool:
    """Python that compiles and does something: not only values written out (``42``,
    ``[1, 2]``, a name), which is what a model's guess of the output looks like."""
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError):
        return False
    return any(not (isinstance(node, ast.Expr) and _literal(node.value)) for node in tree.body)


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(_literal(e) for e in [*node.keys, *node.values] if e is not None)
    return False


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
