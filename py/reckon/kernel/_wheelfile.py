"""Reading a wheel file: its name, version, tags, requirements and import names,
and whether it can run in the sandbox (pure Python, or built for this Pyodide). No
installing here (that is ``_packages``), so an upload's summary can use it too."""

from __future__ import annotations

import os
import re
import sys
import zipfile
from email.parser import HeaderParser
from typing import Any

__all__ = ["Wheel", "canon", "describe_wheel", "find_file", "read_wheel", "wheels_in"]


def describe_wheel(path: str) -> dict[str, Any]:
    """What ``inspect`` says of an uploaded ``.whl``: its name, version, imports and
    the line that installs it; or, when it cannot run here, why (``status: "error"``)."""
    problems: list[str] = []
    wheel = read_wheel(path, problems)
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


class Wheel:
    def __init__(self, path: str, name: str, version: str, requires: list[str],
                 imports: list[str]) -> None:  # fmt: skip
        self.path, self.name, self.version = path, name, version
        self.requires, self.imports = requires, imports


def find_file(path: str, data_dir: str) -> str | None:
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(data_dir, path)]
    if os.path.isabs(path) and not os.path.exists(path):
        candidates.append(os.path.join(data_dir, os.path.basename(path)))
    return next((c for c in candidates if os.path.isfile(c)), None)


def wheels_in(folder: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(folder) if n.endswith(".whl"))
    except OSError:
        return []


def read_wheel(path: str, problems: list[str]) -> Wheel | None:
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
            ok = SpecifierSet(python).contains(python_version(), prereleases=True)
        except InvalidSpecifier:
            ok = True
        if not ok:
            problems.append(
                f"{file_name} needs Python {python}; the sandbox runs Python {python_version()}: "
                "use a version of the package that supports it."
            )
            return None
    requires = meta.get_all("Requires-Dist") or []
    return Wheel(
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


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def python_version() -> str:
    return ".".join(str(n) for n in sys.version_info[:3])
