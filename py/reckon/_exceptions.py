"""Reckon's own errors.

User code never raises these: a cell that fails comes back as data, a result
dict with ``status: "error"``. These are for *our* bugs and for misuse of the
APIs (a bad configuration, a build input that fails its checksum, a model
server that answers nonsense).

Hierarchy::

    ReckonError
    ├── ConfigError          bad settings: flags, config file, profile names
    ├── BuildError           the site could not be assembled or verified
    │   └── ChecksumError    a downloaded file does not match its sha256
    ├── ProtocolError        a message across a boundary has the wrong shape
    │   └── ModelProtocolError   a model server's reply cannot be parsed
    ├── ModelError           the model call failed (HTTP error, timeout, refused)
    ├── SessionError         a headless session (``reckon.Session``) could not start or
    │                        a call into its page failed (no site, no Chromium, timeout)
    └── RelayError           a relay request is refused or its model call failed; the
                             relay answers it as an HTTP error (defined in
                             ``reckon.server._errors``: it needs Starlette, CPython only)
"""

from __future__ import annotations

__all__ = [
    "BuildError",
    "ChecksumError",
    "ConfigError",
    "ModelError",
    "ModelProtocolError",
    "ProtocolError",
    "ReckonError",
    "SessionError",
]


class ReckonError(Exception):
    """Base class of every error Reckon raises on purpose."""


class ConfigError(ReckonError):
    """A setting is missing, malformed or contradicts another one."""


class BuildError(ReckonError):
    """The static site could not be assembled or failed its final check."""


class ChecksumError(BuildError):
    """A file's sha256 differs from the one its lock file promises."""


class ProtocolError(ReckonError):
    """A message crossing a boundary (page, worker, relay) is malformed."""


class ModelProtocolError(ProtocolError):
    """A model server answered with something that is not the protocol."""


class ModelError(ReckonError):
    """A model call failed: HTTP error status, network error or timeout."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "model_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


class SessionError(ReckonError):
    """A headless session could not start, or a call into its page failed."""
