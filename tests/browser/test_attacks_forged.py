"""Forged messages from the sandbox's worker, through the real JS API: junk of every
shape, script-made message events, a fake crash, stream text and replies for other
runs, and a cell that unhooks the worker's listener. None reaches the page as data it
acts on, and no later run hangs.

The battery's rules (two servers, the canary, what must hold after each attack) are
in attack_kit.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from .attack_kit import (
    PRELUDE,
    lean_call,
    run_lean,
    the_session_goes_on,
)
from .helpers import Canary, page_call, run

pytestmark = pytest.mark.browser

FORGE_JUNK = (
    PRELUDE
    + """
import pyodide_js
junk = [
    None, 0, 1, "reply", [], [1, 2], js_obj({}), js_obj({"type": js_obj({})}),
    js_obj({"type": "reply"}), js_obj({"type": "reply", "id": None, "status": "ok"}),
    js_obj({"type": "reply", "id": 10**9, "status": "ok", "stdout": "FORGED"}),
    js_obj({"type": "reply", "id": -1, "status": "ok"}),
    js_obj({"type": "reply", "id": "1", "status": "ok"}),
    js_obj({"type": "stream", "id": 10**9, "name": "stdout", "text": "FORGED"}),
    js_obj({"type": "stream", "id": 10**9, "name": "stdout", "text": js_obj({"x": 1})}),
    js_obj({"type": "started", "id": 10**9}),
    js_obj({"type": "progress", "loaded": -1, "total": 0}),
    js_obj({"type": "ready"}), js_obj({"type": "frame-restart"}), js_obj({"type": "frame-ready"}),
    js_obj({"type": "agent-ready"}), js_obj({"type": "call", "id": 1, "method": "writeFile",
        "args": js_obj({"path": "/data/x", "data": "x"})}),
    js.Blob.new(to_js(["blob"])), js.ArrayBuffer.new(16), js.Date.new(), js.Map.new(),
    js.eval("(() => { const o = {type: 'reply'}; o.self = o; o.id = 1e9; return o })()"),
    js.eval("(() => { let o = {}; for (let i = 0; i < 5000; i++) o = {type: 'stream', n: o};"
            " return o })()"),
    js_obj({"type": "reply", "id": 10**9, "status": "ok", "stdout": "H" * (30 * 1024 * 1024)}),
    js_obj({"type": "stream", "id": 10**9, "name": "stdout", "text": "S" * (30 * 1024 * 1024)}),
]
junk += [js_obj({"type": "reply", "id": 1, "f": js.eval("() => 1")}),
         js_obj({"type": "stream", "id": 1, "s": js.eval("Symbol('s')")})]
for message in junk:
    try:
        js.self.postMessage(message)
    except Exception:
        pass  # not cloneable (a function, a symbol, too deep): refused in the worker
await asyncio.sleep(0.3)
print("sent", len(junk))
"""
)


def test_forged_junk_messages_are_only_data(sandbox: Any, canary: Canary) -> None:
    """Garbage, unknown types, other ids, cycles, deep nesting, 30 MB strings: the page
    ignores what it does not expect, and the attacker's own run ends with its real output."""
    result = run(sandbox, FORGE_JUNK, deadline_s=60)
    assert result["status"] == "ok", result.get("error")
    assert result["stdout"] == "sent 32\n", result["stdout"][:300]
    assert "FORGED" not in result["stdout"]
    assert page_call(sandbox, "return typeof window.reckon.run") == "function"
    the_session_goes_on(sandbox, canary)


FORGE_BY_EVENT = """
import asyncio, js
from pyodide.ffi import to_js
def obj(d):
    return to_js(d, dict_converter=js.Object.fromEntries)
# A fake request delivered to the worker's own listeners, and a fake channel.
fake = js.MessageChannel.new()
for other in range(1, 200):
    args = obj({"code": "print('FORGED')"})
    forged = obj({"type": "call", "id": other, "method": "run", "args": args})
    init = obj({"data": forged})
    js.self.dispatchEvent(js.MessageEvent.new("message", init))
    boot = obj({"type": "call", "id": 0, "method": "boot", "args": obj({})})
    init = obj({"data": boot, "ports": to_js([fake.port2])})
    js.self.dispatchEvent(js.MessageEvent.new("message", init))
await asyncio.sleep(0.2)
print("attacker done")
"""


def test_fake_message_events_do_not_reach_the_worker_or_the_page(
    sandbox: Any, canary: Canary
) -> None:
    """Untrusted (script-made) message events are not requests: no forged run runs, no
    second boot takes over the worker's channel, and the queued run gets its own reply."""
    try:
        victim_code = "print('real')\n6 * 7"
        out = page_call(sandbox, FORGE_BOTH, [FORGE_BY_EVENT, victim_code], deadline_s=60)
        attacked, victim = out
        assert attacked["status"] == "ok", attacked
        assert attacked["stdout"] == "attacker done\n", attacked
        assert victim["stdout"] == "real\n", victim
        assert victim["result"]["text"] == "42", victim
    finally:
        lean_call(sandbox, "restart")
    the_session_goes_on(sandbox, canary, lean=True)


def test_a_forged_crash_message_is_ignored(sandbox: Any, canary: Canary) -> None:
    """What a cell posts to `self` reaches nobody: a fake "crash" with markup in it
    neither restarts the sandbox nor runs in the page."""
    code = (
        "import js\nfrom pyodide.ffi import to_js\n"
        "js.self.postMessage(to_js({'type': 'crash',"
        " 'message': '<img src=x onerror=\"window.pwned=1\">'},"
        " dict_converter=js.Object.fromEntries))\n"
        "import time\ntime.sleep(1)"
    )
    result = run_lean(sandbox, code, deadline_s=60)
    assert result["status"] == "ok", result
    assert result["restarted"] is False, result
    assert page_call(sandbox, "return window.pwned === undefined") is True
    the_session_goes_on(sandbox, canary, lean=True)


FORGE_FOR_OTHERS = """
import asyncio, js
from pyodide.ffi import to_js
def send(d):
    js.self.postMessage(to_js(d, dict_converter=js.Object.fromEntries))
for other in range(1, 10000):
    KIND
await asyncio.sleep(0.2)
print("attacker done")
"""
FORGE_KINDS = {
    "stream": "send({'type': 'stream', 'id': other, 'name': 'stdout', 'text': 'FORGED '})",
    "reply": (
        "send({'type': 'reply', 'id': other, 'status': 'ok', 'stdout': 'FORGED',"
        " 'result': {'type': 'int', 'text': '-1'}})"
    ),
}


FORGE_BOTH = """
  const [attacker, victim] = arg;
  const a = window.lean.run(attacker);
  const v = window.lean.run(victim);
  return await withDeadline(Promise.all([a, v]), deadlineMs, "runs");
"""


def test_forged_stream_text_does_not_land_in_a_queued_run(sandbox: Any, canary: Canary) -> None:
    attacker = FORGE_FOR_OTHERS.replace("KIND", FORGE_KINDS["stream"])
    try:
        out = page_call(sandbox, FORGE_BOTH, [attacker, "print('real')\n6 * 7"], deadline_s=60)
        attacked, victim = out
        assert victim["stdout"] == "real\n", victim
        assert victim["result"]["text"] == "42", victim
        assert "FORGED" not in attacked["stdout"], attacked
    finally:
        lean_call(sandbox, "restart")
    the_session_goes_on(sandbox, canary, lean=True)


# Fixed (SECURITY-FINDINGS F1): the worker answers over a MessagePort only the page and
# the worker hold, and the page accepts an answer only for the request being handled.
def test_a_forged_reply_does_not_answer_a_queued_run(sandbox: Any, canary: Canary) -> None:
    attacker = FORGE_FOR_OTHERS.replace("KIND", FORGE_KINDS["reply"])
    try:
        out = page_call(sandbox, FORGE_BOTH, [attacker, "print('real')\n6 * 7"], deadline_s=60)
        attacked, victim = out
        assert victim["stdout"] == "real\n", victim
        assert victim["result"]["text"] == "42", victim
        # The attacker's own run ends with its real output, not with a forged reply.
        assert attacked["stdout"] == "attacker done\n", attacked
        assert attacked["result"] is None, attacked
    finally:
        lean_call(sandbox, "restart")
    the_session_goes_on(sandbox, canary, lean=True)


HANG_AFTER = {
    "unhook-onmessage": "import js\njs.self.onmessage = None\n'the next request is never read'",
}


# Fixed (SECURITY-FINDINGS F2): the worker keeps its own message listener and
# postMessage, and the page has a backstop for a cell that never starts.
@pytest.mark.parametrize("code", HANG_AFTER.values(), ids=HANG_AFTER.keys())
def test_a_cell_cannot_make_later_runs_hang(sandbox: Any, canary: Canary, code: str) -> None:
    first = run_lean(sandbox, code, timeout_ms=3000, deadline_s=30)
    assert first["status"] in ("ok", "error", "timeout"), first
    try:
        # The promise: a run with a time limit ends, with some clear status, in time.
        later = run_lean(sandbox, "1+1", timeout_ms=2000, deadline_s=15)
        assert later["status"] in ("ok", "error", "timeout"), later
    finally:
        lean_call(sandbox, "restart")
    the_session_goes_on(sandbox, canary, lean=True)
