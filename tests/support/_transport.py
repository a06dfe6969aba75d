"""The agent tests' ``Transport``: what the page does with fetch, done with httpx."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from reckon import ModelError


class HttpxTransport:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    async def stream(self, path: str, payload: dict[str, Any]) -> AsyncIterator[bytes]:
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream("POST", self.base_url + path, json=payload) as response,
        ):
            if response.status_code >= 400:
                _raise(response.status_code, await response.aread())
            async for chunk in response.aiter_raw():
                yield chunk

    async def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(self.base_url + path, json=payload)
        if response.status_code >= 400:
            _raise(response.status_code, response.content)
        body: dict[str, Any] = response.json()
        return body


def _raise(status: int, body: bytes) -> None:
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")
    raise ModelError(message, status=status)
