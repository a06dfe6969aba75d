"""The wheels the build makes from a pinned sdist (PyYAML): pure Python only, the same
bytes every time, a valid RECORD, the licence and a note of how it was made inside,
registered in the served lock with its imports; and the fetch stage asks pip for the
sdist (never a compiled wheel) and refuses one whose hash is not the pin."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import sitebuild
from sitebuild import ChecksumError, Context, Paths
from sitebuild._source_wheel import build_source_wheel, source_wheel_bytes

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RECKON_SITE", ROOT / "dist" / "site"))
PKG_INFO = """\
Metadata-Version: 2.4
Name: Toy.YAML
Version: 1.2
License: MIT
License-File: LICENSE
Dynamic: license-file
Requires-Python: >=3.8

The long description.
"""


def a_sdist(folder: Path) -> Path:
    """A small sdist shaped like PyYAML's: lib/toy (Python, C and Cython), tests, setup."""
    files = {
        "PKG-INFO": PKG_INFO,
        "LICENSE": "MIT licence text",
        "setup.py": "raise SystemExit('never run')",
        "lib/toy/__init__.py": "try:\n    from ._ext import *\nexcept ImportError:\n    X = 1\n",
        "lib/toy/sub/__init__.py": "",
        "lib/toy/_ext.pyx": "cdef int x",
        "lib/toy/_ext.c": "int x;",
        "lib/_toy/__init__.py": "import toy",
        "tests/test_toy.py": "",
    }
    path = folder / "toy_yaml-1.2.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"toy_yaml-1.2/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_the_wheel_holds_only_the_pure_package_with_its_metadata(tmp_path: Path) -> None:
    sdist = a_sdist(tmp_path)
    name, data = source_wheel_bytes(sdist, ("lib/toy",), sha256="ab" * 32)
    assert name == "toy_yaml-1.2-py3-none-any.whl"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        assert [n for n in names if not n.startswith("toy_yaml-1.2.dist-info/")] == [
            "toy/__init__.py",
            "toy/sub/__init__.py",
        ]
        info = "toy_yaml-1.2.dist-info/"
        meta = zf.read(info + "METADATA").decode()
        assert "Name: Toy.YAML" in meta and "Dynamic" not in meta
        assert meta.endswith("\n\nThe long description.\n")
        assert "Tag: py3-none-any" in zf.read(info + "WHEEL").decode()
        assert zf.read(info + "top_level.txt") == b"toy\n"
        assert zf.read(info + "licenses/LICENSE") == b"MIT licence text"
        how = zf.read(info + "RECKON-BUILD.txt").decode()
        assert "toy_yaml-1.2.tar.gz (sha256 " + "ab" * 32 in how and "lib/toy" in how
        rows = list(csv.reader(io.StringIO(zf.read(info + "RECORD").decode())))
        assert {row[0] for row in rows} == set(names)
        for path, digest, size in rows:
            if digest:
                body = zf.read(path)
                want = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=")
                assert digest == "sha256=" + want.decode() and int(size) == len(body)
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_the_same_sdist_gives_the_same_bytes_and_no_rewrite(tmp_path: Path) -> None:
    sdist = a_sdist(tmp_path)
    dest = tmp_path / "pure"
    first, made = build_source_wheel(sdist, ("lib/toy",), dest, sha256="0" * 64)
    assert made
    mtime = first.stat().st_mtime_ns
    again, made_again = build_source_wheel(sdist, ("lib/toy",), dest, sha256="0" * 64)
    assert again == first and not made_again and first.stat().st_mtime_ns == mtime


def test_the_lock_registers_it_with_its_imports(tmp_path: Path) -> None:
    from pyodide_lock.spec import InfoSpec
    from pyodide_lock.utils import package_spec_from_wheel

    wheel, _ = build_source_wheel(a_sdist(tmp_path), ("lib/toy",), tmp_path, sha256="0" * 64)
    info = InfoSpec(arch="wasm32", platform="emscripten_3_1_58", version="0.27.7", python="3.12.7")
    spec = package_spec_from_wheel(wheel, info)
    assert (spec.name, spec.version, spec.imports) == ("toy-yaml", "1.2", ["toy"])


def test_fetch_asks_pip_for_the_sdist_and_checks_its_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = Context(paths=Paths(cache=tmp_path / "cache"), log=lambda _: None)
    sdist = a_sdist(tmp_path)
    pin = hashlib.sha256(sdist.read_bytes()).hexdigest()
    monkeypatch.setattr(sitebuild._pins, "PURE_PACKAGES", {"toy-yaml==1.2": pin})
    monkeypatch.setattr(sitebuild._pins, "FROM_SOURCE", {"toy-yaml": ("lib/toy",)})
    commands: list[list[str]] = []
    downloads = ctx.paths.cache / "pure-downloads"

    def download(cmd: list[str], **_: object) -> None:
        commands.append(cmd)
        (downloads / sdist.name).write_bytes(sdist.read_bytes())

    monkeypatch.setattr(sitebuild._fetch, "run", download)
    downloads.mkdir(parents=True)
    # A compiled wheel of the same version in the cache is not what was pinned.
    (downloads / "toy_yaml-1.2-cp312-cp312-manylinux_2_17_x86_64.whl").write_bytes(b"compiled")
    found = sitebuild.fetch_pure(ctx)
    assert found["toy-yaml"].name == "toy_yaml-1.2-py3-none-any.whl"
    (command,) = commands
    assert {"--no-binary", ":all:", "--no-build-isolation", "--no-deps"} <= set(command)
    assert ctx.made == ["toy-yaml download", "toy-yaml wheel"]
    ctx.made.clear()
    sitebuild.fetch_pure(ctx)  # cached: nothing made, nothing downloaded
    assert ctx.made == [] and len(commands) == 1
    sitebuild.verify_pure(ctx)
    (downloads / sdist.name).write_bytes(b"tampered")
    with pytest.raises(ChecksumError, match=r"toy_yaml-1\.2\.tar\.gz"):
        sitebuild.verify_pure(ctx)


def test_the_shipped_pyyaml_is_pure_and_works_without_libyaml(tmp_path: Path) -> None:
    info_path = SITE / "build-info.json"
    if not info_path.exists():
        pytest.fail("run `python build.py` first (scripts/test does)")
    info = json.loads(info_path.read_text())
    (wheel_name,) = info["from_source"]
    assert wheel_name == "pyyaml-6.0.4-py3-none-any.whl"
    assert "pyyaml" in info["sandbox"]["packages"] and "micropip" in info["sandbox"]["packages"]
    lock = json.loads((SITE / "pyodide" / "pyodide-lock.json").read_text())["packages"]
    assert lock["pyyaml"]["imports"] == ["yaml"] and lock["pyyaml"]["file_name"] == wheel_name
    with zipfile.ZipFile(SITE / "pyodide" / wheel_name) as zf:
        names = zf.namelist()
        assert not any(n.endswith((".so", ".c", ".pyx")) or n.startswith("_yaml") for n in names)
        assert "MIT" in zf.read("pyyaml-6.0.4.dist-info/licenses/LICENSE").decode()
        target = tmp_path / "site-packages"
        zf.extractall(target)
    code = (
        "import yaml; assert not yaml.__with_libyaml__, 'pure'; "
        f"assert yaml.__file__.startswith({str(target)!r}); "
        "print(yaml.safe_load(yaml.safe_dump({'a': [1, 2.5, None]})))"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "{'a': [1, 2.5, None]}"
