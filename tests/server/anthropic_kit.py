"""What the ``protocol = "anthropic"`` tests send and expect: the Messages API's SSE
events and whole answers, as the fake model server plays them (no pytest here)."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from reckon.server import Profile
from support import KEY_ENV, MODEL

HELLO: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
RUN_PYTHON: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "run_python",
        "description": "Run Python code in the kernel.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}},
            "required": ["code"],
        },
    },
}


def claude_profile(upstream_url: str, *, models: tuple[str, ...] = ()) -> Profile:
    """The profile ``claude``: the Messages API at ``upstream_url`` (a fake model
    server), with the test key; no ``models``: the relay asks the server for them."""
    return Profile(
        name="claude",
        base_url=f"{upstream_url}/v1",
        api_key_env=KEY_ENV,
        protocol="anthropic",
        models=list(models),
    )


def sse(kind: str, **data: Any) -> bytes:
    # Anthropic sends UTF-8 as it is, so a split may fall inside a character.
    event = json.dumps({"type": kind, **data}, ensure_ascii=False)
    return f"event: {kind}\ndata: {event}\n\n".encode()


def message_start(input_tokens: int = 11) -> bytes:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return sse("message_start", message=message)


def text_block(index: int, *pieces: str) -> list[bytes]:
    return [
        sse("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *[
            sse("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
            for p in pieces
        ],
        sse("content_block_stop", index=index),
    ]


def tool_block(index: int, tool_id: str, name: str, *pieces: str) -> list[bytes]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return [
        sse("content_block_start", index=index, content_block=block),
        *[
            sse(
                "content_block_delta",
                index=index,
                delta={"type": "input_json_delta", "partial_json": p},
            )
            for p in pieces
        ],
        sse("content_block_stop", index=index),
    ]


def ending(stop_reason: str, output_tokens: int = 7) -> list[bytes]:
    return [
        sse(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        sse("message_stop"),
    ]


TEXT_STREAM = [
    message_start(),
    sse("ping"),
    *text_block(0, "Hel", "lo → é"),
    *ending("end_turn"),
]

TOOL_STREAM = [
    message_start(),
    *text_block(0, "Let me compute."),
    *tool_block(1, "toolu_1", "run_python", '{"co', 'de": "1', '+1"}'),
    *tool_block(2, "toolu_2", "list_files"),
    *ending("tool_use"),
]

MESSAGE = {
    "id": "msg_2",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "Hello from Claude"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 5},
}
