"""Reckon: a code interpreter that runs in the browser.

The package has three parts that never import each other:

- ``reckon.kernel`` runs inside the sandbox worker (Pyodide + the scientific stack);
- ``reckon.agent`` runs inside the agent worker (a small Pyodide) and drives the model;
- ``reckon.server`` is the relay (CPython only): serves the site, forwards model calls.
"""

from __future__ import annotations

from reckon._exceptions import (
    BuildError,
    ChecksumError,
    ConfigError,
    ModelError,
    ModelProtocolError,
    ProtocolError,
    ReckonError,
)

__version__ = "0.1.0"

__all__ = [
    "BuildError",
    "ChecksumError",
    "ConfigError",
    "ModelError",
    "ModelProtocolError",
    "ProtocolError",
    "ReckonError",
    "__version__",
]
