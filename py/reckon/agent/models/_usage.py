"""Token counts: per model call, per answer and per session, and the budget check.

A call's counts come from the stream's ``usage`` chunk when the upstream sends one
(the relay asks for it with ``stream_options.include_usage`` and maps Anthropic's
counts to the same fields). Otherwise they are estimated from the characters that
went out and came back (about four per token) and say so with ``estimated: true``:
a sum that includes one estimate is itself an estimate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from reckon.agent._types import ChatReply, JSONDict

__all__ = ["add_usage", "budget_message", "call_usage", "estimate_tokens", "zero_usage"]

_CHARS_PER_TOKEN = 4


def zero_usage() -> JSONDict:
    return {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "estimated": False,
        "calls": 0,
    }


def estimate_tokens(text: str) -> int:
    """A rough count for text without a tokenizer: one token per four characters."""
    return math.ceil(len(text) / _CHARS_PER_TOKEN) if text else 0


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)


def call_usage(body: JSONDict, reply: ChatReply, *, prompt_chars: int | None = None) -> JSONDict:
    """One call's counts: the upstream's when it reported both, else an estimate
    (``prompt_chars``: the length of the body's messages and tools as JSON, if known)."""
    reported = reply.usage if isinstance(reply.usage, dict) else {}
    prompt = _count(reported.get("prompt_tokens"))
    completion = _count(reported.get("completion_tokens"))
    estimated = prompt is None or completion is None
    if prompt is None and prompt_chars is not None:
        prompt = math.ceil(prompt_chars / _CHARS_PER_TOKEN)
    elif prompt is None:
        sent = {k: body[k] for k in ("messages", "tools") if k in body}
        prompt = estimate_tokens(json.dumps(sent, ensure_ascii=False))
    if completion is None:
        answer = reply.text + "".join(c.get("arguments", "") for c in reply.tool_calls)
        completion = estimate_tokens(answer)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "estimated": estimated,
        "calls": 1,
    }


def add_usage(parts: Iterable[JSONDict | None]) -> JSONDict:
    """The sum of several usages (calls, answers); ignores missing ones."""
    total = zero_usage()
    for part in parts:
        if not isinstance(part, dict):
            continue
        for key in ("prompt_tokens", "completion_tokens", "total_tokens", "calls"):
            total[key] += _count(part.get(key)) or 0
        total["estimated"] = bool(total["estimated"] or part.get("estimated"))
    return total


def budget_message(used: int, budget: int, scope: str, *, before_call: bool) -> str:
    """Why the loop stopped, and what to change."""
    what = (
        "so the model was not called again"
        if before_call
        else "so the code the model proposed last was not run"
    )
    setting = "tokenBudget (settings)" if scope == "this session" else "the ask's tokenBudget"
    return (
        f"Stopped: the token budget for {scope} is used up ({used} of {budget} tokens), "
        f"{what}. Raise {setting} or start a new conversation to continue."
    )
