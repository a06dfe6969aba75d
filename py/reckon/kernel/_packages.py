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
import zipfile
from collections.abc import Mapping
from email.parser import HeaderParser
from typing import Any, Protocol

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
        return {
            _canon(name): str(pkg.get("version", "")) for name, pkg in REPODATA_PACKAGES.items()
        }

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
    wheels: dict[str, _Wheel] = {}  # canonical name -> wheel
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


def describe_wheel(path: str) -> dict[str, Any]:
    """What ``inspect`` says of an uploaded ``.whl``: its name, version, imports and
    the line that installs it; or, when it cannot run here, why (``status: "error"``)."""
    problems: list[str] = []
    wheel = _read_wheel(path, problems)
    if wheel is None:
        return {"status": "error", "path": path, "message": " ".join(problems)}
    notes = [f"a Python package: `%pip install {path}` installs it (offline), then "
             + (", ".join(f"`import {i}`" for i in wheel.imports) or "import it")]  # fmt: skip
    if wheel.requires:
        notes.append(f"it requires: {', '.join(wheel.requires)}")
    return {
        "status": "ok",
        "path": path,
        "size": os.path.getsize(path),
        "kind": "wheel",
        "name": wheel.name,
        "version": wheel.version,
        "imports": wheel.imports,
        "install_with": f"%pip install {path}",
        "notes": notes,
    }


def _error(message: str) -> dict[str, Any]:
    return {"status": "error", "installed": [], "already": [], "message": message}


class _Wheel:
    def __init__(self, path: str, name: str, version: str, requires: list[str],
                 imports: list[str]) -> None:  # fmt: skip
        self.path, self.name, self.version = path, name, version
        self.requires, self.imports = requires, imports


def _resolve(
    target: str,
    data_dir: str,
    shipped: dict[str, str],
    wheels: dict[str, _Wheel],
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
        found = _find_file(path, data_dir)
        if found is None:
            present = _wheels_in(data_dir)
            listed = ", ".join(present) if present else "none"
            problems.append(
                f"{target}: no such file (wheels under {data_dir}: {listed}). Add the wheel "
                f"like any file; it appears as {data_dir}/<its name>."
            )
            return
        wheel = _read_wheel(found, problems)
        if wheel is not None:
            wheels[_canon(wheel.name)] = wheel
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
    wheels: dict[str, _Wheel],
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
    name = _canon(requirement.name)
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
    dropped = [w for w in _wheels_in(data_dir) if _canon(w.split("-")[0]) == name]
    for file_name in dropped:
        version = file_name.split("-")[1]
        if spec.contains(version, prereleases=True):
            wheel = _read_wheel(os.path.join(data_dir, file_name), problems)
            if wheel is not None:
                wheels[_canon(wheel.name)] = wheel
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
    wheel: _Wheel,
    text: str,
    wheels: dict[str, _Wheel],
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
    name, spec = _canon(requirement.name), requirement.specifier
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


def _find_file(path: str, data_dir: str) -> str | None:
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(data_dir, path)]
    if os.path.isabs(path) and not os.path.exists(path):
        candidates.append(os.path.join(data_dir, os.path.basename(path)))
    return next((c for c in candidates if os.path.isfile(c)), None)


def _wheels_in(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".whl"))
    except OSError:
        return []


def _read_wheel(path: str, problems: list[str]) -> _Wheel | None:
    """The wheel at ``path``, or None after saying in ``problems`` why it cannot be
    installed here (its name, its tags, its Python, its metadata)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    file_name = os.path.basename(path)
    try:
        _, _, _, tags = parse_wheel_filename(file_name)
    except (InvalidWheelFilename, ValueError) as exc:
        problems.append(
            f"{file_name}: not a valid wheel file name ({exc}); keep the name the wheel was "
            "downloaded with (name-version-python-abi-platform.whl)"
        )
        return None
    platforms = {tag.platform for tag in tags}
    if "any" not in platforms and not any(
        p.startswith(("emscripten", "pyodide")) for p in platforms
    ):
        system = _system(sorted(platforms)[0])
        problems.append(
            f"{file_name} is compiled for {system}, not for the browser (WebAssembly), so "
            "it cannot run here. Use a pure-Python wheel (…-py3-none-any.whl) of it, or "
            "one built for Pyodide 0.27 (…-cp312-cp312-pyodide_2024_0_wasm32.whl)."
        )
        return None
    if "any" in platforms and not any(t.interpreter.startswith(("py3", "cp3")) for t in tags):
        problems.append(f"{file_name} is for Python 2 only; the sandbox runs Python 3.12.")
        return None
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.namelist()
            info = next((m.split("/")[0] for m in members
                         if m.count("/") == 1 and m.split("/")[0].endswith(".dist-info")
                         and m.endswith("/METADATA")), None)  # fmt: skip
            if info is None:
                problems.append(f"{file_name}: not a wheel (no *.dist-info/METADATA inside)")
                return None
            meta = HeaderParser().parsestr(zf.read(f"{info}/METADATA").decode("utf-8", "replace"))
            top_level = f"{info}/top_level.txt"
            imports = (zf.read(top_level).decode().split() if top_level in members
                       else _top_level(members))  # fmt: skip
    except (OSError, zipfile.BadZipFile, KeyError) as exc:
        problems.append(f"{file_name}: cannot be read as a wheel ({exc}); download it again")
        return None
    name, version = meta.get("Name", ""), meta.get("Version", "")
    python = meta.get("Requires-Python")
    if python:
        try:
            ok = SpecifierSet(python).contains(_python(), prereleases=True)
        except InvalidSpecifier:
            ok = True
        if not ok:
            problems.append(
                f"{file_name} needs Python {python}; the sandbox runs Python {_python()}: "
                "use a version of the package that supports it."
            )
            return None
    requires = meta.get_all("Requires-Dist") or []
    return _Wheel(
        path, name or file_name.split("-")[0], version, list(requires), sorted(set(imports))
    )


def _top_level(members: list[str]) -> list[str]:
    found = set()
    for member in members:
        head, sep, rest = member.partition("/")
        if head.endswith((".dist-info", ".data")):
            continue
        if sep and rest == "__init__.py":
            found.add(head)
        elif not sep and head.endswith(".py"):
            found.add(head[:-3])
    return sorted(found)


def _system(platform: str) -> str:
    if platform.startswith(("manylinux", "musllinux", "linux")):
        return f"Linux ({platform})"
    if platform.startswith("macosx"):
        return f"macOS ({platform})"
    if platform.startswith("win"):
        return f"Windows ({platform})"
    return platform


def _installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _python() -> str:
    return ".".join(str(n) for n in sys.version_info[:3])
