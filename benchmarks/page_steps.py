"""Does the chat page slow down over a 200-step session? First 20 steps against the last 20.

Drives the same session as ``tests/browser/test_page_load.py`` (``reckon serve`` in
front of a scripted model on loopback that makes ten small tool calls per question,
twenty questions, through ``window.reckon.ask`` on index.html in headless Chromium)
and times each step as it lands in the page:

- step interval: from one step's element appearing in the DOM to the next one's,
  within an ask (model call through the relay, the cell, rendering);
- to next frame: from a step's element appearing to the next animation frame after
  it (style, layout and paint of the grown page);
- forced layout: a full layout of the page forced right after the step appeared
  (grows with the page if rendering does not stay incremental).

Prints a table with the first-20 / last-20 ratio; asserts nothing.

    PYTHONPATH=py python benchmarks/page_steps.py [--asks 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tests.browser.test_page_load import STEPS_PER_ASK, a_step_relay, run_session  # noqa: E402

from support import CHROMIUM, CHROMIUM_ARGS, SITE  # noqa: E402

# Per step: when its element appeared, the next frame after that, and the time a
# forced layout of the whole page took right then (grows if the page gets heavy).
WATCH = """() => {
  window.__steps = [];
  const seen = new WeakSet();
  new MutationObserver(() => {
    for (const el of document.querySelectorAll("details.step")) {
      if (seen.has(el)) continue;
      seen.add(el);
      const entry = { appeared: performance.now(), frame: null, layout: null };
      window.__steps.push(entry);
      const t0 = performance.now();
      void document.body.offsetHeight;
      entry.layout = performance.now() - t0;
      requestAnimationFrame(() => { entry.frame = performance.now(); });
    }
  }).observe(document.body, { childList: true, subtree: true });
}"""


def measure(asks: int) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    if not (SITE / "build-info.json").exists():
        raise SystemExit(f"{SITE} is not built: run `python build.py` first")
    with a_step_relay() as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(300_000)
            page.goto(f"{url}/index.html")
            page.evaluate("() => window.reckon.ready()")
            page.evaluate(WATCH)
            outcomes = run_session(page, asks)
            bad = [o for o in outcomes if o.get("status") != "ok"]
            if bad:
                raise SystemExit(f"{len(bad)} asks failed, e.g. {bad[0]}")
            page.wait_for_function("() => window.__steps.every((s) => s.frame !== null)")
            steps: list[dict[str, Any]] = page.evaluate("() => window.__steps")
        finally:
            browser.close()
    return steps


def _row(name: str, first: list[float], last: list[float]) -> list[str]:
    a, b = statistics.median(first), statistics.median(last)
    return [name, f"{a:.2f}", f"{b:.2f}", f"{b / a:.2f}x" if a > 0 else "-"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=20, help="questions of ten steps each")
    args = parser.parse_args()
    steps = measure(args.asks)
    if len(steps) < 40:
        raise SystemExit(f"only {len(steps)} steps were rendered; need at least 40")
    first, last = steps[:20], steps[-20:]

    def intervals(group: list[dict[str, Any]], offset: int) -> list[float]:
        # Within one ask only: the step before an ask's first step is another question.
        return [
            steps[i]["appeared"] - steps[i - 1]["appeared"]
            for i in range(offset, offset + len(group))
            if i > 0 and i % STEPS_PER_ASK != 0
        ]

    rows = [
        ["per step (median ms)", "first 20", "last 20", "last/first"],
        _row("step interval", intervals(first, 0), intervals(last, len(steps) - 20)),
        _row(
            "to next frame",
            [s["frame"] - s["appeared"] for s in first],
            [s["frame"] - s["appeared"] for s in last],
        ),
        _row("forced layout", [s["layout"] for s in first], [s["layout"] for s in last]),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print(f"{len(steps)} steps rendered")
    for number, row in enumerate(rows):
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if number == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
