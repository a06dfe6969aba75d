"""The agent worker's Python entry: the only agent module that touches ``js``.

It binds the plain-Python loop to the browser: a ``Transport`` over ``fetch`` to
the relay, and an ``Executor`` that asks the page to run code in the sandbox.
The worker's JavaScript passes in a ``bridge`` with two functions:
``post(json_text)`` (an event for the page) and ``sandbox(json_text)`` (a request
for the sandbox, answered with JSON text). Message shapes: PROTOCOL.md §4.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from reckon._exceptions import ModelError, ProtocolError
from reckon.agent._demo import DemoModel
from reckon.agent._loop import Agent
from reckon.agent._openai import OpenAIModel
from reckon.agent._transcript import Transcript
from reckon.agent._types import JSONDict, Model

__all__ = ["ask", "export_state", "import_state", "reset", "start", "stop", "transcript"]

DEMO = "reckon-demo"
_STATE_VERSION = 1
_ROLES = frozenset({"system", "user", "assistant", "tool"})


class FetchTransport:
    """POSTs to the relay with the browser's fetch; streams the body as bytes."""

    def __init__(self, base_url: str, *, token: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token

    def _init(self, payload: JSONDict, signal: Any) -> Any:
        from js import Object
        from pyodide.ffi import to_js

        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        init = {"method": "POST", "headers": headers, "body": json.dumps(payload), "signal": signal}
        return to_js(init, dict_converter=Object.fromEntries)

    async def _fetch(self, path: str, payload: JSONDict) -> tuple[Any, Any]:
        from js import AbortController, fetch

        controller = AbortController.new()
        try:
            response = await fetch(self.base_url + path, self._init(payload, controller.signal))
        except Exception as exc:  # a JS TypeError: the relay is unreachable
            raise ModelError(
                f"could not reach the relay at {self.base_url}: {exc}", status=None
            ) from exc
        if not response.ok:
            text = await response.text()
            raise ModelError(_error_message(text, response.status), status=int(response.status))
        return response, controller

    async def post(self, path: str, payload: JSONDict) -> JSONDict:
        response, _ = await self._fetch(path, payload)
        data: JSONDict = json.loads(await response.text())
        return data

    async def stream(self, path: str, payload: JSONDict) -> AsyncIterator[bytes]:
        response, controller = await self._fetch(path, payload)
        reader = response.body.getReader()
        try:
            while True:
                chunk = await reader.read()
                if chunk.done:
                    return
                yield bytes(chunk.value.to_py())
        finally:
            # Stopping mid-stream (or finishing early) closes the request, so the
            # relay cancels the upstream call too.
            controller.abort()


def _error_message(text: str, status: int) -> str:
    try:
        error = json.loads(text)["error"]
        return f"{error.get('message', text)} (HTTP {status})"
    except (ValueError, KeyError, TypeError):
        return f"the relay answered HTTP {status}: {text[:300]}"


class PageExecutor:
    """Runs code in the sandbox by asking the page (the agent never sees the sandbox)."""

    def __init__(self, bridge: Any, *, timeout_ms: int) -> None:
        self.bridge = bridge
        self.timeout_ms = timeout_ms

    async def run(self, code: str) -> JSONDict:
        request = {"type": "run", "code": code, "timeoutMs": self.timeout_ms}
        reply: JSONDict = json.loads(await self.bridge.sandbox(json.dumps(request)))
        return reply

    async def interrupt(self) -> None:
        await self.bridge.sandbox(json.dumps({"type": "interrupt"}))

    async def environment(self, *, python: str, packages: list[str]) -> JSONDict:
        listing = json.loads(
            await self.bridge.sandbox(json.dumps({"type": "listFiles", "dir": "/data"}))
        )
        files = []
        for entry in listing.get("files", []):
            if entry.get("is_dir"):
                continue
            request = {"type": "inspect", "path": entry["path"]}
            files.append(json.loads(await self.bridge.sandbox(json.dumps(request))))
        return {"python": python, "packages": packages, "files": files,
                "data_dir": "/data", "output_dir": "/output"}  # fmt: skip


class _State:
    def __init__(self, bridge: Any, config: JSONDict) -> None:
        self.bridge = bridge
        self.config = config
        settings = config.get("settings", {})
        self.executor = PageExecutor(bridge, timeout_ms=int(settings.get("timeoutMs", 60_000)))
        self.agent = Agent(
            DemoModel(),
            self.executor,
            max_steps=int(settings.get("maxSteps", 12)),
            max_failures=int(settings.get("maxFailures", 3)),
            on_step=self._on_step,
            on_text=self._on_text,
        )
        self.ask_id = 0
        self.task: asyncio.Task[JSONDict] | None = None

    def _post(self, event: JSONDict) -> None:
        self.bridge.post(json.dumps(event))

    def _on_step(self, step: JSONDict) -> None:
        self._post({"type": "step", "askId": self.ask_id, "step": step})

    def _on_text(self, text: str) -> None:
        self._post({"type": "delta", "askId": self.ask_id, "text": text})

    def model_for(self, name: str) -> Model:
        if not name or name == DEMO:
            return DemoModel()
        relay = str(self.config.get("relay", ""))
        transport = FetchTransport(relay, token=self.config.get("token"))
        return OpenAIModel(transport, model=name)


_state: _State | None = None


def start(bridge: Any, config_json: str) -> None:
    global _state
    _state = _State(bridge, json.loads(config_json))


async def ask(ask_id: int, question: str, model: str) -> None:
    state = _require()
    state.ask_id = ask_id
    if state.agent.model.name != (model or DEMO):
        state.agent.model = state.model_for(model)
    env = await state.executor.environment(
        python=str(state.config.get("python", "3.12")),
        packages=list(state.config.get("packages", [])),
    )
    try:
        outcome = await state.agent.ask(question, environment=env)
    except Exception as exc:  # our own bug: say so rather than hang the page
        outcome = {
            "status": "error",
            "answer": "",
            "steps": [],
            "message": f"internal error: {exc!r}",
        }
    state._post({"type": "done", "askId": ask_id, **outcome})


def stop() -> None:
    # Called from a JS message handler, outside any running task: Agent.stop()
    # wants the event loop, so schedule it there.
    if _state is not None:
        agent = _state.agent

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
    transcript = json.loads(agent.transcript.to_json())
    state = {"version": _STATE_VERSION, "messages": agent.messages, "transcript": transcript}
    return json.dumps(state, ensure_ascii=False)


def import_state(state_json: str) -> str:
    """Replace the agent's memory with one saved by ``export_state()``.

    Returns ``{"status": "ok", "asks": n}`` or ``{"status": "error", "message"}``;
    a malformed state changes nothing.
    """
    agent = _require().agent
    try:
        if agent._busy:
            raise ProtocolError("the agent is answering a question; import the state before asking")
        messages, transcript = _parse_state(state_json)
    except ProtocolError as exc:
        return json.dumps({"status": "error", "message": str(exc)})
    agent.messages = messages
    agent.transcript = transcript
    return json.dumps({"status": "ok", "asks": len(transcript.asks)})


def _parse_state(state_json: str) -> tuple[list[JSONDict], Transcript]:
    try:
        state = json.loads(state_json)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"a saved agent state is not JSON: {exc}") from exc
    if not isinstance(state, dict):
        raise ProtocolError("a saved agent state must be an object")
    if state.get("version", _STATE_VERSION) != _STATE_VERSION:
        raise ProtocolError(f"unsupported agent state version {state.get('version')!r}")
    messages = state.get("messages", [])
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and m.get("role") in _ROLES for m in messages
    ):
        raise ProtocolError("saved messages must be a list of chat messages with a known role")
    transcript = Transcript.from_json(json.dumps(state.get("transcript", {"asks": []})))
    return messages, transcript


def _require() -> _State:
    if _state is None:
        raise RuntimeError("reckon.agent._host.start() was not called")
    return _state
