"""Relay tools in the config file: ``[[tool]]`` tables, checked once at start.

A relay tool is an HTTP endpoint the relay calls for a cell (docs/relay.md, *Relay
tools*). Its secret headers name environment variables, like a profile's
``api_key_env``: the values are read per call, never written in the file, never sent to
the browser. What the browser may see of a tool is `RelayTool.public`.
"""

from __future__ import annotations

import copy
import keyword
import math
import re
from dataclasses import dataclass, field
from typing import Any

from reckon._exceptions import ConfigError
from reckon.server._tables import tables_of
from reckon.server._tool_schema import schema_problem

__all__ = ["TOOL_POLICIES", "RelayTool", "tools_from_tables"]

TOOL_POLICIES = ("run", "ask", "once")
# The names a cell's `tools` namespace keeps for itself, and Python's keywords (as web/tools.js).
_RESERVED = frozenset({*keyword.kwlist, "Tool", "ToolError"})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
# Set by httpx from the call itself; a configured one would lie about the body.
_OWN_HEADERS = frozenset({"host", "content-length", "content-type", "transfer-encoding"})
_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "description": str,
    "url": str,
    "method": str,
    "policy": str,
    "timeout": (int, float),
    "max_result_bytes": int,
    "parameters": dict,
    "returns": dict,
    "headers": dict,
    "secret_headers": dict,
}
MAX_RESULT_CEILING = 64 * 1024 * 1024


@dataclass(frozen=True)
class RelayTool:
    """One endpoint the relay calls for a cell's ``await tools.<name>(...)``."""

    name: str
    description: str
    url: str
    method: str = "POST"
    policy: str = "run"
    timeout: float = 30.0
    max_result_bytes: int = 5_000_000
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    returns: dict[str, Any] | None = None
    # Header name -> value (not secret) and header name -> environment variable.
    headers: dict[str, str] = field(default_factory=dict)
    secret_headers: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        where = f"tool {self.name!r}"
        if not _NAME.match(self.name) or self.name in _RESERVED:
            raise ConfigError(
                f"{where}: the name must be a Python identifier (letters, digits, _; at most "
                "64) and not a keyword: a cell calls it as tools.<name>(...)"
            )
        if not self.description.strip():
            raise ConfigError(f"{where}: give a description (the model reads it to use the tool)")
        if not re.match(r"^https?://[^/\s]+", self.url):
            raise ConfigError(f"{where}: url {self.url!r} must be an http:// or https:// URL")
        if self.method not in ("GET", "POST"):
            raise ConfigError(
                f"{where}: method {self.method!r} must be GET (arguments as query parameters) "
                "or POST (arguments as a JSON body)"
            )
        if self.policy not in TOOL_POLICIES:
            raise ConfigError(
                f"{where}: policy {self.policy!r} is not one of run, ask, once (ask: the person "
                "allows each call; once: once a conversation)"
            )
        if not (math.isfinite(self.timeout) and 0 < self.timeout <= 600):
            raise ConfigError(f"{where}: timeout must be a number of seconds above 0, at most 600")
        if not 1 <= self.max_result_bytes <= MAX_RESULT_CEILING:
            raise ConfigError(
                f"{where}: max_result_bytes must be between 1 and {MAX_RESULT_CEILING:,}"
            )
        problem = schema_problem(self.parameters, "parameters") or (
            schema_problem(self.returns, "returns") if self.returns is not None else None
        )
        if problem is None and self.parameters.get("type") != "object":
            problem = 'parameters: the arguments are named, so its type must be "object"'
        if problem:
            raise ConfigError(f"{where}: {problem}")
        self._check_headers(where)

    def _check_headers(self, where: str) -> None:
        names = [*self.headers, *self.secret_headers]
        for name in names:
            if not _HEADER.match(name) or name.lower() in _OWN_HEADERS:
                raise ConfigError(f"{where}: {name!r} cannot be a header the relay sends")
        lowered = [n.lower() for n in names]
        if len(set(lowered)) != len(lowered):
            raise ConfigError(f"{where}: a header is named twice (in headers and secret_headers)")
        for name, value in self.headers.items():
            if not isinstance(value, str) or "\n" in value or "\r" in value:
                raise ConfigError(f"{where}: headers.{name} must be text on one line")
        for name, env in self.secret_headers.items():
            if not isinstance(env, str) or not _ENV_NAME.match(env):
                raise ConfigError(
                    f"{where}: secret_headers.{name} must name an environment variable that "
                    "holds the value (never the value itself)"
                )

    @property
    def public(self) -> dict[str, Any]:
        """What the browser is told: never the url or the headers."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
            "policy": self.policy,
            "timeoutMs": round(self.timeout * 1000),
            "maxResultBytes": self.max_result_bytes,
        }
        if self.returns is not None:
            out["returns"] = copy.deepcopy(self.returns)
        return out


def tools_from_tables(tables: list[Any], where: str) -> list[RelayTool]:
    """The ``[[tool]]`` tables of a config file, checked."""
    tools = []
    required = ("name", "description", "url")
    for _, table in tables_of(tables, where, "tool", schema=_KEYS, required=required):
        options = {k: v for k, v in table.items() if k != "timeout"}
        if "timeout" in table:
            options["timeout"] = float(table["timeout"])
        tools.append(RelayTool(**options))
    names = [t.name for t in tools]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"{where}: tool names must be unique; repeated: {', '.join(repeated)}")
    return tools
