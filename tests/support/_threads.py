"""Servers inside the test process, each on a socket bound before it starts (no port
race): an ASGI app under uvicorn in a thread, and plain static file servers.

Tests wait for ``started`` (or a connect) rather than sleeping.
"""

from __future__ import annotations

import functools
import http.server
import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import uvicorn

from reckon.server import RelayConfig
from reckon.server._serve import uvicorn_config


def an_unused_port() -> int:
    """A port nothing listens on now: only for addresses that must stay unreachable
    (a server of the tests binds its own socket instead)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def an_address_off_loopback() -> str | None:
    """This machine's address on its first non-loopback interface, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # UDP: no packet is sent, a route is chosen
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if ipaddress.ip_address(address).is_loopback else address


def wait_for_port(port: int, *, host: str = "127.0.0.1", timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {host}:{port}")


class Running:
    """An ASGI app served by uvicorn in a thread on 127.0.0.1 (or on `host`).

    The socket is bound here, before the thread starts, and handed to uvicorn, so the
    port is known and held from the start. Use as a context manager.
    """

    def __init__(
        self,
        app: Any,
        *,
        lifespan: Literal["on", "off"] = "on",
        host: str = "127.0.0.1",
        relay: RelayConfig | None = None,
    ) -> None:
        # IPPROTO_TCP, as `reckon serve` binds (_commands._bind): asyncio sets TCP_NODELAY
        # only on sockets that say they are TCP; without it a small write can wait ~40 ms
        # for the peer's delayed ACK (benchmarks/agent_step.py measures such gaps).
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind((host, 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        if relay is not None:  # the relay as reckon serve runs it
            config = uvicorn_config(app, relay, lifespan=lifespan, timeout_graceful_shutdown=1)
        else:
            config = uvicorn.Config(
                app,
                log_config=None,
                access_log=False,
                lifespan=lifespan,
                timeout_graceful_shutdown=1,
            )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive(), "server thread died during startup"
            assert time.monotonic() < deadline, "server did not start within 10 s"
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    """A static server that does not print a traceback when a page is closed while it
    still downloads (the sandbox fetches the rest of the stack after "ready")."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serving(server: http.server.HTTPServer) -> Iterator[str]:
    """`server` (bound already) answering in a thread; yields its base URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    try:
        yield f"http://{host!s}:{port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve_folder(
    folder: Path, *, handler: type[QuietHandler] = QuietHandler, host: str = "127.0.0.1"
) -> Iterator[str]:
    """`folder` as `python -m http.server` serves it, on a free port; yields its base URL."""
    server = QuietServer((host, 0), functools.partial(handler, directory=str(folder)))
    with serving(server) as url:
        yield url
