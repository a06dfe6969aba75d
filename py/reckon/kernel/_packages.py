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
import os
import re
import shlex
import sys
from collections.abc import Mapping
from typing import Any, Protocol

from reckon.kernel._wheelfile import Wheel, canon, find_file, read_wheel, wheels_in

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
# Import names people `pip install` by mistake -> the distribution the sandbox knows.
_ALIASES = {"sklearn": "scikit-learn", "yaml": "pyyaml", "pil": "pillow",
            "bs4": "beautifulsoup4", "cv2": "opencv-python", "skimage": "scikit-image"}  # fmt: skip

_NO_NETWORK = "the sandbox has no network, so pip cannot download it"
HOW_TO_ADD = (
    "To use a pure-Python package the sandbox does not ship: download its wheel (a file "
    "named like name-1.0-py3-none-any.whl) on your computer, add it like any file (it "
    "appears under /data/), then run `%pip install /data/<file>.whl` (or `await "
    "pip_install('/data/<file>.whl')`); add the wheels of its dependencies too and name "
    "them in the same command. A compiled package needs a wheel built for Pyodide 0.27 "
    "(…-cp312-cp312-pyodide_2024_0_wasm32.whl)."
)


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
        return {canon(name): str(pkg.get("version", "")) for name, pkg in REPODATA_PACKAGES.items()}

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
    problems: list[str] = []
    wheels: dict[str, Wheel] = {}  # canonical name -> wheel
    names: dict[str, str] = {}  # shipped packages to install -> version
    already: list[dict[str, str]] = []
    flat = [t for item in targets for t in (item if isinstance(item, list | tuple) else [item])]
    for target in flat:
        if not isinstance(target, str) or not target.strip():
            problems.append(f"{target!r} is not a wheel path or a package name")
            continue
        _resolve(target.strip(), data_dir, shipped, wheels, names, already, problems)
    for wheel in list(wheels.values()):
        for requirement in wheel.requires:
            _check_dependency(wheel, requirement, wheels, shipped, names, problems)
    if problems:
        return _error(" ".join(problems))
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


def _resolve(
    target: str,
    data_dir: str,
    shipped: dict[str, str],
    wheels: dict[str, Wheel],
    names: dict[str, str],
    already: list[dict[str, str]],
    problems: list[str],
) -> None:
    lowered = target.lower()
    if lowered.startswith(("http://", "https://", "git+", "ftp://")):
        problems.append(f"{target}: {_NO_NETWORK}. {HOW_TO_ADD}")
        return
    path = target.removeprefix("emfs:").removeprefix("file://").removeprefix("file:")
    if path.endswith(".whl"):
        found = find_file(path, data_dir)
        if found is None:
            present = wheels_in(data_dir)
            listed = ", ".join(present) if present else "none"
            problems.append(
                f"{target}: no such file (wheels under {data_dir}: {listed}). Add the wheel "
                f"like any file; it appears as {data_dir}/<its name>."
            )
            return
        wheel = read_wheel(found, problems)
        if wheel is not None:
            wheels[canon(wheel.name)] = wheel
        return
    if (
        lowered.endswith((".tar.gz", ".tgz", ".zip", ".tar.bz2", ".egg"))
        or "/" in path
        or path in (".", "..")
    ):
        problems.append(
            f"{target}: only wheel files (.whl) install here: a source archive or folder "
            "would need a build, and the sandbox has no compiler or network. " + HOW_TO_ADD
        )
        return
    _resolve_name(target, data_dir, shipped, wheels, names, already, problems)


def _resolve_name(
    target: str,
    data_dir: str,
    shipped: dict[str, str],
    wheels: dict[str, Wheel],
    names: dict[str, str],
    already: list[dict[str, str]],
    problems: list[str],
) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(target)
    except InvalidRequirement:
        problems.append(f"{target!r} is neither a wheel file nor a package name. {HOW_TO_ADD}")
        return
    name = canon(requirement.name)
    name = _ALIASES.get(name, name)
    spec = requirement.specifier
    have = _installed_version(name)
    if have is not None:
        if spec.contains(have, prereleases=True):
            already.append({"name": name, "version": have})
        else:
            problems.append(
                f"{name} {have} is installed, not {requirement.specifier}, and {_NO_NETWORK}: "
                f"use {have}, or add a wheel of the version you need and install that file."
            )
        return
    dropped = [w for w in wheels_in(data_dir) if canon(w.split("-")[0]) == name]
    for file_name in dropped:
        version = file_name.split("-")[1]
        if spec.contains(version, prereleases=True):
            wheel = read_wheel(os.path.join(data_dir, file_name), problems)
            if wheel is not None:
                wheels[canon(wheel.name)] = wheel
            return
    if name in shipped:
        if spec.contains(shipped[name], prereleases=True):
            names[name] = shipped[name]
        else:
            problems.append(
                f"the sandbox ships {name} {shipped[name]}, not {spec}, and {_NO_NETWORK}."
            )
        return
    problems.append(
        f"`{target}` is not one of the packages the sandbox ships, and {_NO_NETWORK}. {HOW_TO_ADD}"
    )


def _check_dependency(
    wheel: Wheel,
    text: str,
    wheels: dict[str, Wheel],
    shipped: dict[str, str],
    names: dict[str, str],
    problems: list[str],
) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return  # micropip would not read it either; not ours to refuse
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return
    name, spec = canon(requirement.name), requirement.specifier
    version: str | None
    if name in wheels:
        version = wheels[name].version
    else:
        have = _installed_version(name)
        version = have if have is not None else shipped.get(name)
        if have is None and version is not None and spec.contains(version, prereleases=True):
            names[name] = version
    if version is None:
        problems.append(
            f"{wheel.name} {wheel.version} needs {text}, which is not installed and not "
            f"among the packages the sandbox ships ({_NO_NETWORK}): add its wheel "
            f"({name}-…-py3-none-any.whl) too and install both in one command, e.g. "
            f"`%pip install /data/<{name} wheel> {wheel.path}`."
        )
    elif not spec.contains(version, prereleases=True):
        problems.append(
            f"{wheel.name} {wheel.version} needs {text}, but the sandbox has {name} {version} "
            f"({_NO_NETWORK}): add a wheel of {wheel.name} that works with {name} {version}, "
            f"or a wheel of {name} that matches and install both in one command."
        )


def _installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
