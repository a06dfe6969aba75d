"""The relay in the test process: `create_app` under uvicorn in a thread, in front of
a `FakeUpstream`, with the settings `reckon serve` would give it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import openai

from reckon.server import Profile, RelayConfig, create_app

from ._threads import Running
from ._upstream import MODEL, FakeUpstream

THE_KEY = "sk-test-0123456789abcdef-SECRET"
KEY_ENV = "RECKON_TEST_UPSTREAM_KEY"
HELLO_BODY = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}


@dataclass
class Relay:
    """What the `a_relay` fixtures give: a running relay and the upstream behind it."""

    url: str
    port: int
    config: RelayConfig
    upstream: FakeUpstream

    def client(self, **options: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, trust_env=False, timeout=10, **options)


def an_sdk_client(relay: Relay) -> openai.OpenAI:
    """The OpenAI SDK pointed at `relay`, as a browser-side client would call it."""
    return openai.OpenAI(
        base_url=f"{relay.url}/v1",
        api_key="the-browser-side-key",
        max_retries=0,
        timeout=10,
        default_headers={"Cookie": "session=browser-cookie"},
    )


def relay_config(upstream: FakeUpstream, **overrides: Any) -> RelayConfig:
    """One profile "local" for `upstream` (its key in $KEY_ENV); ``overrides`` win."""
    settings: dict[str, Any] = {
        "profiles": [
            Profile(
                name="local",
                base_url=f"{upstream.url}/v1",
                api_key_env=KEY_ENV,
                models=[MODEL],
                default_model=MODEL,
            )
        ],
        "port": 0,
    }
    settings.update(overrides)
    return RelayConfig(**settings)


class Relays:
    """Starts relays in front of one upstream; all of them stop with `close`."""

    def __init__(self, upstream: FakeUpstream) -> None:
        self.upstream = upstream
        self._stack = ExitStack()

    def __call__(self, **overrides: Any) -> Relay:
        config = relay_config(self.upstream, **overrides)
        server = self._stack.enter_context(Running(create_app(config), relay=config))
        return Relay(server.url, server.port, config, self.upstream)

    def close(self) -> None:
        self._stack.close()


@contextmanager
def relays(upstream: FakeUpstream) -> Iterator[Relays]:
    starter = Relays(upstream)
    try:
        yield starter
    finally:
        starter.close()


def burst(
    urls: Sequence[str],
    count: int,
    *,
    headers: dict[str, str] | None = None,
    body: dict[str, Any] | None = None,
) -> list[httpx.Response]:
    """`count` chat calls sent at once, spread over `urls` in turn; the answers in order."""

    async def run() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
        async with httpx.AsyncClient(limits=limits, timeout=30, trust_env=False) as client:
            start = asyncio.Event()

            async def one(number: int) -> httpx.Response:
                await start.wait()
                url = f"{urls[number % len(urls)]}/v1/chat/completions"
                return await client.post(url, json=body or HELLO_BODY, headers=headers)

            tasks = [asyncio.ensure_future(one(n)) for n in range(count)]
            await asyncio.sleep(0)  # every task is waiting on the start line
            start.set()
            return list(await asyncio.gather(*tasks))

    return asyncio.run(run())
