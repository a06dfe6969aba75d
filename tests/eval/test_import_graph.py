"""No circle between reckon's parts, not even one hidden by an import inside a function
or under TYPE_CHECKING, and each public module imports alone in a fresh interpreter.

`reckon.client` once re-exported `reproduce_notebook` from `reckon.eval` through a lazy
`__getattr__`, because `reckon.eval` imports `reckon.client`: importing it eagerly made
`import reckon.eval` fail on a partially initialised module. Both now take it from
`reckon.reproduce`, which imports neither."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from support import PY

PACKAGE = PY / "reckon"
PUBLIC = [
    "reckon",
    "reckon.kernel",
    "reckon.agent",
    "reckon.server",
    "reckon.client",
    "reckon.eval",
    "reckon.reproduce",
    "reckon._cli",
]


def part(module: str) -> str:
    """`reckon.eval._eval` -> `eval`; `reckon._cli` -> `_cli`."""
    return module.split(".")[1]


def imports_between_parts() -> dict[str, set[str]]:
    """Each part of reckon -> the other parts its modules import, wherever the import
    statement is. Left out: the root package (every module's parent, imported before
    it anyway; it only re-exports) and `__main__` launchers, which nothing imports."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PY).with_suffix("").parts
        if relative[-1] == "__main__" or len(relative) < 2 or relative == ("reckon", "__init__"):
            continue
        source = part(".".join(relative))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module]
            else:
                continue
            for target in targets:
                if target.startswith("reckon.") and part(target) != source:
                    graph.setdefault(source, set()).add(part(target))
    return graph


def test_the_parts_of_reckon_import_each_other_without_a_circle() -> None:
    graph = imports_between_parts()
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"an import circle between reckon's parts: {' -> '.join(error.args[1])}")
    assert graph["eval"] >= {"client", "reproduce"} and "reproduce" in graph["client"]
    assert order.index("reproduce") < order.index("client") < order.index("eval")


@pytest.mark.parametrize("module", PUBLIC)
def test_each_public_module_imports_alone(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        env={**os.environ, "PYTHONPATH": str(PY)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_reproduce_notebook_is_the_same_function_from_each_place() -> None:
    import reckon.client
    import reckon.eval
    import reckon.reproduce

    assert reckon.client.reproduce_notebook is reckon.reproduce.reproduce_notebook
    assert reckon.eval.reproduce_notebook is reckon.reproduce.reproduce_notebook


def test_the_reproduce_child_is_a_module_that_runs(tmp_path: Path) -> None:
    """`execute_cells` starts `python -m reckon.reproduce`: it still finds it."""
    from reckon.reproduce import execute_cells

    (run,) = execute_cells(["print(6 * 7)"], tmp_path, timeout_s=120)
    assert run["status"] == "ok" and run["stdout"] == "42\n"
