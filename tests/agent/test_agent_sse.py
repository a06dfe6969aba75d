"""The SSE decoder and the chunk accumulator, with the stream split at every byte."""

from __future__ import annotations

import json

import pytest

from reckon import ModelError, ModelProtocolError
from reckon.agent import ChunkAccumulator, SSEDecoder


def decode(raw: bytes, splits: list[int]) -> list[str]:
    decoder = SSEDecoder()
    events: list[str] = []
    start = 0
    for end in [*splits, len(raw)]:
        events += decoder.feed(raw[start:end])
        start = end
    return events + decoder.close()


CASES = [
    ("lf", b"data: a\n\ndata: b\n\n", ["a", "b"]),
    ("crlf", b"data: a\r\n\r\ndata: b\r\n\r\n", ["a", "b"]),
    ("cr", b"data: a\r\rdata: b\r\r", ["a", "b"]),
    ("no space", b"data:a\n\ndata:  b\n\n", ["a", " b"]),
    ("comments", b": keep-alive\n\n:ping\ndata: x\n\n", ["x"]),
    ("multi-line", b"data: one\ndata: two\n\n", ["one\ntwo"]),
    ("fields ignored", b"event: message\nid: 7\nretry: 100\ndata: y\n\n", ["y"]),
    ("no final blank", b"data: last", ["last"]),
    ("utf-8", "data: héllo 数据 🎉\n\n".encode(), ["héllo 数据 🎉"]),
    ("empty data", b"data\n\n", [""]),
]


@pytest.mark.parametrize(("name", "raw", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_split_point_gives_the_same_events(
    name: str, raw: bytes, expected: list[str]
) -> None:
    assert decode(raw, []) == expected
    for offset in range(1, len(raw)):
        assert decode(raw, [offset]) == expected, f"split at {offset}"
    assert decode(raw, list(range(1, len(raw)))) == expected  # one byte at a time


def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\r\n\r\n".encode()


def fold(raw: bytes, step: int) -> tuple[ChunkAccumulator, list[str]]:
    texts: list[str] = []
    accumulator = ChunkAccumulator(on_text=texts.append)
    decoder = SSEDecoder()
    for i in range(0, len(raw), step):
        for data in decoder.feed(raw[i : i + step]):
            accumulator.add_event(data)
    for data in decoder.close():
        accumulator.add_event(data)
    return accumulator, texts


STREAM = (
    b": OPENROUTER PROCESSING\n\n"
    + chunk({"role": "assistant", "content": "Let me "})
    + chunk({"content": "check — ✓."})
    + chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                             "function": {"name": "run_python", "arguments": ""}}]})
    + chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                             "function": {"name": "run_python", "arguments": '{"co'}}]})
    + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"code": "print('}}]})
    + chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'de": "2"}'}}]})
    + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '1)"}'}}]}, "tool_calls")
    + b'data: {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}\n\n'
    + b"data: [DONE]\n\n"
)  # fmt: skip


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, len(STREAM)])
def test_tool_call_deltas_accumulate_by_index(step: int) -> None:
    accumulator, texts = fold(STREAM, step)
    reply = accumulator.reply()
    assert reply.text == "Let me check — ✓."
    assert "".join(texts) == reply.text
    assert reply.tool_calls == [
        {"id": "call_a", "name": "run_python", "arguments": '{"code": "print(1)"}'},
        {"id": "call_b", "name": "run_python", "arguments": '{"code": "2"}'},
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage == {"prompt_tokens": 10, "completion_tokens": 5}
    assert accumulator.done


def test_error_object_in_the_stream_raises_model_error() -> None:
    raw = chunk({"content": "hi"}) + b'data: {"error": {"message": "overloaded", "code": 529}}\n\n'
    with pytest.raises(ModelError, match="overloaded") as info:
        fold(raw, 5)
    assert info.value.status == 529


def test_garbage_event_is_a_protocol_error() -> None:
    with pytest.raises(ModelProtocolError):
        fold(b"data: {not json\n\n", 4)


def test_tool_call_without_index_or_id_gets_defaults() -> None:
    accumulator = ChunkAccumulator()
    accumulator.add_chunk(
        {"choices": [{"delta": {"tool_calls": [{"function": {"name": "run_python",
                                                              "arguments": {"code": "1"}}}]}}]}
    )  # fmt: skip
    assert accumulator.reply().tool_calls == [
        {"id": "call_0", "name": "run_python", "arguments": '{"code": "1"}'}
    ]
