"""Packages in the real sandbox (no network): PyYAML, the pure-Python wheel the build
makes from its sdist, imports plainly, through `exec` and through importlib as soon
as the sandbox is ready (DS-1000-style code imports inside `exec`); a person's own
pure-Python wheel, uploaded like any file, installs offline with micropip through
`%pip install`, `!pip install`, `pip_install()` and micropip itself; and what cannot
be installed says why and what to do.

Uploads under /data persist for the whole session, so each test uses its own names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from support import tiny_wheel

from .helpers import call, ok, page_call, run, upload_file_object, write_file

pytestmark = pytest.mark.browser


def test_yaml_imports_through_exec_importlib_and_import_and_round_trips(reckon: Any) -> None:
    # exec first: the cell's text has no `import yaml` for the worker to install
    # beforehand, so this finds only what was installed before "ready".
    first = ok(run(reckon, (
        "import sys, time\n"
        "before = 'yaml' in sys.modules\n"
        "t = time.perf_counter()\n"
        "exec('import yaml')\n"
        "(before, round((time.perf_counter() - t) * 1000, 1))"
    )))  # fmt: skip
    before, import_ms = eval(first["result"]["text"])
    print(f"import yaml (first, through exec): {import_ms} ms; imported before: {before}")
    second = ok(run(reckon, (
        "import importlib\n"
        "y = importlib.import_module('yaml')\n"
        "(y.__version__, y.__with_libyaml__, y.__file__)"
    )))  # fmt: skip
    version, libyaml, path = eval(second["result"]["text"])
    assert version == "6.0.4" and libyaml is False  # the pure-Python build
    assert path.endswith("site-packages/yaml/__init__.py")
    doc = {"name": "Reckon", "sizes": [1, 2.5, None], "nested": {"ok": True, "é": "ü"}}
    third = ok(run(reckon, (
        "import json, yaml\n"
        f"doc = json.loads({json.dumps(json.dumps(doc))})\n"
        "text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)\n"
        "back = yaml.safe_load(text)\n"
        "print(text)\n"
        "json.dumps(back) == json.dumps(doc), yaml.safe_load('a: [1, {b: c}]')"
    )))  # fmt: skip
    assert third["result"]["text"] == "(True, {'a': [1, {'b': 'c'}]})"
    assert "nested:" in third["stdout"] and "é: ü" in third["stdout"]


def test_a_dropped_in_wheel_installs_with_pip_magic_and_imports(reckon: Any) -> None:
    name, data = tiny_wheel("reckon_tiny", "0.1", code="def greet(who):\n    return 'hi ' + who\n")
    # As the file picker hands it over (mounted); the upload's summary says what to do.
    summary = upload_file_object(reckon, name, data)
    assert summary["kind"] == "wheel" and summary["install_with"] == f"%pip install /data/{name}"
    result = ok(
        run(reckon, f"%pip install /data/{name}\nimport reckon_tiny\nreckon_tiny.greet('you')")
    )
    assert result["result"]["text"] == "'hi you'"
    assert f"Installed reckon_tiny 0.1 from /data/{name} (`import reckon_tiny`)" in result["stdout"]
    # micropip recorded it as its own install, from the file, not from an index.
    source = ok(run(reckon, (
        "import importlib.metadata as md\n"
        "d = md.distribution('reckon_tiny')\n"
        "(d.read_text('INSTALLER').strip(), d.read_text('PYODIDE_URL'))"
    )))  # fmt: skip
    assert source["result"]["text"] == f"('micropip', 'emfs:/data/{name}')"


def test_every_way_to_install_a_wheel_works_offline(reckon: Any) -> None:
    shell_name, shell_data = tiny_wheel("reckon_shell", "0.2")
    write_file(reckon, f"/data/{shell_name}", shell_data)
    shell = ok(run(reckon, f"!pip install -q {shell_name}\nimport reckon_shell"))  # relative: /data
    assert "Installed reckon_shell 0.2" in shell["stdout"]
    call_name, call_data = tiny_wheel("reckon_call", "0.3")
    write_file(reckon, f"/data/{call_name}", call_data)
    called = ok(
        run(
            reckon,
            f"r = await pip_install('/data/{call_name}')\n"
            "r['status'], r['installed'][0]['imports']",
        )
    )
    assert called["result"]["text"] == "('ok', ['reckon_call'])"
    raw_name, raw_data = tiny_wheel("reckon_raw", "0.4")
    write_file(reckon, f"/data/{raw_name}", raw_data)
    raw = ok(run(reckon, (
        "import micropip\n"
        f"await micropip.install('emfs:/data/{raw_name}', deps=False)\n"
        "import reckon_raw\nreckon_raw.greet('x')"
    )))  # fmt: skip
    assert raw["result"]["text"] == "'hello x'"


def test_what_cannot_be_installed_says_why_and_what_to_do(reckon: Any) -> None:
    requests = run(reckon, "!pip install requests")
    assert requests["status"] == "error"
    message = requests["error"]["message"]
    assert requests["error"]["type"] == "InstallError"
    assert "`requests` is not one of the packages the sandbox ships" in message
    assert "no network" in message and "%pip install /data/<file>.whl" in message
    compiled_name, compiled = tiny_wheel("reckon_native", tag="cp312-cp312-manylinux_2_17_x86_64")
    write_file(reckon, f"/data/{compiled_name}", compiled)
    native = run(reckon, f"%pip install /data/{compiled_name}")["error"]["message"]
    assert "compiled for Linux" in native and "py3-none-any" in native
    needy_name, needy = tiny_wheel("reckon_needy", requires=["reckon-missing-dep>=1"])
    write_file(reckon, f"/data/{needy_name}", needy)
    missing = run(reckon, f"%pip install /data/{needy_name}")["error"]["message"]
    assert "needs reckon-missing-dep>=1, which is not installed" in missing
    gone = run(reckon, "%pip install /data/nothing-1.0-py3-none-any.whl")["error"]["message"]
    assert "no such file" in gone
    # Nothing of those was installed.
    left = ok(
        run(
            reckon,
            "import importlib.util as u\n"
            "[u.find_spec(n) is None for n in ('reckon_native', 'reckon_needy')]",
        )
    )
    assert left["result"]["text"] == "[True, True]"


def test_a_shipped_package_named_to_pip_is_there_after_the_line(reckon: Any) -> None:
    result = ok(
        run(reckon, "%pip install scikit-learn pyyaml\nimport sklearn, yaml\nsklearn.__version__")
    )
    assert result["result"]["text"] == "'1.6.1'"
    assert "pyyaml 6.0.4" in result["stdout"].lower()


def test_the_chat_page_says_how_to_install_an_uploaded_wheel(a_chat: Any, tmp_path: Any) -> None:
    name, data = tiny_wheel("reckon_shown", "0.2")
    path = tmp_path / name
    path.write_bytes(data)
    a_chat.locator("#upload").set_input_files(str(path))
    row = a_chat.locator("#file-list li.file").filter(has_text=name)
    line = f"%pip install /data/{name} in a cell installs it"
    row.locator(".file-shape").filter(has_text=line).wait_for()
    a_chat.get_by_role("status").filter(has_text=line).wait_for()


def test_after_ready_nothing_waits_in_the_background_and_imports_still_work(
    a_browser: Any, a_static_server: str
) -> None:
    """README "Fast starts": once ready, the chat page neither fetches nor installs the
    rest of the stack nor boots the agent's interpreter; a first cell importing sklearn
    installs it then, and someone starting to type starts the agent."""
    context = a_browser.new_context()
    try:
        page = context.new_page()
        fetched: list[str] = []
        context.on("request", lambda request: fetched.append(request.url))
        page.goto(f"{a_static_server}/index.html")
        call(page, "ready", deadline_s=120)
        at_ready = len(fetched)
        page.wait_for_timeout(6000)  # longer than the old 1.5 s + 3 s wait before installing
        later = [url.rsplit("/", 1)[-1] for url in fetched[at_ready:]]
        assert not [name for name in later if name.endswith((".whl", ".zip", ".tar"))], later
        assert page.evaluate("() => window.reckon.agent.readyPromise === null")
        code = (
            "from sklearn.linear_model import LinearRegression\n"
            "fit = LinearRegression().fit([[0], [1], [2]], [1, 3, 5])\n"
            "print(round(float(fit.coef_[0]), 3))"
        )
        first = ok(run(page, code, deadline_s=180))
        assert first["stdout"] == "2.0\n", first
        # What it installed came with its bytecode, and only what it needed.
        check = ok(run(page, (
            "import importlib.util, os, sklearn\n"
            "cached = os.path.join(os.path.dirname(sklearn.__file__), '__pycache__')\n"
            "print(len(os.listdir(cached)) > 0, importlib.util.find_spec('sym' + 'py') is None)"
        )))  # fmt: skip
        assert check["stdout"] == "True True\n", check
        page.focus("#question")
        assert page.evaluate("() => window.reckon.agent.readyPromise !== null")
        page_call(page, "await withDeadline(window.reckon.agent.ready(), deadlineMs, 'agent');",
                  deadline_s=120)  # fmt: skip
    finally:
        context.close()
