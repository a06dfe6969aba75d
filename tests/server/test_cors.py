"""Embedding across origins: a page on an allowed origin may load the widget's files
and call the relay (CORS, preflights included); any other origin gets nothing.

The site here is made by build.py's own web-copy step, so the header rules tested
are the ones the build writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from openai.types.chat import ChatCompletionMessageParam
from sitebuild import copy_web

from reckon._cli import config_from_args
from reckon.server import create_app
from support import MODEL, Relay, Running

HOST = "https://host.example"
OTHER = "https://other.example"
PRIVATE_NETWORK = {"Access-Control-Request-Private-Network": "true"}
HELLO: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
WIDGET_FILES = ["reckon-chat.js", "page/chat-ui.js", "reckon.js", "agent/worker.js", "style.css",
                "build-info.json", "pyodide/pyodide.js"]  # fmt: skip


@pytest.fixture(scope="module")
def a_built_web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site: Path = tmp_path_factory.mktemp("site")
    copy_web(site)
    (site / "build-info.json").write_text(json.dumps({"reckon": "test"}))
    (site / "pyodide").mkdir()
    (site / "pyodide" / "pyodide.js").write_text("var loadPyodide;\n")
    return site


@pytest.fixture
def an_embedding_relay(a_relay_with: Callable[..., Relay], a_built_web: Path) -> Relay:
    return a_relay_with(site_dir=a_built_web, allowed_origins=[HOST])


@pytest.mark.parametrize("path", WIDGET_FILES)
def test_an_allowed_origin_can_load_the_widgets_files(an_embedding_relay: Relay, path: str) -> None:
    with an_embedding_relay.client() as client:
        response = client.get(f"/{path}", headers={"Origin": HOST})

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == HOST
    assert "Origin" in response.headers["vary"]
    # importScripts() in the agent worker is a no-cors load: CORP must allow it.
    assert response.headers["cross-origin-resource-policy"] == "cross-origin"


@pytest.mark.parametrize(
    "path", ["reckon-chat.js", "style.css", "pyodide/pyodide.js", "index.html"]
)
def test_a_foreign_origin_gets_none_of_the_sites_files(
    an_embedding_relay: Relay, path: str
) -> None:
    with an_embedding_relay.client() as client:
        response = client.get(f"/{path}", headers={"Origin": OTHER})

    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers
    assert f"--allow-origin {OTHER}" in response.json()["error"]["message"]


def test_pages_stay_same_origin_resources(an_embedding_relay: Relay) -> None:
    with an_embedding_relay.client() as client:
        page = client.get("/index.html")
        frame = client.get("/sandbox.html")

    assert page.headers["cross-origin-resource-policy"] == "same-origin"
    assert "access-control-allow-origin" not in page.headers
    # The sandbox frame may be framed by an embedding page (a navigation, never read).
    assert frame.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "access-control-allow-origin" not in frame.headers


def preflight(relay: Relay, origin: str, **extra: str) -> httpx.Response:
    with relay.client() as client:
        return client.options(
            "/v1/chat/completions",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
                **extra,
            },
        )


def test_the_relays_preflight_answers_an_allowed_origin(an_embedding_relay: Relay) -> None:
    response = preflight(an_embedding_relay, HOST)

    assert response.status_code == 200
    headers = response.headers
    assert headers["access-control-allow-origin"] == HOST
    assert "POST" in headers["access-control-allow-methods"]
    assert {"authorization", "content-type"} <= {
        h.strip().lower() for h in headers["access-control-allow-headers"].split(",")
    }
    assert "access-control-allow-private-network" not in headers


def test_a_preflight_from_a_foreign_origin_is_refused(an_embedding_relay: Relay) -> None:
    response = preflight(an_embedding_relay, OTHER, **PRIVATE_NETWORK)

    assert response.status_code == 403
    headers = response.headers
    assert "access-control-allow-origin" not in headers
    assert "access-control-allow-private-network" not in headers
    assert an_embedding_relay.upstream.seen == []


def test_private_network_access_is_granted_to_allowed_origins_only(
    an_embedding_relay: Relay,
) -> None:
    response = preflight(an_embedding_relay, HOST, **PRIVATE_NETWORK)

    assert response.status_code == 200
    assert response.headers["access-control-allow-private-network"] == "true"


def test_a_streamed_answer_is_readable_by_an_allowed_origin(an_embedding_relay: Relay) -> None:
    with an_embedding_relay.client() as client:
        response = client.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": HELLO, "stream": True},
            headers={"Origin": HOST},
        )

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == HOST
    assert "data: [DONE]" in response.text


def test_the_guards_own_refusals_are_readable_by_an_allowed_origin(
    a_relay_with: Callable[..., Relay],
) -> None:
    relay = a_relay_with(allowed_origins=[HOST], token="s3cret-token")
    with relay.client() as client:
        allowed = client.get("/api/info", headers={"Origin": HOST})
        foreign = client.get("/api/info", headers={"Origin": OTHER})
        wrong_host = client.get("/api/info", headers={"Origin": HOST, "Host": "evil.example"})

    # The widget can tell the person that a token is needed, rather than "failed to fetch".
    assert allowed.status_code == 401
    assert allowed.headers["access-control-allow-origin"] == HOST
    assert "needs a token" in allowed.json()["error"]["message"]
    assert wrong_host.status_code == 403
    assert wrong_host.headers["access-control-allow-origin"] == HOST
    assert foreign.status_code == 403
    assert "access-control-allow-origin" not in foreign.headers


def test_allowed_origins_come_from_the_config_file_and_the_flags(
    tmp_path: Path, a_built_web: Path
) -> None:
    config_file = tmp_path / "reckon.toml"
    config_file.write_text(f'allowed_origins = ["{HOST}"]\nsite = "{a_built_web}"\n')
    config = config_from_args(
        ["serve", "--config", str(config_file), "--port", "0", "--allow-origin", OTHER]
    )
    assert config.allowed_origins == [HOST, OTHER]

    running = Running(create_app(config))
    with running, httpx.Client(base_url=running.url, trust_env=False, timeout=10) as client:
        statuses = {
            origin: client.get("/reckon-chat.js", headers={"Origin": origin}).status_code
            for origin in (HOST, OTHER, "https://third.example")
        }

    assert statuses == {HOST: 200, OTHER: 200, "https://third.example": 403}


@pytest.mark.parametrize(
    "origin", ["https://host.example/", "host.example", "https://h.example/app"]
)
def test_an_allowed_origin_must_be_just_scheme_and_host(tmp_path: Path, origin: str) -> None:
    from reckon._exceptions import ConfigError

    with pytest.raises(ConfigError, match=r"must look like https://example\.org"):
        config_from_args(["serve", "--port", "0", "--allow-origin", origin])
