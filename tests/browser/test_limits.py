"""The memory ceiling: a cell that keeps allocating is stopped with a clear error, the
sandbox is replaced, uploads survive, and the next run works. The same for a cell
that ends the interpreter itself (os._exit) or runs a million frames deep."""

from __future__ import annotations

import time
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
    # What works for a big file, not a loop of chunks a small model gets wrong.
    assert "run_sql()" in bomb["error"]["message"]
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


# A frame whose renderer died (out of memory from JS arrays, or ended by the system)
# answers nothing. Navigating the sandbox frame away does the same to the page: the
# frame's document, its worker and their ports are gone, with no error to see. Neither
# the navigation nor the end of the frame's worker is instant (a loaded machine ends
# the worker well after the frame has loaded about:blank, and it answers meanwhile),
# so each kill waits until Playwright has seen that worker end.
KILL_THE_FRAME = """async () => {
    const small = window.small;
    await new Promise((gone) => {
        small.sandbox.frame.addEventListener("load", gone, { once: true });
        small.sandbox.frame.src = "about:blank";
    });
}"""


def _name(worker: Any) -> str:
    try:
        return str(worker.evaluate("self.name"))
    except Exception:  # it ended while asked
        return ""


def kill_the_frame(page: Any, known: list[Any]) -> list[Any]:
    """Navigate the small sandbox's frame away and wait until its worker has ended: the
    page holds a port to the worker itself, so a worker not yet ended still answers.
    Its worker is the one named "reckon-sandbox" that is not in ``known``: a snapshot
    maker or a fresh worker of the same frame ending first let a run reach the live
    one (seen). The page's workers after."""
    theirs = [w for w in page.workers if w not in known and _name(w) == "reckon-sandbox"]
    assert len(theirs) == 1, "the frame's sandbox worker was not found"
    page.evaluate(KILL_THE_FRAME)
    deadline = time.monotonic() + 30
    while any(w in page.workers for w in theirs) and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert not any(w in page.workers for w in theirs), "the frame's worker did not end"
    return list(page.workers)


def test_a_dead_frame_is_replaced_and_no_request_waits_forever(a_console_page: Any) -> None:
    page = a_console_page
    known = list(page.workers)
    page.evaluate(
        """async () => {
            const { createReckon } = await import("./reckon.js");
            window.small = createReckon({ agent: false, persist: false });
            await window.small.ready();
            await window.small.writeFile("kept.txt", "still here");
            await window.small.run("x = 1");
            window.deadline = (p, what) => Promise.race([p, new Promise((_, reject) =>
                setTimeout(() => reject(new Error(what + " waited over 90 s")), 90000))]);
        }"""
    )
    known = kill_the_frame(page, known)
    found = page.evaluate(
        """async () => {
            const small = window.small;
            // The run that finds the frame dead, then what comes after it.
            const first = await deadline(small.run("print(2)"), "the first run");
            const read = "print(open('/data/kept.txt').read())";
            const kept = await deadline(small.run(read), "a later run");
            const files = await deadline(small.listFiles("/data"), "listFiles");
            return { first, kept, files: files.map((f) => f.name) };
        }"""
    )
    # The reported case: a cell times out while the frame is dead, and the restart is
    # posted to it.
    kill_the_frame(page, known)
    timed = page.evaluate(
        """async () => {
            const small = window.small;
            const loop = small.run("while True: pass", { timeoutMs: 2000 });
            const late = await deadline(loop, "a timed-out run");
            const after = await deadline(small.run("print(3)"), "the run after the timeout");
            small.close();
            return { late, after };
        }"""
    )
    outcome = {**found, **timed}
    first = outcome["first"]
    assert first["status"] == "error" and "stopped responding" in first["error"]["message"], first
    kept = outcome["kept"]
    assert kept["status"] == "ok" and kept["stdout"] == "still here\n", kept
    assert outcome["files"] == ["kept.txt"], outcome
    assert outcome["late"]["status"] in ("timeout", "error"), outcome["late"]
    after = outcome["after"]
    assert after["status"] == "ok" and after["stdout"] == "3\n", after


def test_a_cell_that_raises_its_own_output_limit_is_held_to_the_pages(
    a_console_page: Any,
) -> None:
    # The limit the kernel applies lives inside the sandbox, where the cell can change it.
    outcome = a_console_page.evaluate(
        """async () => {
            const { createReckon } = await import("./reckon.js");
            const small = createReckon({ agent: false, persist: false });
            await small.ready();
            let live = 0;
            const code = "import sys\\nsys.stdout._limit = 10**9\\nprint('x' * 3_000_000)";
            const result = await small.run(code, { onStream: (_n, text) => (live += text.length) });
            const after = await small.run("print('fine')");
            small.close();
            const tail = result.stdout.slice(-160);
            return { status: result.status, length: result.stdout.length, tail,
                     truncated: result.truncated, live, after: after.stdout };
        }"""
    )
    assert outcome["status"] == "ok", outcome
    assert outcome["length"] < 101_200 and outcome["truncated"] is True, outcome
    assert "truncated by the page" in outcome["tail"], outcome["tail"]
    # The live view stops at a million characters, with a line saying so.
    assert 1_000_000 <= outcome["live"] < 1_000_200, outcome["live"]
    assert outcome["after"] == "fine\n"


def test_assigned_values_a_patched_kernel_reports_are_held_to_the_limit_too(
    a_console_page: Any,
) -> None:
    # The cell replaces the kernel's own reporting of silent assignments: still capped.
    outcome = a_console_page.evaluate(
        """async () => {
            const { createReckon } = await import("./reckon.js");
            const small = createReckon({ agent: false, persist: false });
            await small.ready();
            const patch = "import reckon.kernel._session as s\\n"
              + "s._assigned_values = lambda names, ns: "
              + "[{'name': 'x', 'type': 'str', 'text': 'z' * 3_000_000}]";
            await small.run(patch);
            const result = await small.run("x = 1");
            small.close();
            const text = result.assigned[0].text;
            return { length: text.length, tail: text.slice(-120), truncated: result.truncated };
        }"""
    )
    assert outcome["length"] < 101_200 and outcome["truncated"] is True, outcome
    assert "truncated by the page" in outcome["tail"], outcome


def test_the_kernels_notes_arrive_as_data_held_to_the_limit(a_console_page: Any) -> None:
    outcome = a_console_page.evaluate(
        """async () => {
            const { createReckon } = await import("./reckon.js");
            const small = createReckon({ agent: false, persist: false });
            await small.ready();
            const noted = await small.run("import pandas as pd\\n"
              + "df = pd.DataFrame({'z': [1.0, None, 1.0]})\\nprint(len(df['z'].unique()))");
            await small.run("import reckon.kernel._session as s\\n"
              + "s.cell_notes = lambda code, out, ns: ['z' * 3_000_000]");
            const long = (await small.run("print(1)")).notes[0];
            small.close();
            return { notes: noted.notes, length: long.length, tail: long.slice(-120) };
        }"""
    )
    assert outcome["notes"][0].startswith("len(df['z'].unique()) counts the missing value")
    assert outcome["length"] < 101_200 and "truncated by the page" in outcome["tail"]


# Memory outside the WebAssembly heap (SECURITY.md, F4): JS buffers made through `js`,
# in Python or in one js.eval call, and files written to memory (MEMFS), count.
OUTSIDE_THE_HEAP = {
    "python-loop": "import js\nkeep = []\nwhile True:\n"
    "    keep.append(js.Uint8Array.new(32 << 20))",
    "one-eval": 'import js\njs.eval("self.kept = []; for (let i = 0; i < 40; i++)'
    ' self.kept.push(new ArrayBuffer(32 << 20)); 0")',
    "copies": "import js\nb = js.ArrayBuffer.new(32 << 20)\nkeep = [b.slice(0) for _ in range(40)]",
    "files": "import os\nchunk = b'x' * (8 << 20)\nwith open('/tmp/big.bin', 'wb') as f:\n"
    "    while True:\n        f.write(chunk)",
}


def test_memory_outside_the_heap_counts_against_the_ceiling(a_console_page: Any) -> None:
    outcome = a_console_page.evaluate(
        """async (cells) => {
            const { createReckon } = await import("./reckon.js");
            const small = createReckon({ memoryLimitMB: 700, agent: false, persist: false });
            await small.ready();
            const out = {};
            for (const [name, code] of Object.entries(cells)) {
                out[name] = await small.run(code, { timeoutMs: 60000 });
            }
            // What stays under the ceiling still works: a 200 MB file written, read
            // back and deleted, then buffers made and dropped in separate runs (a
            // buffer counts until the browser collects it).
            const fine = "with open('/tmp/ok.bin', 'wb') as f:\\n" +
                "    for _ in range(25): f.write(b'y' * (8 << 20))\\n" +
                "import os\\nsize = os.path.getsize('/tmp/ok.bin')\\n" +
                "os.remove('/tmp/ok.bin')\\nsize";
            out.fine = [];
            for (let i = 0; i < 4; i++) out.fine.push(await small.run(fine));
            out.drops = [];
            for (let i = 0; i < 4; i++) {
                // 4 x 100 MB: under the ceiling even if none is collected in between.
                const drop = "import js\\nx = js.ArrayBuffer.new(100 << 20)\\ndel x";
                out.drops.push(await small.run(drop));
                await new Promise((r) => setTimeout(r, 50));
            }
            small.close();
            return out;
        }""",
        OUTSIDE_THE_HEAP,
    )
    for name in OUTSIDE_THE_HEAP:
        got = outcome[name]
        assert got["status"] == "error" and got["error"]["type"] == "MemoryError", (name, got)
        assert "700 MB" in got["error"]["message"], (name, got["error"]["message"])
        assert got["restarted"] is True, (name, got)
    for got in outcome["fine"]:
        assert got["status"] == "ok" and got["result"]["text"] == str(200 << 20), got
    for got in outcome["drops"]:
        assert got["status"] == "ok", got
