"""What `scripts/run` installs (requirements-eval.txt) is in the venv, so `reckon eval`
and the Python API run from it; and the relay process imports none of those extras."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from packaging.markers import Marker

ROOT = Path(__file__).resolve().parents[2]
# What requirements-eval.txt adds for CPython use; `reckon serve` needs none of them.
EXTRAS = ("playwright", "numpy", "pandas", "matplotlib", "scipy", "sklearn", "pyarrow", "sympy")


def pins(path: Path) -> dict[str, str]:
    """name -> version of every `name==version` in ``path`` and the files it includes."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found |= pins(path.parent / line.removeprefix("-r ").strip())
        elif "==" in line:
            requirement, _, marker = line.partition(";")
            if marker.strip() and not Marker(marker.strip()).evaluate():
                continue  # a pin for another Python than this one
            name, version = requirement.split("==")
            found[name.strip()] = version.strip()
    return found


def test_the_venv_holds_every_pin_of_requirements_eval() -> None:
    wanted = pins(ROOT / "requirements-eval.txt")
    assert {"playwright", "pandas", "sympy", "starlette"} <= wanted.keys()
    wrong = {}
    for name, version in wanted.items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            installed = "missing"
        if installed != version:
            wrong[name] = f"{installed}, pinned {version}"
    assert not wrong, f"run scripts/run (or scripts/test) to update .venv: {wrong}"


def test_the_dev_requirements_include_the_eval_ones() -> None:
    assert (
        pins(ROOT / "requirements-eval.txt").items() <= pins(ROOT / "requirements-dev.txt").items()
    )


def _get(url: str) -> bytes:
    """The page, once the relay listens (it says its address just before)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                return bytes(resp.read())
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_the_relay_imports_none_of_the_eval_extras(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>site</title>")
    code = "import sys; from reckon._cli import main; sys.exit(main())"
    serve = ["serve", "--port=0", f"--site={tmp_path}"]
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-c", code, *serve],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        address = re.search(r"http://[\d.]+:\d+/", line)
        assert address, line
        assert b"<title>site</title>" in _get(address[0] + "index.html")
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    # `-X importtime` lists every module imported: "import time: self | cumulative | name".
    imported = {row.rsplit("|", 1)[-1].strip().split(".")[0] for row in stderr.splitlines()}
    assert "uvicorn" in imported and "starlette" in imported  # the listing is there
    assert not imported & set(EXTRAS), sorted(imported & set(EXTRAS))


def test_the_build_imports_only_what_requirements_txt_pins() -> None:
    # build.py runs from the venv `scripts/run` makes; what it imports is pinned in
    # requirements.txt (jinja2 renders the pages), none of the eval extras.
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "build.py"), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    imported = {row.rsplit("|", 1)[-1].strip().split(".")[0] for row in proc.stderr.splitlines()}
    assert {"jinja2", "markupsafe", "sitebuild"} <= imported
    assert not imported & set(EXTRAS), sorted(imported & set(EXTRAS))
    assert {"jinja2", "markupsafe", "pyodide-lock"} <= pins(ROOT / "requirements.txt").keys()
