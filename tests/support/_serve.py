"""`reckon serve` as users start it: a subprocess of this checkout's reckon on a
port it picks itself (``--port 0``, so no race for a free one), ready once it said
where it listens and answers; its output kept for the test's report."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from ._paths import PY, SITE

_OPEN = re.compile(r"open (http://127\.0\.0\.1:(\d+))/")


class ServeProcess:
    """A running `reckon serve`: ``url`` (no trailing slash), ``port``, ``pid``, what it
    printed (``out``: stdout's lines as they come; `err()`: stderr so far)."""

    def __init__(self, command: list[str], *, env: dict[str, str], cwd: Path | None) -> None:
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115
        self.process = subprocess.Popen(
            command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=self._stderr, text=True
        )
        self.pid = self.process.pid
        self.out: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = ""
        self.port = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.out.append(line)
            self._lines.put(line)

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.url:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"reckon serve did not start:\n{self.logs()}") from None
            if match := _OPEN.search(line):
                self.url, self.port = match.group(1), int(match.group(2))
        with httpx.Client(base_url=self.url, trust_env=False, timeout=5) as client:
            while True:
                try:
                    client.get("/api/info")
                    return
                except httpx.TransportError:
                    if self.process.poll() is not None or time.monotonic() > deadline:
                        message = f"reckon serve does not answer:\n{self.logs()}"
                        raise RuntimeError(message) from None
                    time.sleep(0.05)

    def err(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read()

    def logs(self) -> str:
        return f"--- stdout\n{''.join(self.out)}--- stderr\n{self.err()}"

    def stop(self, *, timeout: float = 20) -> int:
        """Ctrl-C, as a user stops it (killed if it does not stop); its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)  # the last lines it printed are in `out`
        return self.process.returncode


@contextmanager
def reckon_serve(
    *flags: str,
    site: Path | None = SITE,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30,
) -> Iterator[ServeProcess]:
    """`reckon serve --port 0 [--site site] *flags` for the block, with ``env`` over
    this process's environment (proxies left out: everything here is on loopback)."""
    environment = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    environment.update({"PYTHONPATH": str(PY), **(env or {})})
    command = [sys.executable, "-m", "reckon.server", "serve", "--port", "0"]
    if site is not None:
        command += ["--site", str(site)]
    served = ServeProcess([*command, *flags], env=environment, cwd=cwd)
    try:
        served.wait_ready(timeout)
        yield served
    finally:
        code = served.stop()
        # Shown with the test's report when it fails (pytest keeps captured output).
        print(f"reckon serve exited with {code}\n{served.logs()}")
        served._stderr.close()
