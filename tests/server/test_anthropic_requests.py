"""``protocol = "anthropic"``: what the relay asks of a Messages API upstream.

A chat-completions conversation with tools becomes a Messages request, with the
caller's max_tokens and tool choice; the upstream gets Anthropic's headers and none
of the browser's; models are listed from the upstream when none are configured; a
config file may name the protocol.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from openai.types.chat import ChatCompletionMessageParam

from reckon.server import load_config_file
from support import MODEL, THE_KEY, FakeUpstream, Relay, an_sdk_client

from .anthropic_kit import HELLO, RUN_PYTHON, claude_profile


def test_a_conversation_with_tools_is_translated_into_a_messages_request(
    a_claude_relay: Relay,
) -> None:
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are Reckon."},
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What are 1+1 and 2+2?"},
        {
            "role": "assistant",
            "content": "Computing both.",
            "tool_calls": [
                {
                    "id": "toolu_a",
                    "type": "function",
                    "function": {"name": "run_python", "arguments": '{"code": "1+1"}'},
                },
                {
                    "id": "toolu_b",
                    "type": "function",
                    "function": {"name": "run_python", "arguments": '{"code": "2+2"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_a", "content": "2"},
        {"role": "tool", "tool_call_id": "toolu_b", "content": "4"},
        {"role": "user", "content": "Now say them."},
    ]
    an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL,
        messages=messages,
        tools=[RUN_PYTHON],
        tool_choice="auto",
        temperature=0,
        stop=["END"],
    )

    assert a_claude_relay.upstream.seen[-1].json == {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "You are Reckon.\n\nAnswer briefly.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What are 1+1 and 2+2?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Computing both."},
                    {
                        "type": "tool_use",
                        "id": "toolu_a",
                        "name": "run_python",
                        "input": {"code": "1+1"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_b",
                        "name": "run_python",
                        "input": {"code": "2+2"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "2"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "4"},
                    {"type": "text", "text": "Now say them."},
                ],
            },
        ],
        "temperature": 0.0,
        "stop_sequences": ["END"],
        "tools": [
            {
                "name": "run_python",
                "description": "Run Python code in the kernel.",
                "input_schema": RUN_PYTHON["function"]["parameters"],
            }
        ],
        "tool_choice": {"type": "auto"},
    }


def test_a_given_max_tokens_and_a_named_tool_choice_are_passed_on(a_claude_relay: Relay) -> None:
    an_sdk_client(a_claude_relay).chat.completions.create(
        model=MODEL,
        messages=HELLO,
        max_tokens=99,
        tools=[RUN_PYTHON],
        tool_choice={"type": "function", "function": {"name": "run_python"}},
    )

    seen = a_claude_relay.upstream.seen[-1].json
    assert seen["max_tokens"] == 99
    assert seen["tool_choice"] == {"type": "tool", "name": "run_python"}


def test_the_upstream_gets_the_anthropic_headers_and_none_of_the_browsers(
    a_claude_relay: Relay,
) -> None:
    an_sdk_client(a_claude_relay).chat.completions.create(model=MODEL, messages=HELLO)

    headers = a_claude_relay.upstream.seen[-1].headers
    assert headers["x-api-key"] == THE_KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert "cookie" not in headers
    assert "the-browser-side-key" not in json.dumps(headers)


def test_models_are_asked_from_the_anthropic_upstream_when_not_configured(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(profiles=[claude_profile(an_upstream.url)])
    ids = [m.id for m in an_sdk_client(relay).models.list()]

    assert ids == ["listed-a", "listed-b"]
    seen = relay.upstream.seen[-1]
    assert seen.path == "/v1/models"
    assert seen.headers["x-api-key"] == THE_KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers


def test_a_config_file_may_name_the_anthropic_protocol(tmp_path: Path) -> None:
    path = tmp_path / "reckon.toml"
    path.write_text(
        "[[profile]]\nname = 'claude'\nbase_url = 'https://api.anthropic.com/v1'\n"
        "api_key_env = 'ANTHROPIC_API_KEY'\nprotocol = 'anthropic'\n"
        "models = ['claude-sonnet-4-5']\n"
    )

    [profile] = load_config_file(path)["profiles"]

    assert profile.protocol == "anthropic"
    assert profile.api_key_env == "ANTHROPIC_API_KEY"
