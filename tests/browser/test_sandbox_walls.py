"""A first look at the sandbox's walls in a real browser (the battery is in
test_attacks_*.py): a cell cannot reach the network, the page or its storage; and
the rest of the stack, installed when first needed, leaves what Pyodide's loadPackage
leaves, whichever request needed it first.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .helpers import (
    Canary,
    call,
    ok,
    run,
)

pytestmark = pytest.mark.browser


# Isolation smoke tests -------------------------------------------------------------------

PROBES = {
    "fetch-canary": """
import js
try:
    resp = await js.fetch("{canary}/fetch")
    print("REACHED", resp.status)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "fetch-own-site": """
import js
try:
    resp = await js.fetch("{site}/build-info.json")
    print("REACHED", resp.status)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "xhr-sync-canary": """
import js
try:
    xhr = js.XMLHttpRequest.new()
    xhr.open("GET", "{canary}/xhr", False)
    xhr.send()
    print("REACHED", xhr.status)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "importScripts-canary": """
import js
try:
    js.importScripts("{canary}/script.js")
    print("REACHED")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "websocket-canary": """
import asyncio, js
try:
    ws = js.WebSocket.new("ws://127.0.0.1:{canary_port}/ws")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
else:
    done = asyncio.get_running_loop().create_future()
    ws.onopen = lambda ev: done.done() or done.set_result("REACHED")
    ws.onerror = lambda ev: done.done() or done.set_result("BLOCKED onerror")
    ws.onclose = lambda ev: done.done() or done.set_result("BLOCKED onclose")
    print(await asyncio.wait_for(done, 5))
""",
    "document": """
import js
try:
    print("REACHED", js.document.title)
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "localStorage": """
import js
try:
    js.localStorage.setItem("reckon-probe", "1")
    print("REACHED")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
""",
    "indexedDB": """
import asyncio, js
try:
    request = js.indexedDB.open("reckon-probe")
except Exception as exc:
    print("BLOCKED", type(exc).__name__)
else:
    done = asyncio.get_running_loop().create_future()
    request.onsuccess = lambda ev: done.done() or done.set_result("REACHED")
    request.onerror = lambda ev: done.done() or done.set_result("BLOCKED onerror")
    print(await asyncio.wait_for(done, 5))
""",
}


@pytest.mark.parametrize("probe", PROBES.values(), ids=PROBES.keys())
def test_the_sandbox_cannot_reach_out(
    reckon: Any, canary: Canary, a_static_server: str, probe: str
) -> None:
    code = probe.format(canary=canary.url, canary_port=canary.port, site=a_static_server)
    result = ok(run(reckon, code))
    assert result["stdout"].startswith("BLOCKED"), result["stdout"]
    assert canary.hits == []
    assert ok(run(reckon, "1 + 1"))["result"]["text"] == "2"


def test_the_canary_does_record_requests(canary: Canary) -> None:
    """The isolation tests would pass vacuously if the canary never recorded anything."""
    import urllib.request

    with urllib.request.urlopen(f"{canary.url}/control", timeout=5) as resp:
        assert resp.read() == b"canary"
    assert ("GET", "/control") in canary.hits
    canary.hits.clear()


REST_MANIFEST = """
import hashlib, importlib.metadata as md, json, os, sys
import pyodide_js
names = ("scipy", "scikit-learn", "pyarrow", "sympy", "seaborn", "pypdf", "joblib",
         "threadpoolctl", "mpmath", "openblas")
files = {}  # a digest of each top-level entry's files (bytes and names), bytecode aside
for top in (sys.prefix + "/lib/python3.12/site-packages", "/usr/lib", sys.prefix + "/share"):
    for root, dirs, found in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(found):
            path = os.path.join(root, name)
            key = top + "/" + os.path.relpath(path, top).split("/")[0]
            with open(path, "rb") as f:
                files.setdefault(key, hashlib.sha256()).update(path.encode() + f.read())
files = {key: h.hexdigest()[:16] for key, h in files.items()}
print(json.dumps({
    "loaded": {n: pyodide_js.loadedPackages.to_py().get(n) for n in names},
    "installer": {n: (md.distribution(n).read_text("INSTALLER"),
                      md.distribution(n).read_text("PYODIDE_SOURCE"))
                  for n in names if n != "openblas"},
    "files": files,
}))
"""
REST_IMPORTS = (
    "import scipy.stats, sklearn.linear_model, pyarrow, sympy, seaborn, pypdf, joblib, "
    "threadpoolctl, mpmath"
)


def test_the_install_on_first_need_leaves_what_load_package_leaves(
    a_browser: Any, a_static_server: str
) -> None:
    """The rest of the stack comes from web/sandbox/install.js when a request first
    needs it: a cell importing all of it, or an Arrow file's inspect (pyarrow alone,
    the rest by the next cell). Both must leave the same files, records and native
    modules, and the records Pyodide's loadPackage leaves."""
    context = a_browser.new_context()
    try:
        manifests = []
        for first in ("imported at once", "pyarrow first"):
            page = context.new_page()
            page.goto(f"{a_static_server}/console.html?snapshot=off")
            call(page, "ready", deadline_s=180)
            if first == "imported at once":
                assert run(page, REST_IMPORTS, deadline_s=180)["status"] == "ok"
            else:  # an Arrow file's inspect installs pyarrow first
                call(page, "inspect", "/data/none.parquet", deadline_s=180)
            check = run(
                page,
                f"{REST_IMPORTS}\nimport numpy as np\n"
                "x = np.arange(5.0)\n"
                "m = sklearn.linear_model.LinearRegression().fit(x.reshape(-1, 1), 3 * x)\n"
                "print(scipy.stats.norm.cdf(0), round(float(m.coef_[0]), 6),"
                " pyarrow.array([1, 2]).sum().as_py(), sympy.diff(sympy.Symbol('x') ** 2))",
                deadline_s=120,
            )
            assert check["stdout"] == "0.5 3.0 3 2*x\n", check
            manifest = run(page, REST_MANIFEST, deadline_s=120)
            assert manifest["status"] == "ok", manifest
            manifests.append(json.loads(manifest["stdout"]))
            page.close()
        at_once, arrow_first = manifests
        assert set(arrow_first["loaded"].values()) == {"default channel"}, arrow_first["loaded"]
        recorded = arrow_first["installer"].values()
        assert all(v == ["pyodide.loadPackage", "pyodide"] for v in recorded), recorded
        assert arrow_first == at_once
    finally:
        context.close()
