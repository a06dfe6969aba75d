"""A tiny wheel made in the test itself: the kernel tests install it on CPython, the
browser tests upload it into the sandbox and install it there with `%pip`."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from collections.abc import Iterable

__all__ = ["tiny_wheel"]


def tiny_wheel(
    name: str = "tinypkg",
    version: str = "0.1",
    *,
    tag: str = "py3-none-any",
    requires: Iterable[str] = (),
    code: str = "def greet(who):\n    return f'hello {who}'\n",
    python: str | None = None,
) -> tuple[str, bytes]:
    """``(file name, bytes)`` of a wheel holding the package ``name`` (its
    ``__init__.py`` is ``code``), requiring ``requires``."""
    info = f"{name}-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    if python:
        meta.append(f"Requires-Python: {python}")
    files = {
        f"{name}/__init__.py": code.encode(),
        f"{info}/METADATA": ("\n".join(meta) + "\n").encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
        ).encode(),
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in files.items()
    ]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return f"{name}-{version}-{tag}.whl", out.getvalue()
