"""The Sandbox's events that persistence listens to (web/sandbox/events.js), in a real
browser: what a listener hands to `waitUntil` is done before the sandbox goes on.
`ran`: before the run's result is handed back; `replaced`: after a new worker is up and
before the requests that waited for it; `started`: before ready() resolves."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import ok, page_call

pytestmark = pytest.mark.browser


def test_a_ran_listener_finishes_before_the_result_is_handed_back(reckon: Any) -> None:
    seen = page_call(
        reckon,
        """
      const sandbox = window.reckon.sandbox;
      const details = [];
      const listener = (ev) => {
        const { code, result, deleted, waitUntil } = ev.detail;
        details.push({ code, status: result.status, deleted });
        // Held up on purpose: the result must wait for this, note included.
        waitUntil(new Promise((resolve) => setTimeout(resolve, 300)).then(() => {
          result.stderr += "[noted by the listener]";
        }));
      };
      sandbox.addEventListener("ran", listener);
      try {
        const ran = (code, options) => withDeadline(sandbox.run(code, options), deadlineMs, "run");
        const recorded = await ran("print(6 * 7)");
        const unrecorded = await ran("print(1)", { record: false });
        return { recorded, unrecorded, details };
      } finally {
        sandbox.removeEventListener("ran", listener);
      }
    """,
    )
    assert ok(seen["recorded"])["stdout"] == "42\n"
    assert seen["recorded"]["stderr"].endswith("[noted by the listener]"), seen["recorded"]
    # A run with record: false (a replay) raises no event.
    assert "[noted" not in ok(seen["unrecorded"])["stderr"]
    assert seen["details"] == [{"code": "print(6 * 7)", "status": "ok", "deleted": []}]


def test_requests_wait_for_a_replaced_listener(reckon: Any) -> None:
    seen = page_call(
        reckon,
        """
      const sandbox = window.reckon.sandbox;
      const details = [];
      const listener = (ev) => {
        const { reason, nested, waitUntil } = ev.detail;
        details.push({ reason, nested });
        // In the new worker, before anything that waited: a variable the next cell reads.
        const later = new Promise((resolve) => setTimeout(resolve, 300));
        const cell = () => sandbox.run("from_listener = 41", { direct: true, record: false });
        waitUntil(later.then(cell));
      };
      sandbox.addEventListener("replaced", listener);
      try {
        const restarted = sandbox.restart();
        // Sent while the worker is being replaced: it must run after the listener's cell.
        await new Promise((resolve) => setTimeout(resolve, 50));
        const next = sandbox.run("print(from_listener + 1)");
        const after = await withDeadline(next, deadlineMs, "run");
        await restarted;
        return { after, details };
      } finally {
        sandbox.removeEventListener("replaced", listener);
      }
    """,
        deadline_s=90,
    )
    assert ok(seen["after"])["stdout"] == "42\n"
    assert seen["details"] == [{"reason": "restart", "nested": False}]


def test_ready_waits_for_a_started_listener(reckon: Any) -> None:
    seen = page_call(
        reckon,
        """
      const { Sandbox } = await import("./sandbox/client.js");
      const sandbox = new Sandbox();
      let readyResolved = false;
      const order = [];
      sandbox.addEventListener("started", (ev) => {
        order.push("started");
        ev.detail.waitUntil((async () => {
          await new Promise((resolve) => setTimeout(resolve, 300));
          order.push(readyResolved ? "late" : "listener done");
          await sandbox.writeFile("from-listener.txt", "kept", { direct: true });
        })());
      });
      try {
        const up = sandbox.ready().then(() => {
          readyResolved = true;
          order.push("ready");
        });
        await withDeadline(up, deadlineMs, "ready");
        const files = await sandbox.listFiles("/data");
        return { order, names: files.map((f) => f.name) };
      } finally {
        sandbox.close();
      }
    """,
        deadline_s=180,
    )
    assert seen["order"] == ["started", "listener done", "ready"], seen
    assert "from-listener.txt" in seen["names"], seen
