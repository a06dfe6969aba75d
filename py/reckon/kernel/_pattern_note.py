"""A note for a cell whose text pattern matches none of a column's values.

Seen on a question not written for the agent: asked which district (the part of an
address ending in 區) has the most attractions, the 1.5B model wrote
``df['地址'].str.extract(r'(\\d+區)')`` over addresses such as '臺南市北門區北門里舊埕119號'.
Nothing matched, ``idxmax`` of the empty result failed, and each of four fixes changed
the code around the pattern, never the pattern: the model never saw a value. So when
a cell's ``.str`` method with a pattern written in it runs over a column of the
namespace and the pattern matches none of its values, Reckon says so and shows a few
of them: as a note after a cell that ran and pulled parts out (``extract``,
``extractall``, ``findall``: matching nothing is then the pattern's fault; a count of
``contains`` may rightly be 0), and in the hint of a cell that failed on the empty
result, for any of them. It tries the pattern on the column itself; it never runs the
cell's code.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reckon.kernel._cell_source import named_series, parsed, spelled

__all__ = ["pattern_note", "unmatched_pattern"]

_PULLING = frozenset({"extract", "extractall", "findall"})
_TESTING = frozenset({"contains", "match", "fullmatch", "count"})
_CHECKED = 100_000  # values the pattern is tried on: a courtesy stays quick
_SHOWN = 3
_FEW_OF = 20  # values before a pattern that matches under 5% of them is noted
_WIDE = 40


def pattern_note(code: str, stdout: str, namespace: dict[str, Any]) -> str:
    """The note for ``code`` (a cell that ran) when a pattern it pulls parts out with
    matches none, or hardly any, of its column's values, else ``""``."""
    return unmatched_pattern(code, namespace, methods=_PULLING, few=True)


def unmatched_pattern(
    code: str,
    namespace: dict[str, Any],
    *,
    methods: frozenset[str] = _PULLING | _TESTING,
    few: bool = False,
) -> str:
    """What a ``.str`` call of ``code`` with a pattern that matches none of its column's
    values (``few``: or under 5% of 20 or more) did, and what the values it missed look
    like; ``""`` when there is none."""
    if ".str." not in code:  # every cell that ran comes here
        return ""
    if (tree := parsed(code)) is None:
        return ""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        accessor = node.func.value
        stringy = isinstance(accessor, ast.Attribute) and accessor.attr == "str"
        if not stringy or node.func.attr not in methods:
            continue
        if said := _unmatched(code, node, namespace, few=few):
            return said
    return ""


def _unmatched(code: str, call: ast.Call, namespace: dict[str, Any], *, few: bool) -> str:
    assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Attribute)
    series = named_series(call.func.value.value, namespace)
    compiled = _compiled(call, plain=call.func.attr == "contains")
    if series is None or compiled is None:
        return ""
    texts = [v for v in series.dropna().head(_CHECKED) if isinstance(v, str)]
    missed = [text for text in texts if not compiled.search(text)]
    hits = len(texts) - len(missed)
    if not texts or (hits and not (few and len(texts) >= _FEW_OF and hits < 0.05 * len(texts))):
        return ""
    column = spelled(code, call.func.value.value)
    shown = ", ".join(repr(t if len(t) <= _WIDE else t[: _WIDE - 1] + "…") for t in
                      list(dict.fromkeys(missed))[:_SHOWN])  # fmt: skip
    first = f"the first {len(texts):,} " if len(series) > _CHECKED else f"the {len(texts):,} "
    if hits:
        return (
            f"{spelled(code, call)} matched only {hits} of {first}text values of {column}; "
            f"the others, such as {shown}, give nothing. If they should count, write the "
            "pattern for what they hold."
        )
    return (
        f"{spelled(code, call)} matched none of {first}text values of {column}, which "
        f"look like {shown}. Write the pattern for what they hold."
    )


def _compiled(call: ast.Call, *, plain: bool) -> re.Pattern[str] | None:
    """The call's pattern as the method reads it (``case``, ``flags``, and ``regex``
    where the method takes text as ``plain`` with it), or ``None`` when any option is
    not written as a constant."""
    options = {k.arg: k.value for k in call.keywords if k.arg}
    node = call.args[0] if call.args else options.get("pat")
    written = {k: v.value for k, v in options.items() if isinstance(v, ast.Constant)}
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return None
    flags = written.get("flags", 0)
    if len(written) != len(options) or not isinstance(flags, int):
        return None
    flags |= 0 if written.get("case", True) else re.IGNORECASE
    regex = not plain or written.get("regex", True)
    try:
        return re.compile(node.value if regex else re.escape(node.value), flags)
    except re.error:
        return None
