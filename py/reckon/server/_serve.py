"""The relay under uvicorn, on uvicorn's h11 protocol with what it leaves out.

- **Headers in time.** uvicorn waits for a request's headers for as long as the
  client takes: 300 connections that sent half a request line were all still held
  after 70 s. A connection whose request headers are not complete within
  ``header_timeout`` seconds of the connection opening or of the last response is
  closed (the body has its own limit, ``body_timeout``, in ``_request``).
- **A reader at the other end.** A client that stops reading leaves every write
  waiting for ever: 40 clients that never read the 117 MB start-up snapshot stayed
  connected, each holding a file and a task. asyncio tells the protocol when the
  transport's buffer is full (``pause_writing``) and when it has drained
  (``resume_writing``); a connection that stays full for ``send_timeout`` seconds is
  aborted (a close would wait to flush what the client never takes).
- **One framing per request.** h11 takes a request with both ``Content-Length`` and
  ``Transfer-Encoding`` as chunked and keeps the connection open; RFC 9112 §6.3 says
  such a request "ought to be handled as an error" and the connection MUST be closed
  after it, since a proxy in front may have framed it the other way (request
  smuggling). The relay answers 400 and closes the connection.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from reckon.server._config import RelayConfig

__all__ = ["relay_protocol", "uvicorn_config"]

log = logging.getLogger("reckon.server")

_BOTH_FRAMINGS = (
    "A request may not carry both Content-Length and Transfer-Encoding (RFC 9112, "
    "section 6.3: a proxy could read its body differently). Send one of them."
)


def uvicorn_config(app: Any, config: RelayConfig, **options: Any) -> uvicorn.Config:
    """uvicorn's settings for the relay ``app``: quiet, and with ``config``'s header and
    send timeouts; ``options`` override the rest."""
    settings: dict[str, Any] = {
        "log_config": None,
        "access_log": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": 5,
        "http": relay_protocol(
            header_timeout=config.header_timeout, send_timeout=config.send_timeout
        ),
        **options,
    }
    if config.trusted_proxies:
        # Who may say, in X-Forwarded-For, which address a call comes from (the limits
        # count callers without an identity by it).
        settings.setdefault("forwarded_allow_ips", list(config.trusted_proxies))
    return uvicorn.Config(app, **settings)


class _OneFraming(h11.Connection):
    """h11's server side, refusing a request that gives two body framings."""

    refusal: str | None = None  # what the 400 says, when this class refused

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            names = {name for name, _ in event.headers}  # h11 gives them lower-cased
            if b"content-length" in names and b"transfer-encoding" in names:
                self.refusal = _BOTH_FRAMINGS
                raise h11.RemoteProtocolError(_BOTH_FRAMINGS, error_status_hint=400)
        return event


def relay_protocol(*, header_timeout: float, send_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the relay's time limits and framing check."""

    class RelayProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _send_timer: asyncio.TimerHandle | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            size = self.config.h11_max_incomplete_event_size
            self.conn = _OneFraming(h11.SERVER) if size is None else _OneFraming(h11.SERVER, size)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_headers()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                self._disarm_headers()

        def send_400_response(self, msg: str) -> None:
            # uvicorn answers every RemoteProtocolError with this 400 ("Invalid HTTP
            # request received.") and closes the connection; ours says what to do.
            refusal = getattr(self.conn, "refusal", None)
            super().send_400_response(refusal or msg)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm_headers()  # for the next request on this connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_headers()
            self._disarm_send()
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            self._disarm_send()
            self._send_timer = self.loop.call_later(send_timeout, self._send_late)

        def resume_writing(self) -> None:
            self._disarm_send()
            super().resume_writing()

        def _arm_headers(self) -> None:
            self._disarm_headers()
            self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _disarm_headers(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _disarm_send(self) -> None:
            if self._send_timer is not None:
                self._send_timer.cancel()
                self._send_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        def _send_late(self) -> None:
            self._send_timer = None
            log.info(
                "dropped a client that read nothing for %g s (send_timeout): %s",
                send_timeout,
                f"{self.scope['method']} {self.scope['path']}" if self.scope else "no request",
            )
            self.transport.abort()

    return RelayProtocol
