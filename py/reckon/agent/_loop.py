"""The agent loop: ask the model, run its code, show it the output, until it answers."""

from __future__ import annotations

import itertools
import time
from typing import Any

from reckon._exceptions import ModelError, ModelProtocolError, ProtocolError, ReckonError
from reckon.agent._cells import Cells
from reckon.agent._conversation import Conversation
from reckon.agent._options import AgentOptions, Option
from reckon.agent._prompt import build_system_prompt
from reckon.agent._steps import STOPPED, Progress, StepLog, outcome, sandbox_failed
from reckon.agent._stopping import Stopped, Stopping
from reckon.agent._tool_values import ToolValues
from reckon.agent._turns import Turns
from reckon.agent._types import ChatReply, Executor, JSONDict, Model
from reckon.agent.checks._finishing import Finishing
from reckon.agent.checks._printed import printed_answer
from reckon.agent.checks._recheck import drafted, last_question, opening_draft
from reckon.agent.checks._verify import verification, verification_prompt
from reckon.agent.export._transcript import Transcript
from reckon.agent.models import _retry
from reckon.agent.models._reply import Move, interpret, without_imagined_results
from reckon.agent.models._requests import Requests
from reckon.agent.models._usage import add_usage
from reckon.agent.privacy._preparing import HiddenValues, apply_privacy, load_lines, place_prompt
from reckon.agent.privacy._privacy import Privacy

__all__ = ["Agent"]


class Agent:
    """Drives one conversation: the model writes code, the executor runs it.

    The message history persists across ``ask`` calls so follow-up questions see
    earlier work; ``reset()`` forgets it. ``stop()`` may be called from another
    task while an ask is running: it cancels the model call, interrupts a running
    cell, and the ask returns ``status: "stopped"`` with the conversation intact.
    Options: ``AgentOptions``. One ask (or notebook import) runs at a time: ``turns``.
    """

    # No other attribute can be set by mistake (one that nothing reads).
    __slots__ = ("_hidden", "_proposals", "_requests", "_stopping", "conversation", "executor",
                 "model", "options", "turns")  # fmt: skip
    # The person's controls, which ``_host``'s configure() changes between asks.
    token_budget: Option[int | None] = Option()
    privacy: Option[Privacy] = Option()
    approval: Option[str] = Option()
    verify: Option[bool] = Option()

    def __init__(self, model: Model, executor: Executor, **options: Any) -> None:
        self.model = model
        self.executor = executor
        self.options = AgentOptions(**options)
        self.conversation = Conversation()
        self.turns = Turns()
        self._requests = Requests(
            lambda: self.conversation, self.options, lambda: self.session_usage
        )
        self._proposals = itertools.count(1)  # proposal ids, unique in the session
        self._stopping: Stopping | None = None  # the ask under way
        self._hidden = HiddenValues()  # schema privacy's values, for the session

    @property
    def busy(self) -> bool:
        """An ask or a notebook import is under way (or waiting for its turn)."""
        return self.turns.busy

    @property
    def messages(self) -> list[JSONDict]:
        """The conversation's history, as the model reads it."""
        return self.conversation.messages

    @messages.setter
    def messages(self, messages: list[JSONDict]) -> None:
        self.conversation.messages = messages

    @property
    def transcript(self) -> Transcript:
        """The conversation's record: each ask with its steps and answer."""
        return self.conversation.transcript

    @transcript.setter
    def transcript(self, transcript: Transcript) -> None:
        self.conversation.transcript = transcript

    @property
    def session_usage(self) -> JSONDict:
        """Tokens used by every answer in the transcript (and the one running)."""
        running = self._requests.usage if self._stopping is not None else None
        return add_usage([self.conversation.finished_usage(), running])

    def reset(self) -> None:
        """Forget the conversation and the transcript (the sandbox is not touched)."""
        self.conversation = Conversation()

    def stop(self) -> None:
        """Stop the current ask: cancel the model call and interrupt a running cell."""
        if self._stopping is not None:
            self._stopping.stop(self.executor)

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
        async with self.turns.join() as ours:
            if not ours:
                raise ProtocolError("the agent is already answering a question; stop it first")
            stopping = self._stopping = Stopping()
            self._requests.begin(token_budget)
            try:
                result = await self._answer_question(question, environment, verify, stopping)
            finally:
                self._stopping = None
        self.transcript.add(question, result)
        return result

    async def _answer_question(
        self, question: str, environment: JSONDict, verify: bool | None, stopping: Stopping
    ) -> JSONDict:
        """Privacy applied, tables loaded and the prompt in place, then the answer."""
        try:
            environment, redactor = await apply_privacy(
                self.privacy, self.executor, environment, hidden=self._hidden
            )
        except ReckonError as exc:
            message = f"Nothing was sent: schema privacy could not be applied ({exc})."
            return self._finish(outcome("error", "", [], message))
        values = getattr(self.executor, "tool_values", None)
        if isinstance(values, ToolValues):
            values.hide(redactor, self._hidden)
        log = StepLog(self.model.name, on_step=self.options.on_step)
        files = [f for f in environment.get("files") or [] if isinstance(f, dict)]
        cells = Cells(self.executor, self.options, stopping, redactor, proposals=self._proposals)
        try:
            await self._load_tables(files, cells, log)
        except Stopped:
            return self._finish(outcome("stopped", "", log.steps, STOPPED))
        names = self.conversation.tables.names
        cells.load_lines, cells.loaded = load_lines(files, names), bool(names)
        # A pandas re-read of a loaded table runs as read_table (_reads): not if none was.
        cells.uploads = [str(f["path"]) for f in files if f.get("kind") == "table"] if names else []
        tools = bool(getattr(self.model, "use_tools", True))
        prompt = build_system_prompt(
            environment, privacy=self.privacy, tools=tools, loaded=dict(names)
        )
        place_prompt(self.messages, prompt)
        self.messages.append({"role": "user", "content": question})
        result = await self._answer(environment, cells, log)
        if result["status"] == "ok" and (self.verify if verify is None else verify):
            result["verification"] = await self._check(result, environment, cells)
        return self._finish(result)

    def _finish(self, result: JSONDict) -> JSONDict:
        result["usage"] = self._requests.usage
        result["sent"] = self._requests.sent
        result["privacy"] = self.privacy.mode
        return result

    async def _load_tables(self, files: list[JSONDict], cells: Cells, log: StepLog) -> None:
        """Load new tables as variables (``_preload``), each as a step of its own. Not in
        ask mode (nothing runs unapproved) nor for a model that loads its own."""
        if self.approval == "ask" or not getattr(self.model, "preloads", True):
            return
        await self.conversation.tables.load(files, cells.run, log.add)

    async def _check(self, result: JSONDict, environment: JSONDict, cells: Cells) -> JSONDict:
        """Recompute the key number another way; the exchange is kept out of the history
        (a follow-up sees the answer, not the check) but its requests are recorded."""
        keep = len(self.messages)
        self.messages.append({"role": "user", "content": verification_prompt(result["answer"])})
        log = StepLog(self.model.name, phase="verify", on_step=self.options.on_step)
        try:
            check = await self._answer(environment, cells, log)
        finally:
            del self.messages[keep:]
        return verification(result, check)

    async def _answer(self, environment: JSONDict, cells: Cells, log: StepLog) -> JSONDict:
        """Model calls and cells until the model answers (or a limit or stop ends it)."""
        progress = Progress(has_files=bool(environment.get("files")))
        if log.phase != "verify" and getattr(self.model, "follows_rechecks", True):
            progress.draft = opening_draft(self.messages, has_files=progress.has_files)
            progress.rechecks |= {"draft"} if progress.draft else set()
        while progress.calls < self.options.max_steps:
            result = await self._step(environment, cells, log, progress)
            if result is not None:
                return result
        message = f"Stopped after {self.options.max_steps} model calls without a final answer."
        return outcome("error", progress.last_text, log.steps, message)

    async def _step(
        self, environment: JSONDict, cells: Cells, log: StepLog, progress: Progress
    ) -> JSONDict | None:
        """One model call and what follows it; the outcome when the answer is over."""
        started = time.monotonic()
        if (spent := self._requests.budget_hit(before_call=True)) is not None:
            self.messages.append({"role": "assistant", "content": "(stopped: token budget)"})
            return outcome("budget", progress.last_text, log.steps, spent)
        # A data question is answered from code: the first call must run some, or
        # (a model that forces no first call) the call after an answer that ran none;
        # so is any question whose answer states numbers it did not compute.
        force = None
        if not progress.ran_code and getattr(self.model, "forces_first_call", True):
            first = progress.calls == 0 and progress.has_files
            if first or progress.rechecks & {"no-code", "draft"}:
                force = "run_python"
        progress.calls += 1
        sent, progress.draft = drafted(self.messages, progress.draft), ""
        try:
            reply = await self._requests.call(self.model, sent, environment, force, cells.stopping)
        except Stopped:
            self.messages.append({"role": "assistant", "content": "(stopped by the user)"})
            return outcome("stopped", progress.last_text, log.steps, STOPPED)
        except (ModelError, ModelProtocolError) as exc:
            message = f"The model call failed: {exc}"
            log.add({"kind": "error", "text": message}, started)
            return outcome("error", progress.last_text, log.steps, message)
        reply = without_imagined_results(reply)
        move = interpret(reply, last_code=progress.last_code, failed=progress.failed_code)
        log.first_token_ms = reply.first_token_ms
        if move.thinking:
            log.add({"kind": "thinking", "text": move.thinking}, started)
        progress.last_text = move.text or progress.last_text
        if move.runs_code:
            ran = await self._ran(move, reply, cells, log, progress, started)
            if ran is not None or not progress.printed:
                return ran
            move = Move(text=progress.printed)  # the cell's output (_printed)
        finishing = Finishing(self.messages, self.transcript.steps, log, environment)
        # The check is kept out of the history; so is a recheck of its answer.
        rechecks = getattr(self.model, "follows_rechecks", True) and log.phase != "verify"
        done = finishing.finish(move.text, progress, rechecks=bool(rechecks), started=started)
        if done is None and progress.correction is not None:
            return await self._correct(cells, log, progress)
        return done

    async def _correct(self, cells: Cells, log: StepLog, progress: Progress) -> JSONDict | None:
        """Reckon runs the model's cell put right (``_date_parts``) before the next call."""
        correction, progress.correction = progress.correction, None
        if correction is None:
            return None
        try:
            progress.tally([await cells.correct(correction, self.messages, log)])
        except Stopped:
            return outcome("stopped", progress.last_text, log.steps, STOPPED)
        except ReckonError as exc:
            return sandbox_failed(exc, progress, log, time.monotonic())
        return None

    async def _ran(
        self,
        move: Move,
        reply: ChatReply,
        cells: Cells,
        log: StepLog,
        progress: Progress,
        started: float,
    ) -> JSONDict | None:
        """The model wrote code: run it, unless a budget or a stop ends the answer."""
        steps = log.steps
        if not move.native and (move.code is not None or move.tagged):
            # A code block, or a call in its template's tags left as text: talk in blocks.
            # A JSON call in a block keeps the tools, so the prompt's start stays cached.
            switch = getattr(self.model, "prefer_code_blocks", None)
            if callable(switch):
                switch()
        if (spent := self._requests.budget_hit(before_call=False)) is not None:
            said = reply.text or "(code not run: token budget)"  # nothing could read its output
            self.messages.append({"role": "assistant", "content": said})
            return outcome("budget", progress.last_text, steps, spent)
        mark = len(self.messages)
        try:
            results = await cells.run_reply(move, reply.text, self.messages, log, started)
        except Stopped:
            return outcome("stopped", progress.last_text, steps, STOPPED)
        except ReckonError as exc:
            return sandbox_failed(exc, progress, log, started)
        progress.tally(results, mark=mark)
        if cells.stopping.stopped():
            return outcome("stopped", progress.last_text, steps, STOPPED)
        if getattr(self.model, "follows_rechecks", True):  # not the demo: it reads its own
            _retry.start_fresh(progress, self.messages)
            question = last_question(self.messages)
            _retry.cut_repeat(cells.repeats, self.messages, progress, question, results)
            progress.printed = printed_answer(question, results, cells.repeats, cells.private)
        if stuck := _retry.repeats_out(cells.repeats):
            log.add({"kind": "error", "text": stuck}, started)
            return outcome("error", progress.last_text, steps, stuck)
        if given_up := _retry.gives_up(progress, self.options.max_failures):
            return outcome("error", progress.last_text, steps, given_up)
        return None
