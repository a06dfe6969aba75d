"""The host tools in the system prompt: each tool the page lends, in one line.

The page answers the agent's ``tools`` call (PROTOCOL.md §3); the environment carries
the list as ``tools`` only when there is one, so a session without tools gets the
prompt it always had."""

from __future__ import annotations

import json
from typing import Any

from reckon.agent._types import JSONDict

__all__ = ["describe_tools"]

_MAX_TOOLS = 30
_DESCRIPTION_CHARS = 300

_HOW = (
    "The page you run in lends these functions (host tools), in a `tools` namespace "
    "already defined. Call them in your code with keyword arguments, and await them:\n"
    "    rows = await tools.{example}\n"
    "    df = await tools.{example_frame}   # as_frame=True: a list of records as a DataFrame\n"
    "A call that is refused or fails raises ToolError with the reason; do not guess its "
    "data. Their results are data like the files: compute from them with code."
)


def _type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "|".join(json.dumps(v) for v in schema["enum"][:12])
    kind = schema.get("type", "any")
    text = "|".join(kind) if isinstance(kind, list) else str(kind)
    if text == "array":
        text = f"list[{_type(schema.get('items'))}]"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        text += f" {'' if low is None else low}..{'' if high is None else high}"
    return text


def _params(tool: JSONDict) -> tuple[JSONDict, JSONDict]:
    params = tool.get("parameters")
    params = params if isinstance(params, dict) else {}
    props = params.get("properties")
    return params, props if isinstance(props, dict) else {}


def _signature(tool: JSONDict) -> str:
    params, props = _params(tool)
    required = set(params.get("required") or [])
    args = [f"{name}{'' if name in required else '?'}: {_type(s)}" for name, s in props.items()]
    return f"{tool.get('name')}({', '.join(args)})"


def _example(tool: JSONDict, *, frame: bool) -> str:
    params, props = _params(tool)
    required = [n for n in params.get("required") or [] if n in props][:2]
    args = [f"{name}=..." for name in required]
    if frame:
        args.append("as_frame=True")
    return f"{tool.get('name')}({', '.join(args)})"


def describe_tools(tools: list[JSONDict]) -> list[str]:
    """The prompt's lines about ``tools`` (the environment's ``tools``)."""
    shown = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    if not shown:
        return []
    first = shown[0]
    how = _HOW.format(
        example=_example(first, frame=False), example_frame=_example(first, frame=True)
    )
    lines = [how]
    for tool in shown[:_MAX_TOOLS]:
        text = " ".join(str(tool.get("description") or "").split())
        if len(text) > _DESCRIPTION_CHARS:
            text = text[: _DESCRIPTION_CHARS - 1] + "…"
        line = f"- {_signature(tool)}: {text}"
        if tool.get("policy") == "ask":
            line += " (the person approves each call)"
        elif tool.get("policy") == "once":
            line += " (the person approves it once)"
        lines.append(line)
    if len(shown) > _MAX_TOOLS:
        lines.append(f"- … and {len(shown) - _MAX_TOOLS} more")
    return lines
