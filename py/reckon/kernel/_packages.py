"""Installing packages in the sandbox, offline: `%pip install` in a cell, and
``await pip_install(...)``.

The sandbox has no network. What can be installed: a wheel a person dropped in
like any file (under /data), if it is pure Python (``py3-none-any``) or built for
this Pyodide, with micropip and ``deps=False`` (micropip never asks an index); and
a package the site ships but has not installed yet (from the served lock, no
network either). Anything else gets a result that says why not and what to do.
Every outcome is data (``status``); only the `%pip` line of a cell turns an
``error`` into the cell's error, so the cell stops there.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import shlex
import sys
from collections.abc import Mapping
from typing import Any, Protocol

from reckon.kernel._install_plan import HOW_TO_ADD, InstallPlan
from reckon.kernel._wheelfile import canon

__all__ = [
    "PIP_NAME",
    "Backend",
    "InstallError",
    "pip_command",
    "pip_install",
    "rewrite_pip_lines",
    "set_backend",
]

PIP_NAME = "__reckon_pip__"  # what a `%pip` line of a cell calls (kernel namespace)

# `%pip install x`, `!pip install x`, `!pip3 …`, `!python -m pip …`, `!{sys.executable} -m pip …`
_PIP_LINE = re.compile(
    r"^(?P<indent>[ \t]*)[!%][ \t]*(?:pip3?|python3?[ \t]+-m[ \t]+pip"
    r"|\{sys\.executable\}[ \t]+-m[ \t]+pip)(?=\s|$)(?P<args>.*)$"
)
# Shell syntax after the command (`&& echo done`, `> log`, `; ls`): not pip's.
_SHELL_STOP = {"&&", "||", ";", "|", ">", ">>", "2>&1", "&"}
# Options that take a value, so that value is not taken for a package.
_VALUED = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-t", "--target",
           "-c", "--constraint", "--prefix", "--root", "--platform", "--python-version",
           "--only-binary", "--no-binary", "--progress-bar", "--cache-dir"}  # fmt: skip


class InstallError(Exception):
    """A `%pip` line that installed nothing; its message says why and what to do."""


InstallError.__module__ = "reckon.kernel"


class Backend(Protocol):
    """Where packages come from: the site's lock and micropip in the sandbox; a test
    puts its own in with ``set_backend``."""

    def shipped(self) -> Mapping[str, str]:
        """Canonical name -> version of every package the site ships (served lock)."""
        ...

    async def install(self, wheels: list[str], names: list[str]) -> None:
        """Install the wheel files (paths) and the shipped packages ``names``."""
        ...


class _Micropip:
    def shipped(self) -> Mapping[str, str]:
        try:
            from micropip._compat import REPODATA_PACKAGES  # the served pyodide-lock.json
        except ImportError:
            return {}
        packages = REPODATA_PACKAGES.items()
        return {canon(name): str(pkg.get("version", "")) for name, pkg in packages}

    async def install(self, wheels: list[str], names: list[str]) -> None:
        try:
            import micropip
        except ImportError:
            raise InstallError("micropip is not installed here (it is in the sandbox)") from None
        # deps=False: dependencies were checked before; micropip never asks an index.
        await micropip.install([*(f"emfs:{w}" for w in wheels), *names], deps=False)


_backend: Backend = _Micropip()


def set_backend(backend: Backend | None) -> None:
    """Use ``backend`` (None: micropip again)."""
    global _backend
    _backend = backend if backend is not None else _Micropip()


def rewrite_pip_lines(source: str) -> str | None:
    """``source`` with each `%pip …`/`!pip …` line turned into an awaited call of
    ``PIP_NAME`` (same line numbers); None when it has none. Only for a cell that does
    not parse as it is: a valid cell never holds one."""
    lines = source.splitlines(keepends=True)
    changed = False
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        match = _PIP_LINE.match(body)
        if match:
            ending = line[len(body) :]
            lines[index] = f"{match['indent']}await {PIP_NAME}({match['args'].strip()!r}){ending}"
            changed = True
    return "".join(lines) if changed else None


async def pip_command(args: str, *, data_dir: str = "/data") -> dict[str, Any]:
    """What `%pip <args>` does: ``install`` (see ``pip_install``), ``list``/``freeze``."""
    try:
        tokens = shlex.split(args)
    except ValueError as exc:
        return _error(f"`pip {args}` cannot be read ({exc})")
    for index, token in enumerate(tokens):
        if token in _SHELL_STOP:
            tokens = tokens[:index]
            break
    if not tokens:
        return _error("`%pip` needs a command: `%pip install /data/<file>.whl`. " + HOW_TO_ADD)
    command, rest = tokens[0], tokens[1:]
    if command in ("list", "freeze"):
        found = sorted(
            (dist.metadata["Name"] or "?", dist.version)
            for dist in importlib.metadata.distributions()
        )
        sep = "==" if command == "freeze" else " "
        text = "\n".join(f"{name}{sep}{version}" for name, version in found)
        return {"status": "ok", "installed": [], "already": [], "message": text}
    if command != "install":
        return _error(
            f"`pip {command}` does not run here: only `%pip install` does (and `%pip list`); "
            "a version: `importlib.metadata.version('name')`."
        )
    targets: list[str] = []
    skip = False
    for token in rest:
        if skip:
            skip = False
        elif token in ("-r", "--requirement", "-e", "--editable"):
            return _error(
                f"`pip install {token}` is not supported here: name the wheel files, "
                "e.g. `%pip install /data/a-1.0-py3-none-any.whl /data/b-2.0-py3-none-any.whl`"
            )
        elif token in _VALUED:
            skip = True
        elif not token.startswith("-"):
            targets.append(token)
    if not targets:
        return _error("`%pip install` needs what to install: `%pip install /data/<file>.whl`")
    return await pip_install(*targets, data_dir=data_dir)


async def pip_install(*targets: str, data_dir: str = "/data") -> dict[str, Any]:
    """Install wheels dropped in under /data (``"/data/x-1.0-py3-none-any.whl"``, or
    just the package's name when its wheel is there), offline, with micropip.

    Returns ``{status, installed, already, message}``: ``installed`` lists
    ``{name, version, imports, source}``; ``already`` what was there before; on
    ``error`` nothing was installed and ``message`` says why and what to do. Never
    raises for what it is given.
    """
    if not targets:
        return _error("name a wheel: `await pip_install('/data/<file>.whl')`")
    backend = _backend
    try:
        shipped = dict(backend.shipped())
    except Exception:
        shipped = {}
    plan = InstallPlan(data_dir, shipped)
    flat = [t for item in targets for t in (item if isinstance(item, list | tuple) else [item])]
    for target in flat:
        if not isinstance(target, str) or not target.strip():
            plan.problems.append(f"{target!r} is not a wheel path or a package name")
            continue
        plan.add(target.strip())
    plan.check_requirements()
    if plan.problems:
        return _error(" ".join(plan.problems))
    wheels, names, already = plan.wheels, plan.names, plan.already
    if not wheels and not names:
        text = "; ".join(
            f"Requirement already satisfied: {a['name']} {a['version']}" for a in already
        )
        return {"status": "ok", "installed": [], "already": already, "message": text}
    try:
        await backend.install([w.path for w in wheels.values()], sorted(names))
    except InstallError as exc:
        return _error(str(exc))
    except Exception as exc:
        return _error(f"micropip could not install it: {type(exc).__name__}: {exc}")
    importlib.invalidate_caches()
    installed = [
        {"name": w.name, "version": w.version, "imports": w.imports, "source": w.path}
        for w in wheels.values()
    ] + [
        {"name": n, "version": v, "imports": [], "source": "the sandbox's own packages"}
        for n, v in sorted(names.items())
    ]  # fmt: skip
    parts = []
    for item in installed:
        imports = ", ".join(f"`import {i}`" for i in item["imports"])
        parts.append(f"Installed {item['name']} {item['version']} from {item['source']}"
                     + (f" ({imports})" if imports else ""))  # fmt: skip
    stale = [i for w in wheels.values() for i in w.imports if i in sys.modules]
    if stale:
        parts.append(
            f"{', '.join(stale)} had been imported before: restart the sandbox to use the "
            "installed version"
        )
    parts += [f"Requirement already satisfied: {a['name']} {a['version']}" for a in already]
    return {"status": "ok", "installed": installed, "already": already, "message": ". ".join(parts)}


def _error(message: str) -> dict[str, Any]:
    return {"status": "error", "installed": [], "already": [], "message": message}
