"""The agent loop: ask the model, run its code, show it the output, until it answers."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from reckon._exceptions import ModelError, ModelProtocolError, ProtocolError, ReckonError
from reckon.agent._approval import APPROVAL_MODES, Decide
from reckon.agent._code import extract_code_blocks, parse_tool_arguments
from reckon.agent._control import AgentControls
from reckon.agent._control import Stopped as _Stopped
from reckon.agent._observe import OBSERVATION_HEADER
from reckon.agent._privacy import Privacy, Redactor
from reckon.agent._prompt import build_system_prompt
from reckon.agent._sent import SentLog
from reckon.agent._transcript import Transcript
from reckon.agent._types import (
    RUN_PYTHON_TOOL,
    RUN_SQL_TOOL,
    ChatReply,
    ChatRequest,
    Executor,
    JSONDict,
    Model,
)
from reckon.agent._usage import add_usage

__all__ = ["Agent"]

T = TypeVar("T")
_STOPPED = "Stopped by the user."


class Agent(AgentControls):
    """Drives one conversation: the model writes code, the executor runs it.

    The message history persists across ``ask`` calls so follow-up questions see
    earlier work; ``reset()`` forgets it. ``stop()`` may be called from another
    task while an ask is running: it cancels the model call, interrupts a running
    cell, and the ask returns ``status: "stopped"`` with the conversation intact.
    """

    def __init__(
        self,
        model: Model,
        executor: Executor,
        *,
        max_steps: int = 12,
        max_failures: int = 3,
        observation_limit: int = 6000,
        interrupt_grace: float = 10.0,
        on_step: Callable[[JSONDict], None] | None = None,
        on_text: Callable[[str], None] | None = None,
        on_usage: Callable[[JSONDict], None] | None = None,
        token_budget: int | None = None,
        privacy: Privacy | None = None,
        approval: str = "auto",
        decide: Decide | None = None,
        verify: bool = False,
    ) -> None:
        if approval not in APPROVAL_MODES:
            raise ProtocolError(f'approval must be "auto" or "ask", got {approval!r}')
        self.model = model
        self.executor = executor
        self.max_steps = max_steps
        self.max_failures = max_failures
        self.observation_limit = observation_limit
        # How long a cell may take to honour an interrupt before we stop waiting for it.
        self.interrupt_grace = interrupt_grace
        self.on_step = on_step
        self.on_text = on_text
        self.on_usage = on_usage
        # Tokens this conversation may use in all (None: no limit); ask() may add a
        # limit for one answer.
        self.token_budget = token_budget
        self.privacy = privacy or Privacy()
        self.approval = approval
        self.decide = decide
        self.verify = verify
        self._phase = ""
        self.messages: list[JSONDict] = []
        self.transcript = Transcript()
        self._stop_event: asyncio.Event | None = None
        self._model_task: asyncio.Future[ChatReply] | None = None
        self._running_cell = False
        self._busy = False
        self._background: set[asyncio.Task[None]] = set()
        self._proposals = 0
        self._redactor: Redactor | None = None
        self._answer_usage: JSONDict = add_usage([])
        self._ask_budget: int | None = None
        self._sent: list[JSONDict] = []
        # Copies of what earlier requests sent, so each request copies only what is new.
        self._sent_log = SentLog()
        self._done_usage: tuple[list[JSONDict], int, JSONDict] = ([], 0, add_usage([]))

    @property
    def session_usage(self) -> JSONDict:
        """Tokens used by every answer in the transcript (and the one running)."""
        asks = self.transcript.asks
        # Summed once per finished ask, not once per model call (asked after each one).
        if self._done_usage[0] is not asks or self._done_usage[1] != len(asks):
            total = add_usage([ask.get("usage") for ask in asks])
            self._done_usage = (asks, len(asks), total)
        return add_usage([self._done_usage[2], self._answer_usage if self._busy else None])

    def reset(self) -> None:
        """Forget the conversation and the transcript (the sandbox is not touched)."""
        self.messages = []
        self.transcript = Transcript()
        self._sent_log.clear()

    def stop(self) -> None:
        """Stop the current ask: cancel the model call and interrupt a running cell."""
        if self._stop_event is None or not self._busy:
            return
        self._stop_event.set()
        if self._model_task is not None and not self._model_task.done():
            self._model_task.cancel()
        if self._running_cell:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # called from outside the loop: the flag alone must do
                return
            task = loop.create_task(self._interrupt())
            self._background.add(task)  # keep a reference until it finishes
            task.add_done_callback(self._background.discard)

    async def _interrupt(self) -> None:
        with contextlib.suppress(ReckonError):
            await self.executor.interrupt()

    async def ask(
        self,
        question: str,
        *,
        environment: JSONDict,
        token_budget: int | None = None,
        verify: bool | None = None,
    ) -> JSONDict:
        """Answer ``question``; returns ``{status, answer, steps, usage, sent, message?}``
        (and ``verification`` when verifying)."""
        if self._busy:
            raise ProtocolError("the agent is already answering a question; stop it first")
        self._busy = True
        self._stop_event = asyncio.Event()
        self._answer_usage = add_usage([])
        self._ask_budget = token_budget
        self._sent = []
        try:
            environment = await self._prepare_privacy(environment)
        except ReckonError as exc:
            self._busy = False
            message = f"Nothing was sent: schema privacy could not be applied ({exc})."
            outcome = self._finish(_outcome("error", "", [], message))
            self.transcript.add(question, outcome)
            return outcome
        prompt = build_system_prompt(environment, privacy=self.privacy)
        system = {"role": "system", "content": prompt}
        # The environment changes between questions (uploads), so the prompt is rebuilt.
        if self.messages and self.messages[0].get("role") == "system":
            self.messages[0] = system
        else:
            self.messages.insert(0, system)
        self.messages.append({"role": "user", "content": question})
        try:
            outcome = await self._answer(environment)
            if outcome["status"] == "ok" and (self.verify if verify is None else verify):
                outcome["verification"] = await self._check(outcome, environment)
            outcome = self._finish(outcome)
        finally:
            self._busy = False
            self._model_task = None
        self.transcript.add(question, outcome)
        return outcome

    def _finish(self, outcome: JSONDict) -> JSONDict:
        outcome["usage"] = self._answer_usage
        outcome["sent"] = self._sent
        outcome["privacy"] = self.privacy.mode
        return outcome

    async def _answer(self, environment: JSONDict) -> JSONDict:
        steps: list[JSONDict] = []
        last_text = ""
        last_code = ""
        failures = 0
        last_error = ""
        for _ in range(self.max_steps):
            started = time.monotonic()
            spent = self._budget_hit(before_call=True)
            if spent is not None:
                self.messages.append({"role": "assistant", "content": "(stopped: token budget)"})
                return _outcome("budget", last_text, steps, spent)
            request = ChatRequest(
                messages=list(self.messages),
                tools=[RUN_PYTHON_TOOL, RUN_SQL_TOOL],
                model=self.model.name,
                context=environment,
            )
            try:
                reply = await self._call_model(request)
            except _Stopped:
                self._record(request, None, environment)
                self.messages.append({"role": "assistant", "content": "(stopped by the user)"})
                return _outcome("stopped", last_text, steps, _STOPPED)
            except (ModelError, ModelProtocolError) as exc:
                self._record(request, None, environment)
                message = f"The model call failed: {exc}"
                self._emit(steps, {"kind": "error", "text": message}, started)
                return _outcome("error", last_text, steps, message)
            self._record(request, reply, environment)
            text = reply.text.strip()
            last_text = text or last_text
            blocks = None if reply.tool_calls else extract_code_blocks(reply.text)
            if blocks is not None and blocks.code.strip() == last_code.strip():
                blocks = None  # the answer quotes the code it already ran: not a new cell
            if not reply.tool_calls and blocks is None:
                if not text:
                    message = "The model returned an empty reply."
                    self._emit(steps, {"kind": "error", "text": message}, started)
                    return _outcome("error", last_text, steps, message)
                self.messages.append({"role": "assistant", "content": reply.text})
                self._emit(steps, {"kind": "answer", "text": text}, started)
                return _outcome("ok", text, steps)
            spent = self._budget_hit(before_call=False)
            if spent is not None:
                # The proposed code is not run: nothing could read its output.
                said = reply.text or "(code not run: token budget)"
                self.messages.append({"role": "assistant", "content": said})
                return _outcome("budget", last_text, steps, spent)
            try:
                if reply.tool_calls:
                    results = await self._run_tool_calls(reply, steps, started)
                else:
                    assert blocks is not None
                    self.messages.append({"role": "assistant", "content": reply.text})
                    ran, result, observation, extra = await self._execute(blocks.code, "run_python")
                    self.messages.append(
                        {"role": "user", "content": f"{OBSERVATION_HEADER}\n{observation}"}
                    )
                    step = {"kind": "code", "text": blocks.text, "code": ran, **extra}
                    self._emit(steps, {**step, "result": result}, started)
                    results = [(ran, result)]
            except _Stopped:
                return _outcome("stopped", last_text, steps, _STOPPED)
            except ReckonError as exc:
                message = f"The sandbox failed: {exc}"
                self._emit(steps, {"kind": "error", "text": message}, started)
                return _outcome("error", last_text, steps, message)
            for code, result in results:
                if result.get("status") == "ok":
                    failures, last_code = 0, code
                elif result.get("status") != "rejected":
                    failures += 1
                    last_error = _describe_failure(result)
            if self._stopped():
                return _outcome("stopped", last_text, steps, _STOPPED)
            if failures >= self.max_failures:
                message = (
                    f"The code failed {failures} times in a row, so I stopped. "
                    f"Last error: {last_error}"
                )
                return _outcome("error", last_text, steps, message)
        message = f"Stopped after {self.max_steps} model calls without a final answer."
        return _outcome("error", last_text, steps, message)

    async def _run_tool_calls(
        self, reply: ChatReply, steps: list[JSONDict], started: float
    ) -> list[tuple[str, JSONDict]]:
        calls = reply.tool_calls
        self.messages.append(
            {
                "role": "assistant",
                "content": reply.text or None,
                "tool_calls": [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": call["arguments"]},
                    }
                    for call in calls
                ],
            }
        )
        results: list[tuple[str, JSONDict]] = []
        for number, call in enumerate(calls):
            text = reply.text.strip() if number == 0 else ""
            if self._stopped():
                # Every tool call needs its answer or the history is invalid next time.
                self._tool_message(call["id"], "status: not run (stopped by the user)")
                continue
            parsed = parse_tool_arguments(call["name"], call["arguments"])
            if parsed.code is None:
                problem = parsed.problem or "the tool call could not be read"
                self._tool_message(call["id"], f"status: error\nerror: {problem}")
                self._emit(steps, {"kind": "error", "text": text, "message": problem}, started)
                results.append(("", {"status": "error", "error": {"message": problem}}))
                started = time.monotonic()
                continue
            try:
                ran, result, observation, extra = await self._execute(parsed.code, call["name"])
            except _Stopped:
                self._tool_message(call["id"], "status: interrupted (stopped by the user)")
                for later in calls[number + 1 :]:
                    self._tool_message(later["id"], "status: not run (stopped by the user)")
                raise
            self._tool_message(call["id"], observation)
            step = {"kind": "code", "text": text, "code": ran, "result": result, **extra}
            self._emit(steps, step, started)
            results.append((ran, result))
            started = time.monotonic()
        return results

    def _tool_message(self, call_id: str, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def _stopped(self) -> bool:
        return self._stop_event is not None and self._stop_event.is_set()

    async def _call_model(self, request: ChatRequest) -> ChatReply:
        if self._stopped():
            raise _Stopped
        task = asyncio.ensure_future(self.model.complete(request, on_text=self.on_text))
        self._model_task = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stopped() and (current is None or not current.cancelling()):
                raise _Stopped from None
            raise
        finally:
            self._model_task = None

    async def _run_cell(self, code: str) -> JSONDict:
        """Run ``code``; when stopped, wait (a grace period) for the interrupted result."""
        if self._stopped():
            raise _Stopped
        assert self._stop_event is not None
        self._running_cell = True
        try:
            run = asyncio.ensure_future(self.executor.run(code))
            stopping = asyncio.ensure_future(self._stop_event.wait())
            done, _ = await asyncio.wait({run, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if run in done:
                return run.result()
            try:
                return await _within(run, self.interrupt_grace)
            except TimeoutError:
                run.cancel()
                raise _Stopped from None
        finally:
            self._running_cell = False

    def _emit(self, steps: list[JSONDict], step: JSONDict, started: float) -> None:
        full: JSONDict = {"index": len(steps), "kind": step["kind"], "text": step.get("text", "")}
        full.update({k: v for k, v in step.items() if k not in full})
        full["model"] = self.model.name
        if self._phase:
            full["phase"] = self._phase
        full["ms"] = round((time.monotonic() - started) * 1000, 1)
        steps.append(full)
        if self.on_step is not None:
            self.on_step(full)


async def _within(awaitable: Awaitable[T], seconds: float) -> T:
    return await asyncio.wait_for(asyncio.shield(awaitable), timeout=seconds)


def _describe_failure(result: JSONDict) -> str:
    error = result.get("error")
    if isinstance(error, dict):
        kind = error.get("type")
        return f"{kind}: {error.get('message', '')}" if kind else str(error.get("message", ""))
    return f"the cell ended with status {result.get('status')!r}"


def _outcome(status: str, answer: str, steps: list[JSONDict], message: str = "") -> JSONDict:
    outcome: JSONDict = {"status": status, "answer": answer, "steps": steps}
    if status != "ok":
        outcome["message"] = message
    return outcome
