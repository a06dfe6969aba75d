"""`Session`: Reckon from Python, through the real product path, headless.

A relay (in a thread of this process) serves the built site and forwards model
calls; headless Chromium opens the chat page; every method calls the page's
``window.reckon`` API, so code runs in the browser sandbox exactly as it does
for a user, and results come back as the same plain dicts (PROTOCOL.md).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from reckon._exceptions import ConfigError, SessionError
from reckon.agent.demo import DEMO_MODEL
from reckon.client._runtime import Runtime, call_page

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

__all__ = ["Runtime", "Session"]


# How long a stopped ask has to come back with its steps before the session gives up.
_STOP_GRACE_S = 30.0


class Session:
    """A headless Reckon session: upload files, run code, ask questions.

    ``site`` is the built site (``python build.py``); ``upstream``/``model``/``key_env``
    configure the relay as ``reckon serve`` flags do (no upstream: the demo model);
    ``timeout_ms`` limits each ``run`` cell in the sandbox; ``ask_timeout_s`` bounds
    one whole ``ask``. Use it as a context manager, or call ``close()``.
    """

    def __init__(
        self,
        site: str | os.PathLike[str] = "dist/site",
        *,
        upstream: str | None = None,
        model: str | None = None,
        key_env: str | None = None,
        chromium: str | os.PathLike[str] | None = None,
        timeout_ms: int = 60_000,
        ask_timeout_s: float = 600.0,
    ) -> None:
        if model and not upstream and model != DEMO_MODEL:
            raise ConfigError(f"model={model!r} needs upstream=URL (without it: {DEMO_MODEL!r})")
        runtime = Runtime(site, upstream=upstream, model=model, key_env=key_env, chromium=chromium)
        try:
            self._open(runtime, model=model, timeout_ms=timeout_ms, ask_timeout_s=ask_timeout_s)
        except BaseException:
            runtime.close()
            raise
        self._owns_runtime = True

    @classmethod
    def on(
        cls,
        runtime: Runtime,
        *,
        model: str | None = None,
        timeout_ms: int = 60_000,
        ask_timeout_s: float = 600.0,
    ) -> Session:
        """A fresh session (its own browser context) on a shared runtime; closing it
        leaves the runtime running."""
        session = cls.__new__(cls)
        session._open(runtime, model=model, timeout_ms=timeout_ms, ask_timeout_s=ask_timeout_s)
        session._owns_runtime = False
        return session

    def _open(
        self, runtime: Runtime, *, model: str | None, timeout_ms: int, ask_timeout_s: float
    ) -> None:
        self._runtime = runtime
        self._model = model
        self._timeout_ms = timeout_ms
        self._ask_timeout_s = ask_timeout_s
        self._context: BrowserContext | None = None
        self._page: Page
        self._context, self._page = runtime.chromium.new_page(f"{runtime.url}/index.html")
        # The page boots the agent's interpreter only when it is first needed; a session
        # is opened to ask, so it starts it now, beside the sandbox, and waits for both:
        # its start-up stays out of the first ask's time.
        body = """
          const agent = window.reckon.agent;
          const both = Promise.all([window.reckon.ready(), agent && agent.ready()]);
          return (await withDeadline(both, deadlineMs, "ready"))[0];
        """
        try:
            # {status, ms, crossOriginIsolated}: the sandbox can run code.
            self.startup: dict[str, Any] = self._call(body, None, 300)
        except BaseException:
            runtime.chromium.close_context(self._context)
            self._context = None
            raise

    @property
    def url(self) -> str:
        """The relay's base URL (open it in a browser to watch the same site)."""
        return self._runtime.url

    def _call(self, body: str, arg: Any, deadline_s: float) -> Any:
        if self._context is None:
            raise SessionError("this session is closed")
        return call_page(self._runtime, self._page, body, arg, deadline_s)

    def upload(self, file: str | os.PathLike[str] | tuple[str, bytes]) -> dict[str, Any]:
        """Put a file (a path, or ``(name, bytes)``) in ``/data``; returns its summary
        (a table's rows and columns, or a message saying what is wrong with it)."""
        if isinstance(file, tuple):
            name, data = file
        else:
            path = Path(file)
            name, data = path.name, path.read_bytes()
        body = """
          const [name, b64] = arg;
          return await withDeadline(
            window.reckon.upload({ name, bytes: fromB64(b64) }), deadlineMs, "upload");
        """
        reply: dict[str, Any] = self._call(body, [name, base64.b64encode(data).decode()], 120)
        return reply

    def run(self, code: str, *, timeout_ms: int | None = None) -> dict[str, Any]:
        """Run a cell in the sandbox; returns the run result (PROTOCOL.md section 1)."""
        limit = timeout_ms or self._timeout_ms
        body = """
          const [code, timeoutMs] = arg;
          return await withDeadline(window.reckon.run(code, { timeoutMs }), deadlineMs, "run");
        """
        # The sandbox enforces the limit; the deadline only catches a hung page.
        result: dict[str, Any] = self._call(body, [code, limit], limit / 1000 + 60)
        return result

    def ask(
        self, question: str, *, model: str | None = None, verify: bool = False
    ) -> dict[str, Any]:
        """Ask in plain words; returns ``{status, answer, steps, message?, model}`` (and
        ``verification`` with ``verify``: the key number recomputed another way)."""
        chosen = model or self._model
        body = """
          const [question, model, verify, askMs, graceMs] = arg;
          const options = model ? { model } : {};
          if (verify) options.verify = true;
          const pending = window.reckon.ask(question, options);
          try {
            return await withDeadline(pending, askMs, "ask");
          } catch (err) {
            window.reckon.stop();
            // The ask comes back stopped, with the steps it took: what ran is kept
            // (a slow model's half-done work is what a person needs to see).
            const stopped = await withDeadline(pending, graceMs, "stop").catch(() => null);
            if (!stopped || typeof stopped !== "object") throw err;
            const seconds = Math.round(askMs / 1000);
            return { ...stopped, status: "stopped",
                     message: `No answer within ${seconds} s, so the ask was stopped.` };
          }
        """
        limit, grace = self._ask_timeout_s, _STOP_GRACE_S
        arg = [question, chosen, verify, int(limit * 1000), int(grace * 1000)]
        outcome: dict[str, Any] = self._call(body, arg, limit + grace)
        return outcome

    def run_sql(self, query: str, *, timeout_ms: int | None = None) -> dict[str, Any]:
        """A SQL query over the uploaded tables (each file is a table named after it),
        run like the model's ``run_sql`` tool; returns a run result whose value is the
        table. A bad query is an ``error`` result listing the tables and their columns."""
        limit = timeout_ms or self._timeout_ms
        body = """
          const [query, timeoutMs] = arg;
          const pending = window.reckon.runSql(query, { timeoutMs });
          return await withDeadline(pending, deadlineMs, "runSql");
        """
        result: dict[str, Any] = self._call(body, [query, limit], limit / 1000 + 60)
        return result

    def export_notebook(self) -> str:
        """The session as Jupyter notebook JSON text (nbformat 4): each question, each
        successful cell with its outputs, each answer. ``json.loads`` it, or write it
        to a ``.ipynb`` file next to a ``data/`` folder holding the input files."""
        body = "return await withDeadline(window.reckon.exportNotebook(), deadlineMs, 'export');"
        text: str = self._call(body, None, 60)
        return text

    def export_script(self) -> str:
        """The session as a plain ``.py`` script (``# %%`` cells)."""
        body = "return await withDeadline(window.reckon.exportScript(), deadlineMs, 'export');"
        text: str = self._call(body, None, 60)
        return text

    def import_notebook(
        self, source: str | os.PathLike[str], *, name: str | None = None
    ) -> dict[str, Any]:
        """Run a notebook's or script's code cells as this session's starting cells.

        ``source`` is a path to a ``.ipynb``/``.py`` file, or the file's text. Returns
        ``{status, cells, ok, failed, message?}``; bad input is an ``error`` with a
        message and changes nothing.
        """
        if isinstance(source, os.PathLike) or (
            "\n" not in source and len(source) < 4096 and Path(source).is_file()
        ):
            path = Path(source)
            data, name = path.read_bytes(), name or path.name
        else:
            data = source.encode("utf-8")
        body = """
          const [b64, name] = arg;
          const file = new File([fromB64(b64)], name || "");
          const opts = name ? { name } : {};
          return await withDeadline(window.reckon.importNotebook(file, opts), deadlineMs, "import");
        """
        reply: dict[str, Any] = self._call(body, [base64.b64encode(data).decode(), name], 600)
        return reply

    def read_file(self, path: str) -> bytes:
        """A file's bytes from the sandbox (relative paths are under ``/data``)."""
        body = "return toB64(await withDeadline(window.reckon.readFile(arg), deadlineMs, 'read'));"
        return base64.b64decode(self._call(body, path, 60))

    def list_files(self, directory: str = "/data") -> list[dict[str, Any]]:
        """``[{path, name, size, is_dir, mtime}]`` in ``directory``."""
        body = "return await withDeadline(window.reckon.listFiles(arg), deadlineMs, 'listFiles');"
        files: list[dict[str, Any]] = self._call(body, directory, 30)
        return files

    def transcript(self) -> dict[str, Any]:
        """The conversation as data: ``{version, asks: [{question, status, answer, steps}]}``."""
        body = "return await withDeadline(window.reckon.transcript(), deadlineMs, 'transcript');"
        transcript: dict[str, Any] = self._call(body, None, 30)
        return transcript

    def models(self) -> dict[str, Any]:
        """``{models, default, demo}``: what the relay offers, plus the demo model."""
        body = "return await withDeadline(window.reckon.models(), deadlineMs, 'models');"
        models: dict[str, Any] = self._call(body, None, 30)
        return models

    def close(self) -> None:
        """Close the page (and the relay and browser, unless they are shared)."""
        context, self._context = self._context, None
        try:
            if context is not None:
                self._runtime.chromium.close_context(context)
        finally:
            if self._owns_runtime and context is not None:
                self._runtime.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
