"""Time to first token with the real local model: the old prompt against the new one,
and a second step that extends the first byte for byte against the same step cold.

    .venv/bin/python benchmarks/prompt_ttft.py [--runs 3] [--old-rev 5e30f4a]

It starts the local model (scripts/local_model.py: Qwen2.5-Coder-1.5B-Instruct under
llama-cpp-python, one thread) and sends each request with ``max_tokens: 1``, so what is
timed is the model reading its prompt. Variants alternate (A B A B ...): llama.cpp keeps
only the last prompt's state, so each request reads its prompt from scratch except
where it shares a prefix with the one before, exactly as in use. The old prompt and
tool descriptions are taken from git at ``--old-rev`` (the commit before this change).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "py"), str(ROOT / "scripts")]

import local_model  # noqa: E402

from reckon.agent._prompt import build_system_prompt  # noqa: E402
from reckon.agent._types import RUN_PYTHON_TOOL, RUN_SQL_TOOL  # noqa: E402

ENVIRONMENT: dict[str, Any] = {
    "python": "3.12.7",
    "packages": ["numpy", "pandas", "matplotlib", "scipy", "scikit-learn", "seaborn", "sympy",
                 "pyarrow", "openpyxl", "xlrd", "odfpy", "pypdf", "tabulate"],
    "files": [{"status": "ok", "path": "/data/sales.csv", "kind": "table", "format": "csv",
               "rows": 20, "sql_table": "sales", "read_with": "read_table('/data/sales.csv')",
               "columns": [{"name": n, "dtype": d} for n, d in [
                   ("date", "object"), ("region", "object"), ("product", "object"),
                   ("price", "float64"), ("qty", "int64"), ("sales", "float64")]]}],
}  # fmt: skip
QUESTION = "Which region sold the most units in total? Answer as @region[name]."


def old_prompt(rev: str) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and tools as they were at ``rev``."""
    namespace: dict[str, Any] = {}
    types = subprocess.run(["git", "show", f"{rev}:py/reckon/agent/_types.py"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout  # fmt: skip
    exec(compile(types, "old_types", "exec"), namespace)
    prompt = subprocess.run(["git", "show", f"{rev}:py/reckon/agent/_prompt.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout  # fmt: skip
    old: dict[str, Any] = {"__name__": "old_prompt"}
    exec(compile(prompt, "old_prompt", "exec"), old)
    return old["build_system_prompt"](ENVIRONMENT), [
        namespace["RUN_PYTHON_TOOL"],
        namespace["RUN_SQL_TOOL"],
    ]


def first_token(url: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> float:
    body = {"model": local_model.MODEL_NAME, "messages": messages, "tools": tools,
            "temperature": 0, "max_tokens": 1, "stream": True}  # fmt: skip
    started = time.monotonic()
    with (
        httpx.Client(timeout=600) as client,
        client.stream("POST", f"{url}/chat/completions", json=body) as response,
    ):
        response.raise_for_status()
        elapsed: float | None = None
        for line in response.iter_lines():  # read to the end: the next request starts clean
            if elapsed is None and line.startswith("data:"):
                elapsed = time.monotonic() - started
    if elapsed is None:
        raise RuntimeError("the model server streamed nothing")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--old-rev", default="5e30f4a")
    parser.add_argument("--upstream", help="a model server already running (base URL .../v1)")
    args = parser.parse_args()
    old_system, old_tools = old_prompt(args.old_rev)
    new_system = build_system_prompt(ENVIRONMENT)
    new_tools = [RUN_PYTHON_TOOL, RUN_SQL_TOOL]
    question = {"role": "user", "content": QUESTION}
    code = json.dumps({"code": "df = read_table('/data/sales.csv')\n"
                       "print(df.groupby('region')['qty'].sum())"})  # fmt: skip
    step_two = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "run_python", "arguments": code}}]},
        {"role": "tool", "tool_call_id": "c1",
         "content": "status: ok\nstdout:\nregion\nEast    12\nNorth   31\nSouth    9\n"},
    ]  # fmt: skip
    new_first = [{"role": "system", "content": new_system}, question]
    times: dict[str, list[float]] = {"old": [], "new": [], "step2-extends": [], "step2-cold": []}
    with contextlib.nullcontext(args.upstream) if args.upstream else local_model.serving() as url:
        first_token(url, [{"role": "user", "content": "hi"}], new_tools)  # warm the weights
        for _ in range(args.runs):
            times["old"].append(first_token(url, [{"role": "system", "content": old_system},
                                                  question], old_tools))  # fmt: skip
            times["new"].append(first_token(url, new_first, new_tools))
            times["step2-extends"].append(first_token(url, new_first + step_two, new_tools))
            first_token(url, [{"role": "user", "content": "unrelated"}], old_tools)
            times["step2-cold"].append(first_token(url, new_first + step_two, new_tools))
    chars = {"old": len(old_system) + len(json.dumps(old_tools)),
             "new": len(new_system) + len(json.dumps(new_tools))}  # fmt: skip
    print(f"\nTime to first token, {local_model.MODEL_NAME}, 1 thread, {args.runs} runs each "
          "(median, min-max):\n")  # fmt: skip
    print("| request | prompt + tools (chars) | first token (s) |\n|---|---|---|")
    for name, label in [("old", f"step 1, prompt at {args.old_rev}"), ("new", "step 1, new prompt"),
                        ("step2-extends", "step 2, extends step 1 (prompt cache)"),
                        ("step2-cold", "step 2, same request read cold")]:  # fmt: skip
        values = times[name]
        size = chars.get(name, "")
        print(
            f"| {label} | {size} | {statistics.median(values):.1f} "
            f"({min(values):.1f}-{max(values):.1f}) |"
        )
    ratio = statistics.median(times["old"]) / statistics.median(times["new"])
    print(f"\nold / new, step 1: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
