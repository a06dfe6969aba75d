"""The cells of one model reply: asked for (approval ``"ask"``), run in the sandbox,
and told back to the model as observations (privacy-filtered, with hints)."""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from reckon._exceptions import ProtocolError
from reckon.agent._approval import Decision, edited_note, parse_decision, rejected_note
from reckon.agent._figure_room import FigureRoom
from reckon.agent._observe import (
    NEXT_AFTER_ERROR,
    NEXT_AFTER_OK,
    format_observation,
    observation_message,
)
from reckon.agent._options import AgentOptions
from reckon.agent._steps import Correction, StepLog
from reckon.agent._stopping import Stopped, Stopping
from reckon.agent._types import Executor, JSONDict
from reckon.agent.checks._form_lines import print_form_lines
from reckon.agent.checks._reads import rewrite_reads
from reckon.agent.checks._respell import respell_columns
from reckon.agent.models._code import ToolArguments, parse_tool_arguments
from reckon.agent.models._reply import Move
from reckon.agent.privacy._privacy import Redactor

__all__ = ["Cells"]


@dataclass
class Cells:
    """Runs the cells the model asks for during one ask."""

    executor: Executor
    options: AgentOptions  # read live: approval may change from one cell to the next
    stopping: Stopping
    redactor: Redactor | None = None  # schema privacy: what the model may not see
    load_lines: list[str] = field(default_factory=list)  # how the tables were loaded
    loaded: bool = False  # Reckon loaded them before the model's turn
    uploads: list[str] = field(default_factory=list)  # the table files (``_reads``)
    proposals: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    # The last cell that ran (code, observation), and how often in a row it came back.
    previous: tuple[str, str] | None = None
    repeats: int = 0
    figures: FigureRoom = field(default_factory=FigureRoom)  # kept by this answer

    @property
    def private(self) -> bool:
        """Schema privacy is on: the model may read only what the redactor lets through."""
        return self.redactor is not None

    async def run_reply(
        self, move: Move, raw: str, messages: list[JSONDict], log: StepLog, started: float
    ) -> list[tuple[str, JSONDict]]:
        """Run the reply's cells. Native calls get one ``tool`` answer each (every call
        needs one, or the history is invalid next time). Calls written as text and code
        blocks keep the reply as the model wrote it up to its last call (the server's
        prompt cache holds for that prefix; what follows was a guess at the result),
        and get their outputs as one user message, which every server accepts."""
        if move.native:
            # "" rather than null content: llama-cpp-python answers null with a 500.
            calls = [{"id": c["id"], "type": "function",
                      "function": {"name": c["name"], "arguments": c["arguments"]}}
                     for c in move.calls]  # fmt: skip
            messages.append({"role": "assistant", "content": move.text, "tool_calls": calls})
        else:
            messages.append({"role": "assistant", "content": move.spoken(raw)})
        cells = [(c["id"], c["name"], parse_tool_arguments(c["name"], c["arguments"]))
                 for c in move.calls]  # fmt: skip
        if move.code is not None:
            cells = [("", "run_python", ToolArguments(move.code))]
        observations: list[str] = []

        def answer(call_id: str, content: str) -> None:
            if move.native:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
            else:
                observations.append(content)

        results: list[tuple[str, JSONDict]] = []
        try:
            for number, (call_id, name, parsed) in enumerate(cells):
                text = move.text if number == 0 else ""
                if self.stopping.stopped():
                    answer(call_id, "status: not run (stopped by the user)")
                    continue
                if parsed.code is None:
                    problem = parsed.problem or "the tool call could not be read"
                    answer(call_id, f"status: error\nerror: {problem}")
                    log.add({"kind": "error", "text": text, "message": problem}, started)
                    results.append(("", {"status": "error", "error": {"message": problem}}))
                    started = time.monotonic()
                    continue
                try:
                    ran, result, observation, extra = await self._execute(parsed.code, name)
                except Stopped:
                    answer(call_id, "status: interrupted (stopped by the user)")
                    for later, _, _ in cells[number + 1 :]:
                        answer(later, "status: not run (stopped by the user)")
                    raise
                answer(call_id, observation)
                step = {"kind": "code", "text": text, "code": ran, "result": result, **extra}
                log.add(step, started)
                # The model's own code: a reply quoting it again is a quote, not a cell.
                results.append((str(extra.get("proposed", ran)), result))
                started = time.monotonic()
        finally:
            if observations:
                messages.append({"role": "user", "content": observation_message(observations)})
        return results

    async def correct(
        self, correction: Correction, messages: list[JSONDict], log: StepLog
    ) -> tuple[str, JSONDict]:
        """Run the cell Reckon put right (``_date_parts``) as a step of its own, asked
        for and filtered as the model's are; its output joins the recheck, which is the
        history's last message. Returns the code that ran and its result."""
        started = time.monotonic()
        ran, result, observation, extra = await self._execute(correction.code, "run_python")
        step = {"kind": "code", "text": correction.note, "code": ran, "result": result,
                "origin": "correction", **extra}  # fmt: skip
        log.add(step, started)
        after = NEXT_AFTER_OK if result.get("status") == "ok" else NEXT_AFTER_ERROR
        said = f"{correction.message}Its output:\n{observation}\n\n{after}"
        messages[-1] = {**messages[-1], "content": said}
        return ran, result

    async def run(self, code: str) -> JSONDict:
        """Run ``code`` as it is (no approval, no observation): a table Reckon loads."""
        result = await self.stopping.run_cell(
            self.executor, code, grace=self.options.interrupt_grace
        )
        return self.figures.keep(result)

    async def _execute(self, code: str, tool: str) -> tuple[str, JSONDict, str, JSONDict]:
        """Ask (in ask mode), run, and write the observation the model will read.

        Returns the code that ran, the full result (for the page), the observation
        (privacy-filtered) and extra step fields.
        """
        extra: JSONDict = {}
        note = ""
        forms = print_form_lines(code)
        rewrite = rewrite_reads(forms.code, self.uploads)
        if forms.lines or rewrite.calls:
            extra["proposed"], code = code, rewrite.code
        if self.options.approval == "ask":
            decision = await self._decision(code, tool)
            extra["decision"] = decision.action
            if decision.action == "reject":
                extra["reason"] = decision.reason
                result: JSONDict = {"status": "rejected", "reason": decision.reason}
                return code, result, rejected_note(decision.reason), extra
            if decision.action == "edit":
                extra.setdefault("proposed", code)  # the model's own, before Reckon's rewrite
                code, note = decision.code, edited_note(decision.code) + "\n"
        result = await self.run(code)
        notes = ""
        # The error names the column meant: run it so (a query's binder names one a run).
        for _ in range(0 if self.options.approval == "ask" else 3):
            respelt = respell_columns(code, result)
            if respelt is None:
                break
            extra.setdefault("proposed", code)
            code, result = respelt.code, await self.run(respelt.code)
            notes += respelt.note
        shown = result
        if self.redactor is not None:
            shown, hidden = self.redactor.filter_result(result)
            extra["hidden"] = hidden
        observation = format_observation(shown, limit=self.options.observation_limit)
        observation += forms.note() + rewrite.note() + notes
        observation += _name_hint(result, self.load_lines, loaded=self.loaded)
        observation += self._repeat_hint(code, observation)
        if extra.get("hidden"):
            observation += (
                f"\nprivacy: {extra['hidden']} value(s) from the user's files were replaced by "
                "[hidden]; only schemas, shapes and aggregates are shown to you"
            )
        return code, result, note + observation, extra

    def _repeat_hint(self, code: str, observation: str) -> str:
        """Small models run the same cell again and again (seen: eleven times) when its
        output does not answer the question as they read it: say so, so they answer or
        try something else. Durations differ between runs, so they are left out."""
        same = _without_duration(observation)
        repeated = self.previous is not None and self.previous == (code.strip(), same)
        self.previous = (code.strip(), same)
        self.repeats = self.repeats + 1 if repeated else 0
        if not repeated:
            return ""
        return (
            f"\nnote: this is the code you ran before, with the same output "
            f"({self.repeats + 1} times now): running it again will not change it. Give the "
            "final answer from this output, or write different code for what the question asks"
        )

    async def _decision(self, code: str, tool: str) -> Decision:
        decide = self.options.decide
        if decide is None:
            raise ProtocolError('approval is "ask" but the agent was given no decide callback')
        if self.stopping.stopped():
            raise Stopped
        proposal = {"id": f"p{next(self.proposals)}", "code": code, "tool": tool}
        waiting = asyncio.ensure_future(decide(proposal))
        if not await self.stopping.first(waiting):
            waiting.cancel()
            raise Stopped
        return parse_decision(waiting.result(), code)


_UNDEFINED = re.compile(r"name '(\w+)' is not defined")
_DURATION = re.compile(r"^status: (\w+) \(\d+ ms\)", re.MULTILINE)


def _without_duration(observation: str) -> str:
    return _DURATION.sub(r"status: \1", observation)


def _name_hint(result: JSONDict, loads: list[str], *, loaded: bool = False) -> str:
    """A NameError for a table variable: small models assume the file is loaded."""
    error = result.get("error")
    if result.get("status") != "error" or not isinstance(error, dict) or not loads:
        return ""
    if error.get("type") != "NameError" or error.get("hint"):
        return ""  # the kernel's hint names the tables already
    match = _UNDEFINED.search(str(error.get("message") or ""))
    if match is None or match.group(1) in ("pd", "np", "plt"):
        return ""
    shown = "; ".join(loads[:3])
    if loaded:
        return f"\nnote: the files are loaded under these names: {shown}"
    return f"\nnote: no file is loaded at the start; load it first, e.g. {shown}"
