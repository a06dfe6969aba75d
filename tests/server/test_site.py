"""The built site: files, the build's headers, and media types browsers insist on."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from reckon import ConfigError
from reckon.server import RelayConfig, create_app
from support import Relay, Running, an_address_off_loopback


@pytest.fixture
def a_site_relay(a_relay_with: Callable[..., Relay], a_site: Path) -> Relay:
    return a_relay_with(site_dir=a_site)


def test_the_index_is_served_at_the_root_with_the_builds_headers(a_site_relay: Relay) -> None:
    with a_site_relay.client() as client:
        response = client.get("/")

    assert response.status_code == 200
    assert "<title>Reckon</title>" in response.text
    assert response.headers["content-security-policy"] == (
        "default-src 'self'; frame-ancestors 'self'"
    )
    assert response.headers["cross-origin-opener-policy"] == "same-origin"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_only_the_relay_and_the_origins_it_was_told_of_may_frame_its_pages(
    a_relay_with: Callable[..., Relay], a_site: Path
) -> None:
    relay = a_relay_with(
        site_dir=a_site,
        allowed_origins=["https://widget.example"],
        allowed_embedders=["https://portal.example:8443"],
    )
    with relay.client() as client:
        page = client.get("/index.html")
        script = client.get("/assets/app.js")

    ancestors = "frame-ancestors 'self' https://widget.example https://portal.example:8443"
    assert page.headers["content-security-policy"] == f"default-src 'self'; {ancestors}"
    assert "content-security-policy" not in script.headers


def test_all_matching_rules_apply(a_site_relay: Relay) -> None:
    with a_site_relay.client() as client:
        response = client.get("/assets/pyodide.asm.wasm")

    assert response.headers["content-type"] == "application/wasm"
    assert response.headers["cache-control"] == "max-age=3600"
    assert response.headers["cross-origin-opener-policy"] == "same-origin"
    assert "content-security-policy" not in response.headers
    assert response.content == b"\0asm\x01\0\0\0"


@pytest.mark.parametrize("path", ["/assets/app.js", "/assets/worker.mjs"])
def test_scripts_are_served_as_javascript(a_site_relay: Relay, path: str) -> None:
    with a_site_relay.client() as client:
        response = client.get(path)

    assert response.headers["content-type"] == "text/javascript; charset=utf-8"


def test_a_later_rule_overrides_an_earlier_one(
    a_relay_with: Callable[..., Relay], a_site: Path
) -> None:
    (a_site / "_headers.json").write_text(
        json.dumps(
            [
                {"pattern": "*", "headers": {"Cache-Control": "no-cache"}},
                {"pattern": "/index.html", "headers": {"Cache-Control": "max-age=60"}},
            ]
        )
    )
    relay = a_relay_with(site_dir=a_site)
    with relay.client() as client:
        index = client.get("/")
        script = client.get("/assets/app.js")

    assert index.headers["cache-control"] == "max-age=60"
    assert script.headers["cache-control"] == "no-cache"


def test_the_headers_file_itself_is_not_served(a_site_relay: Relay) -> None:
    with a_site_relay.client() as client:
        assert client.get("/_headers.json").status_code == 404


def test_a_missing_file_is_a_plain_404(a_site_relay: Relay) -> None:
    with a_site_relay.client() as client:
        response = client.get("/nope.txt")

    assert response.status_code == 404
    assert response.headers["x-content-type-options"] == "nosniff"


def test_the_api_still_answers_beside_the_site(a_site_relay: Relay) -> None:
    with a_site_relay.client() as client:
        assert client.get("/api/info").json()["status"] == "ok"


def test_without_a_site_the_root_says_how_to_get_one(a_relay: Relay) -> None:
    with a_relay.client() as client:
        response = client.get("/")

    assert response.status_code == 404
    assert "--site PATH" in response.text


def test_a_malformed_headers_file_is_a_config_error(a_site: Path) -> None:
    (a_site / "_headers.json").write_text('[{"pattern": "*", "headers": {"X-Count": 3}}]')

    with pytest.raises(ConfigError, match="entry 0 must be"):
        create_app(RelayConfig(site_dir=a_site))


def test_a_precompressed_file_goes_gzipped_only_to_clients_off_this_machine(
    a_relay_with: Callable[..., Relay], a_site: Path
) -> None:
    address = an_address_off_loopback()
    if address is None:
        pytest.skip("this machine has no network interface besides loopback")
    payload = bytes(range(256)) * 4000
    (a_site / "assets" / "big.heap").write_bytes(payload)
    (a_site / "assets" / "big.heap.gz").write_bytes(gzip.compress(payload))
    relay = a_relay_with(site_dir=a_site, allowed_hosts=[address])
    with (
        Running(create_app(relay.config), host=address) as far,
        httpx.Client(base_url=far.url, trust_env=False, timeout=10) as client,
    ):
        remote = client.get("/assets/big.heap", headers={"Accept-Encoding": "gzip"})
        plain = client.get("/assets/big.heap", headers={"Accept-Encoding": "identity"})
    with relay.client() as client:
        local = client.get("/assets/big.heap", headers={"Accept-Encoding": "gzip"})

    assert remote.headers["content-encoding"] == "gzip"
    assert remote.headers["vary"] == "Accept-Encoding"
    assert int(remote.headers["content-length"]) < len(payload) // 10
    assert remote.content == payload  # decoded by the client
    assert "content-encoding" not in plain.headers and plain.content == payload
    assert "content-encoding" not in local.headers
    assert int(local.headers["content-length"]) == len(payload)
