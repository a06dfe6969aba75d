"""What the attack battery (test_attacks_*.py) shares: the helpers every attack cell
starts with, the `Attack` record and its checks, the lean second sandbox that attacks
ending in a restart run in, and what must hold after every attack.

Every attack runs against two servers (the `attack_server` fixture): the plain static
server (the frame's CSP from its <meta> tag only) and the site with the build's
headers (`reckon serve`'s CSP headers and COOP/COEP). After each attack: the result has
a clear status, nothing printed "REACHED", the canary on 127.0.0.1 (which records
every request and would answer any origin) got nothing, and a benign cell still works.
See SECURITY.md for the threat model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .helpers import Canary, call, page_call, run

SENTINEL = "rk-relay-token-7f3a9c21"  # a fake relay token planted in the page

# Helpers every attack cell starts with (the namespace is fresh for each attack).
PRELUDE = '''
import asyncio, js, json, os, sys
from pyodide.ffi import create_proxy, to_js

def js_obj(d):
    return to_js(d, dict_converter=js.Object.fromEntries)

def blob_url(source):
    blob = js.Blob.new(to_js([source]), js_obj({"type": "text/javascript"}))
    return js.URL.createObjectURL(blob)

async def settle(promise, seconds=5):
    """Await a JS promise: "REACHED ..." if it resolved, "BLOCKED ..." if not."""
    try:
        value = await asyncio.wait_for(promise, seconds)
    except Exception as exc:
        return f"BLOCKED {type(exc).__name__}: {exc}"[:300]
    return f"REACHED {value!r}"[:300]

async def first_event(target, good, bad, seconds=4):
    """The first of the `good` (reached) or `bad` (blocked) events on `target`."""
    fut = asyncio.get_running_loop().create_future()
    def on(label):
        return create_proxy(lambda ev: fut.done() or fut.set_result(label))
    for name in good:
        target.addEventListener(name, on("REACHED " + name))
    for name in bad:
        target.addEventListener(name, on("BLOCKED " + name))
    try:
        return await asyncio.wait_for(fut, seconds)
    except asyncio.TimeoutError:
        return "BLOCKED (no event)"

async def first_message(target, seconds=4):
    """What a worker we started posts back first (its own verdict), or its error."""
    fut = asyncio.get_running_loop().create_future()
    target.onmessage = create_proxy(lambda ev: fut.done() or fut.set_result(str(ev.data)))
    target.onerror = create_proxy(lambda ev: fut.done() or fut.set_result("BLOCKED error event"))
    try:
        return await asyncio.wait_for(fut, seconds)
    except asyncio.TimeoutError:
        return "BLOCKED (no message)"

async def worker_verdict(make):
    """What a worker the cell starts says first; BLOCKED when none can be started."""
    try:
        worker = make()
    except Exception as exc:
        return f"BLOCKED {type(exc).__name__}: {exc}"[:300]
    return await first_message(worker)

async def settle_call(fn, seconds=5):
    """settle(fn()), where fn itself may already refuse (an API that is not there)."""
    try:
        promise = fn()
    except Exception as exc:
        return f"BLOCKED {type(exc).__name__}: {exc}"[:300]
    return await settle(promise, seconds)

def attempt(fn):
    """Call fn(); print REACHED with its value, or BLOCKED with the exception."""
    try:
        value = fn()
    except BaseException as exc:
        print("BLOCKED", type(exc).__name__, str(exc)[:200])
    else:
        print("REACHED", repr(value)[:200])
'''

# JS run inside a worker the attack starts: it reports its own verdict.
JS_FETCH_VERDICT = (
    "fetch('{url}').then(r => postMessage('REACHED ' + r.status), e => postMessage('BLOCKED ' + e))"
)
JS_XHR_SYNC = (
    "(u) => {{ const x = new XMLHttpRequest(); x.open('GET', u, false); x.send();"
    " return 'REACHED ' + x.status; }}"
)


@dataclass(frozen=True)
class Attack:
    code: str
    statuses: tuple[str, ...] = ("ok",)
    timeout_ms: int | None = 8000
    deadline_s: float = 30.0
    # Extra checks on the result (beyond: no REACHED, clear status, canary silent).
    check: Callable[[dict[str, Any]], None] | None = None
    must_print: str | None = "BLOCKED"
    # Ends through the page's watchdog and a new worker: run in the lean sandbox,
    # whose restarts take seconds (see `lean`).
    lean: bool = False


def error_type(*names: str) -> Callable[[dict[str, Any]], None]:
    def check(result: dict[str, Any]) -> None:
        assert result["error"] is not None, result
        assert result["error"]["type"] in names, result["error"]

    return check


def truncated(result: dict[str, Any]) -> None:
    assert result["truncated"] is True, {k: result[k] for k in ("status", "truncated")}
    text = result["stdout"] + result["stderr"]
    assert len(text) < 1_000_000, len(text)
    assert "[output truncated:" in text, text[-300:]


def restarted(result: dict[str, Any]) -> None:
    assert result["restarted"] is True, result


def not_restarted(result: dict[str, Any]) -> None:
    assert result["restarted"] is False, result
    assert result["result"]["text"] == "'still seen'", result


def interpreter_exit(code: int) -> Callable[[dict[str, Any]], None]:
    def check(result: dict[str, Any]) -> None:
        error = result["error"]
        assert error["type"] == "InterpreterExit", error
        assert f"exit status {code}" in error["message"], error
        assert "files under /data are kept" in error["message"], error
        assert result["restarted"] is True, result

    return check


def crashed(cause: str) -> Callable[[dict[str, Any]], None]:
    def check(result: dict[str, Any]) -> None:
        error = result["error"]
        assert error["type"] == "SandboxCrash", error
        assert "interpreter crashed" in error["message"] and cause in error["message"], error
        assert result["restarted"] is True, result

    return check


def short_recursion_error(result: dict[str, Any]) -> None:
    error = result["error"]
    assert error["type"] == "RecursionError", error
    assert "more times]" in error["traceback"], error["traceback"][-300:]
    assert len(error["traceback"]) < 2000, len(error["traceback"])
    assert result["restarted"] is False, result


def timeout_kept_state(result: dict[str, Any]) -> None:
    assert result["error"]["type"] == "KeyboardInterrupt", result["error"]


def fill(code: str, canary: Canary, site: str) -> str:
    return (
        code.replace("CANARY", canary.url)
        .replace("CPORT", str(canary.port))
        .replace("SITE", site)
        .replace("SENTINEL", SENTINEL)
    )


# A second Sandbox on the page (the real frame, worker and watchdog) that loads only
# the eager packages and does not warm up: a restart takes seconds instead of the
# better part of a minute, so the attacks that end in a restart stay affordable.
LEAN_SANDBOX = """
  const { Sandbox } = await import("./sandbox/client.js");
  class Lean extends Sandbox {
    boot(kind) {
      this.info.sandbox.all_packages = [...this.info.sandbox.packages];
      this.config.warm = false;
      return super.boot(kind);
    }
  }
  window.lean = new Lean();
  await withDeadline(window.lean.ready(), deadlineMs, "lean sandbox");
"""


def run_lean(
    page: Any, code: str, *, timeout_ms: int | None = None, deadline_s: float = 30.0
) -> dict[str, Any]:
    options = {} if timeout_ms is None else {"timeoutMs": timeout_ms}
    body = "return await withDeadline(window.lean.run(arg[0], arg[1]), deadlineMs, 'lean run')"
    result: dict[str, Any] = page_call(page, body, [code, options], deadline_s=deadline_s)
    return result


def lean_call(page: Any, method: str, deadline_s: float = 60.0) -> Any:
    body = "return await withDeadline(window.lean[arg](), deadlineMs, arg)"
    return page_call(page, body, method, deadline_s=deadline_s)


def settle_in(page: Any) -> None:
    """Wait until the worker has installed the rest of the stack (it does so when idle,
    in its queue), so each attack's time is its own."""
    assert run(page, "1", deadline_s=180)["status"] == "ok"


def recover(page: Any) -> None:
    """A fresh namespace; a fresh worker if the last attack left it unable to answer."""
    try:
        call(page, "reset", deadline_s=30)
    except Exception:
        call(page, "restart", deadline_s=90)
        settle_in(page)


def the_session_goes_on(page: Any, canary: Canary, *, lean: bool = False) -> None:
    assert canary.hits == [], f"the canary was reached: {canary.hits}"
    after = (run_lean if lean else run)(page, "1+1", deadline_s=60)
    assert after["status"] == "ok", after
    assert after["result"]["text"] == "2"


def attack_fails_cleanly(sandbox: Any, canary: Canary, site: str, attack: Attack) -> None:
    """Run `attack` (after `PRELUDE`) in the attack page served from `site`, and check
    its result and that the session goes on."""
    code = fill(PRELUDE + attack.code, canary, site)
    if attack.lean:
        result = run_lean(sandbox, code, timeout_ms=attack.timeout_ms, deadline_s=attack.deadline_s)
    else:
        result = run(sandbox, code, timeout_ms=attack.timeout_ms, deadline_s=attack.deadline_s)
    shown = {k: result.get(k) for k in ("status", "error", "restarted")}
    shown["stdout"] = result["stdout"][-600:]
    assert result["status"] in attack.statuses, shown
    assert "REACHED" not in result["stdout"], shown
    if attack.must_print:
        assert attack.must_print in result["stdout"], shown
    if attack.check:
        attack.check(result)
    # Give late requests (beacons, workers, sockets) a moment to arrive.
    time.sleep(0.3)
    the_session_goes_on(sandbox, canary, lean=attack.lean)
