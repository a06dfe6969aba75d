"""The relay's subcommands of ``reckon`` (built in ``reckon._cli``, their flags in
``_flags``): ``reckon serve`` runs the relay; ``reckon token`` mints a signed client
token, to try a relay the way an embedding site's users will reach it.

A mistake raises ConfigError, which the command prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import os
import socket
import sys
import threading
import time
import webbrowser
from datetime import UTC, datetime
from urllib.parse import urlsplit

from reckon._exceptions import ConfigError
from reckon.server._config import DEFAULT_KEY_ENV, RelayConfig
from reckon.server._flags import DEFAULT_SITE
from reckon.server._identity import mint_token

__all__ = ["mint", "serve"]


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
        notes.append(f"no site to serve ({DEFAULT_SITE} not found; build it or pass --site)")
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
