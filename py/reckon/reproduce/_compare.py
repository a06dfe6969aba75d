"""Compare one notebook cell's stored outputs with a fresh run's result, and say why
they differ when the code gives it away."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from typing import Any

from reckon.kernel._replay import unreplayable

__all__ = ["compare_cell", "normalize_text", "table_values", "why_different"]

# Where a cell ran again: (the difference's key for the re-run's text, where it ran,
# who ran it, who ran it first).
_RERUNS = {
    "cpython": ("cpython", "on CPython", "CPython", "the browser"),
    "fresh": ("fresh", "in the fresh sandbox", "The fresh sandbox", "the session"),
}

_SIZE_SLACK = 3  # pixels
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_SITE = re.compile(r"\S*?site-packages/")
_SANDBOX_DIRS = re.compile(r"(?<![\w./-])/(data|output)/")
_CAUSES = [
    (
        re.compile(r"\b(np\.random|numpy\.random|random\.|default_rng|\.sample\(|shuffle|uuid)"),
        re.compile(r"seed|random_state|default_rng\(\s*\d"),
        "it uses randomness without a fixed seed",
    ),
    (
        re.compile(r"\b(now|today|utcnow)\(|time\.time\(|perf_counter|monotonic|Timestamp\.now"),
        None,
        "it reads the current date or time",
    ),
    (
        re.compile(r"\bsys\.platform\b|\bplatform\.|\bos\.uname|sys\.version"),
        None,
        "it reads the platform or Python version (Pyodide in the browser, CPython here)",
    ),
    (
        re.compile(r"\bos\.getcwd|\bos\.environ|\bgetpid|\bsocket\b"),
        None,
        "it reads the process environment",
    ),
]


def normalize_text(text: str, *, workdir: str = "") -> str:
    """Text with the trivia that differs between any two runs taken out."""
    if workdir:
        text = text.replace(workdir.rstrip("/") + "/", "")
    text = _ADDRESS.sub("0x…", text)
    text = _SITE.sub("site-packages/", text)
    text = _SANDBOX_DIRS.sub(r"\1/", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_values(html: str) -> list[list[str]]:
    """The cell texts of an HTML table, row by row."""
    parser = _Cells()
    parser.feed(html)
    return [row for row in parser.rows if row]


def _same_value(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a.replace(",", "")), float(b.replace(",", ""))
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(x) and math.isnan(y))


def _same_table(a: str, b: str) -> bool:
    rows_a, rows_b = table_values(a), table_values(b)
    if not rows_a or len(rows_a) != len(rows_b):
        return False
    return all(
        len(ra) == len(rb) and all(_same_value(x, y) for x, y in zip(ra, rb, strict=True))
        for ra, rb in zip(rows_a, rows_b, strict=True)
    )


def why_different(code: str, fallback: str) -> str:
    """The likely cause of a difference, read from the cell's code."""
    for pattern, excuse, reason in _CAUSES:
        if pattern.search(code) and (excuse is None or not excuse.search(code)):
            return reason
    return fallback


# Why an export left a call's result out (web/tools.js, agent/export/_tool_calls.py).
def _unanswered(cell: dict[str, Any], where: str) -> str | None:
    """Why a host tool call of the cell cannot be replayed from its
    ``metadata.reckon.tools`` (the first such call), or None when all can: then a
    difference is the code's, like any other cell's."""
    calls = cell.get("metadata", {}).get("reckon", {}).get("tools")
    for call in calls if isinstance(calls, list) else []:
        why = unreplayable(call) if isinstance(call, dict) else None
        if why is None:
            continue
        return (
            f"it called the page's host tool {call.get('name')} and the notebook cannot "
            f"replay that call (metadata.reckon.tools): {why}; {where} the call was a "
            'ToolError, "not recorded"'
        )
    return None


def _first_difference(a: str, b: str, where: str = "on CPython") -> str:
    lines_a, lines_b = a.splitlines(), b.splitlines()
    for number, (x, y) in enumerate(zip(lines_a, lines_b, strict=False), start=1):
        if x != y:
            return f"line {number} differs: {x[:120]!r} vs {y[:120]!r}"
    return f"{len(lines_a)} lines in the browser, {len(lines_b)} {where}"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def compare_cell(
    cell: dict[str, Any], run: dict[str, Any], *, workdir: str = "", rerun: str = "cpython"
) -> tuple[int, list[dict[str, Any]]]:
    """``(outputs that matched, differences)`` for one code cell and its re-run.

    ``rerun`` says where it ran again: ``"cpython"`` (each difference holds the re-run's
    text under ``cpython``) or ``"fresh"``, a fresh browser sandbox (under ``fresh``).
    """
    key, where, who, first = _RERUNS[rerun]
    code = _text(cell.get("source"))
    stored = cell.get("outputs") or []

    # A cell's host tool calls are replayed from the notebook (reckon.kernel.set_replay):
    # only one the record cannot answer explains a difference by itself.
    unanswered = _unanswered(cell, where)

    def differ(output: str, detail: str, browser: str, cpython: str) -> dict[str, Any]:
        why = unanswered or why_different(code, detail)
        return {"output": output, "why": why,
                "browser": browser[:500], key: cpython[:500]}  # fmt: skip

    if run.get("status") != "ok":
        error = run.get("error") or {}
        kind = error.get("type", run.get("status"))
        detail = f"it failed {where}: {kind}: {error.get('message', '')}"
        return 0, [differ("run", detail, "ran ok", _text(error.get("traceback")) or detail)]
    matched = 0
    differences: list[dict[str, Any]] = []
    figures = list(run.get("figures") or [])
    streams_seen: set[str] = set()
    value_seen = False
    for output in stored:
        kind = output.get("output_type")
        if kind == "stream":
            name = str(output.get("name", "stdout"))
            streams_seen.add(name)
            browser, cpython = _text(output.get("text")), str(run.get(name) or "")
            a, b = (
                normalize_text(browser, workdir=workdir),
                normalize_text(cpython, workdir=workdir),
            )
            if a == b:
                matched += 1
            else:
                differences.append(
                    differ(
                        name, f"{name} differs: {_first_difference(a, b, where)}", browser, cpython
                    )
                )
        elif kind == "execute_result":
            value_seen = True
            data = output.get("data") or {}
            result = run.get("result") or {}
            browser, cpython = _text(data.get("text/plain")), str(result.get("text") or "")
            same = normalize_text(browser, workdir=workdir) == normalize_text(
                cpython, workdir=workdir
            )
            if not same and data.get("text/html") and result.get("html"):
                same = _same_table(_text(data["text/html"]), str(result["html"]))
            if same:
                matched += 1
            else:
                a, b = normalize_text(browser), normalize_text(cpython, workdir=workdir)
                differences.append(
                    differ(
                        "value",
                        f"the value differs: {_first_difference(a, b, where)}",
                        browser,
                        cpython,
                    )
                )
        elif kind == "display_data" and "image/png" in (output.get("data") or {}):
            matched += _compare_figure(output, figures, differ, differences, where)
        else:
            differences.append(
                differ(str(kind), f"an output of type {kind} cannot be compared", "", "")
            )
    for name in ("stdout", "stderr"):
        if name not in streams_seen and normalize_text(str(run.get(name) or "")):
            differences.append(
                differ("extra", f"{who} printed {name} {first} did not", "", str(run[name]))
            )
    if not value_seen and run.get("result"):
        differences.append(
            differ(
                "extra",
                f"{who} produced a value {first} did not",
                "",
                str(run["result"].get("text")),
            )
        )
    for figure in figures:
        differences.append(
            differ(
                "extra",
                f"{who} drew a figure {first} did not",
                "",
                str(figure.get("description")),
            )
        )
    return matched, differences


def _compare_figure(
    output: dict[str, Any],
    figures: list[dict[str, Any]],
    differ: Any,
    differences: list[dict[str, Any]],
    where: str = "on CPython",
) -> int:
    description = _text(output["data"].get("text/plain"))
    size = (output.get("metadata") or {}).get("image/png") or {}
    if not figures:
        differences.append(differ("figure", f"the figure was not drawn {where}", description, ""))
        return 0
    figure = figures.pop(0)
    problems = []
    for key in ("width", "height"):
        want, got = size.get(key), figure.get(key)
        # A tight bounding box follows the text extents, which differ by a pixel or two
        # between font rasterisers; a real change of figure size is far larger.
        if isinstance(want, int) and not (isinstance(got, int) and abs(want - got) <= _SIZE_SLACK):
            problems.append(f"{key} {want} vs {got}")
    if normalize_text(description) != normalize_text(str(figure.get("description", ""))):
        problems.append("its description differs")
    if problems:
        detail = "the figure differs: " + ", ".join(problems)
        differences.append(differ("figure", detail, description, str(figure.get("description"))))
        return 0
    return 1
