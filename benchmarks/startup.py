"""Cold and warm start: navigation to "ready with pandas and matplotlib imported".

Compares, in one run on this machine, Reckon's page against a naive Pyodide page
(loadPyodide, then loadPackage, then import) served from the same static server.
Each run is a fresh browser context: the first visit is cold (empty HTTP cache, empty
Cache Storage; Reckon restores the snapshot the build ships), then two warm visits in
the same context (HTTP cache; for Reckon the snapshot its first visit kept, README
"Fast starts"): one in the same tab (the page opened again, as a reload or a link
does), one in a new tab. Chromium runs with the product's own flags
(`reckon.client._browser.CHROMIUM_ARGS`), which keep a headless window from starting
its location bar's WebUI pop-ups; `--browser-ui` leaves them on (Playwright's
defaults): then every new tab, a window of its own here, also starts two more
renderers (about 0.4 s of CPU) while the visited page starts. "reckon, no snapshot" is the
same page with `snapshot: false`: what a site built without Node.js, or a browser that
rejects the snapshot, gets. The time is read with one plain `evaluate` (a wait through
Playwright's injected script would cost the page's main thread ~25 ms at its start).
Prints medians and ratios.

`--sandbox-site` adds, in the same run, the sandbox on a site of its own against the
opaque frame, both under `reckon serve` (issue #35; `_site_modes.py`): cold, a new tab,
warm after a browser restart, the first chart after that warm start, and `run("1+1")`
from ready and idle, each run in a new Chromium profile on disk.

`--baseline DIR` adds another build of the site (e.g. the previous commit's) as
"baseline" rows, interleaved with the others; `--no-cold-boot` leaves the "no snapshot"
rows out. Every step has `--timeout` seconds (180): one that fails or hangs ends the run
with its name, its reason and the page's last console lines; each visit's time goes to
stderr as it lands.

    python benchmarks/startup.py [--runs 5] [--site dist/site] [--baseline DIR] [--browser-ui]
                                 [--timeout 180] [--sandbox-site]
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
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from _site_modes import measure_site_modes, print_site_modes  # noqa: E402
from _watch import BOUNDED, PageLog, watchdog  # noqa: E402
from support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    QuietHandler,
    QuietServer,
    an_unused_port,
    wait_for_port,
)

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
    server = QuietServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    wait_for_port(port)
    return f"http://127.0.0.1:{port}", server


VISITS = ("cold", "warm", "warm, new tab")
# For scripts that take one plain `evaluate` of WAIT.replace("READY", ready_js): gives
# ready_js's value, or fails with its reason or after 180 s (it used to wait forever on a
# rejection).
WAIT = f"() => ({BOUNDED.replace('STEP', 'READY')})({{limit_ms: 180_000, step: 'ready'}})"


def time_visits(
    browser: Any, name: str, url: str, ready_js: str, settle_js: str, *, limit: float
) -> tuple[list[float], Any]:
    """Seconds to ready on the visits of VISITS in one new browser context, and what
    `settle_js` gave on each (for Reckon: where its snapshot came from). Every wait has
    `limit` seconds; a step that fails or hangs ends the run with its name and the
    page's last lines."""
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context()  # a new context has an empty HTTP cache
    context.set_default_timeout(limit * 1000)
    times = []
    settled = []
    page = context.new_page()
    log = PageLog(page)
    for visit in VISITS:
        step = f"{name} {visit}"
        try:
            with watchdog(f"{step}: open", limit + 30, log):
                if visit == "warm, new tab":
                    page.close()
                    page = context.new_page()
                    log = PageLog(page)
                elif visit == "warm":
                    page.goto("about:blank")
                page.goto(url, wait_until="commit")
            # ready_js's value: ms since this navigation started
            arg = {"limit_ms": limit * 1000, "step": f"{step}: ready"}
            with watchdog(f"{step}: ready", limit + 30, log):
                ready = page.evaluate(BOUNDED.replace("STEP", ready_js), arg)
            print(f"{step}: {float(ready) / 1000:.2f} s", file=sys.stderr, flush=True)
            times.append(float(ready) / 1000)
            arg = {"limit_ms": limit * 1000, "step": f"{step}: settle"}
            with watchdog(f"{step}: settle", limit + 30, log):  # what the visit leaves
                settled.append(page.evaluate(BOUNDED.replace("STEP", settle_js), arg))
        except PlaywrightError as error:
            message = str(error).splitlines()[0]
            raise SystemExit(
                f"step {step!r} failed ({url}): {message}\nlast lines from the page:\n{log.tail()}"
            ) from None
    with watchdog(f"{name}: close the context", limit):
        context.close()
    return times, settled


def a_built_site(site: Path, option: str) -> Path:
    """`site` made absolute (the naive page links to its `pyodide/` from a temporary
    folder, where a relative link would point nowhere), once it is known to be built."""
    site = site.resolve()
    if not (site / "console.html").is_file() or not (site / "pyodide" / "pyodide.js").is_file():
        raise SystemExit(
            f"{option} {site}: no console.html and pyodide/pyodide.js there; "
            "give a built site (`python build.py` writes dist/site)"
        )
    return site


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    parser.add_argument(
        "--browser-ui",
        action="store_true",
        help="leave headless Chromium's omnibox pop-ups on (Playwright's own flags)",
    )
    parser.add_argument("--baseline", type=Path, help="another build, measured the same way")
    parser.add_argument("--no-cold-boot", action="store_true", help="no 'no snapshot' rows")
    parser.add_argument(
        "--timeout", type=float, default=180, help="seconds any one step may take (default 180)"
    )
    parser.add_argument(
        "--sandbox-site",
        action="store_true",
        help="also the sandbox on a site of its own vs the opaque frame, under reckon serve",
    )
    args = parser.parse_args()
    args.site = a_built_site(args.site, "--site")
    args.baseline = args.baseline and a_built_site(args.baseline, "--baseline")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        naive_dir = Path(tmp)
        (naive_dir / "index.html").write_text(NAIVE_PAGE)
        (naive_dir / "pyodide").symlink_to(args.site / "pyodide")
        site_url, site_server = serve(args.site)
        naive_url, naive_server = serve(naive_dir)
        base_url, base_server = serve(args.baseline) if args.baseline else (None, None)
        reckon_ready = "() => window.reckon.ready().then(() => performance.now())"
        pages = {  # name: (url, ready_js, settle_js)
            "naive": (f"{naive_url}/index.html", "() => window.naiveReady", "() => null"),
            "reckon": (
                f"{site_url}/console.html", reckon_ready, "() => window.reckon.sandbox.snapshotDone"
            ),
            "reckon, no snapshot,": (
                f"{site_url}/console.html?snapshot=off", reckon_ready, "() => null"
            ),
        }  # fmt: skip
        if args.no_cold_boot:
            del pages["reckon, no snapshot,"]
        if base_url:
            settle = "() => window.reckon.sandbox.snapshotDone"
            pages["baseline"] = (f"{base_url}/console.html", reckon_ready, settle)
        results: dict[str, list[float]] = {
            f"{name} {visit}": [] for name in pages for visit in VISITS
        }
        outcomes = []
        with sync_playwright() as pw:
            flags = [a for a in CHROMIUM_ARGS if not args.browser_ui or "-features=" not in a]
            with watchdog("start Chromium", args.timeout):
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
            for _ in range(args.runs):  # interleaved, so drift hits all alike
                for name, (url, ready_js, settle_js) in pages.items():
                    times, settled = time_visits(
                        browser, name, url, ready_js, settle_js, limit=args.timeout
                    )
                    for visit, seconds in zip(VISITS, times, strict=True):
                        results[f"{name} {visit}"].append(seconds)
                    if name in ("reckon", "baseline"):
                        outcomes.append(
                            "/".join(f"{o['status']}:{o.get('source')}" for o in settled)
                        )
            browser.close()
            if args.sandbox_site:
                modes = measure_site_modes(
                    pw, site=args.site, naive_url=naive_url, runs=args.runs, flags=flags,
                    limit=args.timeout,
                )  # fmt: skip
        site_server.shutdown()
        naive_server.shutdown()
        if base_server:
            base_server.shutdown()
    med = {name: statistics.median(values) for name, values in results.items()}
    ui = ", browser UI on" if args.browser_ui else ""
    print(f"start to 'pandas + matplotlib imported', {args.runs} runs each, medians{ui}")
    print("| page | median s | min s | max s | vs naive (same visit) | vs naive cold |")
    print("|---|---|---|---|---|---|")
    for name, values in results.items():
        visit = next(v for v in VISITS[::-1] if name.endswith(v))
        same = med[f"naive {visit}"]
        print(
            f"| {name} | {med[name]:.2f} | {min(values):.2f} | {max(values):.2f} "
            f"| {same / med[name]:.2f}x | {med['naive cold'] / med[name]:.2f}x |"
        )
    expected = "restored:build/restored:kept/restored:kept"
    print(
        f"reckon visits that restored the build's snapshot, then the kept one twice: "
        f"{outcomes.count(expected)}/{len(outcomes)} {sorted(set(outcomes) - {expected}) or ''}"
    )
    if base_url:
        for visit in VISITS:
            ratio = med[f"baseline {visit}"] / med[f"reckon {visit}"]
            print(f"reckon {visit} vs baseline: {ratio:.2f}x faster")
    print(f"reckon warm vs reckon cold: {med['reckon cold'] / med['reckon warm']:.2f}x")
    new_tab = med["reckon warm, new tab"] / med["reckon warm"]
    print(f"reckon warm, new tab vs same tab: {new_tab:.2f}x")
    if args.sandbox_site:
        print_site_modes(modes, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
