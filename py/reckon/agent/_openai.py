"""A client for OpenAI-compatible chat completions, over any ``Transport``."""

from __future__ import annotations

import json
from collections.abc import Callable

from reckon._exceptions import ModelError, ModelProtocolError
from reckon.agent._code import fence
from reckon.agent._observe import OBSERVATION_HEADER
from reckon.agent._sse import ChunkAccumulator, SSEDecoder, raise_for_error
from reckon.agent._types import RUN_PYTHON_TOOL, ChatReply, ChatRequest, JSONDict, Transport

__all__ = ["OpenAIModel", "messages_without_tools", "parse_completion"]

CHAT_PATH = "/v1/chat/completions"
_TOOL_WORDS = ("tool", "function")


class OpenAIModel:
    """Calls ``/v1/chat/completions`` and parses the stream or the JSON reply.

    When the upstream refuses tools (HTTP 400 naming tools or function calling) the
    call is retried once without them and the model stays in code-block mode: the
    system prompt already tells it to answer with a fenced block in that case.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        model: str,
        use_tools: bool = True,
        stream: bool = True,
        temperature: float | None = 0,
        path: str = CHAT_PATH,
    ) -> None:
        self.name = model
        self.use_tools = use_tools
        self.stream = stream
        self.temperature = temperature
        self._transport = transport
        self._path = path

    def payload(self, request: ChatRequest) -> JSONDict:
        """The request body for ``request`` in the current mode (with or without tools)."""
        body: JSONDict = {"model": request.model or self.name}
        if self.use_tools:
            body["messages"] = request.messages
            body["tools"] = request.tools or [RUN_PYTHON_TOOL]
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
        self.use_tools = False
        return await self._complete(request, on_text=on_text)

    async def _complete(
        self, request: ChatRequest, *, on_text: Callable[[str], None] | None
    ) -> ChatReply:
        body = self.payload(request)
        request.sent.append(body)
        if not self.stream:
            return parse_completion(await self._transport.post(self._path, body), on_text)
        decoder = SSEDecoder()
        chunks = ChunkAccumulator(on_text=on_text)
        async for raw in self._transport.stream(self._path, body):
            for data in decoder.feed(raw):
                chunks.add_event(data)
        for data in decoder.close():
            chunks.add_event(data)
        return chunks.reply()


def parse_completion(payload: JSONDict, on_text: Callable[[str], None] | None = None) -> ChatReply:
    """Read a non-streamed chat completion (also tolerates a server that streamed anyway)."""
    raise_for_error(payload)
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelProtocolError(f"the model server's reply has no choices: {str(payload)[:200]}")
    accumulator = ChunkAccumulator(on_text=on_text)
    accumulator.add_chunk(payload)
    return accumulator.reply()


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
            rewritten.append({"role": "user", "content": f"{OBSERVATION_HEADER}\n{content}"})
        else:
            rewritten.append(message)
    return rewritten
