"""The first ask of a visit: what booting the agent's interpreter on first use costs.

The chat page boots the agent's interpreter (a second Pyodide) only when it is first
needed (README "Fast starts"); an ask sent through the JS API with no sign before it
(no focus on the question box, no file added through the page) waits for that boot.
This opens `index.html` of each `--site` in a fresh browser context, waits until ready,
uploads a two-row CSV, waits `--after` seconds (a person reading the page), then times
`reckon.ask("average of b")` with the built-in demo model, to its outcome. Builds given
with `--site` are interleaved in one run (e.g. this one and the previous head's, whose
agent booted at ready while the rest of the stack installed in the background).

    python benchmarks/first_ask.py [--runs 3] [--after 5] --site dist/site --site /tmp/other
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from startup import serve  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

ASK = """async (after) => {
  await window.reckon.ready();
  const csv = new TextEncoder().encode("a,b\\n1,2\\n3,4\\n");
  await window.reckon.upload({ name: "sales.csv", bytes: csv });
  await new Promise((done) => setTimeout(done, after * 1000));
  const t0 = performance.now();
  const outcome = await window.reckon.ask("average of b", { model: "reckon-demo" });
  return { ms: performance.now() - t0, status: outcome.status, answer: outcome.answer };
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--after", type=float, default=5.0, help="seconds after ready")
    parser.add_argument("--site", type=Path, action="append", help="a built site (repeatable)")
    args = parser.parse_args()
    sites = [site.resolve() for site in args.site or [ROOT / "dist" / "site"]]
    from playwright.sync_api import sync_playwright

    servers = [serve(site) for site in sites]
    times: dict[Path, list[float]] = {site: [] for site in sites}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(args.runs):  # interleaved, so drift hits all alike
            for site, (url, _) in zip(sites, servers, strict=True):
                context = browser.new_context()
                page = context.new_page()
                page.set_default_timeout(180_000)
                page.goto(f"{url}/index.html")
                page.wait_for_function("() => window.reckon")
                got = page.evaluate(ASK, args.after)
                assert got["status"] == "ok" and "3.0" in got["answer"], got
                times[site].append(float(got["ms"]))
                context.close()
        browser.close()
    for _, server in servers:
        server.shutdown()
    print(f"first ask, {args.after:.0f} s after ready (demo model), {args.runs} runs, medians")
    print("| site | median ms | each ms |")
    print("|---|---|---|")
    for site, values in times.items():
        each = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {site} | {statistics.median(values):.0f} | {each} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
