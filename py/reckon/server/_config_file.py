"""A TOML config file (``reckon serve --config FILE``) read into ``RelayConfig``'s
keyword arguments: every key and table checked for its name and type, so a typo is
named with the file and the table it is in; the values themselves are checked by
``RelayConfig`` (``_config``), the same as flags'.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from reckon._exceptions import ConfigError
from reckon.server._access import Client, Limits, limits_from_table
from reckon.server._config import TIMEOUTS, Profile
from reckon.server._tables import check_keys, tables_of
from reckon.server._tool_config import tools_from_tables

__all__ = ["load_config_file"]

_TOP_KEYS: dict[str, type | tuple[type, ...]] = {
    "host": str,
    "port": int,
    "site": str,
    "token": str,
    "allowed_origins": list,
    "allowed_embedders": list,
    "allowed_hosts": list,
    "max_body_bytes": int,
    "max_concurrent_streams": int,
    "connect_timeout": (int, float),
    "first_byte_timeout": (int, float),
    "header_timeout": (int, float),
    "body_timeout": (int, float),
    "send_timeout": (int, float),
    "call_timeout": (int, float),
    "max_answer_bytes": int,
    "max_token_ttl": int,
    "log_prompts": bool,
    "profile": list,
    "client": list,
    "client_secret": str,
    "limits": dict,
    "redis": str,
    "metrics": str,
    "trusted_proxies": list,
    "tool": list,
    "sandbox_origin": str,
}
_CLIENT_KEYS: dict[str, type] = {"id": str, "token": str}
_PROFILE_KEYS: dict[str, type] = {
    "name": str,
    "base_url": str,
    "api_key_env": str,
    "protocol": str,
    "models": list,
    "default_model": str,
    "default": str,  # short alias of default_model
    "tools": str,
    "context_window": int,
}


def load_config_file(path: Path) -> dict[str, Any]:
    """Read a TOML config file into `RelayConfig` keyword arguments.

    Only keys present in the file are returned, so flags can tell "not set"
    from "set to the default". A relative ``site`` is relative to the file.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    check_keys(data, _TOP_KEYS, str(path))
    own = ("profile", "site", "client", "limits", "redis", "tool")
    settings: dict[str, Any] = {k: v for k, v in data.items() if k not in own}
    if "site" in data:
        settings["site_dir"] = (path.parent / data["site"]).resolve()
    if "redis" in data:
        settings["redis_url"] = data["redis"]
    if "limits" in data:
        settings["limits"] = Limits(**limits_from_table(data["limits"], str(path)))
    if "client" in data:
        settings["clients"] = _clients(data["client"], path)
    if "tool" in data:
        settings["tools"] = tools_from_tables(data["tool"], str(path))
    for key in TIMEOUTS:
        if key in settings:
            settings[key] = float(settings[key])
    profiles = []
    tables = data.get("profile", [])
    for where, table in tables_of(
        tables, str(path), "profile", schema=_PROFILE_KEYS, required=("name", "base_url")
    ):
        if "default" in table and "default_model" in table:
            raise ConfigError(f"{where}: give either 'default' or 'default_model', not both")
        profiles.append(
            Profile(
                name=table["name"],
                base_url=table["base_url"],
                api_key_env=table.get("api_key_env"),
                protocol=table.get("protocol", "openai"),
                models=list(table.get("models", [])),
                default_model=table.get("default_model", table.get("default")),
                tools=table.get("tools", "auto"),
                context_window=table.get("context_window"),
            )
        )
    settings["profiles"] = profiles
    return settings


def _clients(tables: list[Any], path: Path) -> list[Client]:
    required = ("id", "token")
    checked = tables_of(tables, str(path), "client", schema=_CLIENT_KEYS, required=required)
    return [Client(id=table["id"], token=table["token"]) for _, table in checked]
