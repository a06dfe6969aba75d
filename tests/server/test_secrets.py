"""The API key never leaves the relay: not in answers, not in headers, not in logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import httpx
import pytest

from reckon.server import Client, Limits, Profile, mint_token
from support import KEY_ENV, MODEL, THE_KEY, FakeUpstream, Relay, Script

HELLO = [{"role": "user", "content": "a secret prompt about tax returns"}]


def everything_in(response: httpx.Response) -> str:
    return json.dumps(dict(response.headers)) + response.text


def test_the_key_appears_in_no_response_and_no_log_line(
    a_relay_with: Callable[..., Relay],
    an_upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
    a_closed_port: int,
) -> None:
    caplog.set_level(logging.DEBUG)
    relay = a_relay_with(
        profiles=[
            Profile("local", f"{an_upstream.url}/v1", KEY_ENV, models=[MODEL]),
            Profile("gone", f"http://127.0.0.1:{a_closed_port}/v1", KEY_ENV),
        ]
    )
    seen = []
    with relay.client() as client:
        chat = {"model": MODEL, "messages": HELLO}
        seen.append(client.post("/v1/chat/completions", json=chat))
        seen.append(client.post("/v1/chat/completions", json={**chat, "stream": True}))
        # An upstream that echoes the key back in its error, as some do.
        an_upstream.script = Script(
            status=401,
            body=json.dumps({"error": {"message": f"Incorrect API key: {THE_KEY}"}}).encode(),
        )
        seen.append(client.post("/v1/chat/completions", json=chat))
        an_upstream.script = Script(chunks=[f"data: {THE_KEY}\n\n".encode(), b"data: [DONE]\n\n"])
        seen.append(client.post("/v1/chat/completions", json={**chat, "stream": True}))
        seen.append(client.get("/v1/models"))
        seen.append(client.get("/api/info"))
        seen.append(client.post("/v1/chat/completions", json={**chat, "model": "gone/m"}))

    assert [r.status_code for r in seen] == [200, 200, 401, 200, 200, 200, 502]
    assert "[redacted]" in seen[2].text
    assert seen[3].text == "data: [redacted]\n\ndata: [DONE]\n\n"
    for response in seen:
        assert THE_KEY not in everything_in(response)
    assert caplog.records, "the relay logged nothing at all"
    assert THE_KEY not in caplog.text
    assert "tax returns" not in caplog.text


def test_prompts_are_logged_only_when_asked_for(
    a_relay_with: Callable[..., Relay], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="reckon.server")
    relay = a_relay_with(log_prompts=True)
    with relay.client() as client:
        client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert "tax returns" in caplog.text
    assert THE_KEY not in caplog.text


def test_a_401_from_the_upstream_says_which_variable_holds_the_key(
    a_relay: Relay, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    a_relay.upstream.script = Script(status=401, body=b'{"error": {"message": "no key"}}')
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.status_code == 401
    message = response.json()["error"]["message"]
    assert f"the environment variable {KEY_ENV} is not set on the relay" in message


def delta(text: str) -> bytes:
    event = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(event)}\n\n".encode()


def streamed_text(response: httpx.Response) -> str:
    """The answer as the browser puts it together from the deltas."""
    text = ""
    for line in response.text.splitlines():
        if line.startswith("data: {"):
            text += json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
    return text


def escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    "chunks",
    [
        # The key split across two events, at every few characters.
        [delta("Your key is " + THE_KEY[:3]), delta(THE_KEY[3:] + ". Done.")],
        [delta(c) for c in "key: " + THE_KEY + " end"],
        # JSON escapes: the bytes never hold the key, the decoded text does.
        [b'data: {"choices":[{"index":0,"delta":{"content":"key: '
         + escaped(THE_KEY).encode() + b'"}}]}\n\n'],
        # Split and escaped, with the events cut into odd network chunks.
        [b"".join([delta("a " + THE_KEY[:5]), delta(THE_KEY[5:])])[n : n + 7]
         for n in range(0, 400, 7)],
    ],
    ids=["two-events", "one-char-events", "u-escaped", "odd-chunks"],
)  # fmt: skip
def test_a_key_the_browser_would_put_together_is_redacted(
    a_relay: Relay, an_upstream: FakeUpstream, chunks: list[bytes]
) -> None:
    an_upstream.script = Script(chunks=[*chunks, b"data: [DONE]\n\n"])
    with a_relay.client() as client:
        chat = {"model": MODEL, "messages": HELLO, "stream": True}
        response = client.post("/v1/chat/completions", json=chat)

    assert response.status_code == 200
    text = streamed_text(response)
    assert THE_KEY not in text and THE_KEY[4:] not in text
    assert "[redacted]" in text
    assert response.text.endswith("data: [DONE]\n\n")


def test_a_whole_answer_with_an_escaped_key_is_redacted(
    a_relay: Relay, an_upstream: FakeUpstream
) -> None:
    body = (
        b'{"choices":[{"index":0,"message":{"role":"assistant","content":"k '
        + escaped(THE_KEY).encode()
        + b'"}}]}'
    )
    an_upstream.script = Script(body=body)
    with a_relay.client() as client:
        response = client.post("/v1/chat/completions", json={"model": MODEL, "messages": HELLO})

    assert response.json()["choices"][0]["message"]["content"] == "k [redacted]"


def test_an_answer_without_the_key_streams_byte_for_byte(
    a_relay: Relay, an_upstream: FakeUpstream
) -> None:
    # A delta that ends like the start of the key is held only until the next one.
    chunks = [delta("so " + THE_KEY[:4]), delta("not the key"), b"data: [DONE]\n\n"]
    an_upstream.script = Script(chunks=chunks)
    with a_relay.client() as client:
        chat = {"model": MODEL, "messages": HELLO, "stream": True}
        response = client.post("/v1/chat/completions", json=chat)

    assert response.content == b"".join(chunks)


def test_client_tokens_and_the_signing_secret_are_treated_like_the_key(
    a_relay_with: Callable[..., Relay],
    an_upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    own = "client-own-token-0123456789-SECRET"
    secret = "signing-secret-for-secrets-test-0123456789-SECRET"
    relay = a_relay_with(
        clients=[Client("carol", own)],
        client_secret=secret,
        limits=Limits(requests_per_minute=100),
        metrics="open",
    )
    signed = mint_token("dan", secret, ttl=60)
    seen = []
    with relay.client() as client:
        for token in (own, signed):
            auth = {"Authorization": f"Bearer {token}"}
            chat = {"model": MODEL, "messages": HELLO}
            seen.append(client.post("/v1/chat/completions", json=chat, headers=auth))
            # An upstream that echoes what it was told, and one that guesses the secrets.
            an_upstream.script = Script(
                status=401, body=json.dumps({"error": {"message": f"{own} {secret}"}}).encode()
            )
            seen.append(client.post("/v1/chat/completions", json=chat, headers=auth))
            an_upstream.script = Script(chunks=[f"data: {own}\n\n".encode(), b"data: [DONE]\n\n"])
            seen.append(
                client.post("/v1/chat/completions", json={**chat, "stream": True}, headers=auth)
            )
            an_upstream.script = Script()
        seen.append(client.get("/metrics"))

    assert [r.status_code for r in seen] == [200, 401, 200, 200, 401, 200, 200]
    forwarded = json.dumps([s.headers for s in an_upstream.seen])
    for response in seen:
        for value in (own, secret, signed):
            assert value not in everything_in(response)
            assert value not in caplog.text
            assert value not in forwarded
    assert "for client carol" in caplog.text and "for client dan" in caplog.text
