"""The agent loop: ask the model, run its code, show it the output, until it answers."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from reckon._exceptions import ModelError, ModelProtocolError, ProtocolError, ReckonError
from reckon.agent._approval import APPROVAL_MODES, Decide
from reckon.agent._code import ToolArguments, parse_tool_arguments
from reckon.agent._context import LEFT_OUT
from reckon.agent._control import AgentControls
from reckon.agent._control import Stopped as _Stopped
from reckon.agent._observe import observation_message
from reckon.agent._preload import TableLoads
from reckon.agent._privacy import Privacy, Redactor
from reckon.agent._prompt import build_system_prompt
from reckon.agent._recheck import is_question, recheck_message, repair_form
from reckon.agent._reply import Move, interpret, without_imagined_results
from reckon.agent._sent import SentLog
from reckon.agent._transcript import Transcript
from reckon.agent._types import (
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
# An answer goes back to the model at most this often (a guess, then a lost format).
_RECHECKS = 2


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
        on_call: Callable[[JSONDict], None] | None = None,
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
        # Told before each model call what it must read: a slow local model reads a
        # long prompt for many seconds before its first word, and the page says so.
        self.on_call = on_call
        self._read_until = 0
        self._first_token_ms: float | None = None
        self._load_lines: list[str] = []
        self._tables = TableLoads()
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
        self._read_until = 0
        self._tables.clear()

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
        steps: list[JSONDict] = []
        files = [f for f in environment.get("files") or [] if isinstance(f, dict)]
        try:
            await self._load_tables(files, steps)
        except _Stopped:
            self._busy = False
            outcome = self._finish(_outcome("stopped", "", steps, _STOPPED))
            self.transcript.add(question, outcome)
            return outcome
        names = self._tables.names
        self._load_lines = [
            f"{names.get(str(f.get('path')), 'df')} = {f['read_with']}"
            for f in files
            if f.get("read_with")
        ]
        tools = bool(getattr(self.model, "use_tools", True))
        prompt = build_system_prompt(
            environment, privacy=self.privacy, tools=tools, loaded=dict(names)
        )
        system = {"role": "system", "content": prompt}
        # The environment changes between questions (uploads), so the prompt is rebuilt;
        # a note that the history was cut stays with it.
        if self.messages and self.messages[0].get("role") == "system":
            if LEFT_OUT in str(self.messages[0].get("content")):
                system["content"] = f"{prompt}\n\n{LEFT_OUT}"
            self.messages[0] = system
        else:
            self.messages.insert(0, system)
        self.messages.append({"role": "user", "content": question})
        try:
            outcome = await self._answer(environment, steps)
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

    async def _load_tables(self, files: list[JSONDict], steps: list[JSONDict]) -> None:
        """Load new tables as variables (``_preload``), each as a step of its own. Not in
        ask mode (nothing runs unapproved) nor for a model that loads its own."""
        if self.approval == "ask" or not getattr(self.model, "preloads", True):
            return
        for load in self._tables.plan(files):
            started = time.monotonic()
            try:
                result = await self._run_cell(load.code)
            except ReckonError as exc:
                result = {"status": "error", "error": {"type": "SandboxError", "message": str(exc)}}
            self._emit(steps, self._tables.step(load, result), started)

    async def _answer(self, environment: JSONDict, steps: list[JSONDict]) -> JSONDict:
        last_text = ""
        last_code = ""
        failures = 0
        last_error = ""
        ran_code = False
        asked: set[str] = set()
        has_files = bool(environment.get("files"))
        calls = 0
        while calls < self.max_steps:
            started = time.monotonic()
            spent = self._budget_hit(before_call=True)
            if spent is not None:
                self.messages.append({"role": "assistant", "content": "(stopped: token budget)"})
                return _outcome("budget", last_text, steps, spent)
            # A data question is answered from code: the first call must run some.
            force = "run_python" if has_files and not ran_code and calls == 0 else None
            calls += 1
            try:
                reply = await self._call_fitted(environment, force)
            except _Stopped:
                self.messages.append({"role": "assistant", "content": "(stopped by the user)"})
                return _outcome("stopped", last_text, steps, _STOPPED)
            except (ModelError, ModelProtocolError) as exc:
                message = f"The model call failed: {exc}"
                self._emit(steps, {"kind": "error", "text": message}, started)
                return _outcome("error", last_text, steps, message)
            reply = without_imagined_results(reply)
            move = interpret(reply, last_code=last_code)
            self._first_token_ms = reply.first_token_ms
            if move.thinking:
                self._emit(steps, {"kind": "thinking", "text": move.thinking}, started)
            last_text = move.text or last_text
            if not move.runs_code:
                if not move.text:
                    message = "The model returned an empty reply."
                    self._emit(steps, {"kind": "error", "text": message}, started)
                    return _outcome("error", last_text, steps, message)
                text, grounding = self._repaired(move.text, steps, environment)
                repair = {"written": move.text} if text != move.text else {}
                self.messages.append({"role": "assistant", "content": text})
                again_text = self._recheck(text, grounding, has_files, ran_code, asked, steps)
                if again_text is not None:
                    self.messages.append({"role": "user", "content": again_text})
                    step: JSONDict = {"kind": "recheck", "text": text, "message": again_text}
                    self._emit(steps, {**step, "grounding": grounding, **repair}, started)
                    continue
                self._emit(
                    steps,
                    {"kind": "answer", "text": text, "grounding": grounding, **repair},
                    started,
                )
                outcome = _outcome("ok", text, steps)
                outcome["grounding"] = grounding
                return outcome
            if move.code is not None and not move.native:
                # Tools were offered and it wrote a code block: talk to it in blocks.
                switch = getattr(self.model, "prefer_code_blocks", None)
                if callable(switch):
                    switch()
            spent = self._budget_hit(before_call=False)
            if spent is not None:
                # The proposed code is not run: nothing could read its output.
                said = reply.text or "(code not run: token budget)"
                self.messages.append({"role": "assistant", "content": said})
                return _outcome("budget", last_text, steps, spent)
            try:
                results = await self._run_move(move, reply.text, steps, started)
            except _Stopped:
                return _outcome("stopped", last_text, steps, _STOPPED)
            except ReckonError as exc:
                message = f"The sandbox failed: {exc}"
                self._emit(steps, {"kind": "error", "text": message}, started)
                return _outcome("error", last_text, steps, message)
            for code, result in results:
                if result.get("status") == "ok":
                    failures, last_code = 0, code
                    ran_code = True
                elif result.get("status") != "rejected":
                    failures += 1
                    ran_code = True
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

    def _recheck(
        self,
        answer: str,
        grounding: JSONDict,
        has_files: bool,
        ran_code: bool,
        asked: set[str],
        steps: list[JSONDict],
    ) -> str | None:
        """What to send the answer back with (``_recheck``), at most once per kind."""
        if len(asked) >= _RECHECKS or not getattr(self.model, "follows_rechecks", True):
            return None
        if self._phase == "verify":  # the check is kept out of the history; so is this
            return None
        computed = ran_code or any(_by_model(s) for s in self.transcript.steps)
        question = self._question()
        found = recheck_message(
            grounding,
            has_files,
            computed,
            question=question,
            answer=answer,
            asked=frozenset(asked),
            last_output=self._last_output(steps),
        )
        if found is None:
            return None
        asked.add(found[0])
        return found[1]

    def _question(self) -> str:
        """The person's last question (not a cell's output or one of our rechecks)."""
        return str(next((m["content"] for m in reversed(self.messages) if is_question(m)), ""))

    def _repaired(
        self, answer: str, steps: list[JSONDict], environment: JSONDict
    ) -> tuple[str, JSONDict]:
        """The answer (its form put right, ``repair_form``) and its grounding."""
        grounding = self._ground(answer, steps, environment)
        fixed = repair_form(self._question(), answer, grounding)
        if fixed is None:
            return answer, grounding
        return fixed, self._ground(fixed, steps, environment)

    def _last_output(self, steps: list[JSONDict]) -> str:
        """What the last cell that ran printed (its stdout, or its value)."""
        for step in reversed([*self.transcript.steps, *steps]):
            result = step.get("result")
            if _by_model(step) and isinstance(result, dict):
                value = result.get("result")
                shown = value.get("text") if isinstance(value, dict) else None
                return str(result.get("stdout") or shown or "")
        return ""

    async def _run_move(
        self, move: Move, raw: str, steps: list[JSONDict], started: float
    ) -> list[tuple[str, JSONDict]]:
        """Run the reply's cells. Native calls get one ``tool`` answer each (every call
        needs one, or the history is invalid next time). Calls written as text and code
        blocks keep the reply as the model wrote it, byte for byte (so the server's
        prompt cache holds), and get their outputs as one user message, which every
        server accepts."""
        if move.native:
            # "" rather than null content: llama-cpp-python answers null with a 500.
            calls = [{"id": c["id"], "type": "function",
                      "function": {"name": c["name"], "arguments": c["arguments"]}}
                     for c in move.calls]  # fmt: skip
            self.messages.append({"role": "assistant", "content": move.text, "tool_calls": calls})
        else:
            self.messages.append({"role": "assistant", "content": raw})
        cells = [(c["id"], c["name"], parse_tool_arguments(c["name"], c["arguments"]))
                 for c in move.calls]  # fmt: skip
        if move.code is not None:
            cells = [("", "run_python", ToolArguments(move.code))]
        observations: list[str] = []

        def answer(call_id: str, content: str) -> None:
            if move.native:
                self._tool_message(call_id, content)
            else:
                observations.append(content)

        results: list[tuple[str, JSONDict]] = []
        try:
            for number, (call_id, name, parsed) in enumerate(cells):
                text = move.text if number == 0 else ""
                if self._stopped():
                    answer(call_id, "status: not run (stopped by the user)")
                    continue
                if parsed.code is None:
                    problem = parsed.problem or "the tool call could not be read"
                    answer(call_id, f"status: error\nerror: {problem}")
                    self._emit(steps, {"kind": "error", "text": text, "message": problem}, started)
                    results.append(("", {"status": "error", "error": {"message": problem}}))
                    started = time.monotonic()
                    continue
                try:
                    ran, result, observation, extra = await self._execute(parsed.code, name)
                except _Stopped:
                    answer(call_id, "status: interrupted (stopped by the user)")
                    for later, _, _ in cells[number + 1 :]:
                        answer(later, "status: not run (stopped by the user)")
                    raise
                answer(call_id, observation)
                step = {"kind": "code", "text": text, "code": ran, "result": result, **extra}
                self._emit(steps, step, started)
                results.append((ran, result))
                started = time.monotonic()
        finally:
            if observations:
                self.messages.append({"role": "user", "content": observation_message(observations)})
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
        if self._first_token_ms is not None:
            full["first_token_ms"] = self._first_token_ms
            self._first_token_ms = None  # only the first step of a reply waited for it
        if self._phase:
            full["phase"] = self._phase
        full["ms"] = round((time.monotonic() - started) * 1000, 1)
        steps.append(full)
        if self.on_step is not None:
            self.on_step(full)


async def _within(awaitable: Awaitable[T], seconds: float) -> T:
    return await asyncio.wait_for(asyncio.shield(awaitable), timeout=seconds)


def _by_model(step: JSONDict) -> bool:
    """A cell the model wrote (not a table Reckon loaded for it)."""
    return step.get("kind") == "code" and step.get("origin") != "reckon"


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
