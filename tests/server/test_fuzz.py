"""Fuzzing a real relay from its OpenAPI description (schemathesis + Hypothesis).

The relay runs under uvicorn on 127.0.0.1 in front of a fake model server that
answers valid completions in both protocols (OpenAI and Anthropic), plus a
profile whose server is unreachable. Every generated request must get a
documented status, content type, headers and body, never a 500, and exactly the
status the relay's own rules predict (`expected_statuses`), so a request the
relay should refuse is refused and one it should forward is forwarded.

Deterministic: Hypothesis is derandomized (its seed comes from the test) and
keeps no example database, so every run sends the same requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import Case, GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from reckon.server import Profile
from reckon.server._openapi import openapi_document
from support import Relay, Script, Seen, a_fake_upstream, an_unused_port

# schemathesis' not_a_server_error counts every 5xx, but 502 and 504 are the
# relay's documented answers for a model server that is down or slow; the
# statuses are checked against `expected_statuses` (which never allows 500).
CHECKS = [
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# The relay passes fields it does not know on to the model server, which is
# the judge of them, so schemathesis' negative_data_rejection does not apply;
# `expected_statuses` checks what the relay itself must refuse instead.
FUZZ_SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

OPENAI_MODELS = ["gpt-4o-mini", "tiny-model"]
ANTHROPIC_MODEL = "claude-fuzz"
DOWN_MODEL = "offline-model"
# What `model` is set to (None: left out); generated names keep testing the 404.
STEERED_MODELS = [
    None,
    "gpt-4o-mini",
    "local/tiny-model",
    ANTHROPIC_MODEL,
    f"claude/{ANTHROPIC_MODEL}",
    DOWN_MODEL,
    "not-offered",
]
KEEP = "(as generated)"

ANTHROPIC_MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": ANTHROPIC_MODEL,
    "content": [
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "toolu_1", "name": "run_python", "input": {"code": "1+1"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 3, "output_tokens": 5},
}
ANTHROPIC_EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {**ANTHROPIC_MESSAGE, "content": []}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
    {"type": "message_stop"},
]


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def fake_model(seen: Seen) -> Script:
    """Answers every call with a valid answer in the protocol its path names."""
    if seen.path.endswith("/messages"):
        events = [_sse(e) for e in ANTHROPIC_EVENTS]
        return Script(chunks=events, body=json.dumps(ANTHROPIC_MESSAGE).encode())
    return Script()  # STREAM_CHUNKS, or COMPLETION when no stream is asked for


@dataclass
class Target:
    relay: Relay
    session: requests.Session


@pytest.fixture(scope="module")
def a_fake_model_server() -> Iterator[str]:
    with a_fake_upstream(fake_model, models=OPENAI_MODELS) as upstream:
        yield upstream.url


@pytest.fixture
def a_fuzz_target(a_relay_with: Callable[..., Relay], a_fake_model_server: str) -> Iterator[Target]:
    down = f"http://127.0.0.1:{an_unused_port()}/v1"
    relay = a_relay_with(
        profiles=[
            Profile(name="local", base_url=f"{a_fake_model_server}/v1", models=OPENAI_MODELS),
            Profile(
                name="claude",
                base_url=f"{a_fake_model_server}/anthropic/v1",
                protocol="anthropic",
                models=[ANTHROPIC_MODEL],
            ),
            Profile(name="down", base_url=down, models=[DOWN_MODEL]),
            # Asks the fake server for its list: the same names, so ids get prefixed.
            Profile(name="asked", base_url=f"{a_fake_model_server}/v1"),
        ],
        max_body_bytes=64 * 1024,
    )
    with requests.Session() as session:
        session.trust_env = False
        yield Target(relay, session)


def expected_statuses(sent: bytes | None, limit: int) -> set[int]:
    """The statuses the relay's rules allow for this body (see `_relay._parse`)."""
    if sent is None:
        return {400}
    if len(sent) > limit:
        return {413}
    try:
        payload = json.loads(sent)
    except ValueError:
        return {400}
    if not isinstance(payload, dict):
        return {400}
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        return {400}
    if not all(isinstance(m, dict) for m in messages):
        return {400}
    model = payload.get("model")
    stream = payload.get("stream")
    if (model is not None and not isinstance(model, str)) or not isinstance(stream, bool | None):
        return {400}
    if model is None or model in ("gpt-4o-mini", "local/gpt-4o-mini", "local/tiny-model"):
        return {200}
    if model in ("asked/gpt-4o-mini", "asked/tiny-model"):
        return {200}
    if model in (ANTHROPIC_MODEL, f"claude/{ANTHROPIC_MODEL}"):
        # Translated: a message the translation cannot take is the client's mistake.
        return {200, 400}
    if model in (DOWN_MODEL, f"down/{DOWN_MODEL}"):
        return {502}
    return {404}


def check_event_stream(body: bytes) -> None:
    """Every event of a stream is a chat.completion.chunk, ending with [DONE]."""
    events = [e for e in body.decode().split("\n\n") if e.strip()]
    data = [
        line[len("data: ") :]
        for event in events
        for line in event.split("\n")
        if line.startswith("data: ")
    ]
    assert data, body
    assert data[-1] == "[DONE]", body
    for item in data[:-1]:
        chunk = json.loads(item)
        assert chunk["object"] == "chat.completion.chunk", chunk
        assert isinstance(chunk["choices"], list), chunk


def steer(case: Case[Any], choice: str | None) -> None:
    """Point a generated request at a configured model, keeping type mutations."""
    body = case.body
    if choice == KEEP or not isinstance(body, dict) or not isinstance(body.get("model", ""), str):
        return
    if choice is None:
        body.pop("model", None)
    else:
        body["model"] = choice


SCHEMA = schemathesis.openapi.from_dict(json.loads(openapi_document()))
CHAT = SCHEMA["/v1/chat/completions"]["POST"]


def fuzz_chat(target: Target, mode: GenerationMode, examples: int) -> dict[int, int]:
    limit = target.relay.config.max_body_bytes
    seen: dict[int, int] = {}

    # Taken in turn, not drawn: Hypothesis draws unevenly, and one run once steered a
    # single request of 120 to the down model. In turn, each gets its share.
    choices = [*STEERED_MODELS, KEEP]
    turn = iter(range(10**9))

    @settings(FUZZ_SETTINGS, max_examples=examples)
    @given(case=CHAT.as_strategy(generation_mode=mode))
    def run(case: Case[Any]) -> None:
        steer(case, choices[next(turn) % len(choices)])
        response = case.call(base_url=target.relay.url, session=target.session, timeout=10)
        case.validate_response(response, checks=CHECKS)
        raw = response.request.body
        sent = raw.encode() if isinstance(raw, str) else raw if isinstance(raw, bytes) else None
        assert response.status_code in expected_statuses(sent, limit), (
            response.status_code,
            sent,
            response.content[:500],
        )
        kind = response.headers.get("content-type", [""])[0]
        if response.status_code == 200 and kind.startswith("text/event-stream"):
            check_event_stream(response.content)
        seen[response.status_code] = seen.get(response.status_code, 0) + 1

    run()
    return seen


@pytest.mark.slow
def test_valid_chat_requests_are_forwarded_or_refused_as_documented(
    a_fuzz_target: Target,
) -> None:
    seen = fuzz_chat(a_fuzz_target, GenerationMode.POSITIVE, examples=120)
    print(f"statuses: {seen}")

    # The steering reaches every outcome, so a generator change cannot hollow this out.
    assert {200, 404, 502} <= set(seen), seen


def test_invalid_chat_requests_get_documented_answers(a_fuzz_target: Target) -> None:
    seen = fuzz_chat(a_fuzz_target, GenerationMode.NEGATIVE, examples=100)
    print(f"statuses: {seen}")

    assert 400 in seen, seen


@pytest.mark.parametrize(("path", "operation"), [("/v1/models", "GET"), ("/api/info", "GET")])
def test_the_read_only_routes_answer_as_documented(
    a_fuzz_target: Target, path: str, operation: str
) -> None:
    @settings(FUZZ_SETTINGS, max_examples=5)
    @given(case=SCHEMA[path][operation].as_strategy())
    def run(case: Case[Any]) -> None:
        response = case.call(base_url=a_fuzz_target.relay.url, session=a_fuzz_target.session)
        case.validate_response(response, checks=CHECKS)
        assert response.status_code == 200

    run()


def test_a_relay_whose_servers_are_all_down_answers_as_documented(
    a_relay_with: Callable[..., Relay],
) -> None:
    down = f"http://127.0.0.1:{an_unused_port()}/v1"
    relay = a_relay_with(profiles=[Profile(name="down", base_url=down)])
    hello: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("/v1/models", "GET", None),
        ("/api/info", "GET", None),
        ("/v1/chat/completions", "POST", {**hello, "model": "some-model"}),
        ("/v1/chat/completions", "POST", hello),
        ("/openapi.json", "GET", None),
    ]
    statuses = {}
    with requests.Session() as session:
        session.trust_env = False
        for path, operation, body in calls:
            api = SCHEMA[path][operation]
            case = api.Case(body=body) if body is not None else api.Case()
            response = case.call(base_url=relay.url, session=session, timeout=10)
            case.validate_response(response, checks=CHECKS)
            statuses[f"{operation} {path} {body and body.get('model')}"] = response.status_code

    assert statuses == {
        "GET /v1/models None": 502,
        "GET /api/info None": 200,
        "POST /v1/chat/completions some-model": 502,
        # No model named, every server down: say that, not "no model" (a 404).
        "POST /v1/chat/completions None": 502,
        "GET /openapi.json None": 200,
    }


# Found by fuzzing and by hand, then fixed.
HELLO_PREFIX = b'{"messages": [{"role": "user", "content": "hi"}], "x": '


@pytest.mark.parametrize(
    "value",
    [b"1" * 5000, b"[" * 5000 + b"]" * 5000],
    ids=["integer-over-4300-digits", "nesting-5000-deep"],
)
def test_a_body_json_cannot_decode_is_a_400(a_relay: Relay, value: bytes) -> None:
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", content=HELLO_PREFIX + value + b"}")

    assert response.status_code == 400


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-2E+400"])
def test_non_finite_numbers_are_refused(a_relay: Relay, value: bytes) -> None:
    # {"temperature": 1e999} was forwarded upstream as Infinity, which is not JSON.
    body = b'{"messages": [{"role": "user", "content": "hi"}], "temperature": ' + value + b"}"
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", content=body)

    assert response.status_code == 400
    assert "JSON" in response.json()["error"]["message"]
    assert a_relay.upstream.seen == []


def test_no_model_named_and_every_server_down_is_a_502(
    a_relay_with: Callable[..., Relay],
) -> None:
    down = f"http://127.0.0.1:{an_unused_port()}/v1"
    relay = a_relay_with(profiles=[Profile(name="down", base_url=down)])
    with relay.client() as client:
        response = client.post(
            "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}
        )

    assert response.status_code == 502
    assert "Cannot reach the model server 'down'" in response.json()["error"]["message"]
