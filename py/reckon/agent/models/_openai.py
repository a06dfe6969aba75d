"""A client for OpenAI-compatible chat completions, over any ``Transport``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from reckon._exceptions import ModelError, ModelProtocolError
from reckon.agent._observe import observation_message
from reckon.agent._types import RUN_PYTHON_TOOL, ChatReply, ChatRequest, JSONDict, Transport
from reckon.agent.models._fences import fence
from reckon.agent.models._sse import ChunkAccumulator, SSEDecoder, raise_for_error

__all__ = ["OpenAIModel", "messages_without_tools", "parse_completion"]

CHAT_PATH = "/v1/chat/completions"
_TOOL_WORDS = ("tool", "function")


TOOL_MODES = ("auto", "on", "off")


class OpenAIModel:
    """Calls ``/v1/chat/completions`` and parses the stream or the JSON reply.

    ``tools``: ``"on"`` always offers the tools, ``"off"`` never does (the model
    writes fenced code blocks), ``"auto"`` offers them until the model shows it
    does not use them: the server refuses them (HTTP 400 naming tools or function
    calling; the call is retried at once without them), or the model answers with
    a code block instead of a call, or with a call written as text that the server
    did not parse. Either way the model stays in code-block mode,
    and the next system prompt tells it so. A server that refuses ``tool_choice``
    is asked again without it. ``context_window`` (tokens) makes the agent cut the
    history to fit before sending.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        model: str,
        tools: str = "auto",
        use_tools: bool | None = None,
        stream: bool = True,
        temperature: float | None = 0,
        context_window: int | None = None,
        path: str = CHAT_PATH,
    ) -> None:
        if tools not in TOOL_MODES:
            raise ModelProtocolError(f"tools must be one of {', '.join(TOOL_MODES)}, got {tools!r}")
        self.name = model
        self.tools = tools
        self.use_tools = tools != "off" if use_tools is None else use_tools
        self.stream = stream
        self.temperature = temperature
        self.context_window = context_window
        self.tool_choice_ok = True
        self._transport = transport
        self._path = path

    @property
    def forces_first_call(self) -> bool:
        """Whether a data question's first call names ``run_python`` in ``tool_choice``.

        Only with ``tools="on"``. In ``"auto"`` the first call is left free, because a
        server that does not parse tool calls (llama-cpp-python with a GGUF's template)
        honours a named ``tool_choice`` by constraining the reply to the tool's JSON
        schema, and a small model squeezed into a JSON string writes one-line
        expressions that skip the question's filters (run 2 in docs/benchmarks.md:
        0 of 12 medium questions). An answer with no code is sent back; in ``"auto"``
        that next call is left free too (the same one-liners came of forcing it: a
        department "with the highest mean salary" as its most frequent value)."""
        return self.tools == "on"

    def prefer_code_blocks(self) -> None:
        """The model wrote a code block, or a call the server left as text, where it
        could have called a tool: its server does not do tool calls for it."""
        if self.tools == "auto":
            self.use_tools = False

    def payload(self, request: ChatRequest) -> JSONDict:
        """The request body for ``request`` in the current mode (with or without tools)."""
        body: JSONDict = {"model": request.model or self.name}
        if self.use_tools:
            body["messages"] = [_acceptable(m) for m in request.messages]
            body["tools"] = request.tools or [RUN_PYTHON_TOOL]
            if request.tool_choice and self.tool_choice_ok:
                function = {"name": request.tool_choice}
                body["tool_choice"] = {"type": "function", "function": function}
        else:
            body["messages"] = messages_without_tools(request.messages)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(
        self, request: ChatRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ChatReply:
        try:
            return await self._complete(request, on_text=on_text)
        except ModelError as exc:
            if not (self.use_tools and _rejects_tools(exc)):
                raise
            if "tool_choice" in str(exc) and self.tool_choice_ok and request.tool_choice:
                self.tool_choice_ok = False
            else:
                self.use_tools = False
        return await self.complete(request, on_text=on_text)

    async def _complete(
        self, request: ChatRequest, *, on_text: Callable[[str], None] | None
    ) -> ChatReply:
        body = self.payload(request)
        request.sent.append(body)
        if not self.stream:
            return parse_completion(await self._transport.post(self._path, body), on_text)
        decoder = SSEDecoder()
        chunks = ChunkAccumulator(on_text=on_text)
        started, first = time.monotonic(), None
        stream = self._transport.stream(self._path, body)
        try:
            async for raw in stream:
                for data in decoder.feed(raw):
                    # The time to the first event: for a local model, mostly prompt reading.
                    first = first if first is not None else time.monotonic()
                    chunks.add_event(data)
                if chunks.runaway.cut is not None:
                    break  # a looping reply: closing the stream stops the server too
            else:
                for data in decoder.close():
                    chunks.add_event(data)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        reply = chunks.reply()
        if first is not None:
            reply.first_token_ms = round((first - started) * 1000, 1)
        return reply


def parse_completion(payload: JSONDict, on_text: Callable[[str], None] | None = None) -> ChatReply:
    """Read a non-streamed chat completion (also tolerates a server that streamed anyway)."""
    raise_for_error(payload)
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelProtocolError(f"the model server's reply has no choices: {str(payload)[:200]}")
    accumulator = ChunkAccumulator(on_text=on_text)
    accumulator.add_chunk(payload)
    return accumulator.reply()


def _acceptable(message: JSONDict) -> JSONDict:
    """A message every server takes: no null content beside tool calls."""
    if message.get("content") is None and message.get("role") == "assistant":
        return {**message, "content": ""}
    return message


def _rejects_tools(exc: ModelError) -> bool:
    if exc.status != 400:
        return False
    text = str(exc).lower()
    return any(word in text for word in _TOOL_WORDS)


def messages_without_tools(messages: list[JSONDict]) -> list[JSONDict]:
    """Rewrite tool calls as fenced code and tool results as user messages.

    An upstream that refuses ``tools`` also refuses a history that contains them,
    so earlier tool-mode turns are restated in the code-block dialect.
    """
    rewritten: list[JSONDict] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            parts = [str(message.get("content") or "").strip()]
            for call in message["tool_calls"]:
                arguments = str((call.get("function") or {}).get("arguments") or "")
                try:
                    code = json.loads(arguments).get("code", arguments)
                except (json.JSONDecodeError, AttributeError):
                    code = arguments
                parts.append(fence(str(code)))
            rewritten.append({"role": "assistant", "content": "\n\n".join(p for p in parts if p)})
        elif role == "tool":
            content = str(message.get("content") or "")
            rewritten.append({"role": "user", "content": observation_message([content])})
        else:
            rewritten.append(message)
    return rewritten
