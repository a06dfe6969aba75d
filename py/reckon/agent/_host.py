"""The agent worker's Python entry: what its JavaScript calls (PROTOCOL.md §4).

It binds the plain-Python loop to the browser through ``_bridge`` (the only agent
module that touches ``js``); what it holds between calls is a ``HostState``
(``_host_state``). The worker's JavaScript passes in a ``bridge`` with two
functions: ``post(json_text)`` (an event for the page) and ``sandbox(json_text)`` (a
request for the sandbox, answered with JSON text).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from reckon._exceptions import ProtocolError
from reckon._protocol import AskOutcome
from reckon.agent._approval import parse_decision
from reckon.agent._host_state import CONTROL_SETTINGS, HostState, budget, flag
from reckon.agent._types import JSONDict
from reckon.agent.demo import DEMO_MODEL
from reckon.agent.export._export import export_notebook as _notebook
from reckon.agent.export._export import export_script as _script
from reckon.agent.export._import import import_into, refused_while_busy
from reckon.agent.export._report import export_report
from reckon.agent.export._transcript import dump_state, load_state

__all__ = [
    "ask",
    "configure",
    "decide",
    "export_session",
    "export_state",
    "import_notebook",
    "import_state",
    "reset",
    "start",
    "stop",
    "transcript",
]

_state: HostState | None = None


def start(bridge: Any, config_json: str) -> None:
    global _state
    _state = HostState(bridge, json.loads(config_json))


def ask(ask_id: int, question: str, model: str, options_json: str = "{}") -> asyncio.Task[str]:
    """Start answering; the page gets ``step``/``delta`` events while it runs, and the
    task's result (JSON text of an ``AskOutcome``) is the ``ask`` call's reply."""
    state = _require()
    # The place in line is taken now, as the message arrives: a stop() handled
    # after this call (even before the task first runs) stops this ask too.
    ticket = state.turns.ticket()
    return asyncio.ensure_future(_ask(state, ticket, ask_id, question, model, options_json))


async def _ask(
    state: HostState, ticket: int, ask_id: int, question: str, model: str, options_json: str
) -> str:
    try:
        if state.settings_error:
            raise ProtocolError(state.settings_error)
        options = json.loads(options_json or "{}")
        tokens = budget(options.get("tokenBudget"), "ask(question, {tokenBudget})")
        verify = options.get("verify")
        verify = None if verify is None else flag(verify, "ask(question, {verify})")
        model_options = options.get("modelOptions")
        model_options = model_options if isinstance(model_options, dict) else {}
    except ProtocolError as exc:
        refused: AskOutcome = {"status": "error", "answer": "", "steps": [], "message": str(exc)}
        return json.dumps(refused)
    # Behind the ask or notebook import already under way, if any (see _turns).
    async with state.turns.take(ticket) as go_on:
        if not go_on:
            stopped: AskOutcome = {
                "status": "stopped",
                "answer": "",
                "steps": [],
                "message": _STOPPED_EARLY,
            }
            return json.dumps(stopped)
        state.ask_id = ask_id
        outcome = await _answer(state, question, model, tokens, verify, model_options)
    return json.dumps(outcome)


_STOPPED_EARLY = "Stopped by the user before it started (it was waiting for the ask before it)."


async def _answer(
    state: HostState,
    question: str,
    model: str,
    budget: int | None,
    verify: bool | None,
    model_options: JSONDict,
) -> JSONDict:
    # The same model keeps its object, and with it what was learnt of it (code blocks).
    if state.agent.model.name != (model or DEMO_MODEL):
        state.agent.model = state.model_for(model, model_options)
    env = await state.executor.environment(
        python=str(state.config.get("python", "3.12")),
        packages=list(state.config.get("packages", [])),
    )
    try:
        outcome = await state.agent.ask(
            question, environment=env, token_budget=budget, verify=verify
        )
        outcome = {k: v for k, v in outcome.items() if k != "sent"}  # in transcript()
        outcome["sessionUsage"] = state.agent.session_usage
    except Exception as exc:  # our own bug: say so rather than hang the page
        outcome = {
            "status": "error",
            "answer": "",
            "steps": [],
            "message": f"internal error: {exc!r}",
        }
    return outcome


def configure(settings_json: str) -> str:
    """Change control settings from the next ask (approval: from the next cell).

    Returns ``{"status": "ok", "settings"}`` or ``{"status": "error", "message"}``;
    a bad value or an unknown key changes nothing.
    """
    state = _require()
    try:
        changes = json.loads(settings_json)
        if not isinstance(changes, dict):
            raise ProtocolError("configure(settings) takes an object, e.g. {approval: 'ask'}")
        unknown = sorted(set(changes) - set(CONTROL_SETTINGS))
        if unknown:
            raise ProtocolError(
                f"configure() cannot change {', '.join(unknown)}; it changes "
                f"{', '.join(CONTROL_SETTINGS)} (others: createReckon({{settings}}))"
            )
        state.apply({**state.control, **changes})
    except (ValueError, ProtocolError) as exc:
        return json.dumps({"status": "error", "message": str(exc)})
    return json.dumps({"status": "ok", "settings": state.control})


def decide(proposal_id: str, decision_json: str) -> str:
    """Answer a ``proposal`` event: ``{"status": "ok"}``, or an error that changes nothing."""
    state = _require()
    future = state.proposals.get(str(proposal_id))
    if future is None or future.done():
        message = f"no cell is waiting for a decision under id {proposal_id!r}"
        return json.dumps({"status": "error", "message": message})
    try:
        decision = json.loads(decision_json)
        parse_decision(decision, "")
    except (ValueError, ProtocolError) as exc:
        return json.dumps({"status": "error", "message": str(exc)})
    future.set_result(decision)
    return json.dumps({"status": "ok"})


def stop() -> None:
    # Called from a JS message handler, outside any running task: Agent.stop()
    # wants the event loop, so schedule it there.
    if _state is not None:
        agent = _state.agent

        _state.turns.stop()

        async def _stop() -> None:
            agent.stop()

        _background.add(asyncio.ensure_future(_stop()))


_background: set[asyncio.Future[None]] = set()


def reset() -> None:
    if _state is not None:
        _state.agent.reset()


def transcript() -> str:
    return _require().agent.transcript.to_json() if _state else "{}"


def export_state() -> str:
    """The agent's memory as JSON text, for the page to store: the model's message
    history (so a follow-up after a reload has the context) and the transcript."""
    agent = _require().agent
    return dump_state(agent.messages, agent.transcript)


def import_state(state_json: str) -> str:
    """Replace the agent's memory with one saved by ``export_state()``.

    Returns ``{"status": "ok", "asks": n}`` or ``{"status": "error", "message"}``;
    a malformed state changes nothing.
    """
    agent = _require().agent
    try:
        if agent.busy:
            raise ProtocolError("the agent is answering a question; import the state before asking")
        messages, transcript = load_state(state_json)
    except ProtocolError as exc:
        return json.dumps({"status": "error", "message": str(exc)})
    agent.messages = messages
    agent.transcript = transcript
    return json.dumps({"status": "ok", "asks": len(transcript.asks)})


def export_session(kind: str) -> str:
    """The conversation as ``.ipynb`` JSON text (``kind="ipynb"``), a ``.py`` script or a
    self-contained HTML report (``"html"``)."""
    transcript = _require().agent.transcript
    if kind == "html":
        return export_report(transcript)
    return _script(transcript) if kind == "py" else _notebook(transcript)


async def import_notebook(text: str, name: str) -> str:
    """Run a notebook's or script's cells as the session's starting cells (PROTOCOL §4).

    Refused while an ask runs or waits; an ask sent during the import waits for it."""
    state = _require()
    if state.turns.busy:
        return json.dumps(refused_while_busy())
    async with state.turns.take():
        return json.dumps(await import_into(state.agent, text, name=name or "notebook"))


def _require() -> HostState:
    if _state is None:
        raise RuntimeError("reckon.agent._host.start() was not called")
    return _state
