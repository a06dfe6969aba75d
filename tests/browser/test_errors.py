"""The JS API's one error rule (README, JS API): a call whose result has a `status`
resolves with `status: "error"` and a message; a call that returns plain data
rejects with an Error that says what went wrong. Also the agent-allowed list: the
page refuses any other sandbox method the agent worker calls."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import page_call

pytestmark = pytest.mark.browser

OUTCOME = """
  const settle = (p) => p.then(
    (value) => ({ resolved: value }),
    (err) => ({ rejected: String(err.message) }),
  );
  const r = window.reckon;
"""


def test_status_calls_resolve_and_data_calls_reject(reckon: Any) -> None:
    body = (
        OUTCOME
        + """
      return {
        inspect: await settle(r.inspect("/data/no-such.csv")),
        deleteFile: await settle(r.deleteFile("/data/no-such.csv")),
        readFile: await settle(r.readFile("/data/no-such.csv")),
        listFiles: await settle(r.listFiles("/data")),
      };
    """
    )
    got = page_call(reckon, body, deadline_s=60)
    assert got["inspect"]["resolved"]["status"] == "error"
    assert got["inspect"]["resolved"]["message"]
    assert got["deleteFile"]["resolved"]["status"] == "error"
    assert "readFile(/data/no-such.csv)" in got["readFile"]["rejected"]
    assert isinstance(got["listFiles"]["resolved"], list)


def test_the_page_answers_only_the_agent_allowed_methods(reckon: Any) -> None:
    body = """
      // The page's end only (what serves the agent worker's calls): what it would post
      // back to the worker is caught here.
      const served = window.reckon.agent.served;
      const replies = [];
      const saved = served.port;
      served.port = { postMessage: (msg) => replies.push(msg) };
      try {
        const refused = ["writeFile", "readFile", "deleteFile", "boot", "reset"];
        for (const [i, method] of refused.entries()) {
          const args = { path: "/data/x", data: "x" };
          await served.answer({ type: "call", id: 9001 + i, method, args });
        }
      } finally {
        served.port = saved;
      }
      return replies;
    """
    replies = page_call(reckon, body, deadline_s=60)
    assert [reply["id"] for reply in replies] == [9001, 9002, 9003, 9004, 9005]
    assert all(reply["status"] == "error" and "may not" in reply["message"] for reply in replies)
