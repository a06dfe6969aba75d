"""The memory ceiling: a cell that keeps allocating is stopped with a clear error, the
sandbox is replaced, uploads survive, and the next run works."""

from __future__ import annotations

from typing import Any


def test_a_memory_bomb_hits_the_ceiling_and_the_session_goes_on(a_console_page: Any) -> None:
    page = a_console_page
    outcome = page.evaluate(
        """async () => {
            const { createReckon } = await import("./reckon.js");
            // A second, independent sandbox on this page, with a low ceiling, and
            // without persistence (which would rebuild the variables after the kill).
            const small = createReckon({ memoryLimitMB: 700, agent: false, persist: false });
            await small.ready();
            await small.writeFile("kept.txt", "still here");
            await small.run("x = 1");
            const bomb = await small.run(
                "blocks = []\\nwhile True:\\n    blocks.append(bytearray(16 * 1024 * 1024))",
                { timeoutMs: 60000 });
            const after = await small.run("open('/data/kept.txt').read()");
            const lost = await small.run("x");
            return { bomb, after, lost };
        }"""
    )
    bomb = outcome["bomb"]
    assert bomb["status"] == "error"
    assert bomb["error"]["type"] == "MemoryError"
    assert "700 MB" in bomb["error"]["message"]
    assert bomb["restarted"] is True
    assert outcome["after"]["status"] == "ok"
    assert outcome["after"]["result"]["text"] == "'still here'"
    # The interpreter was replaced: variables are gone, as the message says.
    assert outcome["lost"]["error"]["type"] == "NameError"
