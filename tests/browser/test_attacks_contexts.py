"""Hostile cells against the walls around the sandbox, through the real JS API: the
page, its storage and the relay token, other contexts (BroadcastChannel, a second
sandbox on the page).

The battery's rules (two servers, the canary, what must hold after each attack) are
in attack_kit.py.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from .attack_kit import (
    JS_FETCH_VERDICT,
    PRELUDE,
    SENTINEL,
    Attack,
    attack_fails_cleanly,
    fill,
    the_session_goes_on,
)
from .helpers import Canary, page_call, run

pytestmark = pytest.mark.browser

PAGE_ATTACKS: dict[str, Attack] = {
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
}


@pytest.mark.parametrize("attack", PAGE_ATTACKS.values(), ids=PAGE_ATTACKS.keys())
def test_attack_fails_cleanly(
    sandbox: Any, canary: Canary, attack_server: tuple[str, str], attack: Attack
) -> None:
    attack_fails_cleanly(sandbox, canary, attack_server[1], attack)


# --- other contexts: BroadcastChannel, a second sandbox, the token ------------------------------

CHANNEL_NAMES = [
    "reckon", "reckon-sandbox", "reckon-agent", "agent", "sandbox", "relay", "",
    # what the page's file store uses to mirror files between tabs (web/shared/store.js)
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
