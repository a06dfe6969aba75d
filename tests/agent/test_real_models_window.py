"""What real model servers do with a long conversation, as they do it: a context window
the conversation outgrows (the server refuses, or a configured window cuts first), and
what each call tells of the tokens the model must read.

Each test scripts a real HTTP server on 127.0.0.1 with the replies a real server sent
(llama-cpp-python, vLLM, OpenAI), and drives the agent against it with an in-process
kernel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse, Response

from reckon.agent.models._context import LEFT_OUT, RECAP, estimate_tokens, fit_messages
from support import FakeUpstream, sse, text_stream, tool_stream

from .helpers import KernelExecutor, call_reply, openai_agent, run, text_reply


def test_a_conversation_that_outgrows_the_window_is_cut_and_goes_on(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    limit = 6000  # characters the fake server takes, as llama.cpp's n_ctx would

    def small_window(reply: bytes) -> Any:
        def handler(payload: dict[str, Any]) -> Response:
            if len(json.dumps(payload["messages"])) > limit:
                upstream.handlers.insert(0, handler)  # the same reply, once it fits
                message = "Requested tokens (9001) exceed context window of 2048"
                return JSONResponse({"error": {"message": message}}, status_code=400)
            return sse([reply])(payload)

        return handler

    bot = openai_agent(upstream, executor)
    for n in range(4):
        upstream.handlers += [
            small_window(tool_stream(f"print('{n}' * 1500)")),
            small_window(text_stream(f"Done {n}.")),
        ]
        outcome = run(bot.ask(f"question {n}", environment=executor.environment()))
        assert outcome["status"] == "ok", outcome.get("message")
    sent = upstream.payloads[-1]["messages"]
    assert LEFT_OUT in sent[0]["content"] and len(json.dumps(sent)) <= limit
    assert sent[-1]["content"] == "Done 3." or sent[-1]["role"] in ("tool", "user")


def test_fitting_keeps_the_current_question_and_every_call_with_its_answer() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "rules"}]
    for n in range(6):
        messages += [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{n}", "type": "function",
                 "function": {"name": "run_python", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "x" * 2000},
        ]  # fmt: skip
    fitted = fit_messages(messages, limit=900)
    assert estimate_tokens(fitted) <= 900
    assert fitted[-3]["content"] == "question 5" and LEFT_OUT in fitted[0]["content"]
    ids = [c["id"] for m in fitted for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in fitted if m["role"] == "tool"]
    assert ids == answered
    small = messages[:4]
    assert fit_messages(small, limit=10_000) is small


def test_a_configured_window_cuts_before_sending(
    upstream: FakeUpstream, executor: KernelExecutor, tmp_path: Path
) -> None:
    bot = openai_agent(upstream, executor, context_window=1200)
    for n in range(3):
        upstream.handlers += [call_reply(f"print('{n}' * 2000)"), text_reply("ok.")]
        run(bot.ask(f"q{n}", environment=executor.environment()))
    assert all(estimate_tokens(p["messages"]) <= 1200 for p in upstream.payloads[1:])


def test_each_call_says_what_the_model_must_read_and_each_step_its_wait(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    upstream.handlers += [call_reply("print(1)"), text_reply("1.")]
    calls: list[dict[str, Any]] = []
    bot = openai_agent(upstream, executor)
    bot.options.on_call = calls.append
    outcome = run(bot.ask("one?", environment=executor.environment()))
    assert [c["model"] for c in calls] == ["local", "local"]
    first, second = calls
    assert first["new_tokens"] == first["tokens"] > 100  # the system prompt and question
    # The second request extends the first: only the call and its output are new.
    assert 0 < second["new_tokens"] < first["tokens"] < second["tokens"]
    assert all(isinstance(s.get("first_token_ms"), float) for s in outcome["steps"])


def test_a_long_conversation_in_a_small_window_still_knows_its_first_answer(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """12 questions, each with a bulky output, against a 3,000-token window: the
    questions left out keep a line with their answer, so the last request still holds
    the first answer's number, and every request fits."""
    bot = openai_agent(upstream, executor, context_window=3000)
    for n in range(12):
        upstream.handlers += [
            call_reply(f"print('row ' * 400)\nprint(int('1' + '0' * 3) + {n} * 37)"),
            text_reply(f"The total for part {n} is {1000 + n * 37}."),
        ]
        outcome = run(bot.ask(f"What is the total for part {n}?", environment={}))
        assert outcome["status"] == "ok", (n, outcome.get("message"))
        assert str(1000 + n * 37) in outcome["answer"]
    for payload in upstream.payloads:
        assert estimate_tokens(payload["messages"]) <= 3000
    system = upstream.payloads[-1]["messages"][0]["content"]
    assert LEFT_OUT in system and "The total for part 0 is 1000." in system
    assert "What is the total for part 0?" in system


def test_a_chat_at_its_window_is_cut_below_it_so_the_next_questions_extend_it(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """Each cut rewrites the start of the requests after it (the recap is in the system
    message), and a server's prompt cache reads them anew: cut to just under the
    window, a chat of short asks was cut, and read whole, at every question."""
    bot = openai_agent(upstream, executor, context_window=2500)
    for n in range(16):
        upstream.handlers += [
            call_reply(f"print('row ' * 150)\nprint({n} * 3)"),
            text_reply(f"Part {chr(65 + n)} gives {n * 3}."),
        ]
        outcome = run(bot.ask(f"What does part {chr(65 + n)} give?", environment={}))
        assert outcome["status"] == "ok", (n, outcome.get("message"))
    firsts = [p["messages"][0]["content"] for p in upstream.payloads]
    cut_at = next(i for i, first in enumerate(firsts) if LEFT_OUT in first)
    asks_after = (len(firsts) - cut_at) // 2
    cuts = sum(a != b for a, b in zip(firsts[cut_at:], firsts[cut_at + 1 :], strict=False))
    assert asks_after >= 6 and cuts <= asks_after // 3, (cuts, asks_after)


def test_the_recap_of_a_long_chat_stays_a_part_of_the_window(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """Each cut adds lines to the recap in the system message; those of earlier cuts
    were kept whole, so dozens of long questions filled a small window with recap. The
    recap keeps its first line and its newest, and every request fits."""
    window = 1500
    bot = openai_agent(upstream, executor, context_window=window)
    asks = 40
    for n in range(asks):
        upstream.handlers += [
            call_reply(f"print({n} * 7)"),
            text_reply(f"Part {n} of the survey gives {n * 7}, read from its own long table."),
        ]
        question = f"For part {n} of the survey, " + "read each of its many long tables and " * 3
        outcome = run(bot.ask(question + "say what it gives.", environment={}))
        assert outcome["status"] == "ok", (n, outcome.get("message"))
    for payload in upstream.payloads:
        assert estimate_tokens(payload["messages"]) <= window * 0.85
    system = upstream.payloads[-1]["messages"][0]["content"]
    assert "Part 0 of the survey gives 0" in system  # the first answer is still known
    assert f"Part {asks - 3} of the survey" in system  # and the newest left out


def test_a_recap_from_earlier_cuts_is_thinned_to_its_share_at_the_next_cut() -> None:
    lines = [f"- Q: question {n} A: The answer to question {n} is {n * 11}." for n in range(80)]
    system = f"rules\n\n{LEFT_OUT}\n{RECAP}\n" + "\n".join(lines)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for n in range(80, 84):
        said = f"The answer is {n * 11}. " * 20
        messages += [{"role": "user", "content": f"question {n}"},
                     {"role": "assistant", "content": said}]  # fmt: skip
    fitted = fit_messages(messages, limit=1500, target=1200)
    kept = fitted[0]["content"].partition(f"\n{RECAP}\n")[2].split("\n")
    assert kept[0] == lines[0] and kept[-1].startswith("- Q: question 8")  # first, newest
    assert sum(len(line) for line in kept) / 3.5 <= 1200 / 4
    assert estimate_tokens(fitted) <= 1200 and fitted[-1] == messages[-1]
