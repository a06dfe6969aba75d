"""Big files through SQL: a filtered group-by over generated CSVs of 1 GB and 5 GB, in
Reckon's browser sandbox (`run_sql` on DuckDB-wasm) against CPython on the same file.

For each size, the same query runs:

- in Reckon in headless Chromium: the file is handed to the page as a disk-backed
  `File` (as a file picker does) and mounted; `run_sql` registers that same `File` with
  DuckDB, which scans it in place (one thread). Time is the cell's own, after a first
  `run_sql("SELECT 1")` that loads DuckDB (its time is shown apart); peak memory is the
  growth of the resident memory of this run's Chromium processes over the query (other
  browsers on the machine are not counted);
- in CPython with the `duckdb` package (`pip install duckdb==1.4.3`, pinned in
  requirements-dev.txt: the version inside DuckDB-wasm 1.32.0), on one thread and on
  every core; a subprocess each, time and peak resident memory;
- in CPython with pandas, reading the three columns it needs in chunks.

The generated files are the rows of `big_file.py` (seeded); a file of N GB (N > 1) is
the 1 GB file's rows N times over (generating rows runs at about 6 MB/s here). They are
kept in `--keep` (default `~/.cache/reckon/bench`) between runs. Every engine's answer
is compared with CPython DuckDB's.

    python benchmarks/big_sql.py [--sizes 1000,5000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from big_file import generate  # noqa: E402
from startup import serve  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

QUERY = (
    "SELECT region, COUNT(*) AS n, SUM(price) AS total FROM {table} "
    "WHERE qty >= 10 AND price < 500 GROUP BY region ORDER BY region"
)

DUCKDB = """import duckdb
con = duckdb.connect()
con.execute("SET threads = {threads}")
con.execute("SET enable_progress_bar = false")
frame = con.sql({query!r}).df()
"""
PANDAS = """import pandas as pd
parts = []
for chunk in pd.read_csv({path!r}, usecols=["region", "price", "qty"], chunksize=2_000_000):
    chunk = chunk[(chunk["qty"] >= 10) & (chunk["price"] < 500)]
    parts.append(chunk.groupby("region")["price"].agg(n="count", total="sum"))
frame = pd.concat(parts).groupby(level=0).sum().reset_index(names="region")
"""
ANSWER = (
    "print('ANSWER', json.dumps([[r, int(n), float(t)] for r, n, t in "
    "zip(frame['region'], frame['n'], frame['total'])]))\n"
)


def own_chromium_mb() -> float:
    """Resident memory of the Chromium processes this process started (not those of
    other test runs on the machine)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        pid = int(text.split(" ", 1)[0])
        names[pid] = text[text.index("(") + 1 : text.rindex(")")]
        parents[pid] = int(text[text.rindex(")") + 2 :].split()[1])
    ours = {os.getpid()}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in ours} - ours
        grew = bool(more)
        ours |= more
    total = 0
    for pid in ours:
        if not names.get(pid, "").startswith("chrom"):
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += next(
            (int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("VmRSS:")), 0
        )
    return total / 1024


class PeakSampler:
    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, own_chromium_mb())

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def in_cpython(code: str) -> tuple[float, float, list[Any]]:
    script = (
        "import json, time, resource\nt = time.perf_counter()\n"
        + code
        + "seconds = time.perf_counter() - t\n"
        + ANSWER
        + "print('SECONDS', seconds)\n"
        + "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return float(lines["SECONDS"]), int(lines["PEAK_KB"]) / 1024, json.loads(lines["ANSWER"])


def in_reckon(browser: Any, site_url: str, path: Path) -> tuple[float, float, float, Any]:
    """(query s, peak MB, DuckDB load s, answer or error text)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{site_url}/console.html")
    page.evaluate(
        """async () => {
          const { createReckon } = await import("./reckon.js");
          window.bench = createReckon({ persist: false, agent: false });
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
    run = "(c) => window.bench.run(c, { timeoutMs: 3600000 })"
    loaded = page.evaluate(run, "run_sql('SELECT 1 AS one')")
    assert loaded["status"] == "ok", loaded
    load_s = loaded["duration_ms"] / 1000
    table = path.stem.replace("-", "_")
    code = f"frame = run_sql({QUERY.format(table=table)!r})\nimport json\n" + ANSWER
    before = own_chromium_mb()
    with PeakSampler() as sampler:
        result = page.evaluate(run, code)
    context.close()
    if result["status"] != "ok":
        error = result.get("error") or {}
        return float("nan"), sampler.peak - before, load_s, f"{result['status']}: {error}"
    answer = json.loads(result["stdout"].split("ANSWER ", 1)[1].splitlines()[0])
    return result["duration_ms"] / 1000, sampler.peak - before, load_s, answer


def make_file(path: Path, size: int) -> None:
    if path.exists():
        return
    if size <= 1000 or size % 1000:
        print(f"generating {path} ({size} MB) …", file=sys.stderr)
        generate(path, size)
        return
    base = path.with_name("big-1000mb.csv")
    make_file(base, 1000)
    print(f"writing {path}: the rows of {base.name} {size // 1000} times …", file=sys.stderr)
    with base.open("rb") as source, path.open("wb") as out:
        header = source.readline()
        out.write(header)
        for _ in range(size // 1000):
            source.seek(len(header))
            while chunk := source.read(1 << 24):
                out.write(chunk)


def same(answer: Any, reference: Any) -> str:
    if not isinstance(answer, list):
        return str(answer)[:200]
    if [(r, n) for r, n, _ in answer] != [(r, n) for r, n, _ in reference]:
        return f"DIFFERENT: {answer}"
    close = all(
        abs(t - u) <= 1e-9 * max(1.0, abs(u))
        for (_, _, t), (_, _, u) in zip(answer, reference, strict=True)
    )
    return "same" if close else f"DIFFERENT totals: {answer}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000", help="file sizes in MB")
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    parser.add_argument("--keep", type=Path, default=Path.home() / ".cache" / "reckon" / "bench",
                        help="where the generated files are kept between runs")  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.keep.mkdir(parents=True, exist_ok=True)
    rows = []
    site_url, server = serve(args.site)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for size in (int(s) for s in args.sizes.split(",")):
            path = args.keep / f"big-{size}mb.csv"
            make_file(path, size)
            scan = f"read_csv({str(path)!r})"
            runs: list[tuple[str, float, float, Any]] = []
            for threads in (1, 0):
                code = DUCKDB.format(threads=threads or _cores(), query=QUERY.format(table=scan))
                label = (
                    "CPython DuckDB, 1 thread" if threads else f"CPython DuckDB, {_cores()} threads"
                )
                runs.append((label, *in_cpython(code)))
            runs.append(("CPython pandas, chunked", *in_cpython(PANDAS.format(path=str(path)))))
            ours_s, ours_mb, load_s, answer = in_reckon(browser, site_url, path)
            runs.insert(0, (f"Reckon run_sql (DuckDB-wasm; loading it: {load_s:.1f} s)",
                            ours_s, ours_mb, answer))  # fmt: skip
            rows.append((path.stat().st_size / 1e6, runs))
            print(f"{size} MB done", file=sys.stderr)
        browser.close()
    server.shutdown()
    print("big CSV, filtered group-by: Reckon run_sql (DuckDB-wasm in Chromium) vs CPython")
    print(f"query: {QUERY.format(table='<file>')}")
    print("| file MB | engine | s | peak MB | vs CPython DuckDB 1 thread | result |")
    print("|---|---|---|---|---|---|")
    for actual, runs in rows:
        reference = runs[1][3]
        base = runs[1][1]
        for label, seconds, peak, answer in runs:
            print(f"| {actual:.0f} | {label} | {seconds:.1f} | {peak:.0f} | "
                  f"{seconds / base:.2f}x | {same(answer, reference)} |")  # fmt: skip
    return 0


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    sys.exit(main())
