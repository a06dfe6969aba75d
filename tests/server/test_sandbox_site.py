"""The sandbox on a site of its own (`reckon serve --sandbox-origin`): what the relay
serves there, what it tells the page, and what stays as it was without the option.
The attacks in the browser are tests/browser/test_sandbox_site.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from reckon import ConfigError
from reckon.server import RelayConfig
from support import Relay

FRAME_CSP = "default-src 'none'; connect-src 'none'; worker-src blob:"
PAGE = '<meta http-equiv="Content-Security-Policy" content="frame-src \'self\'; x">'


@pytest.fixture
def a_sandbox_site(a_site: Path) -> Path:
    (a_site / "sandbox.html").write_text("<!doctype html><script>frame</script>")
    (a_site / "build-info.json").write_text('{"core": []}')
    (a_site / "chat.html").write_text(f"<!doctype html>{PAGE}<title>chat</title>")
    rules = json.loads((a_site / "_headers.json").read_text())
    rules[0]["headers"]["Content-Security-Policy"] = "default-src 'self'; frame-src 'self'"
    rules.append({"pattern": "sandbox.html", "headers": {"Content-Security-Policy": FRAME_CSP}})
    (a_site / "_headers.json").write_text(json.dumps(rules))
    return a_site


def on_sandbox_site(relay: Relay) -> dict[str, str]:
    return {"Host": f"sandbox.localhost:{relay.port}"}


def test_the_sandbox_site_serves_its_frame_empty_and_offline(
    a_relay_with: Callable[..., Relay], a_sandbox_site: Path
) -> None:
    relay = a_relay_with(site_dir=a_sandbox_site, sandbox_origin="auto")
    with relay.client(headers=on_sandbox_site(relay)) as client:
        frame = client.get("/sandbox.html")
        elsewhere = [client.get(path) for path in ("/", "/chat.html", "/build-info.json")]
        api = client.get("/api/info")

    assert frame.status_code == 200 and "<script>frame</script>" in frame.text
    # Storage and cookies, never "cache": the HTTP and code caches are what it is for.
    assert frame.headers["clear-site-data"] == '"cookies", "storage"'
    assert frame.headers["cache-control"] == "no-store"
    policy = frame.headers["content-security-policy"]
    assert policy.startswith(f"{FRAME_CSP}; frame-ancestors "), policy
    assert f"http://127.0.0.1:{relay.port}" in policy and "'self'" not in policy
    assert frame.headers["cross-origin-embedder-policy"] == "require-corp"
    assert frame.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "service-worker-allowed" not in frame.headers
    assert [r.status_code for r in elsewhere] == [404, 404, 404]
    assert api.status_code == 404


def test_the_page_is_told_where_the_sandbox_lives_and_may_frame_it(
    a_relay_with: Callable[..., Relay], a_sandbox_site: Path
) -> None:
    relay = a_relay_with(site_dir=a_sandbox_site, sandbox_origin="auto")
    site = f"http://sandbox.localhost:{relay.port}"
    with relay.client() as client:
        info = client.get("/build-info.json")
        page = client.get("/chat.html")
        again = client.get("/chat.html", headers={"If-None-Match": page.headers.get("etag", "x")})

    assert info.headers["reckon-sandbox-origin"] == site
    # Not exposed to other origins: a widget elsewhere keeps the opaque frame.
    assert "reckon-sandbox-origin" not in info.headers.get("access-control-expose-headers", "")
    assert f"frame-src 'self' {site}" in page.headers["content-security-policy"]
    assert f"frame-src 'self' {site}; x" in page.text
    assert int(page.headers["content-length"]) == len(page.content)
    assert again.status_code == 200 and site in again.text


def test_without_the_option_nothing_changes(
    a_relay_with: Callable[..., Relay], a_sandbox_site: Path
) -> None:
    relay = a_relay_with(site_dir=a_sandbox_site)
    with relay.client() as client:
        info = client.get("/build-info.json")
        page = client.get("/chat.html")
    with relay.client(headers=on_sandbox_site(relay)) as client:
        refused = client.get("/sandbox.html")

    assert "reckon-sandbox-origin" not in info.headers
    assert "frame-src 'self'; x" in page.text
    assert refused.status_code == 403  # not a name of this relay


def test_a_configured_origin_is_served_on_its_host(
    a_relay_with: Callable[..., Relay], a_sandbox_site: Path
) -> None:
    origin = "https://sandbox.example.org"
    relay = a_relay_with(
        site_dir=a_sandbox_site, sandbox_origin=origin, allowed_hosts=["reckon.example.org"]
    )
    with relay.client(headers={"Host": "sandbox.example.org"}) as client:
        frame = client.get("/sandbox.html")
    with relay.client() as client:
        info = client.get("/build-info.json")

    assert frame.status_code == 200
    assert "https://reckon.example.org" in frame.headers["content-security-policy"]
    assert info.headers["reckon-sandbox-origin"] == origin


@pytest.mark.parametrize(
    "value", ["sandbox.localhost", "https://sandbox.example.org/", "ftp://x.example", "https://"]
)
def test_a_sandbox_origin_that_is_not_one_is_refused_with_what_to_give(value: str) -> None:
    with pytest.raises(ConfigError, match="must be 'auto', 'off', or an origin"):
        RelayConfig(sandbox_origin=value)


def test_off_is_the_default_and_can_be_said() -> None:
    assert RelayConfig().sandbox_origin is None
    assert RelayConfig(sandbox_origin="off").sandbox_origin is None
    assert RelayConfig(sandbox_origin="auto").sandbox_origin == "auto"
