"""A relay tool and the agent: the model is told of the relay's tool like a page's, its
code calls it through the relay, the call is a step, and under schema privacy what the
tool returned is hidden from the model (docs/configuration.md, *Relay tools*).

`reckon serve` runs with a `[[tool]]` config in front of a scripted upstream
(playlist_kit.py) that records every body it receives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import reckon_serve
from support._tool_endpoint import SECRET, SECRET_ENV, Endpoint, an_orders_endpoint

from .playlist_kit import Playlist, a_console_page

pytestmark = pytest.mark.browser

MAKE = """async () => {
  const { createReckon } = await import("./reckon.js");
  window.t = createReckon({ persist: false });
  await window.t.ready();
}"""


@pytest.fixture(scope="module")
def a_site(
    a_playlist: tuple[Playlist, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Endpoint]]:
    with an_orders_endpoint() as endpoint:
        config = Path(tmp_path_factory.mktemp("relay")) / "relay.toml"
        config.write_text(
            f'[[tool]]\nname = "get_vip"\ndescription = "The best customer and what they spent."\n'
            f'url = "{endpoint.url}/vip"\nsecret_headers = {{ X-Api-Key = "{SECRET_ENV}" }}\n',
            encoding="utf-8",
        )
        flags = ["--config", str(config), "--upstream", a_playlist[1], "--model", "scripted"]
        env = {"RECKON_UPSTREAM_KEY": "sk-test", SECRET_ENV: SECRET}
        with reckon_serve(*flags, env=env) as served:
            yield served.url, endpoint


@pytest.mark.slow
def test_the_model_uses_a_relay_tool_and_privacy_hides_what_it_returned(
    a_browser: Any, a_site: tuple[str, Endpoint], a_playlist: tuple[Playlist, str]
) -> None:
    url, endpoint = a_site
    model, _ = a_playlist
    model.requests.clear()
    model.queue = [
        ("code", "rows = await tools.get_vip()\nprint(rows[0]['customer'], rows[0]['amount'])"),
        ("text", "Done."),
    ]
    with a_console_page(a_browser, url) as page:
        page.evaluate(MAKE)
        outcome = page.evaluate(
            """async () => {
                const reply = await window.t.configure({ privacy: "schema" });
                if (reply.status !== "ok") throw new Error(reply.message);
                return window.t.ask("who is our best customer", { model: "scripted" });
            }"""
        )

    assert outcome["status"] == "ok", outcome
    prompt = str(model.requests[0]["payload"]["messages"][0]["content"])
    assert "- get_vip(): The best customer and what they spent." in prompt
    result = outcome["steps"][0]["result"]
    assert result["stdout"] == "Zelda Quartermaine 98765.43\n"  # the person sees it
    assert [(r["name"], r["status"]) for r in result["tools"]] == [("get_vip", "ok")]
    assert endpoint.seen[-1]["headers"]["x-api-key"] == SECRET
    sent = json.dumps([r["payload"] for r in model.requests])
    for value in ("Zelda Quartermaine", "98765.43", SECRET, endpoint.url):
        assert value not in sent, value
    assert "[hidden]" in sent
