"""What the widget tests (test_widget*.py) share: host pages that record every
<reckon-chat> event and CSP violation, and calls into one widget of a page (ready,
upload, ask, its events, the PNGs of an answer).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from support import SALES

from .helpers import page_call

EVENTS = ["ready", "ask", "step", "answer", "error", "ask-error"]
# Capture-phase listeners on window see every widget's events (they do not bubble).
RECORD_EVENTS = (
    "window.__events = []; window.__violations = [];\n"
    "document.addEventListener('securitypolicyviolation', (ev) =>"
    " window.__violations.push(`${ev.violatedDirective} ${ev.blockedURI}`));\n"
    f"for (const type of {json.dumps(EVENTS)}) {{\n"
    """
    window.addEventListener(type, (ev) => {
      if (!ev.target || ev.target.localName !== "reckon-chat") return;
      const detail = JSON.parse(JSON.stringify(ev.detail ?? null));
      window.__events.push({ type, id: ev.target.id, detail });
    }, true);
  }
"""
)


def open_host_page(browser: Any, url: str) -> tuple[Any, Any]:
    context = browser.new_context(accept_downloads=True)
    context.add_init_script(RECORD_EVENTS)
    page = context.new_page()
    page.goto(url)
    return context, page


def widget_call(
    page: Any, widget: str, body: str, arg: Any = None, *, deadline_s: float = 60
) -> Any:
    """Statements with `chat` bound to the widget #`widget` (the prelude's helpers in scope)."""
    script = f"const chat = document.getElementById({json.dumps(widget)});\n{body}"
    return page_call(page, script, arg, deadline_s=deadline_s)


def wait_ready(page: Any, widget: str) -> dict[str, Any]:
    reply: dict[str, Any] = widget_call(
        page,
        widget,
        "return await withDeadline(chat.ready(), deadlineMs, 'ready');",
        deadline_s=180,
    )
    return reply


def upload_sales(page: Any, widget: str) -> dict[str, Any]:
    body = """
      const file = new File([arg], "sales.csv", { type: "text/csv" });
      return await withDeadline(chat.upload(file), deadlineMs, "upload");
    """
    info: dict[str, Any] = widget_call(page, widget, body, SALES)
    return info


def ask(page: Any, widget: str, question: str, model: str) -> dict[str, Any]:
    body = "return await withDeadline(chat.ask(arg[0], { model: arg[1] }), deadlineMs, 'ask');"
    outcome: dict[str, Any] = widget_call(page, widget, body, [question, model], deadline_s=120)
    return outcome


def events(page: Any, widget: str | None = None) -> list[dict[str, Any]]:
    recorded: list[dict[str, Any]] = page.evaluate("() => window.__events")
    return [e for e in recorded if widget is None or e["id"] == widget]


def figure_pngs(outcome: dict[str, Any]) -> list[bytes]:
    return [
        base64.b64decode(figure["png"])
        for step in outcome["steps"]
        if step.get("result")
        for figure in step["result"].get("figures", [])
    ]
