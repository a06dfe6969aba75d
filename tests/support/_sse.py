"""Replies for the fake upstream, built from OpenAI's wire format: streamed chunks of
text and tool calls, and whole JSON answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ._upstream import Handler, Script


def sse(pieces: Sequence[bytes], *, delay: float = 0.0) -> Handler:
    """A handler streaming ``pieces`` as separate writes (so chunks split oddly)."""
    script = Script(chunks=list(pieces), stream=True, delay_between=delay)
    return lambda payload: script


def json_reply(status: int, body: dict[str, Any]) -> Handler:
    """A handler answering ``body`` as JSON with ``status``, streamed call or not."""
    script = Script(status=status, body=json.dumps(body).encode(), stream=False)
    return lambda payload: script


def split_every(raw: bytes, size: int) -> list[bytes]:
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return f"data: {json.dumps(body)}\n\n".encode()


def text_stream(text: str) -> bytes:
    words = [w + " " for w in text.split(" ")]
    words[-1] = words[-1][:-1]
    return b"".join(chunk({"content": w}) for w in words) + chunk({}, "stop") + b"data: [DONE]\n\n"


def tool_stream(code: str, *, call_id: str = "call_1") -> bytes:
    arguments = json.dumps({"code": code})
    half = len(arguments) // 2
    return (
        chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                               "function": {"name": "run_python", "arguments": arguments[:half]}}]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]},
                "tool_calls")
        + b"data: [DONE]\n\n"
    )  # fmt: skip


def event_stream(
    chunks: Sequence[dict[str, Any]], *, model: str = "scripted", comment: str | None = None
) -> Script:
    """A streamed reply of whole chunk objects (``choices`` and the like), each sent
    as one event with the usual ``id``/``object``/``model``, then ``[DONE]``."""
    events = [f": {comment}\n\n".encode()] if comment else []
    for item in chunks:
        data = {"id": "x", "object": "chat.completion.chunk", "model": model, **item}
        events.append(f"data: {json.dumps(data)}\n\n".encode())
    events.append(b"data: [DONE]\n\n")
    return Script(chunks=events, stream=True)
