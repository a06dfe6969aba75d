"""Reading a chat-completions request: the body within its size and time limits, then
only the checks the relay needs (the model server is the judge of the rest)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.types import Receive

from reckon.server import _json
from reckon.server._errors import RelayError

__all__ = ["ClientGone", "parse_request", "read_body", "until_disconnect"]

_SHAPE_HINT = 'send {"model": "...", "messages": [{"role": "user", "content": "..."}]}'


class ClientGone(Exception):
    """The browser disconnected before its request body arrived."""


async def read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    try:
        with anyio.fail_after(timeout):  # all of it: a trickle is no excuse
            return await _read_all(receive, limit)
    except TimeoutError:
        raise RelayError(
            408,
            f"The request body did not arrive within {timeout:g} s. Send it at once "
            "(or raise body_timeout).",
        ) from None


async def _read_all(receive: Receive, limit: int) -> bytes:
    # Counted as it arrives: Content-Length can lie, and chunked bodies have none.
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        body += message.get("body", b"")
        if len(body) > limit:
            raise RelayError(
                413,
                f"The request body is over the relay's limit of {limit} bytes. Send fewer or "
                "shorter messages (or attach large data as files), or raise max_body_bytes.",
            )
        if not message.get("more_body", False):
            return bytes(body)


async def until_disconnect(receive: Receive, work: Callable[[], Awaitable[None]]) -> bool:
    """Run `work`, cancelling it as soon as the client disconnects; False if it did.

    Called once the body is read: the next message can only be ``http.disconnect``, so
    the wait for it costs nothing until the client goes (and an abandoned model call or
    tool call stops burning the upstream's time at once).
    """
    gone = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await work()
        group.cancel_scope.cancel()
    return not gone


def parse_request(body: bytes) -> dict[str, Any]:
    try:
        payload = _json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and integers past Python's digit limit;
        # RecursionError, nesting deeper than the parser goes.
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise RelayError(
            400, f"The request body is not valid JSON ({detail}); {_SHAPE_HINT}."
        ) from None
    if not isinstance(payload, dict):
        raise RelayError(400, f"The request body must be a JSON object; {_SHAPE_HINT}.")
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RelayError(400, f"'messages' must be a non-empty list; {_SHAPE_HINT}.")
    if not all(isinstance(m, dict) for m in messages):
        raise RelayError(400, f"Every item of 'messages' must be an object; {_SHAPE_HINT}.")
    if payload.get("model") is not None and not isinstance(payload["model"], str):
        raise RelayError(400, "'model' must be a string such as 'gpt-4o-mini' or 'profile/model'.")
    if "stream" in payload and not isinstance(payload["stream"], bool | None):
        raise RelayError(400, "'stream' must be true or false.")
    return payload
