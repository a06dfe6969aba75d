"""How many of the project's own files one question runs, and how often it crosses contexts.

One question on the chat page (index.html from `reckon serve` on a free loopback port, in
front of the tests' scripted model on loopback, `Playlist`): one CSV added through the
page's file picker, then a question typed into the box; the model writes one cell, then
answers. Measured from just before the question is sent to the answer being shown (and,
apart, everything before it: the page's start, the upload, the agent's interpreter):

- JS: the web/ files with a function other than a script's top level that ran, per
  context, from V8's precise coverage (DevTools, every frame and worker attached as it
  starts). The site serves web/'s files as they are; the scripts the page joins (the
  sandbox worker's parts, the frame's inline script, the seam before each) are mapped
  back by finding each file's text in them.
- Python: the `reckon` modules one of whose functions ran, under a `sys.setprofile` hook:
  in the agent worker set through DevTools as its interpreter boots (the worker's global
  `loadPyodide` wrapped before the agent starts), in the kernel by a cell run with the
  page's own `reckon.run(code, {record: false})` (so the cells that switch it on and read
  it add the kernel's path of running any cell, which the model's cell runs anyway). The
  kernel's boot is not measured (it restores a snapshot before anything can be set).
- Crossings: in every context, each message it sends over a MessagePort, to a worker or
  (a worker) to its page, each window message it receives, and each `fetch` (the agent's
  relay calls), counted by wrappers put in before the question. Window messages are
  counted where they arrive (another origin's window cannot be wrapped where they leave).
- Then an idle window as long as the ask (at least 5 s): a file that also ran there is
  marked `*` (timers), since it did not run because of the question. A kernel module
  that the measuring cells run by themselves (any cell does) is marked `+`.

Prints a table, and with --list each context's files; asserts nothing.

    PYTHONPATH=py python benchmarks/question_path.py [--list]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from tests.browser.playlist_kit import a_playlist_server, a_relay_of  # noqa: E402

from _coverage import (  # noqa: E402
    COUNT_CROSSINGS,
    PROFILE_ON,
    PROFILE_READ,
    READ_CROSSINGS,
    Contexts,
    Root,
    files_that_ran,
    web_sources,
)
from _procs import text_table  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS, SALES, SITE  # noqa: E402

CELL = "import pandas as pd\ndf = pd.read_csv('/data/sales.csv')\nprint(df['price'].mean())"
ANSWER = "The mean price is 16.25."
IDLE = 5.0  # seconds, at least, of the idle window after the answer
QUESTION = "What is the mean price?"
# Where each DevTools target kind belongs (the sandbox frame runs in a process of its own).
GROUPS = {
    "page": "page",
    "iframe": "page",
    "worker": "agent worker",
    "iframe/worker": "sandbox worker",
}
# Wraps the agent worker's loadPyodide: the interpreter it makes starts the profile hook.
CAPTURE = f"""(() => {{
  const load = self.loadPyodide;
  if (typeof load !== "function") return false;
  if (!self.__wrapped) self.loadPyodide = async (options) => {{
    const pyodide = await load(options);
    pyodide.runPython({json.dumps(PROFILE_ON)});
    return (self.__pyodide = pyodide);
  }};
  return (self.__wrapped = true);
}})()"""


async def until(check: Any, what: str, timeout: float = 300) -> None:
    """Polls `check()` (a coroutine function) until it is true."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def kernel(page: Any, code: str) -> str:
    """A cell run with the page's API, not recorded (no `ran` event, no cell log)."""
    result = await page.evaluate("(c) => window.reckon.run(c, { record: false })", code)
    if result.get("status") != "ok":
        raise SystemExit(f"the measuring cell failed: {result}")
    return str(result.get("stdout", ""))


async def agent_modules(contexts: Contexts) -> list[str]:
    """The `reckon` modules that ran in the agent's interpreter since the last call."""
    found = await contexts.evaluate("worker", f"self.__pyodide.runPython({PROFILE_READ!r})")
    return list(json.loads(found[0]))


async def files(contexts: Contexts, origin: str) -> dict[str, set[str]]:
    """Per context group, the web/ files whose functions ran since the last call."""
    sources = web_sources()
    by_group: dict[str, set[str]] = {group: set() for group in GROUPS.values()}
    for kind, coverage in (await contexts.take()).items():
        by_group[GROUPS.get(kind, kind)] |= await files_that_ran(coverage, origin, sources)
    return by_group


async def measure() -> dict[str, Any]:
    from playwright.async_api import FilePayload, async_playwright

    out: dict[str, Any] = {}
    with a_playlist_server() as (model, upstream), a_relay_of(upstream) as url:
        model.queue = [("code", CELL), ("text", ANSWER)]
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await (await browser.new_context()).new_page()
            page.set_default_timeout(300_000)
            contexts = Contexts(Root(await page.context.new_cdp_session(page), url))
            await contexts.start()
            await page.goto(f"{url}/index.html")
            await page.evaluate("() => window.reckon.ready()")

            async def captured() -> bool:
                return await contexts.evaluate("worker", CAPTURE) == [True]

            await until(captured, "the agent worker")
            picked = FilePayload(name="sales.csv", mimeType="text/csv", buffer=SALES.encode())
            await page.set_input_files("#upload", files=[picked])
            await page.wait_for_function(
                "() => !document.getElementById('suggestions').hidden"
                " && /sales\\.csv/.test(document.getElementById('file-list').textContent)"
            )
            await page.evaluate("() => window.reckon.agent.ready()")

            async def profiled() -> bool:
                return await contexts.evaluate("worker", "Boolean(self.__pyodide)") == [True]

            await until(profiled, "the agent's interpreter")
            await kernel(page, PROFILE_ON)
            # What the measuring cells run of the kernel themselves (any cell runs it).
            out["any cell"] = json.loads(await kernel(page, f"print({PROFILE_READ})"))
            out["boot"] = await files(contexts, url)
            out["agent boot"] = await agent_modules(contexts)
            for kind in GROUPS:
                await contexts.evaluate(kind, COUNT_CROSSINGS)
                await contexts.evaluate(kind, READ_CROSSINGS)  # from zero
            asked = len(model.requests)

            t0 = time.monotonic()
            await page.fill("#question", QUESTION)
            await page.press("#question", "Enter")
            await page.wait_for_selector(".answer.status-ok, .answer.status-error")
            out["seconds"] = time.monotonic() - t0
            out["ask"] = await files(contexts, url)
            out["status"] = await page.inner_text(".answer[class*='status-']")
            out["crossings"] = {k: await contexts.evaluate(k, READ_CROSSINGS) for k in GROUPS}
            out["agent"] = await agent_modules(contexts)
            out["kernel"] = json.loads(await kernel(page, f"print({PROFILE_READ})"))
            out["model calls"] = len(model.requests) - asked

            await files(contexts, url)  # from zero: the measuring cell is no part of it
            await asyncio.sleep(max(IDLE, out["seconds"]))  # an idle window, measured
            out["idle"] = await files(contexts, url)
            await browser.close()
    return out


def report(out: dict[str, Any], listing: bool) -> None:
    # Per group: messages sent and window messages received, fetches, messages by kind.
    counts: dict[str, dict[str, Any]] = {}
    for kind, group in GROUPS.items():
        into = counts.setdefault(group, {"messages": 0, "fetch": 0, "other": 0, "kinds": {}})
        for c in filter(None, out["crossings"][kind]):
            into["messages"] += c["sent"] + c["windowIn"]
            into["fetch"] += c["fetch"]
            into["other"] += c["other"]
            for name, n in c["kinds"].items():
                into["kinds"][name] = into["kinds"].get(name, 0) + n
    rows = [["context", "files (ask)", "also idle", "files (boot)", "messages", "fetches"]]
    for group, c in counts.items():
        ask, idle, boot = (out[key][group] for key in ("ask", "idle", "boot"))
        row = [len(ask), len(ask & idle), len(boot), c["messages"], c["fetch"]]
        rows.append([f"JS {group}", *map(str, row)])
    ask, idle, boot = (set.union(*out[key].values()) for key in ("ask", "idle", "boot"))
    messages = sum(c["messages"] for c in counts.values())
    fetches = sum(c["fetch"] for c in counts.values())
    row = [len(ask), len(ask & idle), len(boot), messages, fetches]
    rows.append(["JS distinct files", *map(str, row)])
    agent, kernel, any_cell = out["agent"], out["kernel"], set(out["any cell"])
    rows.append(["Python agent modules", str(len(agent)), "", str(len(out["agent boot"])), "", ""])
    rows.append(["Python kernel modules", str(len(kernel)), "", "not measured", "", ""])
    answer = out["status"].splitlines()[0]
    print(f"one question: {out['model calls']} model calls, {out['seconds']:.1f} s to the answer")
    print(f"answer shown: {answer!r}")
    print(text_table(rows))
    python = len(agent) + len(kernel)
    print(f"files to follow the question: {len(ask)} JS + {python} Python = {len(ask) + python}")
    print(f"crossings: {messages} messages between contexts + {fetches} relay HTTP requests")
    if not listing:
        return
    for group in counts:
        names = [f"{n}{' *' if n in out['idle'][group] else ''}" for n in sorted(out["ask"][group])]
        print(f"\nJS {group} ({len(names)}; * also ran idle):\n  " + "\n  ".join(names))
    print(f"\nPython agent ({len(agent)}):\n  " + "\n  ".join(agent))
    marked = [f"{n}{' +' if n in any_cell else ''}" for n in kernel]
    print(f"\nPython kernel ({len(kernel)}; + run by any cell):\n  " + "\n  ".join(marked))
    for group, c in counts.items():
        kinds = sorted(c["kinds"].items(), key=lambda kv: -kv[1])
        print(f"\nmessages from {group}: " + ", ".join(f"{k} {n}" for k, n in kinds))
        print(f"  not counted (no project message, e.g. Pyodide's own scheduling): {c['other']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print each context's files")
    args = parser.parse_args()
    if not (SITE / "build-info.json").exists():
        raise SystemExit(f"{SITE} is not built: run `python build.py` first")
    report(asyncio.run(measure()), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
