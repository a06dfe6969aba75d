"""The relay under uvicorn, with the time limits uvicorn does not set itself.

uvicorn waits for a request's headers for as long as the client takes: 300
connections that sent half a request line were all still held after 70 s. The
protocol here closes a connection whose request headers are not complete within
``header_timeout`` seconds of the connection opening or of the last response
(the body has its own limit, ``body_timeout``, in ``_relay``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from reckon.server._config import RelayConfig

__all__ = ["uvicorn_config"]


def uvicorn_config(app: Any, config: RelayConfig, **options: Any) -> uvicorn.Config:
    """uvicorn's settings for the relay ``app``: quiet, and with ``config``'s header
    timeout; ``options`` override the rest."""
    settings: dict[str, Any] = {
        "log_config": None,
        "access_log": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": 5,
        "http": _timed_protocol(config.header_timeout),
        **options,
    }
    if config.trusted_proxies:
        # Who may say, in X-Forwarded-For, which address a call comes from (the limits
        # count callers without an identity by it).
        settings.setdefault("forwarded_allow_ips", list(config.trusted_proxies))
    return uvicorn.Config(app, **settings)


def _timed_protocol(seconds: float) -> type[H11Protocol]:
    class HeaderTimedProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # for the next request on this connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(seconds, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimedProtocol
