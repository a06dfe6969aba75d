"""A real ``redis-server`` on a free loopback port (no pytest here).

Shared by the tests of the Redis-backed limits and ``benchmarks/relay_limits.py``.
Debian's ``redis-server`` package provides the binary (``scripts/test`` installs it).
The server keeps nothing on disk and is ready when it answers PING.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["RedisServer", "a_redis_server", "free_port", "ping"]


@dataclass
class RedisServer:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def start(self) -> None:
        """(Re)start on the same port, e.g. after `stop` to show the relay recovering."""
        self.stop()
        self.process = _spawn(self.port)
        _wait_for(self)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _spawn(port: int) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError(
            "redis-server is not installed: scripts/test installs it "
            "(or: sudo apt-get install redis-server)"
        )
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--loglevel", "warning"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for(server: RedisServer, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not ping(server.port):
        if server.process.poll() is not None:
            raise RuntimeError(f"redis-server exited ({server.process.returncode}) on start")
        if time.monotonic() > deadline:
            raise RuntimeError(f"redis-server did not answer PING within {seconds:g} s")
        time.sleep(0.01)


@contextmanager
def a_redis_server() -> Iterator[RedisServer]:
    """A fresh redis-server; stopped (and its data gone) on exit."""
    for attempt in range(5):
        # The port is free now but may be taken before redis-server binds it: retry.
        port = free_port()
        server = RedisServer(port, _spawn(port))
        try:
            _wait_for(server)
            break
        except RuntimeError:
            server.stop()
            if attempt == 4:
                raise
    try:
        yield server
    finally:
        server.stop()
