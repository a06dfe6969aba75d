"""Who may use the relay and how much: client tokens, limits, the shared limit store.

Each setting is checked here, once, and their combination by ``_config`` (which
builds `RelayConfig` from these and imports this module, never the reverse), so the
request path can trust them. The secrets (client tokens, the
signing secret, a Redis password) are kept out of every ``repr``: a config object
that ends up in a log line or a traceback must not carry them there.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from reckon._exceptions import ConfigError

__all__ = [
    "CLIENT_ID",
    "LIMIT_NAMES",
    "METRICS_MODES",
    "MIN_SECRET_LENGTH",
    "MIN_TOKEN_LENGTH",
    "Client",
    "Limits",
    "check_proxy",
    "check_redis_url",
    "limits_from_table",
    "public_redis_url",
    "redis_password",
]

# Ids go into limit keys, log lines and signed tokens (`<id>.<expiry>.<signature>`,
# split from the right, so a dot in an id is fine): no spaces, quotes or colons.
CLIENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}$")
# A token a person could guess, or read over a shoulder, is no token.
MIN_TOKEN_LENGTH = 16
# HMAC-SHA256 keys shorter than this are guessable offline from one signed token.
MIN_SECRET_LENGTH = 32
LIMIT_NAMES = ("requests_per_minute", "tokens_per_day", "concurrent_streams")
# Who may read GET /metrics: whoever may call /api/* ("token"), anyone who passes
# the Host and Origin checks ("open"), or nobody (the route is not there).
METRICS_MODES = ("token", "open", "off")
_REDIS_SCHEMES = ("redis", "rediss", "unix")


@dataclass(frozen=True)
class Client:
    """One user (or service) of the relay with a token of its own; limits are kept per id."""

    id: str
    token: str = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not CLIENT_ID.match(self.id):
            raise ConfigError(
                f"client id {self.id!r} is not allowed: 1-128 letters, digits, '_', '.', '@', "
                "'+' or '-', starting with a letter or digit"
            )
        if not isinstance(self.token, str) or len(self.token) < MIN_TOKEN_LENGTH:
            raise ConfigError(
                f"client {self.id!r}: its token must be at least {MIN_TOKEN_LENGTH} characters "
                "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        if self.token != self.token.strip() or any(c.isspace() for c in self.token):
            raise ConfigError(f"client {self.id!r}: its token must not contain spaces")


@dataclass(frozen=True)
class Limits:
    """What each client (or each address, when nobody has an identity) may use.

    None means no limit. Calls are counted on ``POST /v1/chat/completions``, the route
    that spends the upstream's key, and on ``POST /api/tools/call`` (no tokens: _tools).
    """

    requests_per_minute: int | None = None
    tokens_per_day: int | None = None
    concurrent_streams: int | None = None

    def __post_init__(self) -> None:
        for name in LIMIT_NAMES:
            value = getattr(self, name)
            if value is None:
                continue
            # bool is an int subclass; `tokens_per_day = true` is a mistake.
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"limit {name} must be a whole number of at least 1 (leave it out for no "
                    f"limit), not {value!r}"
                )

    @property
    def any(self) -> bool:
        return any(getattr(self, name) is not None for name in LIMIT_NAMES)

    def describe(self) -> str:
        parts = [f"{n} = {getattr(self, n)}" for n in LIMIT_NAMES if getattr(self, n) is not None]
        return ", ".join(parts) or "none"


def limits_from_table(table: Any, where: str) -> dict[str, int]:
    """The ``[limits]`` table of a config file as `Limits` keyword arguments."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [limits] must be a table")
    for key, value in table.items():
        if key not in LIMIT_NAMES:
            raise ConfigError(
                f"{where}: [limits] has an unknown key {key!r}; expected one of "
                f"{', '.join(LIMIT_NAMES)}"
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: [limits] {key!r} must be a whole number")
    return dict(table)


def check_redis_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in _REDIS_SCHEMES or not (parts.hostname or parts.path):
        raise ConfigError(
            f"the Redis address {public_redis_url(url)!r} must look like redis://HOST:PORT/DB, "
            "rediss://HOST:PORT/DB (TLS) or unix:///path/to/redis.sock"
        )
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise ConfigError(
            f"the Redis address {public_redis_url(url)!r} has a port that is not a number"
        ) from None


def public_redis_url(url: str) -> str:
    """The Redis address without its user and password, for messages and logs."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ":?"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}"


def redis_password(url: str | None) -> str | None:
    if url is None:
        return None
    return urlsplit(url).password


def check_proxy(value: str) -> None:
    """A proxy address that may set X-Forwarded-For: an IP, a network, or ``*``."""
    if value == "*":
        return
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise ConfigError(
            f"trusted proxy {value!r} must be an IP address (10.0.0.5), a network "
            "(10.0.0.0/8) or '*'"
        ) from None
