"""`startup.py --sandbox-site`: the sandbox on a site of its own against the opaque
frame, both under `reckon serve`, beside the naive page, in one run (issue #35).

Each run and page gets a new Chromium profile on disk (third-party storage allowed,
as in a person's browser, so the sandbox site's wipe-and-check at each boot is paid):
a cold visit; a new tab in the same browser; the browser closed and started again on
the same profile, then a visit ("warm, browser restarted"), `run("1+1")` as soon as
ready, the first chart (a matplotlib line plot to PNG in hand), and `run("1+1")` once
idle (median of 20, after 3 s). Every step has the run's deadline (`_watch.py`).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

from _watch import BOUNDED, PageLog, watchdog
from support import CHROMIUM, reckon_serve

__all__ = ["SITE_STEPS", "measure_site_modes"]

SITE_STEPS = (
    "cold",
    "warm, new tab",
    "warm, browser restarted",
    "1+1 from ready (ms)",
    "first chart after warm start (ms)",
    "1+1 idle (ms)",
)
PLOT = """import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3, 4], [3, 1, 4, 1])
ax.set_title("first chart")
"""
# Ready, then at once one `1+1`: [ms since navigation at ready, the run's ms].
READY_THEN_RUN = """() => window.reckon.ready().then(async () => {
  const ready = performance.now();
  const result = await window.reckon.run("1+1");
  if (result.status !== "ok") throw new Error(JSON.stringify(result));
  return [ready, performance.now() - ready];
})"""
NAIVE_READY = "() => window.naiveReady.then((ready) => [ready, null])"
CHART = """() => (async () => {
  const t0 = performance.now();
  const result = await window.reckon.run(PLOT);
  if (result.status !== "ok" || !result.figures.length) throw new Error(JSON.stringify(result));
  return performance.now() - t0;
})()"""
IDLE = """() => (async () => {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const times = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await window.reckon.run("1+1");
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return (times[9] + times[10]) / 2;
})()"""
SETTLE = "() => window.reckon.sandbox.snapshotDone"


@contextmanager
def a_profile() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp)
        (profile / "Default").mkdir()
        prefs = {"profile": {"cookie_controls_mode": 0, "block_third_party_cookies": False}}
        (profile / "Default" / "Preferences").write_text(json.dumps(prefs))
        yield profile


def step(page: Any, js: str, name: str, limit: float, log: PageLog) -> Any:
    with watchdog(name, limit + 30, log):
        return page.evaluate(BOUNDED.replace("STEP", js), {"limit_ms": limit * 1000, "step": name})


def visit(context: Any, url: str, ready_js: str, name: str, limit: float) -> tuple[Any, Any]:
    page = context.new_page()
    log = PageLog(page)
    with watchdog(f"{name}: open", limit + 30, log):
        page.goto(url, wait_until="commit")
    ready = step(page, ready_js, f"{name}: ready", limit, log)
    print(f"{name}: {ready[0] / 1000:.2f} s", file=sys.stderr, flush=True)
    return page, ready


def one_profile(pw: Any, name: str, url: str, flags: list[str], limit: float) -> dict[str, float]:
    """The steps of SITE_STEPS for one page in one new profile."""
    naive = name == "naive"
    ready_js = NAIVE_READY if naive else READY_THEN_RUN
    out: dict[str, float] = {}
    with a_profile() as profile:

        def launch() -> Any:
            with watchdog(f"{name}: start Chromium", limit):
                return pw.chromium.launch_persistent_context(
                    str(profile), executable_path=CHROMIUM, args=flags, headless=True
                )

        context = launch()
        page, ready = visit(context, url, ready_js, f"{name} cold", limit)
        out["cold"] = ready[0] / 1000
        if not naive:
            step(page, SETTLE, f"{name}: snapshot kept", limit, PageLog(page))
        page.close()
        page, ready = visit(context, url, ready_js, f"{name} warm, new tab", limit)
        out["warm, new tab"] = ready[0] / 1000
        context.close()
        context = launch()
        page, ready = visit(context, url, ready_js, f"{name} warm, browser restarted", limit)
        out["warm, browser restarted"] = ready[0] / 1000
        if not naive:
            log = PageLog(page)
            out["1+1 from ready (ms)"] = ready[1]
            chart = CHART.replace("PLOT", json.dumps(PLOT))
            chart_ms = step(page, chart, f"{name}: chart", limit, log)
            out["first chart after warm start (ms)"] = chart_ms
            out["1+1 idle (ms)"] = step(page, IDLE, f"{name}: idle", limit, log)
        context.close()
    return out


def measure_site_modes(
    pw: Any, *, site: Path, naive_url: str, runs: int, flags: list[str], limit: float
) -> dict[str, dict[str, list[float]]]:
    """{page: {step: [value per run]}} for the naive page and both frames."""
    with ExitStack() as stack:
        stack.enter_context(redirect_stdout(sys.stderr))  # the relays' logs, at their end
        opaque = stack.enter_context(reckon_serve(site=site))
        own = stack.enter_context(reckon_serve("--sandbox-origin", "auto", site=site))
        pages = {
            "naive": f"{naive_url}/index.html",
            "reckon serve, opaque frame": f"{opaque.url}/console.html",
            "reckon serve, sandbox site": f"{own.url}/console.html",
        }
        results: dict[str, dict[str, list[float]]] = {name: {} for name in pages}
        for _ in range(runs):  # interleaved, so drift hits all alike
            for name, url in pages.items():
                for key, value in one_profile(pw, name, url, flags, limit).items():
                    results[name].setdefault(key, []).append(value)
    return results


def print_site_modes(results: dict[str, dict[str, list[float]]], runs: int) -> None:
    print(f"\nsandbox site vs opaque frame (reckon serve), {runs} runs each, medians (min-max)")
    names = list(results)
    print("| step | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for key in SITE_STEPS:
        cells = []
        for name in names:
            values = results[name].get(key)
            if not values:
                cells.append("-")
                continue
            digits = 0 if "(ms)" in key else 2
            med = statistics.median(values)
            cells.append(f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})")
        unit = "" if "(ms)" in key else " (s)"
        print(f"| {key}{unit} | " + " | ".join(cells) + " |")
