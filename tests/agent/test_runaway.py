"""A looping reply is cut: the stream is closed and the reply kept up to the loop."""

from __future__ import annotations

from reckon.agent import Agent, OpenAIModel
from reckon.agent.models._openai import parse_completion
from reckon.agent.models._runaway import RunawayGuard
from support import FakeUpstream, HttpxTransport, sse, text_stream

from .helpers import KernelExecutor, run


def fed(text: str, size: int = 7) -> RunawayGuard:
    guard = RunawayGuard()
    for at in range(0, len(text), size):
        guard.feed(text[at : at + size])
    return guard


def test_the_same_line_again_and_again_is_cut_after_one_copy() -> None:
    head = "```python\nprint(df['a'].sum())\n```\n"
    text = head + "The answer is @total[5].\n" * 60
    guard = fed(text)
    assert guard.cut is not None
    assert text[: guard.cut].rstrip() == head + "The answer is @total[5]."


def test_a_short_piece_repeated_without_newlines_is_cut() -> None:
    text = "The values are " + "0, " * 400
    guard = fed(text)
    assert guard.cut is not None and text[: guard.cut].rstrip() == "The values are 0,"


def test_ordinary_long_text_and_tables_are_not_cut() -> None:
    table = "".join(f"| {i} | row {i} | {i * 3.5} |\n" for i in range(200))
    prose = " ".join(f"Sentence {i} says something new about column c{i}." for i in range(200))
    separators = "|---|---|---|\n" * 3 + "text\n"
    for text in (table, prose, separators):
        assert fed(text).cut is None


def test_a_looping_stream_ends_early_with_the_reply_up_to_the_loop(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    loop = "It is 4.\n" * 2000
    upstream.handlers += [sse([text_stream(loop[i : i + 20]) for i in range(0, len(loop), 20)])]
    model = OpenAIModel(HttpxTransport(upstream.url), model="local")
    outcome = run(Agent(model, executor).ask("2+2?", environment=executor.environment()))
    assert outcome["answer"] == "It is 4."


def test_a_looping_reply_in_one_piece_keeps_its_text_up_to_the_loop() -> None:
    # A server that does not stream sends it all in one chunk.
    reply = parse_completion(
        {"choices": [{"message": {"content": "It is 4.\n" * 500}, "finish_reason": "length"}]}
    )
    assert reply.text.rstrip() == "It is 4." and reply.finish_reason == "looping"
