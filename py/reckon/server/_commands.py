"""The relay's subcommands of ``reckon`` (built in ``reckon._cli``): ``reckon serve``
reads flags (and an optional TOML file), then runs the relay; ``reckon token`` mints
a signed client token, to try a relay the way an embedding site's users will reach it.

Flags win over the config file, which wins over the defaults. Every mistake in
either raises ConfigError, which the command prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import ipaddress
import logging
import os
import socket
import sys
import threading
import time
import webbrowser
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias
from urllib.parse import urlsplit

from reckon._exceptions import ConfigError
from reckon.server._access import LIMIT_NAMES, METRICS_MODES, Limits
from reckon.server._config import DEFAULT_KEY_ENV, Profile, RelayConfig
from reckon.server._config_file import load_config_file
from reckon.server._identity import SECRET_ENV, mint_token

__all__ = [
    "Commands",
    "add_serve_command",
    "add_token_command",
    "config_from_namespace",
    "mint",
    "serve",
]

_DEFAULT_SITE = Path("dist/site")
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
    add("--site", metavar="PATH", help=f"the built site to serve (default ./{_DEFAULT_SITE})")
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
    if site is None and _DEFAULT_SITE.is_dir():
        site = _DEFAULT_SITE.resolve()

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


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        # Listening now, not when uvicorn starts: the "running" line is printed before,
        # and a client that connects on reading it must wait in the queue, not be refused.
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _notes(config: RelayConfig) -> list[str]:
    notes = []
    if not config.profiles:
        notes.append(
            "no model server configured: demo mode (give --upstream URL, or a [[profile]] "
            "in a --config file)"
        )
    for profile in config.profiles:
        # A model server on this machine (llama.cpp, Ollama) needs no key: saying the
        # default variable is unset would read as a fault. One named on purpose is told.
        local = _is_loopback(urlsplit(profile.base_url).hostname or "")
        if local and profile.api_key_env == DEFAULT_KEY_ENV:
            continue
        if profile.api_key_env and not os.environ.get(profile.api_key_env):
            notes.append(
                f"{profile.api_key_env} is not set: calls to '{profile.name}' go without an API key"
            )
    if not _is_loopback(config.host) and not config.auth_required:
        notes.append(
            f"listening on {config.host} without --token: anyone who can reach this port can "
            "use your model server's API key"
        )
    if not _is_loopback(config.host) and not config.limits.any:
        notes.append(
            "no limits are set (--requests-per-minute, --tokens-per-day, --concurrent-streams): "
            "whoever may call the relay may spend the key without bound"
        )
    if config.limits.any:
        where = "Redis" if config.redis_url else "memory (this process only)"
        notes.append(f"limits per client: {config.limits.describe()}; counted in {where}")
    if config.host in ("0.0.0.0", "::") and not config.allowed_hosts:
        notes.append(
            "other machines must reach the relay by a name or address given with --allow-host"
        )
    if config.site_dir is None:
        notes.append(f"no site to serve ({_DEFAULT_SITE} not found; build it or pass --site)")
    return notes


def serve(config: RelayConfig, *, open_browser: bool = False) -> int:
    """Run the relay until Ctrl-C; returns the exit code. ``open_browser`` (``--open``)
    opens the page in this machine's browser once the socket listens."""
    import uvicorn

    from reckon.server._app import create_app
    from reckon.server._errors import ScrubbingFilter
    from reckon.server._serve import uvicorn_config

    app = create_app(config)
    sock = _bind(config.host, config.port)
    host, port = sock.getsockname()[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else f"[{host}]" if ":" in host else host
    # With --port 0 the Host check must accept the port actually chosen.
    config.port = port
    for note in _notes(config):
        print(f"reckon: note: {note}", file=sys.stderr)
    url = f"http://{shown}:{port}/"
    opening = " (opening it now)" if open_browser else ""
    print(f"Reckon is running: open {url} in your browser{opening}", flush=True)
    if open_browser:
        _open_in_browser(url)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    scrub = ScrubbingFilter(app.state.upstreams.secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(scrub)
    for noisy in ("uvicorn", "uvicorn.error", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    server_config = uvicorn_config(app, config)
    # uvicorn re-raises the Ctrl-C it caught once it has shut down cleanly.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(server_config).run(sockets=[sock])
    return 0


def _open_in_browser(url: str) -> None:
    """Open ``url`` in a thread: a browser command may not return until it closes, and
    the socket already listens, so its first request waits in the queue meanwhile."""
    graphical = any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))
    if sys.platform.startswith(("linux", "freebsd", "openbsd")) and not graphical:
        # Without a display, webbrowser falls back to a text browser in this terminal.
        print(f"reckon: note: --open: no display here (DISPLAY is not set); open {url} "
              "in a browser yourself", file=sys.stderr)  # fmt: skip
        return

    def run() -> None:
        try:
            opened = webbrowser.open(url)
        except webbrowser.Error:
            opened = False
        if not opened:
            print(f"reckon: note: --open: no browser could be started; open {url} yourself",
                  file=sys.stderr, flush=True)  # fmt: skip

    threading.Thread(target=run, name="reckon-open", daemon=True).start()


def mint(args: argparse.Namespace) -> int:
    """``reckon token``: print a signed client token; returns the exit code."""
    secret = os.environ.get(args.secret_env)
    if not secret:
        raise ConfigError(
            f"${args.secret_env} is not set: set it to the relay's client_secret "
            "(the token is signed with it)"
        )
    now = time.time()
    token = mint_token(args.client, secret, ttl=args.ttl, now=now)
    expiry = datetime.fromtimestamp(int(now) + args.ttl, UTC)
    print(token, flush=True)
    print(
        f"reckon: token for client {args.client!r}, valid until {expiry:%Y-%m-%d %H:%M:%S} UTC",
        file=sys.stderr,
    )
    default_max = RelayConfig.max_token_ttl
    if args.ttl > default_max:
        print(
            f"reckon: note: a relay refuses signed tokens that expire more than its "
            f"max_token_ttl ({default_max} s unless configured) from now",
            file=sys.stderr,
        )
    return 0
