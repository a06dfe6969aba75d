"""What a call used: the answer's own ``usage``, however its bytes arrive, or an estimate."""

from __future__ import annotations

import json

import pytest

from reckon.server._usage import IMAGE_TOKENS, Usage, UsageMeter, estimate_prompt_tokens
from support import COMPLETION, STREAM_CHUNKS


def metered(chunks: list[bytes], *, sse: bool, prompt: int = 100) -> Usage:
    meter = UsageMeter(lambda: prompt)
    meter.start(sse=sse)
    for chunk in chunks:
        meter.feed(chunk)
    return meter.result()


def event(data: object, *, crlf: bool = False) -> bytes:
    end = b"\r\n\r\n" if crlf else b"\n\n"
    return b"data: " + json.dumps(data).encode() + end


FINAL = {"object": "chat.completion.chunk", "choices": [], "usage": {
    "prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}}  # fmt: skip


@pytest.mark.parametrize("size", [1, 3, 7, 64, 10_000])
def test_a_streams_usage_is_read_however_the_bytes_are_cut(size: int) -> None:
    stream = b"".join([*STREAM_CHUNKS[:-1], event(FINAL, crlf=True), STREAM_CHUNKS[-1]])
    pieces = [stream[n : n + size] for n in range(0, len(stream), size)]

    assert metered(pieces, sse=True) == Usage(12, 34, reported=True)


def test_a_whole_answers_usage_is_read() -> None:
    body = json.dumps(COMPLETION).encode()

    assert metered([body[:10], body[10:]], sse=False) == Usage(3, 5, reported=True)


def test_the_last_report_wins_when_every_chunk_carries_one() -> None:
    running = [
        event({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": n}})
        for n in (1, 2, 3)
    ]

    assert metered(running, sse=True) == Usage(5, 3, reported=True)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"total_tokens": 40}, Usage(0, 40, reported=True)),
        ({"prompt_tokens": 10, "total_tokens": 40}, Usage(10, 30, reported=True)),
        ({"prompt_tokens": True, "completion_tokens": 1}, None),
        ({"prompt_tokens": -1, "completion_tokens": 1}, None),
        ("lots", None),
    ],
)
def test_only_counts_are_believed(usage: object, expected: Usage | None) -> None:
    answer = {"choices": [{"message": {"content": "abcd"}}], "usage": usage}

    result = metered([json.dumps(answer).encode()], sse=False)

    assert result == (expected or Usage(100, 2, reported=False))  # "abcd": 4 bytes, 2 tokens


def test_an_answer_that_is_not_json_is_charged_by_its_size() -> None:
    assert metered([b"<html>" + b"x" * 94], sse=False) == Usage(100, 50, reported=False)


def test_no_answer_no_charge() -> None:
    meter = UsageMeter(lambda: 100)
    meter.feed(b"an error body")  # before start(): the upstream refused

    assert meter.result() == Usage(0, 0, reported=True)


def test_the_prompt_estimate_errs_high_and_counts_images_whole() -> None:
    text = "é" * 30  # 60 bytes of UTF-8
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 50_000}}
    payload = {"messages": [{"role": "user", "content": [{"type": "text", "text": text}, image]}]}

    estimate = estimate_prompt_tokens(payload)

    shape = json.dumps(
        [[{"role": "user", "content": [{"type": "text", "text": text}, {}]}], None],
        ensure_ascii=False,
    )
    assert estimate == -(-len(shape.encode()) // 2) + IMAGE_TOKENS
    assert estimate < 50_000 // 2  # the image's base64 is not counted as text
