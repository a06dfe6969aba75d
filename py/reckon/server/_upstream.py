"""The model servers behind the relay: which one serves a model id, how to call it.

This module is the only place that reads API keys (from the environment, at
request time, so a rotated key needs no restart) and the only place that
builds the headers sent upstream. Those headers are always built from
scratch: nothing the browser sent (Authorization, Cookie, ...) is forwarded.
"""

from __future__ import annotations

import json
import os
import time
from types import TracebackType
from typing import Any

import anyio
import httpx

from reckon import __version__
from reckon.server import _anthropic, _json
from reckon.server._access import redis_password
from reckon.server._config import Profile, RelayConfig, ResolvedModel
from reckon.server._errors import RelayError, Scrubber
from reckon.server._text_calls import TextCalls
from reckon.server._upstream_errors import describe_failure

__all__ = ["Upstreams", "chat_call"]

# Discovered model lists are kept this long; configured lists never expire.
_MODELS_TTL = 300.0


def chat_call(target: ResolvedModel, payload: dict[str, Any]) -> tuple[str, bytes]:
    """The upstream URL and body for a chat-completions request, in the profile's protocol."""
    endpoint = target.profile.endpoint
    if target.profile.protocol == "anthropic":
        body = _anthropic.messages_request(payload, target.model)
        return f"{endpoint}/messages", _json.dumps(body)
    return f"{endpoint}/chat/completions", _json.dumps({**payload, "model": target.model})


class Upstreams:
    """Profiles, their (discovered) model lists and one shared HTTP client."""

    def __init__(self, config: RelayConfig) -> None:
        self.config = config
        self.in_flight = 0
        self.text_calls = TextCalls()  # models that answer tool calls as text (_text_calls)
        self._client: httpx.AsyncClient | None = None
        self._discovered: dict[str, tuple[float, list[str]]] = {}

    async def __aenter__(self) -> Upstreams:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def client(self) -> httpx.AsyncClient:
        # Created lazily so an app used without its lifespan still works.
        if self._client is None:
            c = self.config
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    connect=c.connect_timeout,
                    read=c.first_byte_timeout,
                    write=c.first_byte_timeout,
                    pool=c.connect_timeout,
                ),
                # Idle connections expire well before the usual 5 s server keep-alive,
                # so a request never lands on one the server is closing (a 502).
                limits=httpx.Limits(
                    max_connections=c.max_concurrent_streams + 8, keepalive_expiry=2.0
                ),
                # No proxy or .netrc from the environment: .netrc credentials
                # would be sent instead of the configured key.
                trust_env=False,
                follow_redirects=False,
            )
        return self._client

    def key(self, profile: Profile) -> str | None:
        if profile.api_key_env is None:
            return None
        return os.environ.get(profile.api_key_env) or None

    def secrets(self) -> list[str | None]:
        """What must never leave the relay: each profile's key, the relay's tokens (shared
        and per client), the signing secret and the Redis password."""
        c = self.config
        keys = [self.key(p) for p in c.profiles]
        clients = [client.token for client in c.clients]
        return [*keys, c.token, *clients, c.client_secret, redis_password(c.redis_url)]

    def scrubber(self) -> Scrubber:
        return Scrubber(self.secrets())

    def headers(self, profile: Profile, *, stream: bool) -> dict[str, str]:
        headers = {
            "Accept": "text/event-stream" if stream else "application/json",
            # Raw bytes are passed to the browser unchanged, so ask for them
            # uncompressed.
            "Accept-Encoding": "identity",
            "Content-Type": "application/json",
            "User-Agent": f"reckon-relay/{__version__}",
        }
        key = self.key(profile)
        if profile.protocol == "anthropic":
            headers["anthropic-version"] = _anthropic.ANTHROPIC_VERSION
            if key is not None:
                headers["x-api-key"] = key
        elif key is not None:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def models(self, profile: Profile) -> list[str]:
        """The profile's model names, asking the server when none are configured."""
        if profile.models:
            return profile.models
        cached = self._discovered.get(profile.name)
        if cached and time.monotonic() - cached[0] < _MODELS_TTL:
            return cached[1]
        try:
            response = await self.client.get(
                f"{profile.endpoint}/models", headers=self.headers(profile, stream=False)
            )
            await response.aread()
        except httpx.HTTPError as exc:
            raise describe_failure(exc, profile, self.config) from None
        try:
            names = [str(m["id"]) for m in json.loads(response.content)["data"]]
        except (ValueError, KeyError, TypeError):
            names = None
        if response.status_code != 200 or not names:
            raise RelayError(
                502,
                f"The model server '{profile.name}' did not list its models (GET /models "
                f"answered HTTP {response.status_code}). Name the models in the relay's "
                "configuration (--model or models = [...]).",
            )
        self._discovered[profile.name] = (time.monotonic(), names)
        return names

    async def catalogue(self) -> tuple[list[ResolvedModel], list[RelayError]]:
        """Every model of every profile, and the failures of profiles that could not say.

        A model name offered by one profile only gets its bare name as id;
        names offered by several profiles are listed as ``profile/model``.
        """
        lists: dict[str, list[str]] = {}
        failures: list[RelayError] = []

        async def fetch(profile: Profile) -> None:
            try:
                lists[profile.name] = await self.models(profile)
            except RelayError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as group:
            for profile in self.config.profiles:
                group.start_soon(fetch, profile)
        every = [m for names in lists.values() for m in names]
        targets = []
        for profile in self.config.profiles:
            for model in lists.get(profile.name, []):
                unique = every.count(model) == 1
                targets.append(
                    ResolvedModel(model if unique else f"{profile.name}/{model}", profile, model)
                )
        return targets, failures

    async def default(self) -> ResolvedModel | None:
        """The first profile's default model, else the first model offered."""
        targets, _ = await self.catalogue()
        for profile in self.config.profiles:
            for target in targets:
                if target.profile is profile and target.model == profile.default_model:
                    return target
        return targets[0] if targets else None

    async def resolve(self, requested: str | None) -> ResolvedModel:
        if not self.config.profiles:
            raise RelayError(
                404,
                "This relay has no model server configured (demo mode). Restart it with "
                "--upstream URL --model NAME, or --config FILE.",
            )
        if requested is None:
            target = await self.default()
            if target is None:
                _, failures = await self.catalogue()
                if failures:  # the servers that could have offered one are down
                    raise failures[0]
                raise RelayError(404, "No model is available; name one in the request's 'model'.")
            return target
        prefix, _, rest = requested.partition("/")
        for profile in self.config.profiles:
            if rest and profile.name == prefix and rest in await self.models(profile):
                return ResolvedModel(requested, profile, rest)
        targets, failures = await self.catalogue()
        for target in targets:
            if target.model == requested:
                return target
        if failures:
            # It may well be on the server that could not be asked.
            raise failures[0]
        offered = ", ".join(t.id for t in targets) or "none"
        raise RelayError(
            404,
            f"Unknown model {requested!r}. This relay offers: {offered}. "
            "Pick one of those (GET /v1/models lists them).",
            type="model_not_found",
        )
