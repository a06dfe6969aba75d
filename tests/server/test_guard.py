"""Host, Origin and token checks: no other site may spend the user's API key."""

from __future__ import annotations

from collections.abc import Callable

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from support import MODEL, Relay

HELLO: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_loopback_names_with_our_port_are_accepted(a_relay: Relay, host: str) -> None:
    with a_relay.client() as client:
        response = client.get("/api/info", headers={"Host": host.format(port=a_relay.port)})

    assert response.status_code == 200


@pytest.mark.parametrize(
    "host", ["attacker.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.1.nip.io:{port}"]
)
def test_any_other_host_is_refused_against_dns_rebinding(a_relay: Relay, host: str) -> None:
    with a_relay.client() as client:
        response = client.get("/api/info", headers={"Host": host.format(port=a_relay.port)})

    assert response.status_code == 403
    error = response.json()["error"]
    assert error["type"] == "permission_error"
    assert "DNS rebinding" in error["message"]
    assert "--allow-host" in error["message"]


def test_the_host_check_covers_the_site_too(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.get("/", headers={"Host": f"evil.example:{a_relay.port}"})

    assert response.status_code == 403


def test_a_configured_host_is_accepted(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(allowed_hosts=["reckon.lan"])
    with relay.client() as client:
        response = client.get("/api/info", headers={"Host": "reckon.lan"})

    assert response.status_code == 200


def test_the_relays_own_origin_is_accepted(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": HELLO},
            headers={"Origin": a_relay.url},
        )

    assert response.status_code == 200


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://localhost:1"])
def test_a_foreign_origin_is_refused(a_relay: Relay, origin: str) -> None:
    with a_relay.client() as client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": HELLO},
            headers={"Origin": origin},
        )

    assert response.status_code == 403
    assert f"--allow-origin {origin}" in response.json()["error"]["message"]
    assert a_relay.upstream.seen == []


def test_an_allowed_origin_gets_cors_headers(a_relay_with: Callable[..., Relay]) -> None:
    relay = a_relay_with(allowed_origins=["https://reckon.example.org"])
    origin = {"Origin": "https://reckon.example.org"}
    with relay.client() as client:
        preflight = client.options(
            "/v1/chat/completions",
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        response = client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=origin
        )

    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://reckon.example.org"
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "https://reckon.example.org"


def test_without_a_token_configured_no_token_is_needed(a_relay: Relay) -> None:
    with a_relay.client() as client:
        assert client.get("/api/info").json()["auth"] is False


@pytest.mark.parametrize(
    ("authorization", "complaint"),
    [(None, "needs a token"), ("Bearer nope", "token is wrong"), ("Basic czNjcmV0", "needs")],
)
def test_a_missing_or_wrong_token_is_a_401(
    a_relay_with: Callable[..., Relay], authorization: str | None, complaint: str
) -> None:
    relay = a_relay_with(token="s3cret-token")
    headers = {"Authorization": authorization} if authorization else {}
    with relay.client() as client:
        responses = [
            client.get("/api/info", headers=headers),
            client.get("/v1/models", headers=headers),
            client.post(
                "/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=headers
            ),
        ]

    for response in responses:
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["type"] == "authentication_error"
        assert complaint in response.json()["error"]["message"]
    assert relay.upstream.seen == []


def test_the_right_token_opens_the_api_and_is_not_forwarded(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(token="s3cret-token")
    sdk = openai.OpenAI(base_url=f"{relay.url}/v1", api_key="s3cret-token", max_retries=0)

    answer = sdk.chat.completions.create(model=MODEL, messages=HELLO)
    with relay.client(headers={"Authorization": "Bearer s3cret-token"}) as client:
        info = client.get("/api/info").json()

    assert answer.choices[0].message.content
    assert info["auth"] is True
    assert "s3cret-token" not in str(relay.upstream.seen[-1].headers)


def test_the_site_needs_no_token(a_relay_with: Callable[..., Relay], a_site: object) -> None:
    relay = a_relay_with(token="s3cret-token", site_dir=a_site)
    with relay.client() as client:
        assert client.get("/").status_code == 200


def test_every_response_carries_the_security_headers(a_relay: Relay) -> None:
    with a_relay.client() as client:
        responses = [
            client.get("/api/info"),
            client.post("/v1/chat/completions", content=b"{"),
            client.get("/api/info", headers={"Host": "evil.example"}),
        ]

    for response in responses:
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
