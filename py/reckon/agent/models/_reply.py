"""What a model reply asks for: tool calls (native or written as text), a fenced
code cell, or a final answer, with its thinking set apart.

The loop runs whatever form the model used, so one model works whether its server
parses tool calls (OpenAI, vLLM with a parser, Ollama), leaves them in the text
(llama-cpp-python with the GGUF's own template) or the model writes code blocks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from reckon.agent._types import ChatReply
from reckon.agent.models._code import CodeBlocks, extract_code_blocks
from reckon.agent.models._think import ThinkSplitter
from reckon.agent.models._toolcalls import find_text_tool_calls

__all__ = ["TOOL_NAMES", "Move", "interpret", "without_imagined_results"]

# Names small models give the tools (and the ones we offer); _code maps them back.
TOOL_NAMES = {
    "run_python", "python", "run_code", "execute_python", "code_interpreter", "exec",
    "run_sql", "sql", "query_sql",
}  # fmt: skip


@dataclass
class Move:
    """One reply, read: ``calls`` ``[{id, name, arguments}]`` (arguments as JSON text),
    ``native`` when the server parsed them, ``tagged`` when they were written as text
    in the chat template's tags (``<tool_call>``), ``code`` for a fenced cell.

    ``after`` is the prose a model wrote after its last call or code block, before
    anything ran: a small model often goes on to state the answer it expects ("The
    total is 100."), and with that line in its history it repeated the guess over
    the real output (36). It is kept out of the history and of the shown text."""

    text: str = ""
    thinking: str = ""
    calls: list[dict[str, str]] = field(default_factory=list)
    native: bool = False
    code: str | None = None
    after: str = ""
    tagged: bool = False

    def spoken(self, raw: str) -> str:
        """``raw``, the reply as written, without the prose after its last call."""
        tail, body = self.after.strip(), raw.rstrip()
        if tail and body.endswith(tail):
            return body[: -len(tail)].rstrip()
        return raw

    @property
    def runs_code(self) -> bool:
        return bool(self.calls) or self.code is not None


def interpret(reply: ChatReply, *, last_code: str = "", failed: str = "") -> Move:
    """Read ``reply``; a fenced block that repeats the last cell, or beside other code
    the last cell that ``failed``, is quoted, not run."""
    splitter = ThinkSplitter()
    splitter.feed(reply.text)
    splitter.close()
    visible = "".join(splitter.visible)
    thinking = "\n".join(t.strip() for t in [reply.reasoning, *splitter.thinking] if t.strip())
    if reply.tool_calls:
        return Move(visible.strip(), thinking, list(reply.tool_calls), native=True)
    written = find_text_tool_calls(visible, names=TOOL_NAMES)
    if written is not None:
        calls = [
            {"id": f"text_call_{n}", "name": c["name"], "arguments": _as_text(c["arguments"])}
            for n, c in enumerate(written.calls)
        ]
        return Move(written.text, thinking, calls, after=written.after, tagged=written.tagged)
    blocks = extract_code_blocks(visible, quoted=(last_code, failed))
    if blocks is not None and (blocks.code.strip() != last_code.strip() or _bare(blocks)):
        return Move(blocks.text, thinking, code=blocks.code, after=blocks.after)
    return Move(visible.strip(), thinking)


# Letters of prose that make a repeated block a quote in an answer ("It is 5. I ran:
# ..."). A reply that is the last cell again and not a word besides (seen after a
# recheck: the same cell, nothing else) is run, so the repeat note tells the model it
# changed nothing; as an answer it said nothing at all.
_QUOTING_LETTERS = 3


def _bare(blocks: CodeBlocks) -> bool:
    return sum(c.isalpha() for c in blocks.text + blocks.after) < _QUOTING_LETTERS


# Where a model goes on to write what the tool answered, or the next turn, itself:
# Qwen's chat template wraps tool results in <tool_response>, and a small model that
# writes a call as text often follows it with an invented result ("mean_value": 23.45)
# and reasons from that. Nothing after such a marker is the model's to say.
_IMAGINED = ("<tool_response>", "<|im_start|>", "<|im_end|>")
# The same template lists the tools in <tools>; seen, the 1.5B model wrote that list out
# again before its code, and the reply stood as an answer of tool definitions.
_ECHOED_TOOLS = re.compile(r"<tools>.*?(?:</tools>|$)\s*", re.DOTALL)


def without_imagined_results(reply: ChatReply) -> ChatReply:
    """``reply`` cut where the model starts writing a tool's answer or a new turn, and
    without its tool list written out again."""
    cut = min((i for i in (reply.text.find(m) for m in _IMAGINED) if i >= 0), default=-1)
    text = reply.text if cut < 0 else reply.text[:cut].rstrip()
    if "<tools>" in text:
        text = _ECHOED_TOOLS.sub("", text).strip()
    return reply if text == reply.text else replace(reply, text=text)


def _as_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)
