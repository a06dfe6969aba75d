"""Error replies in the OpenAI shape, and the scrubbing of API keys.

Every error the relay produces is ``{"error": {"type": ..., "message": ...}}``
so the browser (and the ``openai`` SDK) can show the message as it is; the
messages say what to do, not only what went wrong.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping

from starlette.responses import JSONResponse

from reckon._exceptions import ReckonError

__all__ = ["REDACTED", "RelayError", "Scrubber", "ScrubbingFilter", "error_response"]

# Short keys ("EMPTY", "none") are placeholders for keyless local servers;
# replacing such words inside model output would corrupt it for no gain.
_MIN_SECRET_LENGTH = 8
REDACTED = "[redacted]"
# The signature of a signed client token (`<id>.<expiry>.<43 base64url characters>`,
# see _identity): such tokens are minted elsewhere, so they cannot be listed as
# secrets, but the shape is distinctive enough to take out of every log line.
_SIGNED_TOKEN = re.compile(r"(\.[0-9]{1,12}\.)[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")

_DEFAULT_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "request_timeout",
    413: "request_too_large",
    429: "rate_limit_error",
    502: "upstream_error",
    503: "service_unavailable",
    504: "upstream_timeout",
}


class RelayError(ReckonError):
    """Raised inside the relay; becomes an error reply at the ASGI boundary."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or _DEFAULT_TYPES.get(status, "server_error")
        self.code = code
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return error_response(
            self.status, self.message, type=self.type, code=self.code, headers=self.headers
        )


def error_response(
    status: int,
    message: str,
    *,
    type: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """``code``, when given, names the rule more precisely than ``type`` (as OpenAI's
    errors do): which limit a 429 is about, for one."""
    kind = type or _DEFAULT_TYPES.get(status, "server_error")
    error = {"type": kind, "message": message}
    if code is not None:
        error["code"] = code
    return JSONResponse(
        {"error": error},
        status_code=status,
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


class Scrubber:
    """Replaces known secrets in text and in a stream of byte chunks.

    For streams it holds back only a chunk's tail that could be the start of
    a secret, so an SSE event (which ends in a blank line) is never delayed.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        found: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            # Also as an error message would quote it: stripped, or escaped by repr()
            # (a key with a stray newline shows up as `\n` in an h11 or httpx error).
            for form in (secret, secret.strip(), repr(secret)[1:-1]):
                if len(form) >= _MIN_SECRET_LENGTH:
                    found.add(form)
        self._texts = sorted(found, key=len, reverse=True)
        self._bytes = [s.encode() for s in self._texts]
        self._pending = b""

    @property
    def secrets(self) -> list[str]:
        """The forms of the secrets looked for, longest first."""
        return list(self._texts)

    def text(self, value: str) -> str:
        for secret in self._texts:
            value = value.replace(secret, REDACTED)
        return _SIGNED_TOKEN.sub(rf"\g<1>{REDACTED}", value)

    def chunk(self, data: bytes) -> bytes:
        if not self._bytes:
            return data
        data = self._pending + data
        for secret in self._bytes:
            data = data.replace(secret, REDACTED.encode())
        keep = self._partial_tail(data)
        self._pending = data[len(data) - keep :] if keep else b""
        return data[: len(data) - keep]

    def flush(self) -> bytes:
        rest, self._pending = self._pending, b""
        return rest

    def _partial_tail(self, data: bytes) -> int:
        """Length of the longest tail of `data` that starts some secret."""
        longest = 0
        for secret in self._bytes:
            for size in range(min(len(secret) - 1, len(data)), longest, -1):
                if data.endswith(secret[:size]):
                    longest = size
                    break
        return longest


class ScrubbingFilter(logging.Filter):
    """Removes the secrets from every log record a handler writes.

    Put on the handlers, not on loggers, so that it also sees what other
    libraries log: Starlette re-raises an unexpected exception after our error
    handler, and uvicorn then logs its traceback, whose text could hold
    anything. The secrets are looked up per record (the key is read from the
    environment per request, so it may change while the relay runs).
    """

    def __init__(self, secrets: Callable[[], Iterable[str | None]]) -> None:
        super().__init__()
        self._secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        scrubber = Scrubber(self._secrets())
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is, as text
            message = f"{record.msg!r} % {record.args!r}"
        record.msg, record.args = scrubber.text(message), None
        if record.exc_info:
            # Formatted once here, so the handler's formatter uses this text.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = scrubber.text(record.exc_text)
        if record.stack_info:
            record.stack_info = scrubber.text(record.stack_info)
        return True
