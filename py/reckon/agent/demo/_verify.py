"""The demo model's side of "verify": the key number again, by a different route.

Table questions are re-asked as one independent SQL query (``run_sql``) when the
demo has one for them; otherwise a plain-Python route that does not use the
pandas call of the answer: ``statistics`` for medians and correlations, the
``csv`` module to count rows, ``math``/``mpmath`` numerics for exact sympy
results. The reply is only ``@name[value]`` pairs; ``@none[]`` when the demo
has no second route (the verdict is then "unavailable").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from reckon.agent._observe import OBSERVATION_HEADER, parse_observation
from reckon.agent._types import ChatReply, ChatRequest, JSONDict
from reckon.agent.checks._recheck import is_question
from reckon.agent.checks._verify import VERIFY_HEADER
from reckon.agent.demo._intent import Intent
from reckon.agent.demo._intents import parse_intent
from reckon.agent.demo._sql import plan_sql, sql_stdout

__all__ = ["verify_turn"]

_PAIR_LINE = re.compile(r"@[A-Za-z_][\w.-]*\[[^\]]*\]")
_NONE = "@none[]"


def verify_turn(
    request: ChatRequest, on_text: Callable[[str], None] | None = None
) -> ChatReply | None:
    """The reply to a verification request, or ``None`` when this turn is not one."""
    messages = request.messages
    start = _request_index(messages)
    if start is None:
        return None
    question = _question_before(messages, start)
    files = [f for f in request.context.get("files") or [] if isinstance(f, dict)]
    intent = parse_intent(question, files)
    observations = [
        str(m.get("content") or "")
        for m in messages[start + 1 :]
        if m.get("role") == "tool" or str(m.get("content") or "").startswith(OBSERVATION_HEADER)
    ]
    if not observations:
        route = check_route(intent)
        if route is None:
            return _say(_NONE, on_text)
        tool, code = route
        key = "query" if tool == "run_sql" else "code"
        text = "I'll recompute that by a different route."
        if on_text is not None:
            on_text(text)
        call = {"id": "call_demo_check", "name": tool, "arguments": json.dumps({key: code})}
        return ChatReply(text=text, tool_calls=[call], finish_reason="tool_calls")
    sections = parse_observation(observations[-1])
    if not sections.get("status", "").startswith("ok"):
        return _say(_NONE, on_text)
    if plan_sql(intent) is not None and intent.kind != "math":
        pairs = _sql_pairs(intent, sections.get("value", ""))
    else:
        pairs = " ".join(_PAIR_LINE.findall(sections.get("stdout", "")))
    return _say(pairs or _NONE, on_text)


def _request_index(messages: list[JSONDict]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        if content.startswith(OBSERVATION_HEADER):
            continue
        return index if content.startswith(VERIFY_HEADER) else None
    return None


def _question_before(messages: list[JSONDict], start: int) -> str:
    for message in reversed(messages[:start]):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        # Not an output, the check request or an answer sent back (_recheck).
        if is_question(message) and not content.startswith(VERIFY_HEADER):
            return content
    return ""


def _say(text: str, on_text: Callable[[str], None] | None) -> ChatReply:
    if on_text is not None:
        on_text(text)
    return ChatReply(text=text, finish_reason="stop")


def _sql_pairs(intent: Intent, table: str) -> str:
    """The key number(s) of the query's table: the groups' values, else its first field."""
    pairs = []
    for line in sql_stdout(intent, table).splitlines():
        if line.startswith("  ") and ": " in line:
            key, _, value = line.strip().rpartition(": ")
            pairs.append(f"@{_name(key)}[{value}]")
        elif ": " in line and intent.kind not in {"groupby", "top"} and not pairs:
            key, _, value = line.partition(": ")
            pairs.append(f"@{_name(key)}[{value.strip()}]")
    return " ".join(pairs)


def _name(label: str) -> str:
    name = re.sub(r"\W+", "_", label.strip()).strip("_")
    return name if name and not name[0].isdigit() else f"v_{name}"


def check_route(intent: Intent) -> tuple[str, str] | None:
    """``(tool, source)`` of the second computation, or ``None`` when there is none."""
    if intent.kind == "math":
        code = _math_check(intent)
        return None if code is None else ("run_python", code)
    query = plan_sql(intent)
    if query is not None:
        return "run_sql", query
    if intent.file is None:
        return None
    path = str(intent.file.get("path"))
    load = f"rows = read_table({path!r})\n"
    if intent.kind == "overview":
        return "run_python", (
            "import csv\n"
            f"if {path!r}.lower().endswith('.csv'):\n"
            f"    with open({path!r}, newline='') as f:\n"
            "        count = sum(1 for row in csv.reader(f) if row) - 1\n"
            f"else:\n    count = len(read_table({path!r}).index)\n"
            "print(f'@rows[{count}]')\n"
        )
    numeric = intent.numeric
    if intent.kind == "correlation" and len(numeric) >= 2:
        x, y = numeric[0].name, numeric[1].name
        return "run_python", (
            f"import math, statistics\n{load}"
            f"pairs = [(float(a), float(b)) for a, b in zip(rows[{x!r}], rows[{y!r}])]\n"
            "pairs = [(a, b) for a, b in pairs if not (math.isnan(a) or math.isnan(b))]\n"
            "r = statistics.correlation([a for a, _ in pairs], [b for _, b in pairs])\n"
            "print(f'@r[{round(r, 4)}]')\n"
        )
    if intent.kind == "aggregate" and intent.agg == "median" and numeric:
        column = numeric[0].name
        return "run_python", (
            f"import math, statistics\n{load}"
            f"values = [float(v) for v in rows[{column!r}] if not math.isnan(float(v))]\n"
            "print(f'@median[{statistics.median(values)}]')\n"
        )
    return None


def _math_check(intent: Intent) -> str | None:
    parse = "sp.sympify({!r}.replace('^', '**'))".format
    head = f"import sympy as sp\nimport mpmath\nvar = sp.Symbol({intent.variable!r})\n"
    if intent.math == "arith" and intent.expression:
        # Floating point through the math module instead of sympy's exact arithmetic.
        return head + (
            f"value = sp.lambdify([], {parse(intent.expression)}, modules='math')()\n"
            "print(f'@value[{value}]')\n"
        )
    if intent.math == "integrate" and intent.lower and intent.upper:
        f = f"sp.lambdify(var, {parse(intent.expression)}, modules='mpmath')"
        bounds = f"[{parse(intent.lower)}, {parse(intent.upper)}]"
        return head + (
            f"value = mpmath.quad({f}, [float(b) for b in {bounds}])\n"
            "print(f'@value[{float(value)}]')\n"
        )
    if intent.math == "solve":
        equation = f"{parse(intent.expression)} - {parse(intent.rhs or '0')}"
        return head + (
            f"roots = sorted(r.real for r in map(complex, sp.Poly({equation}, var).nroots())"
            " if abs(complex(r).imag) < 1e-9)\n"
            "print(' '.join(f'@x{i}[{round(r, 10)}]' for i, r in enumerate(roots, 1)))\n"
        )
    return None
