"""What the agent worker holds between the page's calls: the agent, its control
settings (checked whole before any is set) and the events it posts to the page.

``_host`` (the functions the worker's JavaScript calls) keeps one of these; this module
does not touch ``js`` either: ``_bridge`` does, through the ``bridge`` it is given.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from reckon._exceptions import ProtocolError
from reckon.agent._approval import APPROVAL_MODES
from reckon.agent._bridge import FetchTransport, PageExecutor
from reckon.agent._loop import Agent
from reckon.agent._types import JSONDict, Model
from reckon.agent.demo import DEMO_MODEL, DemoModel
from reckon.agent.models._openai import TOOL_MODES, OpenAIModel
from reckon.agent.privacy._privacy import Privacy

__all__ = ["CONTROL_SETTINGS", "HostState", "budget", "flag"]

# The settings ``configure`` may change while the worker runs.
CONTROL_SETTINGS = ("approval", "privacy", "allowColumns", "tokenBudget", "verify")


class HostState:
    def __init__(self, bridge: Any, config: JSONDict) -> None:
        self.bridge = bridge
        self.config = config
        settings = config.get("settings", {})
        self.executor = PageExecutor(
            bridge,
            timeout_ms=int(settings.get("timeoutMs", 60_000)),
            per_gb_ms=int(settings.get("timeoutPerGbMs", 60_000)),
        )
        self.agent = Agent(
            DemoModel(),
            self.executor,
            max_steps=int(settings.get("maxSteps", 12)),
            max_failures=int(settings.get("maxFailures", 3)),
            on_step=self._on_step,
            on_text=self._on_text,
            on_usage=self._on_usage,
            on_call=self._on_call,
            decide=self._decide,
        )
        self.ask_id = 0
        self.turns = self.agent.turns  # the one line of asks and imports (_turns)
        self.task: asyncio.Task[JSONDict] | None = None
        self.proposals: dict[str, asyncio.Future[JSONDict]] = {}
        # A bad setting fails each ask with its message instead of breaking the worker.
        self.settings_error = ""
        self.control = {k: settings.get(k) for k in CONTROL_SETTINGS}
        try:
            self.apply(self.control)
        except ProtocolError as exc:
            self.settings_error = str(exc)

    def apply(self, control: JSONDict) -> None:
        """Check every control setting first, then set them all (bad input changes nothing)."""
        tokens = budget(control.get("tokenBudget"), "settings.tokenBudget")
        privacy = Privacy.parse(control.get("privacy"), control.get("allowColumns"))
        approval = control.get("approval") or "auto"
        if approval not in APPROVAL_MODES:
            raise ProtocolError(f'settings.approval must be "auto" or "ask", got {approval!r}')
        verify = flag(control.get("verify"), "settings.verify")
        agent = self.agent
        agent.token_budget, agent.privacy, agent.approval, agent.verify = (
            tokens,
            privacy,
            str(approval),
            verify,
        )
        self.control, self.settings_error = dict(control), ""

    def _on_call(self, call: JSONDict) -> None:
        self._post({"type": "waiting", "askId": self.ask_id, **call})

    def _on_usage(self, usage: JSONDict) -> None:
        self._post({"type": "usage", "askId": self.ask_id, **usage})

    async def _decide(self, proposal: JSONDict) -> JSONDict:
        future: asyncio.Future[JSONDict] = asyncio.get_running_loop().create_future()
        self.proposals[str(proposal["id"])] = future
        self._post({"type": "proposal", "askId": self.ask_id, **proposal})
        try:
            return await future
        finally:
            self.proposals.pop(str(proposal["id"]), None)

    def _post(self, event: JSONDict) -> None:
        self.bridge.post(json.dumps(event))

    def _on_step(self, step: JSONDict) -> None:
        self._post({"type": "step", "askId": self.ask_id, "step": step})

    def _on_text(self, text: str) -> None:
        self._post({"type": "delta", "askId": self.ask_id, "text": text})

    def model_for(self, name: str, options: JSONDict | None = None) -> Model:
        if not name or name == DEMO_MODEL:
            return DemoModel()
        relay = str(self.config.get("relay", ""))
        transport = FetchTransport(relay, token=self.config.get("token"))
        options = options or {}
        tools = options.get("tools") if options.get("tools") in TOOL_MODES else "auto"
        window = options.get("context_window")
        window = window if isinstance(window, int) and not isinstance(window, bool) else None
        # The relay saw this model answer a tool call as text: code blocks from the start.
        blocks = tools == "auto" and options.get("calls_as_text") is True
        return OpenAIModel(
            transport,
            model=name,
            tools=str(tools),
            context_window=window,
            use_tools=False if blocks else None,
        )


def budget(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1:
        raise ProtocolError(f"{name} must be a positive number of tokens (or null), got {value!r}")
    return int(value)


def flag(value: Any, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ProtocolError(f"{name} must be true or false, got {value!r}")
    return value
