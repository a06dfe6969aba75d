"""The relay-tool example as docs/configuration.md (*An example to run*) has a person run
it: the shipped web/examples/shipments_api.py on loopback, and `reckon serve` with the
shipped relay-tools.toml pointed at it (the only change: the port the API got)."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ._paths import ROOT

EXAMPLES = ROOT / "web" / "examples"
EXAMPLE_CONFIG = EXAMPLES / "relay-tools.toml"
EXAMPLE_KEY_ENV = "SHIPMENTS_API_KEY"
EXAMPLE_KEY = "shipments-example-key-7f3a9c51e2"
DOCUMENTED_URL = "http://127.0.0.1:8765/shipments"


@contextmanager
def the_shipments_api() -> Iterator[str]:
    """The example's API on a free port: its URL, once it says where it listens."""
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "shipments_api.py"), "--port", "0"],
        env={**os.environ, EXAMPLE_KEY_ENV: EXAMPLE_KEY},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(process.stdout, selectors.EVENT_READ)
            if not waiting.select(timeout=20):
                raise RuntimeError("shipments_api.py said nothing within 20 s")
        line = process.stdout.readline()
        if not line.startswith("shipments API on http://127.0.0.1:"):
            raise RuntimeError(f"shipments_api.py said {line!r}")
        yield line.split(" on ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(10)


def example_config(api_url: str, folder: Path) -> Path:
    """The shipped config, its tool pointed at `api_url`, written in `folder`."""
    config = folder / "relay-tools.toml"
    text = EXAMPLE_CONFIG.read_text(encoding="utf-8")
    assert DOCUMENTED_URL in text
    config.write_text(text.replace(DOCUMENTED_URL, api_url), encoding="utf-8")
    return config
