"""CPU the browser spends in the 30 s after "ready", on a first visit and on later ones.

Measures what a person who opened the page and has not asked anything yet pays for:
background work after the sandbox says it is ready. For each visit (the same three as
`startup.py`: a cold first visit in a new browser context, then a warm one in the same
tab and one in a new tab), it reads the CPU time (user + system) of every process of
this Chromium from `/proc/<pid>/stat` (fields utime and stime, in clock ticks) the
moment `reckon.ready()` resolves and again 30 s later, and sums the differences per
process. "Every process of this Chromium" is every process under the Playwright driver
this script started whose name starts with `chrom` (browser, zygotes, renderers, the
GPU and utility processes); a process that starts inside the window counts in full, one
that ends inside it not at all (none of the product's processes should). A new context
of a blank page over the same 30 s is the floor: what this Chromium spends doing nothing.

Pages: `index.html` (the chat page: sandbox and agent) of each `--site`, each served by
its own static server (`python -m http.server`'s handler), so two builds compare in one
run, interleaved. Prints, per site and visit, the median CPU seconds, the split by
process type, the ready time, and where the snapshot came from.

    python benchmarks/idle_cpu.py [--runs 3] [--window 30] [--site dist/site] [--site /tmp/other]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from startup import VISITS, WAIT, serve  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
READY = "() => window.reckon.ready().then(() => performance.now())"


def _stat(pid: str) -> tuple[int, str, int] | None:
    """(parent pid, name, utime + stime in ticks) of a process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), name, int(fields[11]) + int(fields[12])


def _kind(pid: str) -> str:
    try:
        # Chromium rewrites its command line as one string (its process title).
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().split()
    except OSError:
        return "gone"
    kind = next((a[7:] for a in argv if a.startswith("--type=")), "browser")
    if kind == "utility":
        sub = next((a for a in argv if a.startswith("--utility-sub-type=")), "")
        kind = sub.split("=")[-1].split(".")[-1] or kind
    return kind


def chromium_cpu() -> dict[str, tuple[str, int]]:
    """pid -> (kind, CPU ticks) for every Chromium process under this script."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (got := _stat(entry.name)):
            table[entry.name] = got
    mine = {str(os.getpid())}
    grew = True
    while grew:  # descendants of this process
        grew = False
        for pid, (ppid, _, _) in table.items():
            if pid not in mine and str(ppid) in mine:
                mine.add(pid)
                grew = True
    return {pid: (_kind(pid), table[pid][2]) for pid in mine if table[pid][1].startswith("chrom")}


def cpu_over(seconds: float, before: dict[str, tuple[str, int]]) -> dict[str, float]:
    """CPU seconds by process kind from `before` until `seconds` from now."""
    time.sleep(seconds)
    after = chromium_cpu()
    spent: dict[str, float] = {}
    for pid, (kind, ticks) in after.items():
        was = before.get(pid, (kind, 0))[1]
        spent[kind] = spent.get(kind, 0.0) + (ticks - was) / TICK
    return spent


def visits(browser: Any, url: str, window: float) -> list[tuple[float, dict[str, float], str]]:
    """(ready s, CPU by kind over `window` after ready, snapshot outcome) per visit."""
    context = browser.new_context()
    page = context.new_page()
    out = []
    for visit in VISITS:
        if visit == "warm, new tab":
            page.close()
            page = context.new_page()
        elif visit == "warm":
            page.goto("about:blank")
        page.goto(url, wait_until="commit")
        ready = float(page.evaluate(WAIT.replace("READY", READY))) / 1000
        spent = cpu_over(window, chromium_cpu())
        done = page.evaluate(
            "() => Promise.race([window.reckon.sandbox.snapshotDone,"
            " new Promise((r) => setTimeout(() => r({status: 'pending'}), 100))])"
        )
        out.append((ready, spent, f"{done.get('status')}:{done.get('source')}"))
    context.close()
    return out


def blank(browser: Any, window: float) -> dict[str, float]:
    context = browser.new_context()
    page = context.new_page()
    page.goto("about:blank")
    spent = cpu_over(window, chromium_cpu())
    context.close()
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--window", type=float, default=30.0, help="seconds after ready")
    parser.add_argument("--site", type=Path, action="append", help="a built site (repeatable)")
    parser.add_argument("--page", default="index.html")
    args = parser.parse_args()
    sites = args.site or [ROOT / "dist" / "site"]
    from playwright.sync_api import sync_playwright

    servers = [serve(site) for site in sites]
    names = [str(site) for site in sites]
    rows: dict[tuple[str, str], list[tuple[float, dict[str, float], str]]] = {}
    floors = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        floors.append(blank(browser, args.window))
        for _ in range(args.runs):  # interleaved, so drift hits all alike
            for name, (url, _) in zip(names, servers, strict=True):
                got = visits(browser, f"{url}/{args.page}", args.window)
                for visit, one in zip(VISITS, got, strict=True):
                    rows.setdefault((name, visit), []).append(one)
        floors.append(blank(browser, args.window))
        browser.close()
    for _, server in servers:
        server.shutdown()

    floor = statistics.median(sum(f.values()) for f in floors)
    print(f"CPU of all Chromium processes in the {args.window:.0f} s after ready ({args.page}),")
    print(f"{args.runs} runs, medians; a blank page over the same time: {floor:.2f} s")
    print("| site | visit | CPU s | min-max | by process (median s) | ready s | snapshot |")
    print("|---|---|---|---|---|---|---|")
    for (name, visit), got in rows.items():
        totals = [sum(spent.values()) for _, spent, _ in got]
        kinds = sorted({k for _, spent, _ in got for k in spent})
        split = ", ".join(
            f"{k} {statistics.median(spent.get(k, 0.0) for _, spent, _ in got):.2f}" for k in kinds
        )
        ready = statistics.median(r for r, _, _ in got)
        outcomes = "/".join(sorted({o for _, _, o in got}))
        print(
            f"| {name} | {visit} | {statistics.median(totals):.2f} | {min(totals):.2f}-"
            f"{max(totals):.2f} | {split} | {ready:.2f} | {outcomes} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
