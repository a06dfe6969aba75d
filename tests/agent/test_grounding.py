"""Reading what models write: numbers traced to outputs, tool calls in text, thinking."""

from __future__ import annotations

import pytest

from reckon.agent.checks._grounding import find_numbers, ground_answer, step_sources
from reckon.agent.models._think import ThinkSplitter
from reckon.agent.models._toolcalls import find_text_tool_calls, lenient_json

NAMES = {"run_python", "run_sql"}


def ungrounded(answer: str, output: str, *, given: tuple[str, ...] = ()) -> list[str]:
    result: list[str] = ground_answer(answer, [(0, output)], given=given)["ungrounded"]
    return result


@pytest.mark.parametrize(
    ("answer", "output"),
    [
        pytest.param("The mean is 41.24.", "mean    41.2371\n", id="rounded"),
        pytest.param("Total: 1,234,567 units", "1234567", id="thousands"),
        pytest.param("12.5% of rows", "share 0.125", id="percent-of-fraction"),
        pytest.param("12.5% of rows", "12.5", id="percent-as-printed"),
        pytest.param("It fell by 3.2", "-3.2", id="sign"),
        pytest.param("about 45,000", "44987.2", id="significant-figures"),
        pytest.param("1.5e-05", "1.52e-05", id="exponent"),
    ],
)
def test_a_number_the_output_holds_is_computed(answer: str, output: str) -> None:
    assert ungrounded(answer, output) == []


@pytest.mark.parametrize(
    ("answer", "output", "missing"),
    [
        pytest.param("The mean is 41.3.", "41.2371", ["41.3"], id="wrong-rounding"),
        pytest.param("Total 120 and 77.5", "120", ["77.5"], id="one-invented"),
        pytest.param("It is 0.74.", "0.7431 0.12", [], id="precision-shown"),
        pytest.param("The answer is 17.", "", ["17"], id="nothing-ran"),
    ],
)
def test_a_number_no_output_holds_is_not_computed(
    answer: str, output: str, missing: list[str]
) -> None:
    assert ungrounded(answer, output) == missing


def test_counts_list_markers_code_and_given_numbers_are_not_flagged() -> None:
    answer = (
        "1. There are 3 regions.\n2. `df.head(25)` shows 25 rows; you asked about 2024-01-05 "
        "and the top 15."
    )
    assert ungrounded(answer, "", given=("show the top 15 rows of 2024-01-05",)) == ["25"]


def test_numbers_keep_their_place_in_the_answer() -> None:
    answer = "North: 1,204.5 (34%)"
    [value, share] = find_numbers(answer)
    assert answer[value.start : value.end] == "1,204.5" and value.value == 1204.5
    assert share.percent and share.text == "34%"


def test_steps_are_named_and_earlier_asks_count_without_a_step() -> None:
    result = ground_answer("29 then 77", [(None, "77"), (2, "x = 29")])
    assert [(n["text"], n["steps"], n["computed"]) for n in result["numbers"]] == [
        ("29", [2], True),
        ("77", [], True),
    ]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n</tool_call>',
            id="qwen",
        ),
        pytest.param(
            '<tool_call>{"name": "run_python", "arguments": {"code": "print(1)"}}',
            id="no-closing-tag",
        ),
        pytest.param(
            '```json\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n```', id="fenced"
        ),
        pytest.param(
            'To count them:\n```json\n{"name": "run_python", "arguments": '
            '{"code": """\nprint(1)\n"""\n}\n}',
            id="fence-never-closed",
        ),
        pytest.param('{"name": "run_python", "parameters": {"code": "print(1)"}}', id="llama3"),
        pytest.param(
            '<|python_tag|>{"name": "run_python", "arguments": {"code": "print(1)"}}',
            id="python-tag",
        ),
        pytest.param('<function=run_python>{"code": "print(1)"}</function>', id="function-tag"),
        pytest.param(
            '{"name": "run_python", "arguments": "{\\"code\\": \\"print(1)\\"}"}',
            id="arguments-as-a-string",
        ),
        pytest.param(
            '{"name": "run_python", "arguments": {"code": """print(1)"""}}', id="triple-quoted"
        ),
        pytest.param("{'name': 'run_python', 'arguments': {'code': 'print(1)'}}", id="python-dict"),
        pytest.param(
            '{"name": "run_python", "arguments": {"code": "print(1)\n"}}', id="raw-newline"
        ),
    ],
)
def test_a_call_written_as_text_is_found(text: str) -> None:
    found = find_text_tool_calls(text, names=NAMES)
    assert found is not None and len(found.calls) == 1
    assert found.calls[0]["name"] == "run_python"
    assert found.calls[0]["arguments"]["code"].strip() == "print(1)"


def test_two_calls_and_the_prose_around_them() -> None:
    text = (
        'First I load it.\n<tool_call>{"name": "run_python", "arguments": {"code": "a = 1"}}'
        '</tool_call>\n<tool_call>{"name": "run_sql", "arguments": {"query": "SELECT 1"}}'
        "</tool_call>\nThen I look."
    )
    found = find_text_tool_calls(text, names=NAMES)
    assert found is not None and [c["name"] for c in found.calls] == ["run_python", "run_sql"]
    assert found.text == "First I load it."
    assert found.after == "Then I look."


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"name": "Alice", "age": 3}', id="json-answer"),
        pytest.param("The answer is 42.", id="prose"),
        pytest.param('```json\n{"region": "North"}\n```', id="fenced-data"),
    ],
)
def test_an_answer_that_is_not_a_call_is_left_alone(text: str) -> None:
    assert find_text_tool_calls(text, names=NAMES) is None


def test_lenient_json_reads_what_models_break() -> None:
    assert lenient_json('{"code": """a = "x"\nprint(a)"""}') == {"code": 'a = "x"\nprint(a)'}
    assert lenient_json('{"code": "print("hi")"}') == {"code": 'print("hi")'}
    assert lenient_json("not json at all") is None
    # Braces doubled (seen): read as one; a set of lists, unhashable, is no crash.
    call = {"name": "run_python", "arguments": {"code": "1"}}
    assert lenient_json('{{"name": "run_python", "arguments": {"code": "1"}}}') == call
    assert lenient_json("{[1, 2]}") is None
    assert lenient_json("{{'a': 1}, {'b': 2}}") is None
    text = '<tool_call>\n{{"name": "run_python", "arguments": {"code": "print(1)"}}}\n</tool_call>'
    assert find_text_tool_calls(text, names=("run_python",)) is not None


@pytest.mark.parametrize(
    ("pieces", "visible", "thinking"),
    [
        pytest.param(["<thi", "nk>a", "b</th", "ink>Hi"], "Hi", "ab", id="split-tags"),
        pytest.param(["plan here</think>", "Answer"], "Answer", "plan here", id="no-opening"),
        pytest.param(["x < y and <t", "ag>"], "x < y and <tag>", "", id="not-a-tag"),
        pytest.param(["<think>never closed"], "", "never closed", id="unclosed"),
    ],
)
def test_thinking_is_split_from_the_text(pieces: list[str], visible: str, thinking: str) -> None:
    splitter = ThinkSplitter()
    shown = "".join(splitter.feed(p) for p in pieces) + splitter.close()
    assert shown == visible == "".join(splitter.visible)
    assert "".join(splitter.thinking) == thinking


def test_a_number_the_cell_wrote_as_a_literal_is_not_computed_by_it() -> None:
    # Seen: the model printed the value it had invented (``print(23.45)``).
    step = {"kind": "code", "index": 1, "code": "print(23.45)", "result": {"stdout": "23.45\n"}}
    assert ground_answer("@mean[23.45]", step_sources([step]))["ungrounded"] == ["23.45"]
    computed = {**step, "code": "print(round(df.x.mean(), 2))"}
    assert ground_answer("@mean[23.45]", step_sources([computed]))["ungrounded"] == []
    # A literal of another cell does not hide an output of this one.
    earlier = {**step, "index": 0, "code": "x = 23.45", "result": {"stdout": ""}}
    later = {**computed, "index": 2}
    assert ground_answer("23.45", step_sources([earlier, later]))["ungrounded"] == []


def test_a_table_reckon_loaded_grounds_nothing() -> None:
    # Its result shows the table's first rows to the person; the model did not see them.
    loaded = {
        "kind": "code",
        "index": 0,
        "origin": "reckon",
        "code": "df = pd.read_csv(p)",
        "result": {"stdout": "", "assigned": [{"name": "df", "text": "  price\n0  30"}]},
    }
    assert ground_answer("The top price is 30.", step_sources([loaded]))["ungrounded"] == ["30"]


@pytest.mark.parametrize(
    ("answer", "output", "flagged"),
    [
        pytest.param("@hour[2012-06-24 14:00:00]", "hour  2012-06-24 14:00:00", [], id="same"),
        pytest.param("at 2012-06-24T14:00", "Timestamp('2012-06-24 14:00:00')", [], id="forms"),
        pytest.param(
            "@hour[2023-10-05 14:00:00]", "2012-06-24 14:00:00", ["2023-10-05 14:00:00"],
            id="invented",
        ),
        pytest.param("on 2012-06-24 at 15:00", "2012-06-24 14:00:00", [], id="bare-time-left"),
        pytest.param(
            "at 2012-06-24 15:00", "2012-06-24 14:00:00", ["2012-06-24 15:00"], id="other-hour"
        ),
    ],
)  # fmt: skip
def test_a_date_in_the_answer_is_traced_like_a_number(
    answer: str, output: str, flagged: list[str]
) -> None:
    assert ungrounded(answer, output) == flagged


def test_a_date_the_question_names_is_given_and_one_the_cell_printed_is_not_computed() -> None:
    given = ungrounded("On 2012-06-24 the total was 35.", "35", given=("What on 2012-06-24?",))
    assert given == []
    printed = step_sources([{"kind": "code", "index": 1, "code": "print('2023-10-05')",
                             "result": {"status": "ok", "stdout": "2023-10-05\n"}}])  # fmt: skip
    assert ground_answer("It was 2023-10-05.", printed)["ungrounded"] == ["2023-10-05"]
