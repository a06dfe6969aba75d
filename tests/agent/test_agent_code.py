"""Fenced code blocks, tool-call arguments, observations, the prompt and the transcript."""

from __future__ import annotations

import json

import pytest

from reckon import ProtocolError
from reckon.agent import (
    OBSERVATION_HEADER,
    Transcript,
    build_system_prompt,
    extract_code_blocks,
    format_observation,
    messages_without_tools,
    parse_observation,
    parse_tool_arguments,
    replay_cells,
    trim_text,
)
from reckon.agent.models._fences import only_block
from reckon.agent.models._toolcalls import find_text_tool_calls
from support import PY


def test_all_runnable_blocks_are_joined_and_prose_is_kept_apart_from_what_follows() -> None:
    reply = (
        "First the imports.\n```python\nimport math\n```\nThen:\n```text\nsee\n```\n"
        "```py\nprint(math.pi)\n```\nOutput looks like:\n```text\n3.14\n```\nDone."
    )
    blocks = extract_code_blocks(reply)
    assert blocks is not None
    assert blocks.code == "import math\n\nprint(math.pi)"
    assert "First the imports." in blocks.text and "Then:" in blocks.text
    assert "import math" not in blocks.text
    assert "see" in blocks.text  # a text block is shown, not run
    # Written before the code ran: an imagined output, kept apart (Move.after).
    assert "3.14" not in blocks.text and "Done." not in blocks.text
    assert blocks.after == "Output looks like:\n```text\n3.14\n```\nDone."


def test_untagged_block_runs_and_no_block_is_none() -> None:
    blocks = extract_code_blocks("```\nx = 1\n```")
    assert blocks is not None and blocks.code == "x = 1" and blocks.text == ""
    assert extract_code_blocks("The answer is 42.") is None
    assert extract_code_blocks("```bash\nls\n```") is None


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        pytest.param(
            "```python\nprint(df['a'].sum())\n```\nThe output of this code will be:\n"
            "```\n   total\n0   36\n```",
            "print(df['a'].sum())",
            id="invented-output-after-code",
        ),
        pytest.param(
            "```python\nx = 1\n```\n```\nprint(x)\n```",
            "x = 1",
            id="untagged-beside-tagged",
        ),
        pytest.param("Run this:\n```\nprint(2 + 2)\n```", "print(2 + 2)", id="untagged-code"),
        pytest.param("The result is:\n```\n[1, 2, 3]\n```", None, id="untagged-literal"),
        pytest.param("It prints:\n```\nprint(4)\n```", None, id="announced-as-output"),
        pytest.param("```\nmean = 3.2\nThe mean is 3.2\n```", None, id="untagged-prose"),
        pytest.param(
            "```python\nd = df['When'].max()\nprint(d)\n```\n### Explanation:\n"
            "1. **The latest date:**\n   ```python\n   d = df['When'].max()\n   ```\n"
            "   This finds the latest date.\n2. **Print it:**\n   ```python\n   print(d)\n"
            "   ```",
            "d = df['When'].max()\nprint(d)",
            id="the-code-explained-again-under-list-items",
        ),
        pytest.param(
            "1. Load:\n   ```python\n   x = 2\n   ```\n2. Show:\n   ```python\n   print(x)\n   ```",
            "x = 2\n\nprint(x)",
            id="code-only-under-list-items",
        ),
        pytest.param(
            "```sql\nSELECT region, SUM(sales) FROM sales GROUP BY region\n```",
            "run_sql('SELECT region, SUM(sales) FROM sales GROUP BY region')",
            id="sql-block",
        ),
    ],
)
def test_only_code_runs_never_prose_or_predicted_output(reply: str, code: str | None) -> None:
    blocks = extract_code_blocks(reply)
    assert (blocks.code if blocks else None) == code


def test_one_reading_of_fences_serves_code_tool_calls_and_json_answers() -> None:
    # A closing run longer than the opening one closes it (CommonMark), for every reader.
    call = '{"name": "run_python", "arguments": {"code": "print(1)"}}'
    reply = f"Say:\n```python\nprint(1)\n````\nthen\n```json\n{call}\n````\nok"
    blocks = extract_code_blocks(reply)
    assert blocks is not None and blocks.code == "print(1)"
    assert blocks.text == "Say:" and blocks.after.startswith("then")
    found = find_text_tool_calls(reply, names={"run_python"})
    assert found is not None and found.calls == [json.loads(call)]
    assert (found.text, found.after) == ("Say:\n```python\nprint(1)\n````\nthen", "ok")
    assert only_block('\n```json\n{"a": 1}\n```\n') == '{"a": 1}\n'
    assert only_block('Here:\n```json\n{"a": 1}\n```') is None
    assert only_block("```\na\n```\n```\nb\n```") is None


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ('{"code": "print(1)"}', "print(1)"),
        ('"print(2)"', "print(2)"),
        ('{"source": "print(3)"}', "print(3)"),
        ("print(4)\nprint(5)", "print(4)\nprint(5)"),
        (
            '{"code": "for i in range(2):\n    print(\'x\', i)"}',
            "for i in range(2):\n    print('x', i)",
        ),
    ],
)
def test_tool_arguments_are_recovered(arguments: str, code: str) -> None:
    assert parse_tool_arguments("run_python", arguments).code == code


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("run_python", '{"cod'),
        ("run_python", ""),
        ("run_python", "[1, 2]"),
        ("browse", '{"code": "1"}'),
    ],
)
def test_unreadable_tool_calls_become_problems(name: str, arguments: str) -> None:
    parsed = parse_tool_arguments(name, arguments)
    assert parsed.code is None and parsed.problem


def test_observation_has_sections_that_parse_back() -> None:
    result = {
        "status": "error",
        "stdout": "error: not a header inside stdout\nrows: 3\n",
        "stderr": "warned\n",
        "result": {"type": "int", "text": "3", "html": "<b>3</b>"},
        "figures": [{"png": "AAAA" * 100, "description": "Figure 1: line chart"}],
        "files": [{"path": "/output/a.csv", "size": 12, "change": "created"}],
        "error": {"type": "KeyError", "message": "'x'", "traceback": "Traceback…\nKeyError: 'x'",
                  "line": 2},
        "duration_ms": 3.2,
        "truncated": True,
    }  # fmt: skip
    text = format_observation(result)
    assert "AAAA" not in text and "<b>" not in text
    sections = parse_observation(f"{OBSERVATION_HEADER}\n{text}")
    assert sections["status"].startswith("error")
    assert sections["stdout"] == "error: not a header inside stdout\nrows: 3"
    assert sections["value"] == "3"
    assert sections["error"] == "KeyError: 'x' (cell line 2)"
    assert "Figure 1: line chart" in sections["figures"]
    assert "/output/a.csv" in sections["files"]
    assert "cut" in sections["notes"]


def test_trimming_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    trimmed = trim_text(text, 500)
    assert len(trimmed) <= 500
    assert trimmed.startswith("HEAD") and trimmed.endswith("TAIL")
    assert "characters omitted" in trimmed
    observation = format_observation({"status": "ok", "stdout": text}, limit=800)
    assert len(observation) < 900 and "shortened" in observation


def test_system_prompt_states_the_environment() -> None:
    prompt = build_system_prompt(
        {
            "python": "3.12.7",
            "packages": ["pandas", "sympy"],
            "data_dir": "/data",
            "output_dir": "/output",
            "files": [
                {"status": "ok", "path": "/data/x.csv", "kind": "table", "format": "csv",
                 "rows": 100, "columns": [{"name": "price", "dtype": "float64"},
                                          {"name": " WINDSPEED", "dtype": "float64"}],
                 "read_with": "pd.read_csv('/data/x.csv', sep=';')", "notes": ["delimiter ';'"]},
                {"status": "error", "path": "/data/y.xls", "message": "encrypted"},
                {"status": "ok", "path": "/data/n.txt", "kind": "text", "size": 5, "preview": "hi"},
            ],
        }
    )  # fmt: skip
    for needle in [
        "Python 3.12.7", "pandas, sympy", "/data/x.csv", "100 rows", "'price' (float64)",
        # A leading space in a column name must be visible to the model.
        "' WINDSPEED' (float64)",
        "df = pd.read_csv('/data/x.csv', sep=';')", "delimiter ';'", "encrypted", "/data/n.txt",
        "read_table(path)", "/output", "plt.show()", "No network", "Never guess",
        "Print the values you need", "run_python tool", "@name[value]",
    ]:  # fmt: skip
        assert needle in prompt, needle
    # Small models called a function `read_with(...)` when the prompt named it.
    assert "read_with" not in prompt
    blocks = build_system_prompt({"files": []}, tools=False)
    assert "```python" in blocks and "run_python tool" not in blocks


def test_history_without_tools_restates_calls_as_code() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "run_python", "arguments": json.dumps({"code": "print(1)"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "status: ok"},
    ]  # fmt: skip
    rewritten = messages_without_tools(messages)
    assert rewritten[1] == {"role": "assistant", "content": "```python\nprint(1)\n```"}
    assert rewritten[2]["role"] == "user" and rewritten[2]["content"].startswith(OBSERVATION_HEADER)


def test_transcript_round_trips_and_replays_successful_cells() -> None:
    transcript = Transcript()
    transcript.add(
        "q",
        {"status": "ok", "answer": "a", "steps": [
            {"index": 0, "kind": "code", "code": "x = 1", "result": {"status": "ok"}},
            {"index": 1, "kind": "code", "code": "1/0", "result": {"status": "error"}},
            {"index": 2, "kind": "code", "code": "y = x", "result": {"status": "ok"}},
            {"index": 3, "kind": "answer", "text": "a"},
        ]},
    )  # fmt: skip
    again = Transcript.from_json(transcript.to_json())
    assert again == transcript
    assert replay_cells(again) == ["x = 1", "y = x"]
    assert replay_cells(again.steps) == ["x = 1", "y = x"]
    with pytest.raises(ProtocolError):
        Transcript.from_json("[]")


def test_the_agent_imports_only_the_standard_library() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "for name in ('numpy', 'pandas', 'matplotlib', 'sympy', 'httpx', 'js', 'pyodide'):\n"
        "    sys.modules[name] = None\n"
        "import reckon.agent\n"
        "assert not any(m.startswith(('reckon.kernel', 'reckon.server')) for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, env={"PYTHONPATH": str(PY)})
