"""Tool calls a model wrote as text, because its server did not parse them.

A model server that renders tools through the model's own chat template, and does
not parse the reply (llama-cpp-python with a GGUF template, a vLLM without a tool
parser), hands back the call as plain text. Small models write it in several ways:

- ``<tool_call>{"name": "run_python", "arguments": {...}}</tool_call>`` (Qwen, Hermes),
  sometimes without the closing tag;
- a fenced ```json block (or an untagged one) holding that object, its closing fence
  sometimes never written (the reply ended first);
- the bare object as the whole reply, ``{"name": …, "parameters": …}`` (Llama 3),
  optionally after ``<|python_tag|>``;
- ``<function=run_python>{…}</function>``.

The JSON is often not JSON: code in Python triple-quoted strings, raw newlines inside
strings, single quotes, ``True``/``None``. ``lenient_json`` repairs those.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from reckon.agent.models._fences import fenced_blocks, prose_around

__all__ = ["TextToolCalls", "find_text_tool_calls", "lenient_json"]

_TAGGED = re.compile(r"<tool_call>\s*(?P<body>.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FUNCTION_TAG = re.compile(
    r"<function=(?P<name>[A-Za-z_][\w.-]*)>\s*(?P<body>.*?)\s*(?:</function>|$)", re.DOTALL
)
_TRIPLE = re.compile(r'(?P<q>"""|\'\'\')(?P<body>.*?)(?P=q)', re.DOTALL)
# An opening fence the reply never closed, an object after it to the end.
_UNCLOSED = re.compile(
    r"^[ \t]{0,3}`{3,}[ \t]*(?P<info>[\w-]*)[ \t]*\n(?P<body>\{.*)\Z", re.M | re.S
)
_JSON_LANGUAGES = {"", "json", "tool_call", "tool", "function", "python", "py", "javascript"}


@dataclass
class TextToolCalls:
    """The calls found in a reply's text, the prose before and between them, and the
    prose ``after`` the last one."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    after: str = ""
    tagged: bool = False  # written in a template's tags, not as JSON in a block


def find_text_tool_calls(reply: str, *, names: set[str]) -> TextToolCalls | None:
    """The tool calls written in ``reply``, or ``None`` when it has none.

    ``names`` are the tools offered: an object counts as a call only when it names
    one of them, so a JSON answer that happens to have a ``name`` key is left alone.
    Each call is ``{"name": str, "arguments": dict | str}``.
    """
    calls: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    for match in _TAGGED.finditer(reply):
        call = _as_call(lenient_json(match.group("body")), names)
        if call is not None:
            calls.append(call)
            spans.append(match.span())
    for match in _FUNCTION_TAG.finditer(reply):
        if match.group("name") in names:
            arguments = lenient_json(match.group("body"))
            calls.append({"name": match.group("name"), "arguments": arguments or {}})
            spans.append(match.span())
    tagged = bool(calls)  # found in a template's tags, before any block is read
    if not calls:
        for block in fenced_blocks(reply):
            if block.language not in _JSON_LANGUAGES or not block.body.lstrip().startswith("{"):
                continue
            call = _as_call(lenient_json(block.body), names)
            if call is not None:
                calls.append(call)
                spans.append((block.start, block.end))
    unclosed = None if calls or fenced_blocks(reply) else _UNCLOSED.search(reply)
    if unclosed is not None and unclosed.group("info").lower() in _JSON_LANGUAGES:
        call = _as_call(lenient_json(unclosed.group("body")), names)
        if call is not None:
            calls.append(call)
            spans.append((unclosed.start(), len(reply)))
    if not calls:
        bare = reply.strip().removeprefix("<|python_tag|>").strip()
        if bare.startswith("{"):
            call = _as_call(lenient_json(bare), names)
            if call is not None:
                return TextToolCalls([call], "", tagged=bare != reply.strip())
        return None
    text, after = prose_around(reply, spans)
    return TextToolCalls(calls, text, after, tagged=tagged)


def _as_call(value: Any, names: set[str]) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    function = value.get("function")
    if isinstance(function, dict):  # the OpenAI wire shape, copied into the text
        value = function
    name = value.get("name", function if isinstance(function, str) else None)
    if not isinstance(name, str) or name not in names:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        parsed = lenient_json(arguments)
        arguments = parsed if isinstance(parsed, dict) else arguments
    return {"name": name, "arguments": arguments}


def lenient_json(text: str) -> Any:
    """``text`` as JSON, repairing what models break; ``None`` when nothing reads it."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("{{") and text.endswith("}}"):
        text = text[1:-1].strip()  # braces doubled as in a format string (seen)
    for candidate in (text, _strings_repaired(text)):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    try:  # a Python literal: single quotes, True/None, triple-quoted strings
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # TypeError: a set of dicts or lists, {{"name": …}} (seen, the ask ended in a crash)
        value = None
    if isinstance(value, dict | list | str):
        return value
    return _code_only(text)


def _strings_repaired(text: str) -> str:
    """Triple-quoted strings become JSON strings; raw control characters get escaped."""
    text = _TRIPLE.sub(lambda m: json.dumps(m.group("body")), text)
    out: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char in "\n\r\t":
                char = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char]
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out)


def _code_only(text: str) -> dict[str, Any] | None:
    """Last resort: the name and the ``code`` string of an object nothing else parses
    (say, quotes left unescaped inside the code)."""
    name = re.search(r'"name"\s*:\s*"([^"]+)"', text)
    code = re.search(r'"code"\s*:\s*"(?P<body>.*)"\s*\}\s*\}?\s*$', text, re.DOTALL)
    if code is None:
        return None
    body = code.group("body").replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t")
    arguments = {"code": body.replace("\\\\", "\\")}
    return {"name": name.group(1), "arguments": arguments} if name else arguments
