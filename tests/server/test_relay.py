"""Chat completions and model lists through the relay, with real clients on both sides."""

from __future__ import annotations

import json
from collections.abc import Callable

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from reckon.server import Profile
from support import (
    KEY_ENV,
    MODEL,
    STREAM_CHUNKS,
    THE_KEY,
    FakeUpstream,
    Relay,
    Script,
    an_sdk_client,
    sse,
    text_stream,
)

HELLO: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


def test_a_plain_completion_comes_back_through_the_sdk(a_relay: Relay) -> None:
    answer = an_sdk_client(a_relay).chat.completions.create(model=MODEL, messages=HELLO)

    assert answer.choices[0].message.content == "Hello from the fake upstream"
    seen = a_relay.upstream.seen[-1]
    assert seen.path == "/v1/chat/completions"
    assert seen.json == {"model": MODEL, "messages": HELLO}


def test_the_upstream_gets_the_configured_key_and_none_of_the_browsers_headers(
    a_relay: Relay,
) -> None:
    an_sdk_client(a_relay).chat.completions.create(model=MODEL, messages=HELLO)

    headers = a_relay.upstream.seen[-1].headers
    assert headers["authorization"] == f"Bearer {THE_KEY}"
    assert "cookie" not in headers
    assert not any(name.startswith("x-stainless") for name in headers)
    assert "the-browser-side-key" not in json.dumps(headers)


def test_a_profile_slash_model_id_is_rewritten_to_the_upstreams_own_name(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions", json={"model": f"local/{MODEL}", "messages": HELLO}
        )

    assert response.status_code == 200
    assert a_relay.upstream.seen[-1].json["model"] == MODEL


def test_a_request_without_a_model_goes_to_the_default_model(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"messages": HELLO})

    assert response.status_code == 200
    assert a_relay.upstream.seen[-1].json["model"] == MODEL


def test_a_stream_with_tool_calls_arrives_through_the_sdk(a_relay: Relay) -> None:
    stream = an_sdk_client(a_relay).chat.completions.create(
        model=MODEL,
        messages=HELLO,
        stream=True,
    )
    text, arguments, name = "", "", None
    for chunk in stream:
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for call in delta.tool_calls or []:
            name = name or (call.function.name if call.function else None)
            arguments += (call.function.arguments or "") if call.function else ""

    assert text == "Hello"
    assert name == "run_python"
    assert json.loads(arguments) == {"code": "1+1"}


def test_stream_bytes_pass_through_unchanged_comments_included(a_relay: Relay) -> None:
    payload = {"model": MODEL, "messages": HELLO, "stream": True}
    with (
        a_relay.client() as client,
        client.stream("POST", "/v1/chat/completions", json=payload) as response,
    ):
        received = b"".join(response.iter_raw())

    assert received == b"".join(STREAM_CHUNKS)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert "content-encoding" not in response.headers
    assert a_relay.upstream.seen[-1].headers["accept-encoding"] == "identity"


def test_models_are_listed_from_the_configuration(a_relay: Relay) -> None:
    models = an_sdk_client(a_relay).models.list()

    assert [(m.id, m.owned_by) for m in models] == [(MODEL, "local")]
    assert a_relay.upstream.seen == []


def test_models_are_asked_from_the_upstream_once_when_not_configured(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    relay = a_relay_with(profiles=[Profile(name="local", base_url=f"{an_upstream.url}/v1")])
    with relay.client() as client:
        first = client.get("/v1/models").json()
        second = client.get("/v1/models").json()

    assert [m["id"] for m in first["data"]] == ["listed-a", "listed-b"]
    assert second == first
    assert [s.path for s in relay.upstream.seen] == ["/v1/models"]


def test_a_model_name_offered_twice_is_listed_as_profile_slash_model(
    a_relay_with: Callable[..., Relay], an_upstream: FakeUpstream
) -> None:
    base = f"{an_upstream.url}/v1"
    relay = a_relay_with(
        profiles=[
            Profile(name="one", base_url=base, models=["m", "only-one"]),
            Profile(name="two", base_url=base, models=["m"]),
        ]
    )
    with relay.client() as client:
        ids = [m["id"] for m in client.get("/v1/models").json()["data"]]
        response = client.post("/v1/chat/completions", json={"model": "two/m", "messages": HELLO})

    assert ids == ["one/m", "only-one", "two/m"]
    assert response.status_code == 200
    assert relay.upstream.seen[-1].json["model"] == "m"


def test_api_info_describes_the_relay(a_relay: Relay) -> None:
    with a_relay.client() as client:
        info = client.get("/api/info").json()

    assert info == {
        "status": "ok",
        "models": [MODEL],
        "default_model": MODEL,
        "demo": False,
        "auth": False,
        "model_options": {MODEL: {"tools": "auto", "context_window": None, "calls_as_text": False}},
    }


def test_api_info_says_demo_when_no_profile_is_configured(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(profiles=[])
    with relay.client() as client:
        info = client.get("/api/info").json()
        chat = client.post("/v1/chat/completions", json={"model": "x", "messages": HELLO})

    assert info["demo"] is True
    assert info["models"] == []
    assert info["default_model"] is None
    assert chat.status_code == 404
    assert "--upstream" in chat.json()["error"]["message"]


def test_a_missing_key_variable_means_no_authorization_header(
    a_relay: Relay, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with a_relay.client() as client:
        client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert "authorization" not in a_relay.upstream.seen[-1].headers


def test_the_key_is_read_at_request_time(a_relay: Relay, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-rotated-key-000000")
    with a_relay.client() as client:
        client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert a_relay.upstream.seen[-1].headers["authorization"] == "Bearer sk-rotated-key-000000"


def test_a_stream_that_dies_midway_ends_with_an_error_event_the_sdk_raises(
    a_relay: Relay,
) -> None:
    a_relay.upstream.script = Script(break_after=3)
    stream = an_sdk_client(a_relay).chat.completions.create(
        model=MODEL,
        messages=HELLO,
        stream=True,
    )
    texts = []
    with pytest.raises(
        openai.APIError, match=r"server 'local' .* closed the answer before its end"
    ):
        for chunk in stream:
            texts.append(chunk.choices[0].delta.content)

    assert texts == ["Hel", "lo"]


def test_nothing_listening_on_the_upstream_port_is_a_502(
    a_relay_with: Callable[..., Relay], a_closed_port: int
) -> None:
    gone = f"http://127.0.0.1:{a_closed_port}/v1"
    relay = a_relay_with(profiles=[Profile(name="gone", base_url=gone, models=["m"])])
    with relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": "m", "messages": HELLO})

    assert response.status_code == 502
    assert response.json()["error"]["type"] == "upstream_error"
    assert "Cannot reach the model server 'gone'" in response.json()["error"]["message"]


def test_an_upstream_slow_to_send_its_first_byte_is_a_504(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(first_byte_timeout=0.3)
    relay.upstream.script = Script(stall_before_first=True)
    with relay.client() as client:
        response = client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": HELLO, "stream": True}
        )

    assert response.status_code == 504
    assert "first_byte_timeout" in response.json()["error"]["message"]
    assert relay.upstream.client_left.wait(5)


def test_an_upstream_http_error_keeps_its_status_in_our_error_shape(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(
        status=400,
        body=json.dumps(
            {"error": {"type": "invalid_request_error", "message": "context too long"}}
        ).encode(),
    )
    with pytest.raises(openai.BadRequestError) as raised:
        an_sdk_client(a_relay).chat.completions.create(model=MODEL, messages=HELLO)

    assert raised.value.status_code == 400
    body = raised.value.response.json()
    assert body["error"]["type"] == "invalid_request_error"
    message = body["error"]["message"]
    assert "The model server 'local' answered HTTP 400: context too long" in message


def test_an_upstream_429_passes_on_its_retry_after(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(status=429, body=b"slow down", headers={"Retry-After": "7"})
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.json()["error"]["message"].endswith("answered HTTP 429: slow down")


def test_a_whole_answer_that_dies_midway_is_a_clean_502(a_relay: Relay) -> None:
    a_relay.upstream.script = Script(break_after=1)
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.status_code == 502
    assert "closed the answer before its end" in response.json()["error"]["message"]


def test_a_slow_whole_answer_is_a_504(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(first_byte_timeout=0.3)
    relay.upstream.script = Script(delay_before_first=5)
    with relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.status_code == 504
    assert relay.upstream.client_left.wait(5)


def test_a_bare_name_on_a_server_that_cannot_be_asked_is_a_502_not_a_404(
    a_relay_with: Callable[..., Relay], a_closed_port: int
) -> None:
    gone = f"http://127.0.0.1:{a_closed_port}/v1"
    relay = a_relay_with(profiles=[Profile(name="gone", base_url=gone)])
    with relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": "m", "messages": HELLO})
        models = client.get("/v1/models")
        info = client.get("/api/info")

    assert response.status_code == 502
    assert models.status_code == 502
    assert info.json()["models"] == []


def test_the_relay_remembers_a_model_that_answers_tool_calls_as_text(a_relay: Relay) -> None:
    """llama-cpp-python with a GGUF's template hands a call back as text: once seen,
    /api/info says so, and every new session starts in code blocks (PROTOCOL.md §5)."""
    tools = [{"type": "function", "function": {"name": "run_python", "parameters": {}}}]
    call = '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n</tool_call>'
    body = {"model": MODEL, "messages": HELLO, "stream": True}

    def calls_as_text(client: object) -> bool:
        info = client.get("/api/info").json()  # type: ignore[attr-defined]
        return bool(info["model_options"][MODEL]["calls_as_text"])

    with a_relay.client() as client:
        # The same text with no tools offered is an answer, not a call left as text.
        a_relay.upstream.handlers.append(sse([text_stream(call)]))
        assert client.post("/v1/chat/completions", json=body).status_code == 200
        assert not calls_as_text(client)
        a_relay.upstream.handlers.append(sse([text_stream("<tool_"), text_stream(call[6:])]))
        answer = client.post("/v1/chat/completions", json={**body, "tools": tools})
        assert answer.status_code == 200 and "tool_call" in answer.text
        assert calls_as_text(client)
