"""Cold start: navigation to "ready with pandas and matplotlib imported".

Compares, in one run on this machine, Reckon's page against a naive Pyodide page
(loadPyodide, then loadPackage, then import) served from the same static server,
each in a fresh browser context (empty HTTP cache). Prints medians and the ratio.

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


def time_page(browser: Any, url: str, ready_js: str) -> float:
    context = browser.new_context()  # a new context has an empty HTTP cache
    page = context.new_page()
    page.goto(url, wait_until="commit")
    page.wait_for_function("() => window.reckon || window.naiveReady")
    ms = float(page.evaluate(ready_js))  # performance.now(): ms since navigation start
    context.close()
    return ms / 1000


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
        results: dict[str, list[float]] = {"naive": [], "reckon": []}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(args.runs):  # interleaved, so drift hits both alike
                results["naive"].append(
                    time_page(browser, f"{naive_url}/index.html", "() => window.naiveReady")
                )
                results["reckon"].append(
                    time_page(
                        browser,
                        f"{site_url}/console.html",
                        "() => window.reckon.ready().then(() => performance.now())",
                    )
                )
            browser.close()
        site_server.shutdown()
        naive_server.shutdown()
    naive = statistics.median(results["naive"])
    ours = statistics.median(results["reckon"])
    print(f"cold start to 'pandas + matplotlib imported', {args.runs} runs each, medians")
    print("| page | median s | min s | max s | ratio vs naive |")
    print("|---|---|---|---|---|")
    for name, values in results.items():
        med = statistics.median(values)
        print(
            f"| {name} | {med:.2f} | {min(values):.2f} | {max(values):.2f} | {naive / med:.2f}x |"
        )
    print(f"speed-up: {naive / ours:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
