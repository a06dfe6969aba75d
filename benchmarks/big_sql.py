"""Big files through SQL: a filtered group-by over generated CSVs of 1 GB and 5 GB, in
Reckon's browser sandbox (`run_sql` on DuckDB-wasm) against CPython on the same file.

For each size, the same query runs:

- in Reckon in headless Chromium, twice: under `reckon serve` (COOP/COEP: the frame is
  cross-origin isolated, so DuckDB-wasm's build with threads runs, one per core, at
  most 8) and on a plain static server (the single-threaded build). The file is handed
  to the page as a disk-backed `File` (as a file picker does) and mounted; `run_sql`
  registers that same `File` with DuckDB, which scans it in place. Time is the cell's
  own, after a first `run_sql` that loads DuckDB (its time is shown apart); peak
  memory is the growth of the resident memory of this run's Chromium processes over
  the query (other browsers on the machine are not counted). Every wait in the browser
  has a deadline (`--timeout`, benchmarks/_watch.py): a step that hangs ends the run
  and names itself;
- in CPython with the `duckdb` package (`pip install duckdb==1.4.3`, pinned in
  requirements-dev.txt: the version inside DuckDB-wasm 1.32.0), on one thread and at
  its default thread count (the target compares with this one); a subprocess each,
  time and peak resident memory;
- in CPython with pandas, reading the three columns it needs in chunks.

The generated files are the rows of `big_file.py` (seeded); a file of N GB (N > 1) is
the 1 GB file's rows N times over (generating rows runs at about 6 MB/s here). They are
kept in `--keep` (default `~/.cache/reckon/bench`) between runs. Every engine's answer
is compared with CPython DuckDB's.

    python benchmarks/big_sql.py [--sizes 1000,5000] [--keep DIR] [--timeout S]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from _watch import PageLog, watchdog  # noqa: E402
from big_file import generate  # noqa: E402
from startup import serve  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS, reckon_serve  # noqa: E402

QUERY = (
    "SELECT region, COUNT(*) AS n, SUM(price) AS total FROM {table} "
    "WHERE qty >= 10 AND price < 500 GROUP BY region ORDER BY region"
)

DUCKDB = """import duckdb
con = duckdb.connect()
{threads}con.execute("SET enable_progress_bar = false")
frame = con.sql({query!r}).df()
print('THREADS', con.sql("SELECT current_setting('threads')").fetchone()[0])
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


def in_cpython(code: str) -> tuple[float, float, list[Any], str]:
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
    seconds, peak = float(lines["SECONDS"]), int(lines["PEAK_KB"]) / 1024
    return seconds, peak, json.loads(lines["ANSWER"]), lines.get("THREADS", "")


def in_reckon(
    browser: Any, site_url: str, path: Path, *, limit: float
) -> tuple[float, float, float, int, Any]:
    """(query s, peak MB, DuckDB load s, DuckDB's threads, answer or error text)."""
    context = browser.new_context()
    page = context.new_page()
    log = PageLog(page)
    with watchdog("open the console page", limit, log):
        page.goto(f"{site_url}/console.html")
    with watchdog("sandbox ready", limit, log):
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
    with watchdog("mount the file", limit, log):
        page.set_input_files("#bench-file", str(path))
        reply = page.evaluate(
            """async () => {
              const file = document.getElementById("bench-file").files[0];
              return window.bench.sandbox.mountFile("/data/" + file.name, file);
            }"""
        )
    assert reply["status"] == "ok", reply
    # The cell's own deadline is the limit too: a query that runs past it is stopped.
    run = f"(c) => window.bench.run(c, {{ timeoutMs: {int(limit * 1000)} }})"
    load = "print(run_sql(\"SELECT current_setting('threads') AS t\")['t'][0])"
    with watchdog("load DuckDB", limit + 30, log):
        loaded = page.evaluate(run, load)
    assert loaded["status"] == "ok", (loaded, log.tail())
    load_s = loaded["duration_ms"] / 1000
    threads = int(loaded["stdout"].strip())
    table = path.stem.replace("-", "_")
    code = f"frame = run_sql({QUERY.format(table=table)!r})\nimport json\n" + ANSWER
    before = own_chromium_mb()
    with PeakSampler() as sampler, watchdog(f"the query on {path.name}", limit + 30, log):
        result = page.evaluate(run, code)
    context.close()
    if result["status"] != "ok":
        error = result.get("error") or {}
        return float("nan"), sampler.peak - before, load_s, threads, f"{result['status']}: {error}"
    answer = json.loads(result["stdout"].split("ANSWER ", 1)[1].splitlines()[0])
    return result["duration_ms"] / 1000, sampler.peak - before, load_s, threads, answer


@contextmanager
def served_sites(site: Path) -> Iterator[list[tuple[str, str]]]:
    """(how, URL): `reckon serve` (cross-origin isolated) and a plain static server."""
    static_url, server = serve(site)
    flags = ["--upstream", "http://127.0.0.1:9/v1", "--model", "unused"]
    try:
        with reckon_serve(*flags, site=site, env={"RECKON_UPSTREAM_KEY": "unused"}) as relay:
            yield [("reckon serve", relay.url), ("static server", static_url)]
    finally:
        server.shutdown()


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
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds any one browser step may take")  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.keep.mkdir(parents=True, exist_ok=True)
    rows = []
    with served_sites(args.site) as sites, sync_playwright() as pw:
        with watchdog("start Chromium", 60):
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for size in (int(s) for s in args.sizes.split(",")):
            path = args.keep / f"big-{size}mb.csv"
            make_file(path, size)
            scan = f"read_csv({str(path)!r})"
            runs: list[tuple[str, float, float, Any]] = []
            for one in (False, True):
                setting = 'con.execute("SET threads = 1")\n' if one else ""
                code = DUCKDB.format(threads=setting, query=QUERY.format(table=scan))
                seconds, peak, answer, threads = in_cpython(code)
                how = "1 thread" if one else f"default: {threads} threads"
                runs.append((f"CPython DuckDB, {how}", seconds, peak, answer))
            pandas = in_cpython(PANDAS.format(path=str(path)))
            runs.append(("CPython pandas, chunked", *pandas[:3]))
            for how, url in sites:
                ours_s, ours_mb, load_s, threads, answer = in_reckon(
                    browser, url, path, limit=args.timeout
                )
                plural = "s" if threads > 1 else ""
                label = (f"Reckon run_sql, {how} (DuckDB-wasm, {threads} thread{plural}; "
                         f"loading it: {load_s:.1f} s)")  # fmt: skip
                runs.insert(len(runs) - 3, (label, ours_s, ours_mb, answer))
            rows.append((path.stat().st_size / 1e6, runs))
            print(f"{size} MB done", file=sys.stderr)
        browser.close()
    print("big CSV, filtered group-by: Reckon run_sql (DuckDB-wasm in Chromium) vs CPython")
    print(f"query: {QUERY.format(table='<file>')}")
    print(f"machine: {_cores()} cores")
    print("| file MB | engine | s | peak MB | vs CPython DuckDB, default threads | result |")
    print("|---|---|---|---|---|---|")
    for actual, runs in rows:
        reference = next(r for r in runs if r[0].startswith("CPython DuckDB, default"))
        for label, seconds, peak, answer in runs:
            print(f"| {actual:.0f} | {label} | {seconds:.1f} | {peak:.0f} | "
                  f"{seconds / reference[1]:.2f}x | {same(answer, reference[3])} |")  # fmt: skip
    return 0


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


if __name__ == "__main__":
    sys.exit(main())
