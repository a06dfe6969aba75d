"""The loop's control layer: budget, privacy, approval, requests and their records,
grounding, verification.

A mixin of ``Agent`` (``_loop.py``) so the loop itself stays the model/cell cycle;
everything here is the person's say over it (issue "Control").
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from reckon._exceptions import ModelError, ProtocolError
from reckon.agent._approval import Decide, Decision, edited_note, parse_decision, rejected_note
from reckon.agent._context import estimate_tokens, fit_messages, is_overflow
from reckon.agent._grounding import ground_answer, step_sources
from reckon.agent._observe import format_observation
from reckon.agent._preload import TableLoads
from reckon.agent._privacy import Privacy, Redactor, read_values, schema_environment
from reckon.agent._recheck import is_question
from reckon.agent._sent import SentLog, offline_body
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
from reckon.agent._usage import add_usage, budget_message, call_usage
from reckon.agent._verify import compare, verification_prompt

__all__ = ["AgentControls", "Stopped"]


class Stopped(Exception):
    """Raised inside the loop when ``stop()`` cut a model call, a cell or a wait short."""


class AgentControls:
    """Budget, privacy, approval, records and verification for ``Agent``."""

    messages: list[JSONDict]
    model: Model
    transcript: Transcript
    executor: Executor
    observation_limit: int
    token_budget: int | None
    privacy: Privacy
    approval: str
    decide: Decide | None
    on_usage: Callable[[JSONDict], None] | None
    on_call: Callable[[JSONDict], None] | None
    _load_lines: list[str]
    _tables: TableLoads
    _read_until: int
    _phase: str
    _proposals: int
    _redactor: Redactor | None
    _answer_usage: JSONDict
    _ask_budget: int | None
    _sent: list[JSONDict]
    _sent_log: SentLog
    _stop_event: asyncio.Event | None

    if TYPE_CHECKING:

        @property
        def session_usage(self) -> JSONDict: ...

        async def _answer(self, environment: JSONDict, steps: list[JSONDict]) -> JSONDict: ...

        async def _run_cell(self, code: str) -> JSONDict: ...

        async def _call_model(self, request: ChatRequest) -> ChatReply: ...

        def _stopped(self) -> bool: ...

    async def _check(self, outcome: JSONDict, environment: JSONDict) -> JSONDict:
        """Recompute the key number another way; the exchange is kept out of the history
        (a follow-up sees the answer, not the check) but its requests are recorded."""
        keep = len(self.messages)
        self.messages.append({"role": "user", "content": verification_prompt(outcome["answer"])})
        self._phase = "verify"
        try:
            check = await self._answer(environment, [])
        finally:
            self._phase = ""
            del self.messages[keep:]
        original = [s["code"] for s in outcome["steps"] if s.get("kind") == "code"]
        computations = {
            "original": {"code": original, "answer": outcome["answer"]},
            "check": {"code": [s["code"] for s in check["steps"] if s.get("kind") == "code"],
                      "answer": check["answer"], "steps": check["steps"]},
        }  # fmt: skip
        if check["status"] != "ok":
            message = f"the check did not finish: {check.get('message', check['status'])}"
            return {"status": "unavailable", "message": message, **computations}
        return {**compare(outcome["answer"], check["answer"]), **computations}

    async def _prepare_privacy(self, environment: JSONDict) -> JSONDict:
        """In schema mode: read the values to hide (a hidden cell) and drop previews."""
        self._redactor = None
        if not self.privacy.hides:
            return environment
        run = getattr(self.executor, "run_hidden", None) or self.executor.run
        strings, numbers = await read_values(run, environment, self.privacy.allow_columns)
        names = [
            str(column.get("name") if isinstance(column, dict) else column)
            for entry in environment.get("files") or []
            if isinstance(entry, dict)
            for column in entry.get("columns") or []
        ]
        # Column names are schema, which this mode sends: a value equal to one stays.
        self._redactor = Redactor(strings, numbers, keep=names)
        return schema_environment(environment)

    def _budget_hit(self, *, before_call: bool) -> str | None:
        """The message to stop with when a budget is used up (or would be by a call)."""
        limits = [
            (self._ask_budget, self._answer_usage, "this answer"),
            (self.token_budget, self.session_usage, "this session"),
        ]
        for budget, used, scope in limits:
            if budget is None:
                continue
            total = int(used["total_tokens"])
            if total > budget or (before_call and total >= budget):
                return budget_message(total, budget, scope, before_call=before_call)
        return None

    async def _call_fitted(self, environment: JSONDict, force: str | None) -> ChatReply:
        """One model call; a history too long for the model's window is cut and sent again."""
        window = getattr(self.model, "context_window", None)
        for attempt in range(3):
            if isinstance(window, int) and window > 0:
                self.messages = fit_messages(self.messages, limit=int(window * 0.85))
            request = ChatRequest(
                messages=list(self.messages),
                tools=[RUN_PYTHON_TOOL, RUN_SQL_TOOL],
                model=self.model.name,
                context=environment,
                tool_choice=force,
            )
            if self.on_call is not None:
                fresh = request.messages[min(self._read_until, len(request.messages)) :]
                self.on_call({"model": self.model.name, "tokens": estimate_tokens(request.messages),
                              "new_tokens": estimate_tokens(fresh)})  # fmt: skip
            try:
                reply = await self._call_model(request)
            except ModelError as exc:
                self._record(request, None, environment)
                if attempt == 2 or not is_overflow(exc):
                    raise
                window = int(estimate_tokens(self.messages) * 0.6)
                continue
            except BaseException:
                self._record(request, None, environment)
                raise
            self._record(request, reply, environment)
            self._read_until = len(request.messages)
            return reply
        raise AssertionError("unreachable")

    def _ground(self, answer: str, steps: list[JSONDict], environment: JSONDict) -> JSONDict:
        earlier = [{**s, "index": None} for s in self.transcript.steps]
        given = [m["content"] for m in self.messages if is_question(m)]
        for entry in environment.get("files") or []:
            if isinstance(entry, dict):
                given.append(str(entry.get("path") or ""))
                given += [str(c.get("name") if isinstance(c, dict) else c)
                          for c in entry.get("columns") or []]  # fmt: skip
        return ground_answer(answer, step_sources([*earlier, *steps]), given=given)

    def _record(self, request: ChatRequest, reply: ChatReply | None, environment: JSONDict) -> None:
        """Keep what went out (and, with a reply, what it cost)."""
        log = self._sent_log
        records = [log.record(body, environment, offline=False) for body in request.sent]
        if not records and reply is not None:  # an offline model: what it would have got
            records = [log.record(offline_body(request), environment, offline=True)]
        if reply is not None and records:
            body = records[-1]["body"]
            usage = call_usage(body, reply, prompt_chars=log.prompt_chars(body))
            records[-1]["usage"] = usage
            self._answer_usage = add_usage([self._answer_usage, usage])
            if self.on_usage is not None:
                self.on_usage(
                    {"call": usage, "answer": self._answer_usage, "session": self.session_usage}
                )
        self._sent.extend(records)

    async def _execute(self, code: str, tool: str) -> tuple[str, JSONDict, str, JSONDict]:
        """Ask (in ask mode), run, and write the observation the model will read.

        Returns the code that ran, the full result (for the page), the observation
        (privacy-filtered) and extra step fields.
        """
        extra: JSONDict = {}
        note = ""
        if self.approval == "ask":
            decision = await self._decision(code, tool)
            extra["decision"] = decision.action
            if decision.action == "reject":
                extra["reason"] = decision.reason
                result: JSONDict = {"status": "rejected", "reason": decision.reason}
                return code, result, rejected_note(decision.reason), extra
            if decision.action == "edit":
                extra["proposed"] = code
                code, note = decision.code, edited_note(decision.code) + "\n"
        result = await self._run_cell(code)
        shown = result
        if self._redactor is not None:
            shown, hidden = self._redactor.filter_result(result)
            extra["hidden"] = hidden
        observation = format_observation(shown, limit=self.observation_limit)
        loaded = bool(self._tables.names)
        observation += _name_hint(result, self._load_lines, loaded=loaded)
        observation += _format_hint(result, code)
        if extra.get("hidden"):
            observation += (
                f"\nprivacy: {extra['hidden']} value(s) from the user's files were replaced by "
                "[hidden]; only schemas, shapes and aggregates are shown to you"
            )
        return code, result, note + observation, extra

    async def _decision(self, code: str, tool: str) -> Decision:
        if self.decide is None:
            raise ProtocolError('approval is "ask" but the agent was given no decide callback')
        if self._stopped():
            raise Stopped
        assert self._stop_event is not None
        self._proposals += 1
        proposal = {"id": f"p{self._proposals}", "code": code, "tool": tool}
        waiting = asyncio.ensure_future(self.decide(proposal))
        stopping = asyncio.ensure_future(self._stop_event.wait())
        done, _ = await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if waiting not in done:
            waiting.cancel()
            raise Stopped
        return parse_decision(waiting.result(), code)


_UNDEFINED = re.compile(r"name '(\w+)' is not defined")


def _name_hint(result: JSONDict, loads: list[str], *, loaded: bool = False) -> str:
    """A NameError for a table variable: small models assume the file is loaded."""
    error = result.get("error")
    if result.get("status") != "error" or not isinstance(error, dict) or not loads:
        return ""
    if error.get("type") != "NameError":
        return ""
    match = _UNDEFINED.search(str(error.get("message") or ""))
    if match is None or match.group(1) in ("pd", "np", "plt"):
        return ""
    shown = "; ".join(loads[:3])
    if loaded:
        return f"\nnote: the files are loaded under these names: {shown}"
    return f"\nnote: no file is loaded at the start; load it first, e.g. {shown}"


_FORM_IN_CODE = re.compile(r"^\s*@[A-Za-z_]\w*\[", re.MULTILINE)


def _format_hint(result: JSONDict, code: str) -> str:
    """Small models write the answer's @name[value] form as Python (a SyntaxError)."""
    error = result.get("error")
    if result.get("status") != "error" or not isinstance(error, dict):
        return ""
    if error.get("type") != "SyntaxError" or not _FORM_IN_CODE.search(code):
        return ""
    return (
        "\nnote: @name[value] is the form of your final answer, not Python: compute the "
        "value in code and print it; write @name[value] only in the answer"
    )
