"""The relay's settings: model server profiles and the knobs of the HTTP server.

Everything is validated here, once, so the request path can trust the values.
A TOML file (``reckon serve --config FILE``) is read into the same objects by
``_config_file``; command-line flags are applied on top of it by ``_flags``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from reckon._exceptions import ConfigError
from reckon.server._access import (
    METRICS_MODES,
    MIN_SECRET_LENGTH,
    Client,
    Limits,
    check_proxy,
    check_redis_url,
)
from reckon.server._tool_config import RelayTool

__all__ = [
    *("AUTO", "DEFAULT_KEY_ENV", "TIMEOUTS", "Profile", "RelayConfig", "ResolvedModel"),
    "check_sandbox_origin",
]

DEFAULT_KEY_ENV = "RECKON_UPSTREAM_KEY"
TIMEOUTS = (
    *("connect_timeout", "first_byte_timeout", "header_timeout", "body_timeout"),
    *("send_timeout", "call_timeout"),
)
AUTO = "auto"  # sandbox_origin: a second site made from the page's host (_sandbox_site)

# Profile names become the first half of `profile/model` ids, so no slashes.
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROTOCOLS = ("openai", "anthropic")
# How the page's agent offers tools to this profile's models (agent/models/_openai.py):
# "auto" offers them until the model shows it does not use them, "off" asks for
# fenced code blocks from the start (for a server whose tool calling is broken).
TOOL_MODES = ("auto", "on", "off")

Protocol = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class Profile:
    """One model server the relay may forward to: OpenAI-compatible, or Anthropic's Messages API."""

    name: str
    base_url: str
    api_key_env: str | None = None
    protocol: Protocol = "openai"
    # Empty: ask the server (`GET {base_url}/models`) and cache the answer.
    models: list[str] = field(default_factory=list)
    default_model: str | None = None
    tools: str = "auto"
    # The model's context window in tokens, when known: the agent cuts the history
    # to fit instead of waiting for the server to refuse it.
    context_window: int | None = None

    def __post_init__(self) -> None:
        if not _PROFILE_NAME.match(self.name):
            raise ConfigError(
                f"profile name {self.name!r} is not allowed: use letters, digits, '.', '_' "
                "or '-' (no '/', it separates profile and model in model ids)"
            )
        if not re.match(r"^https?://[^/\s]+", self.base_url):
            raise ConfigError(
                f"profile {self.name!r}: base_url {self.base_url!r} must be an http:// or "
                "https:// URL, e.g. https://api.openai.com/v1"
            )
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            raise ConfigError(
                f"profile {self.name!r}: api_key_env {self.api_key_env!r} is not an environment "
                "variable name (give the variable's name, never the key itself)"
            )
        if self.protocol not in _PROTOCOLS:
            raise ConfigError(
                f"profile {self.name!r}: protocol {self.protocol!r} is not supported; "
                f"use one of {', '.join(_PROTOCOLS)}"
            )
        if self.tools not in TOOL_MODES:
            raise ConfigError(
                f"profile {self.name!r}: tools {self.tools!r} is not one of "
                f"{', '.join(TOOL_MODES)} (auto: detect; off: the model writes code blocks)"
            )
        if self.context_window is not None and not 512 <= self.context_window <= 10_000_000:
            raise ConfigError(
                f"profile {self.name!r}: context_window {self.context_window} must be a number "
                "of tokens between 512 and 10,000,000"
            )
        if self.default_model and self.models and self.default_model not in self.models:
            raise ConfigError(
                f"profile {self.name!r}: default_model {self.default_model!r} is not in its "
                f"models {self.models!r}"
            )

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/")


@dataclass(frozen=True)
class ResolvedModel:
    """A resolved model: the public id, its profile and the upstream's own name."""

    id: str
    profile: Profile
    model: str


@dataclass
class RelayConfig:
    """Everything `create_app` and `reckon serve` need."""

    profiles: list[Profile] = field(default_factory=list)
    site_dir: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    allowed_origins: list[str] = field(default_factory=list)
    # Origins whose pages may frame the site's pages besides the relay's own and the
    # allowed origins (whose widgets frame the sandbox): CSP frame-ancestors.
    allowed_embedders: list[str] = field(default_factory=list)
    # Extra names accepted in the Host header besides the loopback names.
    allowed_hosts: list[str] = field(default_factory=list)
    max_body_bytes: int = 4 * 1024 * 1024
    max_concurrent_streams: int = 64
    connect_timeout: float = 10.0
    # A laptop model reads a long prompt for minutes before its first token (8k tokens
    # at ~40 tokens/s is 200 s), and llama.cpp's server sends nothing meanwhile.
    first_byte_timeout: float = 300.0
    # A client gets this long to send its request headers, then its body: a
    # connection held open by a trickle ties up the relay (slowloris).
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    # A client that takes nothing of an answer for this long is dropped: one that never
    # reads would otherwise hold its connection (and a file, or a model call) for ever.
    send_timeout: float = 60.0
    # Each model call's ceiling, first byte to last: a model server that streams without
    # end holds a place of the concurrency limits and, unstreamed, the relay's memory.
    call_timeout: float = 1800.0
    max_answer_bytes: int = 64 * 1024 * 1024
    log_prompts: bool = False
    # Callers with an identity of their own: a token each, or a token the embedding site
    # signed with `client_secret` (see _identity). `token` above stays the one shared token.
    clients: list[Client] = field(default_factory=list)
    client_secret: str | None = field(default=None, repr=False)
    # A signed token is good for at most this long, whatever expiry it carries (_identity).
    max_token_ttl: int = 86400
    limits: Limits = field(default_factory=Limits)
    # Where the limits are counted when several replicas share them; None: in memory.
    redis_url: str | None = field(default=None, repr=False)
    metrics: str = "token"
    # Peers whose X-Forwarded-For names the client (uvicorn's forwarded_allow_ips);
    # empty: uvicorn's default, loopback only (or $FORWARDED_ALLOW_IPS).
    trusted_proxies: list[str] = field(default_factory=list)
    # HTTP endpoints the relay calls for a cell's host tool calls (_tool_config, _tools).
    tools: list[RelayTool] = field(default_factory=list)
    # The sandbox frame on a site of its own (_sandbox_site): None keeps the opaque frame.
    sandbox_origin: str | None = None

    @property
    def auth_required(self) -> bool:
        """Whether /v1/* and /api/* need a bearer token of some kind."""
        return self.token is not None or bool(self.clients) or self.client_secret is not None

    def __post_init__(self) -> None:
        names = [p.name for p in self.profiles]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(f"profile names must be unique; repeated: {', '.join(duplicates)}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port {self.port} is out of range 0-65535")
        for name in ("max_body_bytes", "max_concurrent_streams", "max_answer_bytes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        for name in TIMEOUTS:
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ConfigError(f"{name} must be a positive, finite number of seconds")
        for origin in [*self.allowed_origins, *self.allowed_embedders]:
            if not re.match(r"^https?://[^/\s]+$", origin):
                raise ConfigError(
                    f"allowed origin {origin!r} must look like https://example.org "
                    "(scheme and host, optional port, no path or trailing slash)"
                )
        _check_access(self)
        tool_names = [t.name for t in self.tools]
        if len(set(tool_names)) != len(tool_names):
            raise ConfigError("tool names must be unique")
        self.sandbox_origin = check_sandbox_origin(self.sandbox_origin)


def _check_access(config: RelayConfig) -> None:
    """The checks of `RelayConfig` that concern clients, limits and metrics."""
    ids = [c.id for c in config.clients]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ConfigError(f"client ids must be unique; repeated: {', '.join(repeated)}")
    tokens = [c.token for c in config.clients]
    if len(set(tokens)) != len(tokens):
        # Named by id only: the message may be printed, the tokens must not be.
        twins = sorted({c.id for c in config.clients if tokens.count(c.token) > 1})
        raise ConfigError(f"clients {', '.join(twins)} have the same token; give each its own")
    if config.token is not None and config.token in tokens:
        owner = next(c.id for c in config.clients if c.token == config.token)
        raise ConfigError(
            f"client {owner!r} has the relay's shared token; give the client a token of its own"
        )
    if not 60 <= config.max_token_ttl <= 366 * 86400:
        raise ConfigError(
            f"max_token_ttl {config.max_token_ttl} must be a number of seconds between 60 and "
            "31622400 (a year): the longest a signed token may be good for"
        )
    if config.client_secret is not None and len(config.client_secret) < MIN_SECRET_LENGTH:
        raise ConfigError(
            f"client_secret must be at least {MIN_SECRET_LENGTH} characters (make one with: "
            "python -c 'import secrets; print(secrets.token_urlsafe(48))')"
        )
    if config.redis_url is not None:
        check_redis_url(config.redis_url)
        if not config.limits.any:
            raise ConfigError(
                "a Redis address is given but no limit is set: Redis only holds the limits "
                "(set requests_per_minute, tokens_per_day or concurrent_streams)"
            )
    if config.metrics not in METRICS_MODES:
        raise ConfigError(
            f"metrics {config.metrics!r} is not one of {', '.join(METRICS_MODES)} (token: like "
            "/api/*; open: no token needed; off: no /metrics route)"
        )
    for proxy in config.trusted_proxies:
        check_proxy(proxy)


def check_sandbox_origin(value: str | None) -> str | None:
    """``None`` (off), ``auto``, or an origin like ``https://sandbox.example.org``."""
    if value in (None, "", "off"):
        return None
    assert value is not None
    if value == AUTO:
        return AUTO
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or value != _origin(value):
        raise ConfigError(
            f"sandbox origin {value!r} must be 'auto', 'off', or an origin like "
            "https://sandbox.example.org (scheme and host, optional port, no path); "
            "it must be a site other than the page's"
        )
    return value


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
