"""Hostile cells against the sandbox's limits, through the real JS API: endless loops
(in Python and in JS), a disabled interrupt, a muted worker, memory and recursion
bombs, output floods, processes, threads, sockets, exits and writes to the stack.

The battery's rules (two servers, the canary, what must hold after each attack) are
in attack_kit.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from .attack_kit import (
    Attack,
    attack_fails_cleanly,
    error_type,
    interpreter_exit,
    not_restarted,
    restarted,
    short_recursion_error,
    timeout_kept_state,
    truncated,
)
from .helpers import Canary

pytestmark = pytest.mark.browser

LIMIT_ATTACKS: dict[str, Attack] = {
    # --- limits ------------------------------------------------------------------------------
    "python-infinite-loop": Attack(
        "n = 0\nwhile True:\n    n += 1",
        statuses=("timeout",),
        timeout_ms=1500,
        must_print=None,
        check=timeout_kept_state,
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
        check=restarted,
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
        check=restarted,
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
        check=not_restarted,
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
        check=error_type("MemoryError", "OverflowError"),
    ),
    "deep-recursion": Attack(
        "def f():\n    f()\nf()",
        statuses=("error",),
        must_print=None,
        check=error_type("RecursionError"),
    ),
    "deep-recursion-raised-limit": Attack(
        # A million frames: a RecursionError with a short traceback (repeats counted),
        # not a timeout spent formatting a million lines.
        "sys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)",
        statuses=("error",),
        timeout_ms=90_000,
        deadline_s=120,
        must_print=None,
        check=short_recursion_error,
        lean=True,
    ),
    "output-flood-stdout": Attack(
        "line = 'x' * 1023\nfor _ in range(10 * 1024):\n    print(line)",
        must_print=None,
        check=truncated,
        deadline_s=60,
    ),
    "output-flood-stderr": Attack(
        "line = 'e' * 1023 + '\\n'\nfor _ in range(10 * 1024):\n    sys.stderr.write(line)",
        must_print=None,
        check=truncated,
        deadline_s=60,
    ),
    "output-flood-one-line": Attack(
        "print('y' * (10 * 1024 * 1024))", must_print=None, check=truncated, deadline_s=60
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
        "sys.exit('bye')", statuses=("error",), must_print=None, check=error_type("SystemExit")
    ),
    "os-_exit": Attack(
        "os._exit(1)",
        statuses=("error",),
        timeout_ms=30_000,
        deadline_s=90,
        must_print=None,
        check=interpreter_exit(1),
        lean=True,
    ),
    "os-_exit-zero": Attack(
        "print('before')\nos._exit(0)",
        statuses=("error",),
        timeout_ms=30_000,
        deadline_s=90,
        must_print=None,
        check=interpreter_exit(0),
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


@pytest.mark.parametrize("attack", LIMIT_ATTACKS.values(), ids=LIMIT_ATTACKS.keys())
def test_attack_fails_cleanly(
    sandbox: Any, canary: Canary, attack_server: tuple[str, str], attack: Attack
) -> None:
    attack_fails_cleanly(sandbox, canary, attack_server[1], attack)
