"""The command line of the relay's subcommands (``reckon serve``, ``reckon token``):
their flags, as argparse subcommands that ``reckon._cli`` adds to its parser, and
``reckon serve``'s parsed flags (plus an optional TOML file) as a RelayConfig.

Flags win over the config file, which wins over the defaults. Every mistake in
either raises ConfigError, which the command prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any, TypeAlias

from reckon._exceptions import ConfigError
from reckon.server._access import LIMIT_NAMES, METRICS_MODES, Limits
from reckon.server._config import DEFAULT_KEY_ENV, Profile, RelayConfig
from reckon.server._config_file import load_config_file
from reckon.server._identity import SECRET_ENV

__all__ = [
    "DEFAULT_SITE",
    "Commands",
    "add_serve_command",
    "add_token_command",
    "config_from_namespace",
]

DEFAULT_SITE = Path("dist/site")
REDIS_ENV = "RECKON_REDIS_URL"
# What ``ArgumentParser.add_subparsers`` returns; argparse names the type privately
# and subscripts it only in its stubs, hence the string.
Commands: TypeAlias = "argparse._SubParsersAction[Any]"


def add_serve_command(commands: Commands) -> None:
    """``reckon serve``'s flags, as a subcommand of ``commands`` (argparse subparsers)."""
    serve = commands.add_parser(
        "serve",
        help="serve the site and relay model calls",
        description="Serve the built site and relay chat-completion calls to a model server, "
        "keeping its API key out of the browser.",
    )
    add = serve.add_argument
    add("--host", help="address to listen on (default 127.0.0.1)")
    add("--port", type=int, help="port to listen on; 0 picks a free one (default 8000)")
    add("--site", metavar="PATH", help=f"the built site to serve (default ./{DEFAULT_SITE})")
    add(
        "--upstream",
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. https://api.openai.com/v1",
    )
    add("--model", metavar="NAME", help="model to offer from --upstream (default: ask it)")
    add(
        "--key-env", metavar="NAME", help=f"env var holding the API key (default {DEFAULT_KEY_ENV})"
    )
    add(
        "--tools",
        choices=["auto", "on", "off"],
        help="offer tools to --upstream's models (default auto: detect; off: code blocks)",
    )
    add("--context-window", type=int, metavar="TOKENS", help="--upstream's context window")
    add("--config", metavar="FILE", help="TOML file with [[profile]] tables and settings")
    add("--token", help="require this bearer token on /v1/* and /api/* (or set RECKON_TOKEN)")
    many: dict[str, Any] = {"nargs": "+", "action": "extend", "default": []}
    add("--allow-origin", metavar="ORIGIN", **many, help="also accept pages at this origin")
    add(
        "--allow-embedder",
        metavar="ORIGIN",
        **many,
        help="also let pages at this origin frame the site's pages (allowed origins may)",
    )
    add("--allow-host", metavar="HOST", **many, help="also accept this Host name (proxies)")
    add("--log-prompts", action="store_true", default=None, help="log the messages sent to models")
    add(
        "--open",
        action="store_true",
        help="open the page in this machine's browser once the server listens",
    )
    for name, what in zip(
        LIMIT_NAMES,
        ("model calls per minute", "tokens per day (UTC)", "model calls under way at once"),
        strict=True,
    ):
        flag = f"--{name.replace('_', '-')}"
        add(flag, type=int, metavar="N", help=f"limit each client (or address) to N {what}")
    add(
        "--redis",
        metavar="URL",
        help=f"keep the limits in Redis, shared by every replica (or set {REDIS_ENV})",
    )
    add("--metrics", choices=METRICS_MODES, help="who may read GET /metrics (default token)")
    add(
        "--sandbox-origin",
        metavar="URL",
        help="serve the sandbox frame from a site of its own: auto (sandbox.localhost), "
        "an origin, or off (default off: an opaque-origin frame)",
    )
    add(
        "--trust-proxy",
        metavar="ADDR",
        **many,
        help="a proxy (IP or network) whose X-Forwarded-For names the client",
    )


def add_token_command(commands: Commands) -> None:
    """``reckon token``'s flags, as a subcommand of ``commands`` (argparse subparsers)."""
    token = commands.add_parser(
        "token",
        help="mint a signed client token (to try a relay with client_secret)",
        description="Print a token the relay accepts for one client until it expires, signed "
        f"with the secret in ${SECRET_ENV} (the relay's client_secret).",
    )
    token.add_argument("--client", required=True, metavar="ID", help="the client id to sign")
    token.add_argument(
        "--ttl", type=int, default=3600, metavar="SECONDS", help="lifetime (default 3600)"
    )
    token.add_argument(
        "--secret-env", default=SECRET_ENV, metavar="NAME", help=f"default {SECRET_ENV}"
    )


def config_from_namespace(args: argparse.Namespace) -> RelayConfig:
    """``reckon serve``'s parsed flags (plus the --config file) as a RelayConfig."""
    file: dict[str, Any] = {"profiles": []}
    if args.config:
        file = load_config_file(Path(args.config))
    profiles: list[Profile] = list(file.pop("profiles"))
    if args.upstream:
        profiles.append(
            Profile(
                name="default",
                base_url=args.upstream,
                api_key_env=args.key_env or DEFAULT_KEY_ENV,
                models=[args.model] if args.model else [],
                default_model=args.model,
                tools=args.tools or "auto",
                context_window=args.context_window,
            )
        )
    elif args.model or args.key_env or args.tools or args.context_window:
        flag = next(
            f"--{name.replace('_', '-')}"
            for name in ("model", "key_env", "tools", "context_window")
            if getattr(args, name)
        )
        raise ConfigError(f"{flag} needs --upstream URL (or use --config with [[profile]] tables)")

    site = file.pop("site_dir", None)
    if args.site:
        site = Path(args.site).resolve()
    if site is not None and not site.is_dir():
        raise ConfigError(f"the site directory {site} does not exist; build the site first")
    if site is None and DEFAULT_SITE.is_dir():
        site = DEFAULT_SITE.resolve()

    settings: dict[str, Any] = {**file, "profiles": profiles, "site_dir": site}
    for flag, key in (("host", "host"), ("port", "port"), ("log_prompts", "log_prompts")):
        if getattr(args, flag) is not None:
            settings[key] = getattr(args, flag)
    token = args.token or os.environ.get("RECKON_TOKEN") or file.get("token")
    settings["token"] = token or None
    settings["allowed_origins"] = [*file.get("allowed_origins", []), *args.allow_origin]
    settings["allowed_embedders"] = [*file.get("allowed_embedders", []), *args.allow_embedder]
    settings["allowed_hosts"] = [*file.get("allowed_hosts", []), *args.allow_host]
    settings["trusted_proxies"] = [*file.get("trusted_proxies", []), *args.trust_proxy]
    secret = os.environ.get(SECRET_ENV) or file.get("client_secret")
    settings["client_secret"] = secret or None
    flags = {n: getattr(args, n) for n in LIMIT_NAMES if getattr(args, n) is not None}
    settings["limits"] = dataclasses.replace(file.get("limits", Limits()), **flags)
    redis = args.redis or os.environ.get(REDIS_ENV) or file.get("redis_url")
    settings["redis_url"] = redis or None
    if args.metrics is not None:
        settings["metrics"] = args.metrics
    if args.sandbox_origin is not None:
        settings["sandbox_origin"] = args.sandbox_origin
    return RelayConfig(**settings)
