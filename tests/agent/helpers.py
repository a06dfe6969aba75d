"""Shared pieces of the agent tests: a real-kernel executor, a runner, the replies of
the scripted model (`support.ScriptedModel`) and an agent on the fake upstream."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from reckon.agent import Agent, ChatReply, OpenAIModel
from reckon.kernel import Kernel as Session
from reckon.kernel import inspect
from support import FakeUpstream, HttpxTransport, sse, text_stream, tool_stream

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class KernelExecutor:
    """The real kernel behind the ``Executor`` protocol.

    ``interrupt`` cancels the running cell's task, which is what reaches a cell
    blocked in ``await``; the browser gets the same effect from Pyodide's
    interrupt buffer (a KeyboardInterrupt), so the result is reported as
    ``interrupted``.
    """

    def __init__(self, tmp_path: Path) -> None:
        self.data_dir = tmp_path / "data"
        self.output_dir = tmp_path / "output"
        self.session = Session(data_dir=str(self.data_dir), output_dir=str(self.output_dir))
        self.codes: list[str] = []
        self.interrupts = 0
        self._task: asyncio.Task[dict[str, Any]] | None = None
        self._interrupted = False

    async def run(self, code: str) -> dict[str, Any]:
        self.codes.append(code)
        self._interrupted = False
        self._task = asyncio.ensure_future(self.session.run(code))
        try:
            result = await self._task
        except asyncio.CancelledError:
            if not self._interrupted:
                raise
            result = {"status": "interrupted", "stdout": "", "stderr": "", "error": None}
        finally:
            self._task = None
        if self._interrupted:
            result = {**result, "status": "interrupted"}
        return result

    async def interrupt(self) -> None:
        self.interrupts += 1
        if self._task is not None and not self._task.done():
            self._interrupted = True
            self._task.cancel()

    def environment(self) -> dict[str, Any]:
        files = sorted(p for p in self.data_dir.iterdir() if p.is_file())
        return {
            "python": "3.12.7",
            "packages": ["pandas", "numpy", "matplotlib", "sympy"],
            "files": [inspect(str(p)) for p in files],
            "data_dir": str(self.data_dir),
            "output_dir": str(self.output_dir),
        }


# A call as llama-cpp-python hands it back with a GGUF's own template: text, unparsed.
QWEN_CALL = (
    '<tool_call>\n{"name": "run_python", "arguments": {"code": '
    "\"import pandas as pd\\ndf = pd.read_csv('/data/sales.csv')\\nprint(df['units'].sum())\"}}"
    "\n</tool_call>"
)


_calls = 0


def put_file(executor: KernelExecutor, name: str, text: str) -> str:
    """Write ``text`` as ``name`` in the executor's data folder; its path."""
    executor.data_dir.mkdir(parents=True, exist_ok=True)
    path = executor.data_dir / name
    path.write_text(text)
    return str(path)


def code_reply(code: str, text: str = "") -> ChatReply:
    global _calls
    _calls += 1
    arguments = json.dumps({"code": code})
    call = {"id": f"call_{_calls}", "name": "run_python", "arguments": arguments}
    return ChatReply(text=text, tool_calls=[call], finish_reason="tool_calls")


def answer(text: str) -> ChatReply:
    return ChatReply(text=text, finish_reason="stop")


def openai_agent(upstream: FakeUpstream, executor: KernelExecutor, **options: Any) -> Agent:
    """The agent with a real OpenAI-compatible client of the fake upstream."""
    model = OpenAIModel(HttpxTransport(upstream.url), model="local", **options)
    return Agent(model, executor)


def text_reply(text: str) -> Any:
    """A fake-upstream handler that streams `text` as the answer."""
    return sse([text_stream(text)])


def call_reply(code: str) -> Any:
    """A fake-upstream handler that streams a run_python call of `code`."""
    return sse([tool_stream(code)])


def ask_openai(
    upstream: FakeUpstream,
    executor: KernelExecutor,
    question: str,
    replies: list[Any],
    **options: Any,
) -> dict[str, Any]:
    """Queue ``replies`` (fake-upstream handlers) and ask ``question`` with the executor's
    files, through ``openai_agent``."""
    upstream.handlers += replies
    agent = openai_agent(upstream, executor, **options)
    return run(agent.ask(question, environment=executor.environment()))


def numbers_in(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", text)]


def mentions(text: str, expected: float, *, tolerance: float = 1e-3) -> bool:
    """Whether ``text`` quotes ``expected`` (to 4 decimals, as the demo's cells round)."""
    return any(abs(n - expected) <= tolerance * max(1.0, abs(expected)) for n in numbers_in(text))


def model_steps(outcome: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    """The steps of an ask but the tables Reckon loaded before the model's turn."""
    steps = [s for s in outcome["steps"] if s.get("origin") != "reckon"]
    return [s for s in steps if kind is None or s["kind"] == kind]
