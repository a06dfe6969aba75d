"""Helpers for the browser tests: drive `window.reckon` with deadlines, move bytes in
and out of the page, open pages that keep a session (persistence), look at the chat
page, and a canary HTTP server that records who reached it.

Every call into the page races its promise against a deadline, so a hung sandbox
fails the test with a message instead of hanging the session.
"""

from __future__ import annotations

import base64
import http.server
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reckon._cli import main

# The page-side helpers of the headless API (a deadline race, base64 for bytes):
# the tests call the page exactly as reckon.Session does.
from reckon.client._runtime import _PRELUDE
from support import SALES, serving

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SALES_BYTES = SALES.encode()  # what the pages upload and read back

# Every CSP violation the page reports, from the first byte on (an init script).
CSP_RECORDER = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(`${e.violatedDirective} ${e.sourceFile}:${e.lineNumber}`), true);
"""


def page_call(page: Any, body: str, arg: Any = None, *, deadline_s: float = 30.0) -> Any:
    """Evaluate `body` (statements of an async function of `arg`, with the prelude's
    helpers in scope and `deadlineMs` set) and return what it returns."""
    script = f"async ([arg, deadlineMs]) => {{ {_PRELUDE}\n{body} }}"
    return page.evaluate(script, [arg, int(deadline_s * 1000)])


def ok(result: dict[str, Any]) -> dict[str, Any]:
    """The result, after checking the run succeeded (with the error shown if not)."""
    assert result["status"] == "ok", result.get("error") or result
    return result


def run(
    page: Any, code: str, *, timeout_ms: int | None = None, deadline_s: float = 30.0
) -> dict[str, Any]:
    """Run a cell; returns the run result (PROTOCOL.md §1)."""
    return run_streamed(page, code, timeout_ms=timeout_ms, deadline_s=deadline_s)["result"]


def run_streamed(
    page: Any, code: str, *, timeout_ms: int | None = None, deadline_s: float = 30.0
) -> dict[str, Any]:
    """Run a cell, collecting stream events as they arrive in the page.

    Returns {"result", "chunks": [{"name", "text", "t"}], "elapsed"} with times in
    ms since the call started.
    """
    options = {} if timeout_ms is None else {"timeoutMs": timeout_ms}
    body = """
      const [code, options] = arg;
      const t0 = performance.now();
      const chunks = [];
      const onStream = (name, text) => chunks.push({ name, text, t: performance.now() - t0 });
      const result = await withDeadline(
        window.reckon.run(code, { ...options, onStream }), deadlineMs, "run");
      return { result, chunks, elapsed: performance.now() - t0 };
    """
    out: dict[str, Any] = page_call(page, body, [code, options], deadline_s=deadline_s)
    return out


@contextmanager
def a_console(browser: Any, url: str, *, deadline_s: float = 120) -> Iterator[tuple[Any, Any]]:
    """`url`/console.html in a new browser context, its sandbox ready; yields (page,
    the `ready()` reply) and closes the context after."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{url}/console.html")
        ready = page_call(
            page,
            "return await withDeadline(window.reckon.ready(), deadlineMs, 'ready')",
            deadline_s=deadline_s,
        )
        yield page, ready
    finally:
        context.close()


@contextmanager
def a_chat_page_with(browser: Any, url: str, csv: str, **options: Any) -> Iterator[Any]:
    """`url`/index.html in a new browser context (``options``), ready, with `csv` uploaded
    as sales.csv; the context closes after."""
    context = browser.new_context(**options)
    try:
        page = context.new_page()
        page.goto(f"{url}/index.html")
        page.evaluate("() => window.reckon.ready()")
        page.evaluate(
            "(csv) => window.reckon.upload({name: 'sales.csv', bytes: new TextEncoder()"
            ".encode(csv)})",
            csv,
        )
        yield page
    finally:
        context.close()


@contextmanager
def a_chat_at(browser: Any, url: str, *, height: int = 900) -> Iterator[Any]:
    """`url`/index.html at 1280 x `height` in a new browser context, its status saying
    ready (the page's calls wait 60 s by default); the context closes after."""
    context = browser.new_context(viewport={"width": 1280, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{url}/index.html")
        page.get_by_role("status").filter(has_text="ready").wait_for(timeout=120_000)
        yield page
    finally:
        context.close()


# Collects the page's events in window.__events, so a test can look at them later.
LISTEN = """
  window.__events = [];
  for (const type of ["restored", "recovered", "restarted", "storage-error", "storage-changed"]) {
    window.reckon.on(type, (detail) => window.__events.push({ type, detail }));
  }
  return true;
"""


def wait_until_ready(page: Any) -> dict[str, Any]:
    body = "return await withDeadline(window.reckon.ready(), deadlineMs, 'ready')"
    reply: dict[str, Any] = page_call(page, body, deadline_s=120)
    return reply


def open_page(context: Any, url: str) -> Any:
    """`url` in a new page of `context`, its events recorded (`LISTEN`), ready."""
    page = context.new_page()
    page.goto(url)
    page_call(page, LISTEN)
    wait_until_ready(page)
    return page


def reload_page(page: Any) -> None:
    page.reload()
    page_call(page, LISTEN)
    wait_until_ready(page)


def ask_demo(page: Any, question: str) -> dict[str, Any]:
    """`reckon.ask(question)` of the built-in demo model; its outcome."""
    outcome: dict[str, Any] = call(page, "ask", question, {"model": "reckon-demo"}, deadline_s=120)
    return outcome


def events_of(page: Any, kind: str) -> list[dict[str, Any]]:
    """The details of the `kind` events `LISTEN` recorded, in order."""
    found: list[dict[str, Any]] = page.evaluate(
        "(kind) => window.__events.filter((e) => e.type === kind).map((e) => e.detail)", kind
    )
    return found


def last_answer(page: Any) -> Any:
    """The chat page's newest finished answer."""
    return page.locator("#messages .answer[class*='status-']").last


def no_overflow(page: Any) -> tuple[int, int]:
    """(the page's scroll width, the window's width): nothing sticks out when the first
    is at most the second."""
    sizes: tuple[int, int] = tuple(
        page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    )
    return sizes


def write_file(page: Any, path: str, data: bytes) -> dict[str, Any]:
    body = """
      const [path, b64] = arg;
      const written = window.reckon.writeFile(path, fromB64(b64));
      return await withDeadline(written, deadlineMs, "writeFile");
    """
    reply: dict[str, Any] = page_call(page, body, [path, base64.b64encode(data).decode()])
    return reply


def read_file(page: Any, path: str) -> bytes:
    body = """
      const bytes = await withDeadline(window.reckon.readFile(arg), deadlineMs, "readFile");
      if (!(bytes instanceof Uint8Array)) throw new Error("readFile did not give a Uint8Array");
      return toB64(bytes);
    """
    return base64.b64decode(page_call(page, body, path))


def call(page: Any, method: str, *args: Any, deadline_s: float = 30.0) -> Any:
    """`window.reckon[method](...args)` for JSON-ready arguments and results."""
    body = """
      const [method, args] = arg;
      return await withDeadline(window.reckon[method](...args), deadlineMs, method);
    """
    return page_call(page, body, [method, list(args)], deadline_s=deadline_s)


def upload_bytes(page: Any, name: str, data: bytes, *, deadline_s: float = 60.0) -> dict[str, Any]:
    """`reckon.upload({name, bytes})`: returns the inspect summary."""
    body = """
      const [name, b64] = arg;
      return await withDeadline(
        window.reckon.upload({ name, bytes: fromB64(b64) }), deadlineMs, "upload");
    """
    reply: dict[str, Any] = page_call(
        page, body, [name, base64.b64encode(data).decode()], deadline_s=deadline_s
    )
    return reply


def upload_file_object(page: Any, name: str, data: bytes) -> dict[str, Any]:
    """`reckon.upload(new File([...], name))`, as the file picker hands it over."""
    body = """
      const [name, b64] = arg;
      const file = new File([fromB64(b64)], name, { type: "text/csv" });
      return await withDeadline(window.reckon.upload(file), deadlineMs, "upload");
    """
    reply: dict[str, Any] = page_call(page, body, [name, base64.b64encode(data).decode()])
    return reply


class _CanaryHandler(http.server.BaseHTTPRequestHandler):
    hits: list[tuple[str, str]]

    def _record(self) -> None:
        self.hits.append((self.command, self.path))
        self.send_response(200)
        # Permissive on purpose: if the sandbox's own walls fell, this would let a
        # cross-origin read succeed, so the test would see it.
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "*")
        self.send_header("Access-Control-Allow-Private-Network", "true")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "6")
        self.end_headers()
        self.wfile.write(b"canary")

    do_GET = do_POST = do_PUT = do_OPTIONS = do_HEAD = _record

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Canary:
    """An HTTP server on 127.0.0.1 that only records the requests it receives."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, str]] = []
        handler = type("Handler", (_CanaryHandler,), {"hits": self.hits})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"


@contextmanager
def a_canary() -> Iterator[Canary]:
    canary = Canary()
    with serving(canary.server):
        yield canary


def reckon_eval(*args: str | Path) -> int:
    """`reckon eval ...` in this process; its exit code."""
    return main(["eval", *(str(a) for a in args)])


def read_report(out: Path) -> dict[str, Any]:
    """The report `reckon eval --out out` wrote (both files must be there)."""
    assert (out / "report.md").is_file()
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report
