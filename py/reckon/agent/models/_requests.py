"""The model calls of one conversation: each request fitted to the model's window,
announced (``on_call``), sent, and recorded with what it cost, against the budgets."""

from __future__ import annotations

from collections.abc import Callable

from reckon._exceptions import ModelError
from reckon.agent._conversation import Conversation
from reckon.agent._options import AgentOptions
from reckon.agent._stopping import Stopping
from reckon.agent._types import (
    RUN_PYTHON_TOOL,
    RUN_SQL_TOOL,
    ChatReply,
    ChatRequest,
    JSONDict,
    Model,
)
from reckon.agent.models._context import estimate_tokens, fit_messages, is_overflow
from reckon.agent.models._sent import offline_body
from reckon.agent.models._usage import add_usage, budget_message, call_usage
from reckon.agent.privacy._outgoing import outgoing

__all__ = ["Requests"]


class Requests:
    """Sends the history to the model and keeps the record of what went out.

    ``usage``, ``budget`` and ``sent`` belong to the answer under way (``begin``);
    the log and what the model has already read belong to the conversation.
    """

    def __init__(
        self,
        conversation: Callable[[], Conversation],
        options: AgentOptions,
        session_usage: Callable[[], JSONDict],
    ) -> None:
        # The conversation under way: its log of what earlier requests sent (so each
        # request copies only what is new) and how much of it the model has read.
        self._conversation = conversation
        self._options = options
        self._session_usage = session_usage
        self.usage: JSONDict = add_usage([])
        self.budget: int | None = None
        self.sent: list[JSONDict] = []

    def begin(self, budget: int | None) -> None:
        """A new answer: no usage, no records yet; ``budget`` limits it alone."""
        self.usage, self.budget, self.sent = add_usage([]), budget, []

    def budget_hit(self, *, before_call: bool) -> str | None:
        """The message to stop with when a budget is used up (or would be by a call)."""
        limits = [
            (self.budget, self.usage, "this answer"),
            (self._options.token_budget, self._session_usage(), "this session"),
        ]
        for budget, used, scope in limits:
            if budget is None:
                continue
            total = int(used["total_tokens"])
            if total > budget or (before_call and total >= budget):
                return budget_message(total, budget, scope, before_call=before_call)
        return None

    async def call(
        self,
        model: Model,
        messages: list[JSONDict],
        environment: JSONDict,
        force: str | None,
        stopping: Stopping,
    ) -> ChatReply:
        """One model call. ``messages`` (the history) is cut in place to fit the model's
        window; when the server still finds it too long it is cut further and sent again."""
        window = getattr(model, "context_window", None)
        for attempt in range(3):
            if isinstance(window, int) and window > 0:
                messages[:] = fit_messages(
                    messages, limit=int(window * 0.85), target=int(window * 0.6)
                )
            request = ChatRequest(
                # Schema privacy filters every string of what goes out (_outgoing).
                messages=outgoing(messages, environment),
                tools=[RUN_PYTHON_TOOL, RUN_SQL_TOOL],
                model=model.name,
                context=environment,
                tool_choice=force,
            )
            self._announce(model, request)
            try:
                reply = await stopping.call_model(model, request, self._options.on_text)
            except ModelError as exc:
                self._record(request, None, environment)
                if attempt == 2 or not is_overflow(exc):
                    raise
                window = int(estimate_tokens(messages) * 0.6)
                continue
            except BaseException:
                self._record(request, None, environment)
                raise
            self._record(request, reply, environment)
            self._conversation().read_until = len(request.messages)
            return reply
        raise AssertionError("unreachable")

    def _announce(self, model: Model, request: ChatRequest) -> None:
        if self._options.on_call is not None:
            fresh = request.messages[min(self._conversation().read_until, len(request.messages)) :]
            self._options.on_call({"model": model.name, "tokens": estimate_tokens(request.messages),
                                   "new_tokens": estimate_tokens(fresh)})  # fmt: skip

    def _record(self, request: ChatRequest, reply: ChatReply | None, environment: JSONDict) -> None:
        """Keep what went out (and, with a reply, what it cost)."""
        log = self._conversation().sent_log
        records = [log.record(body, environment, offline=False) for body in request.sent]
        if not records and reply is not None:  # an offline model: what it would have got
            records = [log.record(offline_body(request), environment, offline=True)]
        if reply is not None and records:
            body = records[-1]["body"]
            usage = call_usage(body, reply, prompt_chars=log.prompt_chars(body))
            records[-1]["usage"] = usage
            self.usage = add_usage([self.usage, usage])
            if self._options.on_usage is not None:
                self._options.on_usage(
                    {"call": usage, "answer": self.usage, "session": self._session_usage()}
                )
        self.sent.extend(records)
