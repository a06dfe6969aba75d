"""Big files: a generated CSV of hundreds of MB uploaded and summarised, against CPython.

For each size, the same file and the same pandas code (`read_csv`, then a group-by) run:

- in CPython on this machine (a subprocess; time and peak resident memory);
- in Reckon in headless Chromium: the file is handed to the page as a disk-backed `File`
  (as a file picker does) and mounted read-only into the sandbox (WORKERFS), so the page
  never reads it into memory; time is the run's own, peak memory is the growth of all
  Chromium processes' resident memory over the run.

`whole` reads the table at once; `chunked` reads only the two columns it needs, in
chunks, which is how tables bigger than WebAssembly's memory are summarised.

    python benchmarks/big_file.py [--sizes 500:whole,500:chunked,1200:chunked] [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from startup import serve  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

WHOLE = """import pandas as pd
df = pd.read_csv({path!r})
summary = df.groupby("region")["price"].agg(["count", "sum"])
print(len(df), int(summary["count"].sum()), round(float(summary["sum"].sum()), 2))
"""
CHUNKED = """import pandas as pd
parts = []
rows = 0
for chunk in pd.read_csv({path!r}, usecols=["region", "price"], chunksize=2_000_000):
    rows += len(chunk)
    parts.append(chunk.groupby("region")["price"].agg(["count", "sum"]))
summary = pd.concat(parts).groupby(level=0).sum()
print(rows, int(summary["count"].sum()), round(float(summary["sum"].sum()), 2))
"""
CODE = {"whole": WHOLE, "chunked": CHUNKED}


def generate(path: Path, megabytes: int) -> None:
    """Rows of id, region, product, price, qty, date; deterministic (seeded)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    regions = np.array(["North", "South", "East", "West", "Centre", "Islands"])
    products = np.array([f"product-{i:03d}" for i in range(200)])
    rows = 100_000
    start = 0
    with path.open("w") as out:
        out.write("id,region,product,price,qty,date\n")
        while out.tell() < megabytes * 1_000_000:
            frame = pd.DataFrame(
                {
                    "id": np.arange(start, start + rows),
                    "region": regions[rng.integers(0, len(regions), rows)],
                    "product": products[rng.integers(0, len(products), rows)],
                    "price": rng.integers(100, 100_000, rows) / 100,
                    "qty": rng.integers(1, 50, rows),
                    "date": np.datetime64("2024-01-01")
                    + rng.integers(0, 730, rows).astype("timedelta64[D]"),
                }
            )
            frame.to_csv(out, header=False, index=False)
            start += rows


def in_cpython(path: Path, mode: str) -> tuple[float, float, str]:
    script = (
        "import time, resource\nt = time.perf_counter()\n"
        + CODE[mode].format(path=str(path))
        + "print('SECONDS', time.perf_counter() - t)\n"
        + "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    seconds = float(lines[-2].split()[1])
    peak_mb = int(lines[-1].split()[1]) / 1024
    return seconds, peak_mb, lines[0]


def chromium_rss_mb() -> float:
    total = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if "\nName:\tchrom" not in "\n" + text:
            continue
        for line in text.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


class PeakSampler:
    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, chromium_rss_mb())

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def in_reckon(browser: Any, site_url: str, path: Path, mode: str) -> tuple[float, float, str]:
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.goto(f"{site_url}/console.html")
    page.evaluate(
        """async () => {
          const { createReckon } = await import("./reckon.js");
          window.bench = createReckon({ persist: false, agent: false, memoryLimitMB: 3800 });
          await window.bench.ready();
          const input = document.createElement("input");
          input.type = "file";
          input.id = "bench-file";
          document.body.appendChild(input);
        }"""
    )
    page.set_input_files("#bench-file", str(path))
    reply = page.evaluate(
        """async () => {
          const file = document.getElementById("bench-file").files[0];
          return window.bench.sandbox.mountFile("/data/" + file.name, file);
        }"""
    )
    assert reply["status"] == "ok", reply
    before = chromium_rss_mb()
    code = CODE[mode].format(path=f"/data/{path.name}")
    with PeakSampler() as sampler:
        result = page.evaluate("(c) => window.bench.run(c, { timeoutMs: 1800000 })", code)
    context.close()
    if result["status"] != "ok":
        error = result.get("error") or {}
        return float("nan"), sampler.peak - before, f"{result['status']}: {error.get('message')}"
    return result["duration_ms"] / 1000, sampler.peak - before, result["stdout"].splitlines()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="500:whole,500:chunked,1200:chunked")
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    parser.add_argument("--keep", type=Path, help="keep generated files here between runs")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    plan = [(int(size), mode) for size, mode in (p.split(":") for p in args.sizes.split(","))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        site_url, server = serve(args.site)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for size, mode in plan:
                path = folder / f"big-{size}mb.csv"
                if not path.exists():
                    generate(path, size)
                actual = path.stat().st_size / 1e6
                cpy_s, cpy_mb, cpy_out = in_cpython(path, mode)
                ours_s, ours_mb, ours_out = in_reckon(browser, site_url, path, mode)
                same = "same" if cpy_out == ours_out else f"DIFFERENT: {ours_out}"
                rows.append((actual, mode, cpy_s, cpy_mb, ours_s, ours_mb, same))
            browser.close()
        server.shutdown()
    print("big CSV: read_csv + group-by, Reckon (Chromium, WebAssembly) vs CPython pandas")
    print(
        "| file MB | read | CPython s | CPython peak MB | Reckon s | Reckon peak MB "
        "| time ratio | result |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for actual, mode, cpy_s, cpy_mb, ours_s, ours_mb, same in rows:
        print(
            f"| {actual:.0f} | {mode} | {cpy_s:.1f} | {cpy_mb:.0f} | {ours_s:.1f} | {ours_mb:.0f} "
            f"| {ours_s / cpy_s:.2f}x | {same} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
