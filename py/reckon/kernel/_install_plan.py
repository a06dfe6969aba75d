"""What a `%pip install` asks for, worked out before anything is installed: each
target a dropped-in wheel, a package already there, or one the site ships; each
wheel's requirements met, or a problem that says what to do. Offline by design."""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import dataclass, field

from reckon.kernel._wheelfile import Wheel, canon, find_file, read_wheel, wheels_in

__all__ = ["HOW_TO_ADD", "NO_NETWORK", "InstallPlan", "installed_version"]

NO_NETWORK = "the sandbox has no network, so pip cannot download it"
# Import names people `pip install` by mistake -> the distribution the sandbox knows.
_ALIASES = {"sklearn": "scikit-learn", "yaml": "pyyaml", "pil": "pillow",
            "bs4": "beautifulsoup4", "cv2": "opencv-python", "skimage": "scikit-image"}  # fmt: skip

HOW_TO_ADD = (
    "To use a pure-Python package the sandbox does not ship: download its wheel (a file "
    "named like name-1.0-py3-none-any.whl) on your computer, add it like any file (it "
    "appears under /data/), then run `%pip install /data/<file>.whl` (or `await "
    "pip_install('/data/<file>.whl')`); add the wheels of its dependencies too and name "
    "them in the same command. A compiled package needs a wheel built for Pyodide 0.27 "
    "(…-cp312-cp312-pyodide_2024_0_wasm32.whl)."
)


@dataclass
class InstallPlan:
    """The wheels and shipped packages to install, what is there already, and the
    problems that stop the install (said to the person, never raised)."""

    data_dir: str
    shipped: dict[str, str]
    wheels: dict[str, Wheel] = field(default_factory=dict)  # canonical name -> wheel
    names: dict[str, str] = field(default_factory=dict)  # shipped packages -> version
    already: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def check_requirements(self) -> None:
        """Every wheel's requirements: met by another wheel, by what is installed, or by
        a shipped package (then added); else a problem."""
        for wheel in list(self.wheels.values()):
            for requirement in wheel.requires:
                self._check(wheel, requirement)

    def add(self, target: str) -> None:
        """A wheel path (``/data/x.whl``, ``emfs:…``, or a name under /data) or a package
        name (``name``, ``name==1.0``), with what stops it said in ``problems``."""
        lowered = target.lower()
        if lowered.startswith(("http://", "https://", "git+", "ftp://")):
            self.problems.append(f"{target}: {NO_NETWORK}. {HOW_TO_ADD}")
            return
        path = target.removeprefix("emfs:").removeprefix("file://").removeprefix("file:")
        if path.endswith(".whl"):
            found = find_file(path, self.data_dir)
            if found is None:
                present = wheels_in(self.data_dir)
                listed = ", ".join(present) if present else "none"
                self.problems.append(
                    f"{target}: no such file (wheels under {self.data_dir}: {listed}). Add the "
                    f"wheel like any file; it appears as {self.data_dir}/<its name>."
                )
                return
            wheel = read_wheel(found, self.problems)
            if wheel is not None:
                self.wheels[canon(wheel.name)] = wheel
            return
        if (
            lowered.endswith((".tar.gz", ".tgz", ".zip", ".tar.bz2", ".egg"))
            or "/" in path
            or path in (".", "..")
        ):
            self.problems.append(
                f"{target}: only wheel files (.whl) install here: a source archive or folder "
                "would need a build, and the sandbox has no compiler or network. " + HOW_TO_ADD
            )
            return
        self._add_name(target)

    def _add_name(self, target: str) -> None:
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            requirement = Requirement(target)
        except InvalidRequirement:
            self.problems.append(
                f"{target!r} is neither a wheel file nor a package name. {HOW_TO_ADD}"
            )
            return
        name = canon(requirement.name)
        name = _ALIASES.get(name, name)
        spec = requirement.specifier
        have = installed_version(name)
        if have is not None:
            if spec.contains(have, prereleases=True):
                self.already.append({"name": name, "version": have})
            else:
                self.problems.append(
                    f"{name} {have} is installed, not {requirement.specifier}, and {NO_NETWORK}: "
                    f"use {have}, or add a wheel of the version you need and install that file."
                )
            return
        dropped = [w for w in wheels_in(self.data_dir) if canon(w.split("-")[0]) == name]
        for file_name in dropped:
            version = file_name.split("-")[1]
            if spec.contains(version, prereleases=True):
                wheel = read_wheel(os.path.join(self.data_dir, file_name), self.problems)
                if wheel is not None:
                    self.wheels[canon(wheel.name)] = wheel
                return
        if name in self.shipped:
            if spec.contains(self.shipped[name], prereleases=True):
                self.names[name] = self.shipped[name]
            else:
                self.problems.append(
                    f"the sandbox ships {name} {self.shipped[name]}, not {spec}, and {NO_NETWORK}."
                )
            return
        self.problems.append(
            f"`{target}` is not one of the packages the sandbox ships, and {NO_NETWORK}. "
            + HOW_TO_ADD
        )

    def _check(self, wheel: Wheel, text: str) -> None:
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            return  # micropip would not read it either; not ours to refuse
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            return
        name, spec = canon(requirement.name), requirement.specifier
        version: str | None
        if name in self.wheels:
            version = self.wheels[name].version
        else:
            have = installed_version(name)
            version = have if have is not None else self.shipped.get(name)
            if have is None and version is not None and spec.contains(version, prereleases=True):
                self.names[name] = version
        if version is None:
            self.problems.append(
                f"{wheel.name} {wheel.version} needs {text}, which is not installed and not "
                f"among the packages the sandbox ships ({NO_NETWORK}): add its wheel "
                f"({name}-…-py3-none-any.whl) too and install both in one command, e.g. "
                f"`%pip install /data/<{name} wheel> {wheel.path}`."
            )
        elif not spec.contains(version, prereleases=True):
            self.problems.append(
                f"{wheel.name} {wheel.version} needs {text}, but the sandbox has {name} {version} "
                f"({NO_NETWORK}): add a wheel of {wheel.name} that works with {name} {version}, "
                f"or a wheel of {name} that matches and install both in one command."
            )


def installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
