"""What benchmarks/question_path.py measures with: every browser context of a page under
DevTools (the page's own session, and the frames and workers attached under it, reached
through their parent's session), V8's precise coverage mapped back to web/ files, a
count of the messages each context sends, and which `reckon` modules' functions ran
under a Python profile hook.

Playwright hands out a session for a page or a frame only, and drops the messages of
sessions attached under one; so children are attached unflattened and spoken to
through `Target.sendMessageToTarget`, each reply matched by its id here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

WEB = Path(__file__).resolve().parents[1] / "web"

Handler = Callable[[dict[str, Any]], None]


class Session(ABC):
    """One DevTools session: `send` a command, `on` an event."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind, self.url = kind, url
        self.handlers: dict[str, list[Handler]] = {}
        self.children: dict[str, Child] = {}
        self.debugging = False  # Debugger enabled, for the sources of scripts

    @abstractmethod
    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send `method` with `params` to this session's context, and return its reply."""

    def on(self, method: str, handler: Handler) -> None:
        self.handlers.setdefault(method, []).append(handler)

    def emit(self, method: str, params: dict[str, Any]) -> None:
        if method == "Target.receivedMessageFromTarget" and params["sessionId"] in self.children:
            self.children[params["sessionId"]].receive(json.loads(params["message"]))
        for handler in self.handlers.get(method, []):
            handler(params)


class Root(Session):
    """The page's session, from Playwright (`context.new_cdp_session(page)`)."""

    def __init__(self, cdp: Any, url: str) -> None:
        super().__init__("page", url)
        self.cdp = cdp
        cdp.on("Target.attachedToTarget", lambda p: self.emit("Target.attachedToTarget", p))
        cdp.on("Target.receivedMessageFromTarget", lambda p: self.emit(
            "Target.receivedMessageFromTarget", p))  # fmt: skip

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.cdp.send(method, params or {})


class Child(Session):
    """A frame or worker attached under `parent`, spoken to through it."""

    ids = itertools.count(1)

    def __init__(self, parent: Session, session_id: str, kind: str, url: str) -> None:
        super().__init__(kind, url)
        self.parent, self.session_id = parent, session_id
        self.waiting: dict[int, asyncio.Future[Any]] = {}

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        number = next(self.ids)
        reply = self.waiting[number] = asyncio.get_running_loop().create_future()
        message = json.dumps({"id": number, "method": method, "params": params or {}})
        await self.parent.send(
            "Target.sendMessageToTarget", {"sessionId": self.session_id, "message": message}
        )
        return await asyncio.wait_for(reply, 60)

    def receive(self, message: dict[str, Any]) -> None:
        if "id" not in message:
            self.emit(message["method"], message.get("params", {}))
        elif (reply := self.waiting.pop(message["id"], None)) is not None and not reply.done():
            if "error" in message:
                reply.set_exception(RuntimeError(f"{self.kind}: {message['error']}"))
            else:
                reply.set_result(message.get("result", {}))


class Contexts:
    """Every frame and worker under a page, attached as it starts (paused until its
    coverage is on), its coverage taken on demand."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.all: list[Session] = [root]
        self.pending: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self._cover(self.root)
        await self._watch(self.root)

    async def _watch(self, session: Session) -> None:
        session.on("Target.attachedToTarget", lambda p: self._attached(session, p))
        flags = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False}
        await session.send("Target.setAutoAttach", flags)

    def _attached(self, parent: Session, params: dict[str, Any]) -> None:
        info = params["targetInfo"]
        kind = info["type"] if parent is self.root else f"{parent.kind}/{info['type']}"
        child = parent.children[params["sessionId"]] = Child(
            parent, params["sessionId"], kind, info["url"]
        )
        self.all.append(child)
        task = asyncio.ensure_future(self._set_up(child))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def _set_up(self, child: Child) -> None:
        try:
            await self._cover(child)
            if child.kind == "iframe":
                await self._watch(child)
        finally:
            await child.send("Runtime.runIfWaitingForDebugger")

    @staticmethod
    async def _cover(session: Session) -> None:
        await session.send("Profiler.enable")
        await session.send("Profiler.startPreciseCoverage", {"callCount": True, "detailed": True})

    async def take(self) -> dict[str, list[tuple[Session, dict[str, Any]]]]:
        """Each live context's coverage since the last take (V8 then resets its counts)."""
        taken: dict[str, list[tuple[Session, dict[str, Any]]]] = {}
        for session in self.all:
            try:
                found = await session.send("Profiler.takePreciseCoverage")
            except Exception:  # a context that has ended since (a worker for one job)
                continue
            taken.setdefault(session.kind, []).extend((session, s) for s in found["result"])
        return taken

    async def evaluate(self, kind: str, expression: str) -> list[Any]:
        """`expression`'s value in every live context of `kind`."""
        values = []
        for session in [s for s in self.all if s.kind == kind]:
            params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
            try:
                reply = await session.send("Runtime.evaluate", params)
            except (RuntimeError, TimeoutError):
                continue
            if "exceptionDetails" not in reply:
                values.append(reply["result"].get("value"))
        return values


def web_sources() -> dict[str, str]:
    """web/'s scripts by their path under web/ (the site serves them as they are), and
    the text that joined scripts carry of web/shared/seam.js: its `seam` function."""
    texts = {p.relative_to(WEB).as_posix(): p.read_text() for p in WEB.rglob("*.js")}
    seam = re.search(
        r"^export (function seam\(\) \{\n.*?\n\})\n", texts["shared/seam.js"], re.M | re.S
    )
    if seam:
        texts["shared/seam.js"] = seam.group(1)
    return texts


async def files_that_ran(
    coverage: list[tuple[Session, dict[str, Any]]], origin: str, sources: dict[str, str]
) -> set[str]:
    """web/ files with a function other than a script's top level that ran. What is no
    web/ file (Pyodide's scripts, Playwright's and our own evaluations) is left out."""
    ran: set[str] = set()
    for session, script in coverage:
        called = [
            f["ranges"][0]["startOffset"]
            for f in script["functions"]
            if f["ranges"][0]["count"] > 0 and (f["ranges"][0]["startOffset"] or f["functionName"])
        ]  # a script's top level is the nameless function at offset 0
        if not called:
            continue
        url = script["url"]
        rel = url[len(origin) + 1 :].split("?")[0] if url.startswith(origin + "/") else ""
        if rel in sources and not rel.startswith("shared/seam.js"):
            ran.add(rel)
            continue
        if rel.startswith("pyodide/"):
            continue
        # A script the page put together (a worker's blob:, the frame's inline script):
        # find each web/ file's text in it, and each function in the file it falls in.
        if not session.debugging:
            await session.send("Debugger.enable")
            session.debugging = True
        text = (await session.send("Debugger.getScriptSource", {"scriptId": script["scriptId"]}))[
            "scriptSource"
        ]
        spans = [
            (at, at + len(t), name) for name, t in sources.items() if (at := text.find(t)) >= 0
        ]
        found = {name for at in called for start, end, name in spans if start <= at < end}
        ran |= found
    return ran


# Counts, in one context, each message it sends over a port or to a worker (or, in a
# worker, to its page), each window message it receives, and its fetches; each message
# by its `type` (and a call's `method`). Every message of the project's is an object
# with a `type` (PROTOCOL.md); anything else (Pyodide posts itself strings over a port
# of its own, to schedule its tasks: no crossing) is only counted as `other`.
# READ_CROSSINGS hands the counts over and starts again from zero.
COUNT_CROSSINGS = """(() => {
  const c = (globalThis.__crossings ??= { sent: 0, windowIn: 0, fetch: 0, other: 0, kinds: {} });
  const tally = (field, m) => {
    if (!m || typeof m !== "object" || typeof m.type !== "string") return void c.other++;
    const kind = typeof m.method === "string" ? `${m.type} ${m.method}` : m.type;
    c[field]++;
    c.kinds[kind] = (c.kinds[kind] || 0) + 1;
  };
  const wrap = (obj, key, count) => {
    if (!obj || Object.hasOwn(obj, "__counted_" + key)) return;
    const orig = obj[key];
    obj[key] = function (...a) { count(a); return orig.apply(this, a); };
    obj["__counted_" + key] = true;
  };
  const realms = [globalThis];
  if (typeof window !== "undefined") for (const f of document.querySelectorAll("iframe")) {
    try { if (f.contentWindow.document) realms.push(f.contentWindow); } catch { /* other origin */ }
  }
  for (const g of realms) {
    wrap(g.MessagePort && g.MessagePort.prototype, "postMessage", (a) => tally("sent", a[0]));
    wrap(g.Worker && g.Worker.prototype, "postMessage", (a) => tally("sent", a[0]));
    const worker = typeof g.WorkerGlobalScope !== "undefined";
    if (worker) wrap(g, "postMessage", (a) => tally("sent", a[0]));
    else if (!Object.hasOwn(g, "__countedWindow")) {
      g.addEventListener("message", (ev) => tally("windowIn", ev.data), true);
      g.__countedWindow = true;
    }
    wrap(g, "fetch", () => c.fetch++);
  }
  return true;
})()"""
READ_CROSSINGS = """(() => {
  const c = globalThis.__crossings, got = JSON.parse(JSON.stringify(c));
  Object.assign(c, { sent: 0, windowIn: 0, fetch: 0, other: 0, kinds: {} });
  return got;
})()"""

# A profile hook (sys.setprofile) that keeps the name of each `reckon` module one of
# whose functions (not its top level) was called; PROFILE_READ is that list as JSON,
# and empties it. No name is left in the namespace it runs in.
PROFILE_ON = """import sys as _s, types as _t, json as _j
_m = _s.modules.get("_question_path") or _t.ModuleType("_question_path")
_m.seen = set()
def _hook(frame, event, arg, seen=_m.seen):
    if event == "call" and frame.f_code.co_name != "<module>":
        name = frame.f_globals.get("__name__") or ""
        if name == "reckon" or name.startswith("reckon."):
            seen.add(name)
def _read(seen=_m.seen, dumps=_j.dumps):
    found = dumps(sorted(seen))
    seen.clear()
    return found
_m.read = _read
_s.modules["_question_path"] = _m
_s.setprofile(_hook)
del _s, _t, _j, _m, _hook, _read
"""
PROFILE_READ = "__import__('sys').modules['_question_path'].read()"
