"""The relay-tool example of docs/configuration.md (*An example to run*): its config file
parses with the relay's own loader, and `reckon serve --config` with it lists the tool
and calls the example's API (web/examples/shipments_api.py) running on loopback, with the
key only the relay holds. Both are the shipped files, as the docs tell a person to run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reckon.server import RelayConfig, load_config_file
from support import ROOT, reckon_serve
from support._example_api import (
    DOCUMENTED_URL,
    EXAMPLE_CONFIG,
    EXAMPLE_KEY,
    EXAMPLE_KEY_ENV,
    example_config,
    the_shipments_api,
)

KEY_ENV, KEY = EXAMPLE_KEY_ENV, EXAMPLE_KEY


@pytest.fixture(scope="module")
def an_api() -> Iterator[str]:
    with the_shipments_api() as url:
        yield url


def test_the_documented_config_parses_with_the_relays_loader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)

    config = RelayConfig(**load_config_file(EXAMPLE_CONFIG))

    [tool] = config.tools
    assert (tool.name, tool.url, tool.method, tool.policy) == (
        "get_shipments",
        DOCUMENTED_URL,
        "POST",
        "run",
    )
    assert tool.secret_headers == {"X-Api-Key": KEY_ENV} and tool.parameters["required"] == [
        "month"
    ]
    # The docs run exactly these files, from the repository's root.
    docs = (ROOT / "docs" / "configuration.md").read_text()
    for words in (
        f"export {KEY_ENV}=",
        "python web/examples/shipments_api.py &",
        "reckon serve --config web/examples/relay-tools.toml",
        "/examples/tools.html",
    ):
        assert words in docs, words


def test_the_api_wants_its_key(an_api: str) -> None:
    with httpx.Client(trust_env=False, timeout=10) as client:
        refused = client.post(an_api, json={"month": 3})
        wrong = client.post(an_api, json={"month": 3}, headers={"X-Api-Key": "guess"})
        answered = client.post(an_api, json={"month": 3}, headers={"X-Api-Key": KEY})

    assert refused.status_code == wrong.status_code == 401
    assert [s["order"] for s in answered.json()] == [1005, 1006]


def test_the_relay_lists_and_calls_the_example_tool(an_api: str, tmp_path: Path) -> None:
    # The shipped config, with the port the API got instead of the documented 8765.
    config = example_config(an_api, tmp_path)

    with (
        reckon_serve("--config", str(config), site=None, env={KEY_ENV: KEY}) as served,
        httpx.Client(base_url=served.url, trust_env=False, timeout=20) as client,
    ):
        listed = client.get("/api/tools")
        started = time.monotonic()
        march = client.post("/api/tools/call", json={"name": "get_shipments", "args": {"month": 3}})
        took = time.monotonic() - started
        bad = client.post("/api/tools/call", json={"name": "get_shipments", "args": {"month": 0}})

    [tool] = listed.json()["tools"]
    assert tool["name"] == "get_shipments" and tool["parameters"]["required"] == ["month"]
    assert an_api not in listed.text and KEY not in listed.text
    assert march.json() == {
        "status": "ok",
        "result": [
            {"order": 1005, "month": 3, "day": 5, "carrier": "PostNord", "kg": 2.0},
            {"order": 1006, "month": 3, "day": 16, "carrier": "UPS", "kg": 0.9},
        ],
    }
    assert took < 5
    assert bad.json()["code"] == "bad_arguments" and "month must be at least 1" in bad.text
