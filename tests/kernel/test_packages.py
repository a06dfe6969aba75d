"""`%pip install` and `pip_install()` on CPython: what is checked before anything is
installed (files, tags, Python, dependencies, names with no network), with a fake
backend standing in for micropip and the served lock (the browser test installs a
real wheel with micropip in the sandbox: tests/browser/test_packages.py)."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from kernel_helpers import Runner

from reckon.kernel import _packages
from support import tiny_wheel


class FakeBackend:
    """Installs a wheel by unpacking it into a folder on sys.path, as micropip does
    into site-packages; records the shipped packages it was asked for."""

    def __init__(self, site: Path, shipped: Mapping[str, str]) -> None:
        self.site, self._shipped = site, dict(shipped)
        self.calls: list[tuple[list[str], list[str]]] = []

    def shipped(self) -> Mapping[str, str]:
        return self._shipped

    async def install(self, wheels: list[str], names: list[str]) -> None:
        self.calls.append((wheels, names))
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as zf:
                zf.extractall(self.site)


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[FakeBackend]:
    site = tmp_path / "site-packages"
    site.mkdir()
    fake = FakeBackend(site, {"lazy-stats": "1.14.1", "pandas": "2.2.3"})
    sys.path.insert(0, str(site))
    _packages.set_backend(fake)
    yield fake
    _packages.set_backend(None)
    sys.path.remove(str(site))
    for name in [m for m in sys.modules if m.split(".")[0] in ("tinypkg", "needy", "dep")]:
        del sys.modules[name]


def drop(a_session: Runner, file_name: str, data: bytes) -> str:
    folder = Path(a_session.session.data_dir)
    (folder / file_name).write_bytes(data)
    return f"{folder}/{file_name}"


def test_pip_magic_installs_a_dropped_in_wheel_and_it_imports(
    a_session: Runner, backend: FakeBackend
) -> None:
    name, data = tiny_wheel()
    path = drop(a_session, name, data)
    result = a_session(f"%pip install {path}\nimport tinypkg\ntinypkg.greet('you')")
    assert result["status"] == "ok", result["error"]
    assert result["result"]["text"] == "'hello you'"
    assert f"Installed tinypkg 0.1 from {path} (`import tinypkg`)" in result["stdout"]
    assert backend.calls == [([path], [])]


@pytest.mark.parametrize(
    "line",
    ["!pip install {path}", "!pip3 install -q {path}", "%pip install --no-deps {path}",
     "!python -m pip install {path} && echo done", "%pip install tinypkg",
     "%pip install {name}"],
)  # fmt: skip
def test_every_spelling_of_pip_installs_the_wheel(
    a_session: Runner, backend: FakeBackend, line: str
) -> None:
    name, data = tiny_wheel()
    path = drop(a_session, name, data)
    result = a_session(line.format(path=path, name=name))
    assert result["status"] == "ok", result["error"]
    assert "Installed tinypkg 0.1" in result["stdout"]
    assert backend.calls == [([path], [])]


def test_pip_install_is_a_python_call_that_returns_data(
    a_session: Runner, backend: FakeBackend
) -> None:
    name, data = tiny_wheel()
    path = drop(a_session, name, data)
    result = a_session(f"await pip_install({path!r})")
    assert result["status"] == "ok"
    assert "'status': 'ok'" in result["result"]["text"]
    assert "'imports': ['tinypkg']" in result["result"]["text"]
    missing = a_session("r = await pip_install('/nowhere/x-1.0-py3-none-any.whl'); r['status']")
    assert missing["status"] == "ok" and missing["result"]["text"] == "'error'"


def test_a_missing_wheel_says_which_wheels_are_there(
    a_session: Runner, backend: FakeBackend
) -> None:
    drop(a_session, *tiny_wheel())
    result = a_session("x = 1\n%pip install /data/other-1.0-py3-none-any.whl\nx = 2")
    assert result["status"] == "error"
    error = result["error"]
    assert error["type"] == "InstallError" and error["line"] == 2
    assert "no such file" in error["message"] and "tinypkg-0.1-py3-none-any.whl" in error["message"]
    assert "%pip install /data/other" in error["traceback"]  # the line as written
    assert a_session("x")["result"]["text"] == "1"  # the cell stopped at the pip line
    assert backend.calls == []


def test_a_compiled_wheel_is_refused_with_what_to_use(
    a_session: Runner, backend: FakeBackend
) -> None:
    name, data = tiny_wheel(tag="cp312-cp312-manylinux_2_17_x86_64")
    path = drop(a_session, name, data)
    error = a_session(f"%pip install {path}")["error"]
    assert "compiled for Linux (manylinux_2_17_x86_64)" in error["message"]
    assert "py3-none-any" in error["message"] and "pyodide_2024_0_wasm32" in error["message"]
    assert backend.calls == []


def test_a_missing_dependency_is_named_and_nothing_is_installed(
    a_session: Runner, backend: FakeBackend
) -> None:
    name, data = tiny_wheel(
        "needy", requires=["dep>=1.0", "lazy_stats", "winonly; sys_platform == 'win32'"]
    )
    path = drop(a_session, name, data)
    error = a_session(f"%pip install {path}")["error"]
    assert "needs dep>=1.0, which is not installed" in error["message"]
    assert "winonly" not in error["message"] and "lazy" not in error["message"]
    assert backend.calls == []
    # Its dependency's wheel in the same command: both are installed, and lazy-stats (shipped,
    # not installed yet here) comes from the site's own packages.
    dep = drop(a_session, *tiny_wheel("dep", "1.2"))
    result = a_session(f"%pip install {path} {dep}\nimport needy, dep")
    assert result["status"] == "ok", result["error"]
    assert backend.calls == [([path, dep], ["lazy-stats"])]


def test_a_wheel_for_another_python_is_refused(a_session: Runner, backend: FakeBackend) -> None:
    name, data = tiny_wheel(python=">=3.99")
    error = a_session(f"%pip install {drop(a_session, name, data)}")["error"]
    assert (
        "needs Python >=3.99" in error["message"]
        and "the sandbox runs Python 3." in error["message"]
    )


def test_pip_install_of_a_name_says_why_it_cannot_and_how_to_add_a_wheel(
    a_session: Runner, backend: FakeBackend
) -> None:
    error = a_session("!pip install pyjanitor")["error"]
    assert error["type"] == "InstallError"
    message = error["message"]
    assert "`pyjanitor` is not one of the packages the sandbox ships" in message
    assert "no network" in message and "%pip install /data/<file>.whl" in message
    assert "py3-none-any.whl" in message
    url = a_session("%pip install https://example.com/x-1.0-py3-none-any.whl")["error"]
    assert "no network" in url["message"]
    sdist = a_session("%pip install /data/x-1.0.tar.gz")["error"]
    assert "only wheel files (.whl)" in sdist["message"]


def test_a_shipped_package_is_satisfied_or_installed_from_the_site(
    a_session: Runner, backend: FakeBackend
) -> None:
    result = a_session("%pip install pandas numpy")
    assert result["status"] == "ok"
    assert "Requirement already satisfied: pandas" in result["stdout"]
    assert backend.calls == []
    result = a_session("%pip install lazy_stats")
    assert result["status"] == "ok" and backend.calls == [([], ["lazy-stats"])]
    assert "Installed lazy-stats 1.14.1 from the sandbox's own packages" in result["stdout"]
    wrong = a_session("%pip install 'pandas==0.1'")["error"]
    assert "is installed, not ==0.1" in wrong["message"]


def test_other_pip_commands_and_magics(a_session: Runner, backend: FakeBackend) -> None:
    listed = a_session("%pip list")
    assert listed["status"] == "ok" and "pandas " in listed["stdout"]
    assert "only `%pip install` does" in a_session("%pip uninstall pandas")["error"]["message"]
    assert "not supported" in a_session("%pip install -r requirements.txt")["error"]["message"]
    # A valid cell is never rewritten: a pip line inside a string stays text.
    text = a_session("s = '''\n%pip install x\n'''\nlen(s.splitlines())")
    assert text["result"]["text"] == "2"


def test_yaml_imports_plainly_through_exec_and_importlib(a_session: Runner) -> None:
    pytest.importorskip("yaml")  # on CPython from the venv; the browser test runs the site's
    result = a_session(
        "exec('import yaml')\nimport importlib\n"
        "y = importlib.import_module('yaml')\n"
        "y.safe_load(y.safe_dump({'a': [1, 2]}))"
    )
    assert result["result"]["text"] == "{'a': [1, 2]}"


def test_inspect_of_an_uploaded_wheel_says_how_to_install_it(tmp_path: Path) -> None:
    from reckon.kernel import inspect

    name, data = tiny_wheel("needy", requires=["dep>=1"])
    (tmp_path / name).write_bytes(data)
    info = inspect(str(tmp_path / name))
    assert info["status"] == "ok" and info["kind"] == "wheel"
    assert (info["name"], info["version"], info["imports"]) == ("needy", "0.1", ["needy"])
    assert info["install_with"] == f"%pip install {tmp_path / name}"
    assert "it requires: dep>=1" in info["notes"]
    native, compiled = tiny_wheel(tag="cp312-cp312-win_amd64")
    (tmp_path / native).write_bytes(compiled)
    refused = inspect(str(tmp_path / native))
    assert refused["status"] == "error" and "compiled for Windows" in refused["message"]
