"""Per-run costs once the sandbox is ready: `run("1+1")`, the first chart, an output flood.

Compares, in one run on this machine, Reckon's JS API (console page: page -> opaque
frame -> worker and back, results as data) against a naive Pyodide worker (a page that
posts code to a worker which calls `runPython` and posts the value back), both served
from the same static server in the same browser:

- `1+1`: round trip of a trivial cell, median of many, once idle (after the first
  chart and a few seconds) and from the moment of ready: in fresh sessions of the chat
  page (`index.html`: the sandbox and the agent, whatever either does after ready),
  the rounds start as soon as `ready()` resolves (`--site` again adds another build's
  page to this row, e.g. the previous commit's, measured in the same run);
- first chart: a simple matplotlib line plot to PNG bytes in hand, in a fresh session,
  run as soon as it is ready (median of --sessions sessions, one page at a time; each
  --site in turn), then in the same session a pandas bar chart whose labels reach
  past the figure's edge (reckon.kernel._png paints them on a grown canvas);
- 100k lines: a cell printing 100,000 short lines (1,088,890 characters), delivered as
  live stream events up to the page's live-view cap of 1,000,000 characters; alongside,
  the longest the page's main thread was blocked meanwhile (a 10 ms interval timer
  records how late it fires), which says whether the page froze.

    python benchmarks/run_overhead.py [--rounds 200] [--site dist/site] [--site /tmp/other]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from startup import serve  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

PLOT = """import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3, 4], [3, 1, 4, 1])
ax.set_title("first chart")
"""
# Month names under the bars, turned upright, and an axis label under them: the
# picture reaches past the figure's canvas.
BARS = """import pandas as pd
sales = pd.DataFrame({"month": ["January", "February", "March", "April"], "units": [3, 1, 4, 1]})
ax = sales.plot(x="month", y="units", kind="bar", title="Units by month")
ax.set_xlabel("month of 2024")
"""
READY = "() => window.reckon.ready()"
FLOOD = "for i in range(100_000):\n    print('line', i)\n"

NAIVE_WORKER = """importScripts("pyodide/pyodide.js");
const ready = (async () => {
  const py = await loadPyodide({indexURL: "pyodide/"});
  await py.loadPackage(["numpy", "matplotlib"]);
  py.runPython("import matplotlib; matplotlib.use('Agg')");
  return py;
})();
onmessage = async (ev) => {
  const py = await ready;
  const lines = [];
  py.setStdout({batched: (s) => lines.push(s)});
  let value = py.runPython(ev.data.code);
  if (value && value.toJs) value = value.toJs();
  postMessage({id: ev.data.id, value, lines});
};
postMessage({id: 0, value: "booted"});
"""
NAIVE_PAGE = """<!doctype html><meta charset="utf-8"><title>naive worker</title>
<script>
const worker = new Worker("naive-worker.js");
const waiting = new Map();
let next = 1;
worker.onmessage = (ev) => {
  const done = waiting.get(ev.data.id);
  if (done) { waiting.delete(ev.data.id); done(ev.data); }
};
window.naiveRun = (code) => new Promise((resolve) => {
  const id = next++;
  waiting.set(id, resolve);
  worker.postMessage({id, code});
});
window.naiveReady = naiveRun("1");
</script>"""
# The naive side returns the PNG as base64 like Reckon does, so both hand over the same bytes.
NAIVE_PLOT = (
    PLOT
    + "import io, base64\nbuf = io.BytesIO(); fig.savefig(buf, format='png'); plt.close(fig)\n"
    + "base64.b64encode(buf.getvalue()).decode()\n"
)

MEASURE_JS = """async ({ runner, code, rounds }) => {
  const run = runner === "reckon" ? (c) => window.reckon.run(c) : (c) => window.naiveRun(c);
  const times = [];
  let last = null;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    last = await run(code);
    times.push(performance.now() - t0);
  }
  return { times, last };
}"""

FLOOD_JS = """async ({ runner, code }) => {
  const run = runner === "reckon" ? (c) => window.reckon.run(c) : (c) => window.naiveRun(c);
  // Reckon hands the full output over as live stream events (the result's stdout is
  // capped); count what arrived there.
  let streamed = "";
  if (runner === "reckon") {
    window.reckon.on("stream", (d) => { if (d.name === "stdout") streamed += d.text; });
  }
  let worst = 0;
  let expected = performance.now() + 10;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - expected);
    expected = now + 10;
  }, 10);
  const t0 = performance.now();
  const result = await run(code);
  const ms = performance.now() - t0;
  clearInterval(timer);
  const text = runner === "reckon" ? streamed : result.lines.join("\\n");
  return { ms, stall: worst, lines: text.split("\\n").filter((l) => l.startsWith("line ")).length,
           truncated: Boolean(result.truncated) };
}"""


def open_page(browser: Any, url: str, ready_js: str) -> Any:
    page = browser.new_context().new_page()
    page.set_default_timeout(180_000)  # a loaded machine
    page.goto(url)
    page.wait_for_function("() => window.reckon || window.naiveReady")
    page.evaluate(ready_js, None)
    return page


def measure(page: Any, runner: str, code: str, rounds: int) -> tuple[list[float], Any]:
    out = page.evaluate(MEASURE_JS, {"runner": runner, "code": code, "rounds": rounds})
    return [float(t) for t in out["times"]], out["last"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument(
        "--sessions", type=int, default=3, help="fresh sessions for the first chart"
    )
    parser.add_argument("--site", type=Path, action="append", help="a built site (repeatable)")
    args = parser.parse_args()
    sites = [site.resolve() for site in args.site or [ROOT / "dist" / "site"]]
    args.site = sites[0]
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        naive_dir = Path(tmp)
        (naive_dir / "index.html").write_text(NAIVE_PAGE)
        (naive_dir / "naive-worker.js").write_text(NAIVE_WORKER)
        (naive_dir / "pyodide").symlink_to(args.site / "pyodide")
        site_url, site_server = serve(args.site)
        naive_url, naive_server = serve(naive_dir)
        others = [serve(site) for site in sites[1:]]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            # `1+1` from the moment of ready, in fresh sessions, interleaved.
            from_ready: dict[str, list[float]] = {}
            urls = [("naive", f"{naive_url}/index.html")] + [
                (f"reckon {site}", f"{url}/index.html")
                for site, url in zip(sites, [site_url] + [u for u, _ in others], strict=True)
            ]
            for _ in range(args.sessions):
                for name, url in urls:
                    runner = "naive" if name == "naive" else "reckon"
                    ready = "() => window.naiveReady" if runner == "naive" else READY
                    page = open_page(browser, url, ready)
                    times, _ = measure(page, runner, "1+1", args.rounds)
                    from_ready.setdefault(name, []).extend(times)
                    page.context.close()
            # First chart: in fresh sessions, run as soon as each says it is ready (one
            # page at a time, so no start competes with another's chart), then a bar
            # chart whose labels pass the canvas's edge.
            plot_naive: list[float] = []
            plots: dict[str, list[tuple[float, float]]] = {str(site): [] for site in sites}
            for _ in range(args.sessions):
                for site, url in zip(sites, [site_url] + [u for u, _ in others], strict=True):
                    page = open_page(browser, f"{url}/console.html", READY)
                    times, result = measure(page, "reckon", PLOT, 1)
                    assert result["status"] == "ok" and result["figures"], result
                    bars, result = measure(page, "reckon", BARS, 1)
                    assert result["status"] == "ok" and result["figures"], result
                    plots[str(site)].append((times[0], bars[0]))
                    page.context.close()
                page = open_page(browser, f"{naive_url}/index.html", "() => window.naiveReady")
                times, reply = measure(page, "naive", NAIVE_PLOT, 1)
                assert isinstance(reply["value"], str) and len(reply["value"]) > 1000, reply
                plot_naive += times
                page.context.close()
            for site, pairs in plots.items():
                name = "" if len(sites) == 1 else f", {site}"
                firsts = [first for first, _ in pairs]
                rows.append(
                    (
                        f"first chart (run to PNG){name}",
                        statistics.median(plot_naive),
                        statistics.median(firsts),
                        f"median of {args.sessions} fresh sessions; ours "
                        + ", ".join(f"{t:.0f}" for t in firsts),
                    )
                )
                rows.append(
                    (
                        f"  then a bar chart, labels past the edge{name}",
                        statistics.median(plot_naive),
                        statistics.median(second for _, second in pairs),
                        "the same sessions; naive: its first chart",
                    )
                )

            ours = open_page(browser, f"{site_url}/console.html", "() => window.reckon.ready()")
            naive = open_page(browser, f"{naive_url}/index.html", "() => window.naiveReady")

            one_ours, result = measure(ours, "reckon", "1+1", args.rounds)
            assert result["status"] == "ok", result
            one_naive, reply = measure(naive, "naive", "1+1", args.rounds)
            assert reply["value"] == 2, reply
            for name, times in from_ready.items():
                if name == "naive":
                    continue
                rows.append(
                    (
                        f'run("1+1") from ready, {name.split()[1]}',
                        statistics.median(from_ready["naive"]),
                        statistics.median(times),
                        f"median of {len(times)} ({args.sessions} fresh sessions x {args.rounds},"
                        f" from ready); p95 {sorted(times)[int(0.95 * len(times))]:.1f} ms",
                    )
                )
            rows.append(
                (
                    'run("1+1") round trip, idle',
                    statistics.median(one_naive),
                    statistics.median(one_ours),
                    f"median of {args.rounds}; p95 ours "
                    f"{sorted(one_ours)[int(0.95 * len(one_ours))]:.1f} ms",
                )
            )

            flood_ours = ours.evaluate(FLOOD_JS, {"runner": "reckon", "code": FLOOD})
            flood_naive = naive.evaluate(FLOOD_JS, {"runner": "naive", "code": FLOOD})
            rows.append(
                (
                    "100k printed lines",
                    flood_naive["ms"],
                    flood_ours["ms"],
                    f"lines delivered: ours {flood_ours['lines']}, naive {flood_naive['lines']}",
                )
            )
            rows.append(
                (
                    "  longest page stall meanwhile",
                    flood_naive["stall"],
                    flood_ours["stall"],
                    "main thread, 10 ms timer lateness",
                )
            )
            browser.close()
        site_server.shutdown()
        naive_server.shutdown()
        for _, server in others:
            server.shutdown()

    print("per-run costs after ready (ms; ratio = naive / ours, >1 means Reckon is faster)")
    print("| measure | naive worker ms | reckon ms | ratio | note |")
    print("|---|---|---|---|---|")
    for name, base, value, note in rows:
        ratio = base / value if value else float("inf")
        print(f"| {name} | {base:.1f} | {value:.1f} | {ratio:.2f}x | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
