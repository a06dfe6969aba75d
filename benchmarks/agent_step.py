"""Agent step overhead: from "the model finished a tool call" to "the result is sent back".

A scripted OpenAI-compatible upstream on loopback answers each request with one
`run_python` tool call of a trivial cell, N times, then a final answer. It records when
it finished streaming each tool call and when the next request (carrying the result)
arrived. The gap, minus the cell's own `duration_ms`, is what the agent adds: the relay
hop both ways, SSE parsing in the agent worker, the page hop into the sandbox and back,
and building the observation.

Measured for Reckon in headless Chromium through `reckon serve`, and for a baseline: the
smallest possible agent loop in CPython (httpx straight to the upstream, `exec` in
process), against the same upstream in the same run.

    python benchmarks/agent_step.py [--steps 30] [--site dist/site]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    Seen,
    a_fake_upstream,
    an_unused_port,
    wait_for_port,
)

CELL = "x = 1 + 1\nprint(x)"


class StepModel:
    """Plays `steps` tool calls, then answers; keeps the timeline of every request."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.arrived: list[float] = []
        self.finished: list[float] = []

    def reset(self) -> None:
        self.arrived.clear()
        self.finished.clear()

    def chat(self, seen: Seen) -> Any:
        """The fake upstream's ``respond``. A Starlette response rather than a `Script`:
        the time the stream ends is taken when its body has been sent."""
        from starlette.responses import StreamingResponse

        payload = seen.json
        self.arrived.append(time.perf_counter())
        done = sum(1 for m in payload["messages"] if m.get("role") == "tool")
        if done < self.steps:
            delta = {
                "role": "assistant",
                "tool_calls": [
                    {
                        "index": 0,
                        "id": f"call_{done}",
                        "type": "function",
                        "function": {"name": "run_python", "arguments": json.dumps({"code": CELL})},
                    }
                ],
            }
            chunks = [
                {"choices": [{"index": 0, "delta": delta}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            ]
        else:
            chunks = [
                {"choices": [{"index": 0, "delta": {"content": "done"}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]

        def body() -> Iterator[bytes]:
            for chunk in chunks:
                yield f"data: {json.dumps({'id': 'x', 'model': 'steps', **chunk})}\n\n".encode()
            yield b"data: [DONE]\n\n"
            self.finished.append(time.perf_counter())

        return StreamingResponse(body(), media_type="text/event-stream")

    def gaps_ms(self) -> list[float]:
        """Per step: next request's arrival minus the end of the tool-call stream."""
        return [(self.arrived[i + 1] - self.finished[i]) * 1000 for i in range(self.steps)]


def baseline(upstream: str, model: StepModel) -> list[float]:
    """The least any agent loop can add: CPython, direct HTTP, exec in process."""
    import httpx

    model.reset()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    cells: list[float] = []
    with httpx.Client(timeout=30) as client:
        while True:
            calls: list[str] = []
            with client.stream(
                "POST",
                f"{upstream}/chat/completions",
                json={"model": "steps", "messages": messages, "stream": True},
            ) as r:
                for line in r.iter_lines():
                    if line.startswith("data: {"):
                        delta = json.loads(line[6:])["choices"][0]["delta"]
                        for call in delta.get("tool_calls", []):
                            calls.append(json.loads(call["function"]["arguments"])["code"])
            if not calls:
                break
            started = time.perf_counter()
            namespace: dict[str, Any] = {}
            with contextlib.redirect_stdout(io.StringIO()):
                exec(calls[0], namespace)
            cells.append((time.perf_counter() - started) * 1000)
            messages += [
                {"role": "assistant", "content": None, "tool_calls": []},
                {"role": "tool", "tool_call_id": "c", "content": "2"},
            ]
    return [gap - cell for gap, cell in zip(model.gaps_ms(), cells, strict=True)]


def reckon(upstream: str, model: StepModel, site: Path, steps: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    model.reset()
    port = an_unused_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "py"), "RECKON_UPSTREAM_KEY": "sk-bench"}
    cmd = [
        sys.executable,
        "-m",
        "reckon.server",
        "serve",
        "--port",
        str(port),
        "--site",
        str(site),
        "--upstream",
        upstream,
        "--model",
        "steps",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(bypass_csp=True).new_page()
            # A document of the site's origin with no Reckon of its own: console.html would
            # start a second sandbox, which restores, keeps its snapshot and installs the
            # rest of the stack alongside the measured one (about +10 ms a step here).
            page.goto(f"http://127.0.0.1:{port}/build-info.json")
            outcome = page.evaluate(
                """async (steps) => {
                  const { createReckon } = await import("./reckon.js");
                  const r = createReckon({ persist: false, settings: { maxSteps: steps + 2 } });
                  await r.ready();
                  await r.agent.ready();
                  return r.ask("go", { model: "steps" });
                }""",
                steps,
            )
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    assert outcome["status"] == "ok", outcome
    cells = [s["result"]["duration_ms"] for s in outcome["steps"] if s["kind"] == "code"]
    assert len(cells) == steps, outcome
    return [gap - cell for gap, cell in zip(model.gaps_ms(), cells, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    args = parser.parse_args()
    model = StepModel(args.steps)
    with a_fake_upstream(model.chat, models=["steps"]) as fake:
        upstream = f"{fake.url}/v1"
        base = baseline(upstream, model)
        ours = reckon(upstream, model, args.site, args.steps)
    print(f"agent step overhead, ms added per tool call beyond the cell ({args.steps} steps)")
    print("| loop | median ms | p90 ms | max ms |")
    print("|---|---|---|---|")
    for name, values in (("CPython minimal loop (baseline)", base), ("Reckon in Chromium", ours)):
        p90 = sorted(values)[int(0.9 * len(values))]
        print(f"| {name} | {statistics.median(values):.1f} | {p90:.1f} | {max(values):.1f} |")
    print(
        f"Reckon adds {statistics.median(ours) - statistics.median(base):.1f} ms over the baseline"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
