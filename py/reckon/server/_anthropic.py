"""OpenAI chat-completions to the Anthropic Messages API and back, for ``protocol = "anthropic"``.

The browser only speaks chat-completions, so for an Anthropic profile the relay
rewrites the request (`messages_request`) and the answer: a whole message with
`completion`, a stream with `StreamTranslator` (in ``_anthropic_stream``). Only
what the agent uses is translated: text, tool calls and tool results, images.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from reckon.server import _json
from reckon.server._anthropic_stream import FINISH_REASONS, StreamTranslator
from reckon.server._errors import RelayError

__all__ = ["ANTHROPIC_VERSION", "StreamTranslator", "completion", "messages_request", "translate"]

ANTHROPIC_VERSION = "2023-06-01"
# Anthropic requires max_tokens; OpenAI clients usually leave it out.
DEFAULT_MAX_TOKENS = 4096


_TOOL_CHOICES: dict[str, dict[str, str]] = {
    "auto": {"type": "auto"},
    "none": {"type": "none"},
    "required": {"type": "any"},
}


def _text(content: Any) -> str:
    """The text of an OpenAI content: a string or a list of ``{"type": "text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    """User or assistant content as Anthropic blocks, without the empty texts Anthropic refuses."""
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    blocks: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            head, _, data = url.partition(",")
            if head.startswith("data:") and head.endswith(";base64"):
                media = head[len("data:") : -len(";base64")]
                source = {"type": "base64", "media_type": media, "data": data}
            else:
                source = {"type": "url", "url": url}
            blocks.append({"type": "image", "source": source})
    return blocks


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments = _json.loads(raw)
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        # Anthropic wants an object; keep what the model wrote so it can see its mistake.
        arguments = {"arguments": raw}
    return {
        "type": "tool_use",
        "id": call.get("id"),
        "name": function.get("name"),
        "input": arguments,
    }


def messages_request(payload: dict[str, Any], model: str) -> dict[str, Any]:
    """The Anthropic Messages request for an OpenAI chat-completions request."""
    try:
        return _request(payload, model)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # A malformed message or tool would otherwise surface as the relay's own 500.
        raise RelayError(
            400,
            f"The request cannot be translated for an Anthropic model server ({exc!r}); "
            "check the shape of 'messages' and 'tools'.",
        ) from None


def _request(payload: dict[str, Any], model: str) -> dict[str, Any]:
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in payload["messages"]:
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
            continue
        if role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id"),
                "content": _text(message.get("content")),
            }
            role, blocks = "user", [result]
        elif role == "assistant":
            blocks = _blocks(message.get("content"))
            blocks += [_tool_use(c) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        elif role == "user":
            blocks = _blocks(message.get("content"))
        else:
            raise RelayError(
                400, f"Unknown message role {role!r}; use system, user, assistant, tool."
            )
        if not blocks:
            continue
        # Anthropic wants user and assistant turns to alternate.
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})

    body: dict[str, Any] = {
        "model": model,
        "max_tokens": payload.get("max_completion_tokens")
        or payload.get("max_tokens")
        or DEFAULT_MAX_TOKENS,
        "messages": turns,
    }
    if any(system):
        body["system"] = "\n\n".join(s for s in system if s)
    if isinstance(payload.get("temperature"), int | float):
        # OpenAI allows up to 2, Anthropic up to 1.
        body["temperature"] = min(float(payload["temperature"]), 1.0)
    if isinstance(payload.get("top_p"), int | float):
        body["top_p"] = payload["top_p"]
    stop = payload.get("stop")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    tools = [t["function"] for t in payload.get("tools") or [] if t.get("type") == "function"]
    if tools:
        body["tools"] = [
            {
                "name": f["name"],
                **({"description": f["description"]} if f.get("description") else {}),
                "input_schema": f.get("parameters") or {"type": "object", "properties": {}},
            }
            for f in tools
        ]
    choice = payload.get("tool_choice")
    if isinstance(choice, str) and choice in _TOOL_CHOICES:
        body["tool_choice"] = dict(_TOOL_CHOICES[choice])
    elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        body["tool_choice"] = {"type": "tool", "name": choice["function"].get("name")}
    if payload.get("parallel_tool_calls") is False and tools:
        body.setdefault("tool_choice", {"type": "auto"})["disable_parallel_tool_use"] = True
    if payload.get("stream") is True:
        body["stream"] = True
    return body


def completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    """The OpenAI ``chat.completion`` for a whole Anthropic message."""
    content = [b for b in message.get("content") or [] if isinstance(b, dict)]
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    calls = [
        {
            "id": b.get("id"),
            "type": "function",
            "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input") or {})},
        }
        for b in content
        if b.get("type") == "tool_use"
    ]
    answer: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        answer["tool_calls"] = calls
    usage = message.get("usage") or {}
    prompt, output = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    return {
        "id": message.get("id", "msg"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": message.get("model", model),
        "choices": [
            {
                "index": 0,
                "message": answer,
                "finish_reason": FINISH_REASONS.get(message.get("stop_reason") or "", "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        },
    }


async def translate(
    chunks: AsyncIterator[bytes], *, stream: bool, model: str, include_usage: bool
) -> AsyncIterator[bytes]:
    """An Anthropic answer's bytes as the bytes of the matching OpenAI answer.

    Empty pieces are skipped so the relay's wait for a first chunk waits for
    something the browser can use.
    """
    if not stream:
        body = b"".join([c async for c in chunks])
        try:
            message = _json.loads(body)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("type") != "message":
            raise RelayError(
                502, "The model server answered something that is not an Anthropic message."
            )
        yield _json.dumps(completion(message, model))
        return
    translator = StreamTranslator(model=model, include_usage=include_usage)
    async for chunk in chunks:
        data = translator.feed(chunk)
        if data:
            yield data
    ending = translator.close()
    if ending:
        yield ending
