"""The relay behind ``reckon serve``: serves the built site, forwards model calls.

It never runs code. It holds the API key so the browser never sees it, and
keeps to a few small modules because it is the process with the secret.
"""

from __future__ import annotations

from reckon.server._access import Client, Limits
from reckon.server._app import create_app
from reckon.server._config import Profile, RelayConfig
from reckon.server._config_file import load_config_file
from reckon.server._errors import RelayError
from reckon.server._identity import mint_token
from reckon.server._tool_config import RelayTool

__all__ = [
    "Client",
    "Limits",
    "Profile",
    "RelayConfig",
    "RelayError",
    "RelayTool",
    "create_app",
    "load_config_file",
    "mint_token",
]
