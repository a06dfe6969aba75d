"""Cold and warm start: navigation to "ready with pandas and matplotlib imported".

Compares, in one run on this machine, Reckon's page against a naive Pyodide page
(loadPyodide, then loadPackage, then import) served from the same static server.
Each run is a fresh browser context: the first visit is cold (empty HTTP cache, no
snapshot), the second, in the same context, is warm (HTTP cache; for Reckon also the
memory snapshot its first visit kept, README "Warm starts"). Prints medians and ratios.

    python benchmarks/startup.py [--runs 5] [--site dist/site]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from conftest import CHROMIUM, CHROMIUM_ARGS, QuietHandler, an_unused_port, wait_for_port  # noqa: E402

NAIVE_PAGE = """<!doctype html><meta charset="utf-8"><title>naive</title>
<script src="pyodide/pyodide.js"></script>
<script>
window.naiveReady = (async () => {
  const py = await loadPyodide({indexURL: "pyodide/"});
  await py.loadPackage(["numpy", "pandas", "matplotlib"]);
  await py.runPythonAsync(
    "import pandas, matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot");
  return performance.now();
})();
</script>"""


def serve(directory: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    port = an_unused_port()
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    wait_for_port(port)
    return f"http://127.0.0.1:{port}", server


def time_visits(browser: Any, url: str, ready_js: str, settle_js: str) -> tuple[float, float, Any]:
    """Seconds to ready on a first and a second visit in one new browser context, and
    what `settle_js` gave on the second (for Reckon: whether it restored the snapshot)."""
    context = browser.new_context()  # a new context has an empty HTTP cache
    times = []
    settled = None
    for _visit in range(2):
        page = context.new_page()
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => window.reckon || window.naiveReady")
        times.append(float(page.evaluate(ready_js)) / 1000)  # ms since navigation start
        settled = page.evaluate(settle_js)  # what the first visit leaves, stored
        page.close()
    context.close()
    return times[0], times[1], settled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        naive_dir = Path(tmp)
        (naive_dir / "index.html").write_text(NAIVE_PAGE)
        (naive_dir / "pyodide").symlink_to(args.site / "pyodide")
        site_url, site_server = serve(args.site)
        naive_url, naive_server = serve(naive_dir)
        results: dict[str, list[float]] = {
            "naive cold": [], "naive warm": [], "reckon cold": [], "reckon warm": []
        }  # fmt: skip
        outcomes = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(args.runs):  # interleaved, so drift hits both alike
                cold, warm, _ = time_visits(
                    browser, f"{naive_url}/index.html", "() => window.naiveReady", "() => null"
                )
                results["naive cold"].append(cold)
                results["naive warm"].append(warm)
                cold, warm, outcome = time_visits(
                    browser,
                    f"{site_url}/console.html",
                    "() => window.reckon.ready().then(() => performance.now())",
                    "() => window.reckon.sandbox.snapshotDone",
                )
                results["reckon cold"].append(cold)
                results["reckon warm"].append(warm)
                outcomes.append(outcome.get("status") if isinstance(outcome, dict) else outcome)
            browser.close()
        site_server.shutdown()
        naive_server.shutdown()
    med = {name: statistics.median(values) for name, values in results.items()}
    print(f"start to 'pandas + matplotlib imported', {args.runs} runs each, medians")
    print("| page | median s | min s | max s | vs naive (same visit) | vs naive cold |")
    print("|---|---|---|---|---|---|")
    for name, values in results.items():
        same = med["naive " + name.split()[1]]
        print(
            f"| {name} | {med[name]:.2f} | {min(values):.2f} | {max(values):.2f} "
            f"| {same / med[name]:.2f}x | {med['naive cold'] / med[name]:.2f}x |"
        )
    print(
        f"reckon warm visits restored from the snapshot: {outcomes.count('restored')}/{args.runs}"
    )
    print(f"reckon warm vs reckon cold: {med['reckon cold'] / med['reckon warm']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
