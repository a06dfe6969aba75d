"""The memory ceiling: a cell that keeps allocating is stopped with a clear error, the
sandbox is replaced, uploads survive, and the next run works. The same for a cell
that ends the interpreter itself (os._exit) or runs a million frames deep."""

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


def test_an_exited_interpreter_says_so_and_the_session_is_rebuilt(a_console_page: Any) -> None:
    """os._exit() is not a timeout: the result says the interpreter exited, at once; the
    page's session (with persistence) gets its files back and its variables replayed."""
    page = a_console_page
    outcome = page.evaluate(
        """async () => {
            const r = window.reckon;
            const recovered = new Promise((resolve) => r.on("recovered", resolve));
            await r.writeFile("kept-after-exit.txt", "still here");
            await r.run("before_exit = 41");
            const t0 = performance.now();
            const exited = await r.run("import os\\nos._exit(3)", { timeoutMs: 60000 });
            const ms = performance.now() - t0;
            const rebuilt = await recovered;
            const file = await r.run("open('/data/kept-after-exit.txt').read()");
            const variable = await r.run("before_exit + 1");
            const deep = await r.run(
                "import sys\\nsys.setrecursionlimit(10**6)\\n" +
                "def f(n):\\n    return f(n + 1)\\nf(0)",
                { timeoutMs: 120000 });
            return { exited, ms, rebuilt, file, variable, deep };
        }"""
    )
    exited = outcome["exited"]
    assert exited["status"] == "error", exited
    assert exited["error"]["type"] == "InterpreterExit", exited["error"]
    assert "exit status 3" in exited["error"]["message"]
    assert "variables are rebuilt" in exited["error"]["message"], exited["error"]["message"]
    assert exited["restarted"] is True
    # Answered by the crash hook, not by the 60 s deadline.
    assert outcome["ms"] < 60_000, outcome["ms"]
    assert outcome["rebuilt"]["reason"] == "crash", outcome["rebuilt"]
    assert outcome["file"]["result"]["text"] == "'still here'", outcome["file"]
    assert outcome["variable"]["result"]["text"] == "42", outcome["variable"]
    deep = outcome["deep"]
    assert deep["status"] == "error" and deep["error"]["type"] == "RecursionError", deep["error"]
    assert "[Previous line repeated" in deep["error"]["traceback"]
    assert deep["restarted"] is False
