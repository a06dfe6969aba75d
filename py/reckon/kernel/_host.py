"""The sandbox worker's Python entry: the only kernel module that the JavaScript
side calls. It turns results into JSON text, so only JSON crosses into JS.

Kept free of ``js``/``pyodide`` imports: the worker passes its callbacks in, and
this module runs the same on CPython (that is how it is tested).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

from reckon._protocol import ListReply
from reckon.kernel._session import Kernel as Session

__all__ = ["inspect", "list_files", "reset", "run", "run_now", "start", "versions", "warm"]

_session: Session | None = None


def start(on_stream: Callable[[str, str], None], options: Any = None) -> None:
    """Create the one session of this worker; `options` are Session keywords."""
    global _session
    time.sleep = _interruptible_sleep  # type: ignore[assignment]
    kwargs: dict[str, Any] = {}
    if options is not None:
        raw = options.to_py() if hasattr(options, "to_py") else options
        kwargs = {k: v for k, v in dict(raw).items() if k in _OPTIONS}
    _session = Session(on_stream=on_stream, **kwargs)


_OPTIONS = {"data_dir", "output_dir", "output_limit"}
_blocking_sleep = time.sleep


def _interruptible_sleep(seconds: float) -> None:
    # Pyodide's time.sleep blocks in C without looking at the interrupt buffer;
    # short slices let a timeout or interrupt() reach a sleeping cell.
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _blocking_sleep(min(left, 0.05))


def _current() -> Session:
    if _session is None:
        start(lambda _name, _text: None)
    assert _session is not None
    return _session


async def run(code: str) -> str:
    return json.dumps(await _current().run(code))


def run_now(code: str) -> str | None:
    """``run`` without a turn of the event loop (most cells); None: use ``run``."""
    result = _current().run_now(code)
    return None if result is None else json.dumps(result)


def list_files(directory: str) -> str:
    from reckon.kernel import list_files as list_

    reply: ListReply
    try:
        reply = {"status": "ok", "files": list_(directory)}  # type: ignore[typeddict-item]
    except OSError as exc:
        reply = {"status": "error", "message": f"{directory}: {exc.strerror}"}
    return json.dumps(reply)


def inspect(path: str) -> str:
    from reckon.kernel import inspect as inspect_

    return json.dumps(inspect_(path))


def warm() -> None:
    """Import what nearly every session uses, so the first cell does not pay for it."""
    import matplotlib.pyplot  # noqa: F401
    import pandas  # noqa: F401


def versions() -> str:
    found: dict[str, str] = {"python": platform.python_version()}
    for name in ("numpy", "pandas", "matplotlib", "scipy", "sklearn", "pyarrow", "sympy"):
        module = sys.modules.get(name)
        if module is not None:
            found[name] = str(getattr(module, "__version__", "?"))
    return json.dumps(found)


def reset() -> str:
    _current().reset()
    return json.dumps({"status": "ok"})
