"""Compiling a cell the way a notebook does: trailing expression, top-level await."""

from __future__ import annotations

import ast
import inspect
import linecache
from dataclasses import dataclass
from types import CodeType
from typing import Any

__all__ = ["CompiledCell", "compile_cell", "execute"]

_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


@dataclass(frozen=True)
class CompiledCell:
    """A cell split into statements and, when it ends with one, a trailing expression;
    ``assigned``: the plain names its last statement assigns (``x = …``, ``a, b = …``)."""

    body: CodeType | None
    expression: CodeType | None
    assigned: tuple[str, ...] = ()


def compile_cell(source: str, *, filename: str, shown: str | None = None) -> CompiledCell:
    """Compile ``source``; raises ``SyntaxError`` for code that does not parse.
    ``shown``: the text tracebacks quote, when ``source`` is a rewrite of it (same lines)."""
    # Registered before compiling so that tracebacks, even of functions defined
    # here and called from later cells, can show the source lines.
    text = source if shown is None else shown
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    tree = ast.parse(source, filename=filename, mode="exec")
    expression: ast.Expression | None = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not _suppressed(source, tree.body[-1]):
        last = tree.body.pop()
        assert isinstance(last, ast.Expr)
        expression = ast.Expression(body=last.value)
        ast.copy_location(expression, last)
    assigned = _assigned(tree.body[-1]) if tree.body and expression is None else ()
    body = compile(tree, filename, "exec", flags=_FLAGS) if tree.body else None
    value = compile(expression, filename, "eval", flags=_FLAGS) if expression else None
    return CompiledCell(body=body, expression=value, assigned=assigned)


def _assigned(node: ast.stmt) -> tuple[str, ...]:
    """The plain names ``node`` assigns, in order; () for anything else."""
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign) and (
        not isinstance(node, ast.AnnAssign) or node.value is not None
    ):
        targets = [node.target]
    else:
        return ()
    names: list[str] = []
    for target in targets:
        parts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        if not all(isinstance(p, ast.Name) for p in parts):
            return ()
        names += [p.id for p in parts if isinstance(p, ast.Name) and p.id not in names]
    return tuple(names)


def _suppressed(source: str, node: ast.stmt) -> bool:
    """True when a ``;`` follows the last expression, as in ``df.plot();``."""
    lines = source.splitlines()
    if node.end_lineno is None or node.end_col_offset is None:
        return False
    # end_col_offset counts UTF-8 bytes, not characters.
    tail = lines[node.end_lineno - 1].encode()[node.end_col_offset :].decode(errors="ignore")
    rest = "\n".join([tail, *lines[node.end_lineno :]])
    for raw in rest.splitlines():
        text = raw.split("#", 1)[0].strip()
        if text:
            return text.startswith(";")
    return False


async def execute(cell: CompiledCell, namespace: dict[str, Any]) -> Any:
    """Run the statements, then evaluate and return the trailing expression."""
    if cell.body is not None:
        outcome = eval(cell.body, namespace)
        if cell.body.co_flags & inspect.CO_COROUTINE:
            await outcome
    if cell.expression is None:
        return None
    value = eval(cell.expression, namespace)
    if cell.expression.co_flags & inspect.CO_COROUTINE:
        value = await value
    return value
