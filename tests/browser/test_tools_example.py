"""The example shop page (examples/tools.html): a <reckon-chat> that the page lends two
tools through the element's `tools` property, over orders held in the page itself; and
served by the relay-tool example (docs/configuration.md, *An example to run*), the
relay's `get_shipments` beside them, which a cell joins with the page's orders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import reckon_serve
from support._example_api import EXAMPLE_KEY, EXAMPLE_KEY_ENV, example_config, the_shipments_api

pytestmark = pytest.mark.browser


@pytest.mark.slow
def test_the_example_page_lends_its_two_tools(a_browser: Any, a_playlist_site: str) -> None:
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{a_playlist_site}/examples/tools.html")
        out = page.evaluate(
            """async () => {
                const chat = document.getElementById("chat");
                await chat.ready();
                const names = chat.tools.map((t) => `${t.name}:${t.policy}`);
                const march = await chat.run("rows = await tools.get_orders(month=3)\\n"
                    + "round(sum(r['amount'] for r in rows), 2)");
                let bad = null;
                try { chat.tools = [{ name: "x y", description: "d", run() {} }]; }
                catch (e) { bad = `${e.name}: ${e.message}`; }
                chat.onToolRequest = (request) => request.name === "refund_total";
                const refunds = await chat.run("(await tools.refund_total())['total']");
                const items = document.querySelectorAll("#tool-log li");
                const log = [...items].map((li) => li.textContent);
                return { names, march: march.result.text, bad, refunds: refunds.result.text,
                         still: chat.tools.length, log };
            }"""
        )
    finally:
        context.close()
    assert out["names"] == ["get_orders:run", "refund_total:ask"]
    assert out["march"] == "531.9"
    assert out["bad"].startswith("TypeError: registerTool")
    assert out["still"] == 2  # a refused list changes nothing
    assert out["refunds"] == "48.25"
    assert out["log"][0].startswith('get_orders({"month":3}): ok, ')
    assert out["log"][1].startswith("refund_total({}): ok")


@pytest.mark.slow
def test_the_example_page_with_the_example_relay_tool(a_browser: Any, tmp_path: Path) -> None:
    with (
        the_shipments_api() as api,
        reckon_serve(
            "--config", str(example_config(api, tmp_path)), env={EXAMPLE_KEY_ENV: EXAMPLE_KEY}
        ) as served,
    ):
        context = a_browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"{served.url}/examples/tools.html")
            out = page.evaluate(
                """async () => {
                    const chat = document.getElementById("chat");
                    await chat.ready();
                    await chat.reckon.toolHost.loadRelay();
                    const names = chat.tools.map(
                        (t) => `${t.name}:${t.policy}:${Boolean(t.relay)}`);
                    const ran = await chat.run("orders = await tools.get_orders(month=3)\\n"
                        + "shipped = {s['order'] for s in await tools.get_shipments(month=3)}\\n"
                        + "[o['id'] for o in orders if o['id'] not in shipped]");
                    return { names, text: ran.result.text, error: ran.result.error };
                }"""
            )
            # The page tells the person what the analysis may call, the relay's included.
            listed = "get_orders, refund_total (asks you first), get_shipments (from the relay)."
            page.wait_for_function(
                "(text) => document.getElementById('tool-list').textContent.endsWith(text)",
                arg=listed,
                timeout=10_000,
            )
        finally:
            context.close()
    assert out["names"] == [
        "get_orders:run:false",
        "refund_total:ask:false",
        "get_shipments:run:true",
    ]
    assert out["text"] == "[1007]", out  # March's order that has not shipped
