"""A relay tool and the agent: the model is told of the relay's tool like a page's, its
code calls it through the relay, the call is a step, and under schema privacy what the
tool returned is hidden from the model (docs/configuration.md, *Relay tools*); an ask
stopped while its cell waits on a relay tool ends that call at the tool's endpoint.

`reckon serve` runs with a `[[tool]]` config in front of a scripted upstream
(playlist_kit.py) that records every body it receives."""

from __future__ import annotations

import json
import time
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
            f'url = "{endpoint.url}/vip"\nsecret_headers = {{ X-Api-Key = "{SECRET_ENV}" }}\n'
            f'[[tool]]\nname = "hang"\ndescription = "Never answers while its caller waits."\n'
            f'url = "{endpoint.url}/hang"\ntimeout = 30\n',
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


@pytest.mark.slow
def test_stopping_an_ask_ends_its_relay_tool_call_at_the_endpoint(
    a_browser: Any, a_site: tuple[str, Endpoint], a_playlist: tuple[Playlist, str]
) -> None:
    url, endpoint = a_site
    model, _ = a_playlist
    model.queue = [("code", "rows = await tools.hang()"), ("text", "Done.")]
    endpoint.seen.clear()
    endpoint.hung.clear()
    with a_console_page(a_browser, url) as page:
        page.evaluate(MAKE)
        page.evaluate(
            "() => { window.__ask = window.t.ask('wait for it', { model: 'scripted' }); }"
        )
        deadline = time.monotonic() + 120  # the agent's interpreter boots first
        while not any(seen["path"] == "/hang" for seen in endpoint.seen):
            assert time.monotonic() < deadline, "the model's cell never called the tool"
            time.sleep(0.05)
        stopped = time.monotonic()
        page.evaluate("() => window.t.stop()")
        outcome = page.evaluate("() => window.__ask")
        while not endpoint.hung:
            assert time.monotonic() - stopped < 20, "the endpoint's request was never closed"
            time.sleep(0.05)
        noticed = time.monotonic() - stopped

    # Closed within seconds of stop(), not at the tool's 30 s limit.
    assert endpoint.hung[0] is not None and endpoint.hung[0] < 10, endpoint.hung
    assert noticed < 5, noticed
    assert outcome["status"] == "stopped" and outcome["message"] == "Stopped by the user."
    # The step's cell ended as an interrupted cell, at once; the call's record says why.
    [step] = outcome["steps"]
    result = step["result"]
    assert (result["status"], result["error"]["type"]) == ("interrupted", "KeyboardInterrupt")
    assert result["duration_ms"] < 5000 and not result["restarted"], result
    [record] = result["tools"]
    assert (record["name"], record["status"], record["message"]) == (
        "hang",
        "error",
        "hang: cancelled, its cell ended first (interrupted, stopped or out of time)",
    )
