"""The example shop page (examples/tools.html): a <reckon-chat> that the page lends two
tools through the element's `tools` property, over orders held in the page itself."""

from __future__ import annotations

from typing import Any

import pytest

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
