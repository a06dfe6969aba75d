"""The agent worker's two ties to the browser: ``fetch`` to the relay, and the page's
sandbox. The only agent module that touches ``js``; everything else runs on CPython.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from reckon._exceptions import ModelError
from reckon._protocol import AGENT_ALLOWED
from reckon.agent._tool_values import ToolValues
from reckon.agent._types import JSONDict

__all__ = ["FetchTransport", "PageExecutor"]


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
        except BaseException:
            # Stopped before the first byte (a local model still reading its prompt):
            # without the abort the request lives on, and a server that answers one call
            # at a time keeps the next ask waiting behind it.
            controller.abort()
            raise
        if not response.ok:
            text = await response.text()
            raise ModelError(_error_message(text, response.status), status=int(response.status))
        return response, controller

    async def post(self, path: str, payload: JSONDict) -> JSONDict:
        response, controller = await self._fetch(path, payload)
        try:
            text = await response.text()
        except BaseException:
            controller.abort()  # stopped while the reply was on its way
            raise
        data: JSONDict = json.loads(text)
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
    """Runs code in the sandbox by asking the page (the agent never sees the sandbox).

    Each request is ``{"type": <method>, ...args}`` as JSON text; the worker's
    JavaScript sends it to the page as a ``call`` (PROTOCOL.md §4) and hands back the
    reply's payload as JSON text.

    A run may take ``timeout_ms``, plus ``per_gb_ms`` for each GB of the files under
    /data as last listed: a query over a 5 GB upload is a minute of DuckDB here, which
    a limit made for small files would stop every time."""

    def __init__(self, bridge: Any, *, timeout_ms: int, per_gb_ms: int = 0) -> None:
        self.bridge = bridge
        self.base_timeout_ms = timeout_ms
        self.per_gb_ms = per_gb_ms
        self.data_bytes = 0
        self.tool_values = ToolValues()

    @property
    def timeout_ms(self) -> int:
        return self.base_timeout_ms + round(self.per_gb_ms * self.data_bytes / 1e9)

    async def _call(self, method: str, **args: Any) -> JSONDict:
        assert method in AGENT_ALLOWED, method  # the page refuses any other
        reply: JSONDict = json.loads(
            await self.bridge.sandbox(json.dumps({"type": method, **args}))
        )
        return reply

    async def run(self, code: str) -> JSONDict:
        result = await self._call("run", code=code, timeoutMs=self.timeout_ms)
        # What the page's tools returned: for schema privacy only, never kept or shown.
        self.tool_values.arrived(result.pop("toolValues", None))
        return result

    async def scan(self, code: str) -> JSONDict:
        """A run in a fresh worker with the uploads mounted, which no cell can reach
        (privacy's value scan; the page answers it: PROTOCOL.md §3)."""
        return await self._call("scan", code=code, timeoutMs=self.timeout_ms)

    async def interrupt(self) -> None:
        await self._call("interrupt")

    async def environment(self, *, python: str, packages: list[str]) -> JSONDict:
        listing = await self._call("listFiles", dir="/data")
        self.data_bytes = sum(int(e.get("size") or 0) for e in listing.get("files", []))
        files = []
        for entry in listing.get("files", []):
            if entry.get("is_dir"):
                continue
            files.append(await self._call("inspect", path=entry["path"]))
        env: JSONDict = {"python": python, "packages": packages, "files": files,
                         "data_dir": "/data", "output_dir": "/output"}  # fmt: skip
        # The page's host tools, for the prompt; none: the environment is as before.
        lent = await self._call("tools")
        tools = [t for t in lent.get("tools") or [] if isinstance(t, dict)]
        if tools:
            env["tools"] = tools
        return env
