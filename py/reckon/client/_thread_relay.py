"""The relay of a headless session: ``reckon serve``'s app, in a thread of this process.

It listens on a free loopback port, so several sessions (and a ``reckon serve``
the user already runs) never collide.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from reckon._exceptions import SessionError
from reckon.server import Profile, RelayConfig, create_app
from reckon.server._config import DEFAULT_KEY_ENV

__all__ = ["ThreadRelay"]

_START_TIMEOUT_S = 20.0


class ThreadRelay:
    """`create_app(config)` under uvicorn in a daemon thread; ``url`` once started."""

    def __init__(
        self,
        site: Path,
        *,
        upstream: str | None = None,
        model: str | None = None,
        key_env: str | None = None,
        tools: str = "auto",
        context_window: int | None = None,
    ) -> None:
        import uvicorn

        profiles = []
        if upstream:
            profiles.append(
                Profile(
                    name="default",
                    base_url=upstream,
                    api_key_env=key_env or DEFAULT_KEY_ENV,
                    models=[model] if model else [],
                    default_model=model,
                    tools=tools,
                    context_window=context_window,
                )
            )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        port = int(sock.getsockname()[1])
        # The Host check accepts loopback names on the configured port only.
        config = RelayConfig(profiles=profiles, site_dir=site, host="127.0.0.1", port=port)
        server_config = uvicorn.Config(
            create_app(config),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(server_config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="reckon-relay", daemon=True
        )
        self.url = f"http://127.0.0.1:{port}"

    def start(self) -> str:
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.close()
                raise SessionError(f"the relay did not start on {self.url}")
            time.sleep(0.02)
        return self.url

    def close(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(5)
        self._socket.close()
