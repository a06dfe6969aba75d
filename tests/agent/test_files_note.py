"""The files' description starts the message of the question it first applies to, not
the system message: a server's prompt cache then keeps the system message, and the
tool schema a chat template puts after it, for every question whichever file it asks
about (a local model read ~600 tokens again at a question on another file)."""

from __future__ import annotations

import os
from typing import Any

from reckon.agent import Agent
from reckon.agent._files_note import READER_LINE, split_files_block
from reckon.agent.checks._recheck import last_question
from reckon.agent.models._context import LEFT_OUT, estimate_tokens, fit_messages
from support import ScriptedModel

from .helpers import KernelExecutor, answer, code_reply, put_file, run

HEADER = "The user's files (in "


def ask(agent: Agent, executor: KernelExecutor, question: str, *replies: Any) -> dict[str, Any]:
    model = agent.model
    assert isinstance(model, ScriptedModel)
    model.replies += list(replies) or [code_reply("print(1)"), answer("1.")]
    return run(agent.ask(question, environment=executor.environment()))


def contents(messages: list[dict[str, Any]], role: str) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == role]


def test_a_new_conversation_describes_the_files_before_the_question(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "sales.csv", "region,units\nNorth,5\nSouth,12\n")
    model = ScriptedModel()
    agent = Agent(model, executor)
    assert ask(agent, executor, "total units?")["status"] == "ok"
    system, question = model.requests[0].messages[:2]
    assert system["role"] == "system" and question["role"] == "user"
    assert HEADER not in system["content"] and "sales.csv" not in system["content"]
    assert question["content"].startswith(f"{HEADER}{executor.data_dir}):\n- ")
    assert "/sales.csv: table (csv), 2 rows" in question["content"]
    assert question["content"].endswith(f"\n{READER_LINE}\n\ntotal units?")
    # Whatever reads the person's question gets the question alone.
    block, asked = split_files_block(question["content"])
    assert asked == "total units?" and block.startswith(HEADER) and block.endswith(READER_LINE)
    assert last_question(agent.messages) == "total units?"
    assert agent.transcript.asks[0]["question"] == "total units?"


def test_the_system_message_is_the_same_whichever_file_is_asked_about(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "sales.csv", "region,units\nNorth,5\nSouth,12\n")
    first = ScriptedModel()
    ask(Agent(first, executor), executor, "total units?")
    os.remove(executor.data_dir / "sales.csv")
    put_file(executor, "people.csv", "name,age,city\nAda,36,Leeds\nBob,41,York\n")
    second = ScriptedModel()
    ask(Agent(second, executor), executor, "mean age?")
    one, two = first.requests[0].messages, second.requests[0].messages
    assert one[0] == two[0]  # byte for byte: one cached start for both
    assert "sales.csv" in one[1]["content"] and "people.csv" in two[1]["content"]


def test_a_second_question_on_the_same_files_is_sent_alone(executor: KernelExecutor) -> None:
    put_file(executor, "sales.csv", "region,units\nNorth,5\nSouth,12\n")
    model = ScriptedModel()
    agent = Agent(model, executor)
    ask(agent, executor, "total units?")
    ask(agent, executor, "and the mean?")
    last = model.requests[-1].messages
    assert last[0] == model.requests[0].messages[0]
    questions = contents(last, "user")
    assert questions[-1] == "and the mean?"
    assert sum(q.startswith(HEADER) for q in questions) == 1 and questions[0].startswith(HEADER)
    # The second question's first request extends the first question's last one.
    before = model.requests[1].messages
    assert last[: len(before)] == before


def test_an_upload_between_questions_describes_the_files_again(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "sales.csv", "region,units\nNorth,5\nSouth,12\n")
    model = ScriptedModel()
    agent = Agent(model, executor)
    ask(agent, executor, "total units?")
    put_file(executor, "people.csv", "name,age\nAda,36\nBob,41\n")
    outcome = ask(agent, executor, "mean age?")
    last = model.requests[-1].messages
    assert last[0] == model.requests[0].messages[0]  # the upload left the system message be
    questions = contents(last, "user")
    block, asked = split_files_block(questions[-1])
    assert asked == "mean age?" and "/people.csv: table" in block and "/sales.csv: table" in block
    assert sum(q.startswith(HEADER) for q in questions) == 2
    # A third question on the same files: the history has their description already.
    ask(agent, executor, "oldest?")
    assert contents(model.requests[-1].messages, "user")[-1] == "oldest?"
    # The privacy view marks the new description where it is, in the new question.
    parts = outcome["sent"][0]["parts"]
    message = len(last) - 1 - [m["role"] for m in reversed(last)].index("user")
    marked = [p for p in parts if p["message"] == message and p["kind"] == "schema"]
    spans = [outcome["sent"][0]["body"]["messages"][message]["content"][p["start"] : p["end"]]
             for p in marked]  # fmt: skip
    assert any("/people.csv: table" in s for s in spans)


def test_the_privacy_view_marks_the_files_in_the_question(executor: KernelExecutor) -> None:
    put_file(executor, "sales.csv", "region,units\nNorth,5\nSouth,12\n")
    put_file(executor, "notes.txt", "Secret first line\nmore\n")
    model = ScriptedModel()
    outcome = ask(Agent(model, executor), executor, "total units?")
    record = outcome["sent"][0]
    content = record["body"]["messages"][1]["content"]
    parts = [p for p in record["parts"] if p["kind"] in ("schema", "preview")]
    assert [p["message"] for p in parts] == [1, 1]
    spans = {p["kind"]: content[p["start"] : p["end"]] for p in parts}
    assert spans["preview"].startswith("- ") and "/notes.txt: text" in spans["preview"]
    assert "Secret first line" in spans["preview"]
    assert spans["schema"].startswith("- ") and "/sales.csv: table" in spans["schema"]
    assert spans["schema"].endswith("South | 12")  # the last line of the description
    assert "total units?" not in spans["schema"] and READER_LINE not in spans["schema"]


def test_a_cut_that_leaves_out_the_first_question_keeps_the_files(
    executor: KernelExecutor,
) -> None:
    put_file(executor, "sales.csv", "region,units\nNorth,5\nSouth,12\n")
    model = ScriptedModel()
    model.context_window = 2500  # type: ignore[attr-defined]
    agent = Agent(model, executor)
    for n in range(4):
        ask(agent, executor, f"question {n}?", code_reply(f"print('{n}' * 2000)"), answer("Ok."))
    last = model.requests[-1].messages
    assert LEFT_OUT in last[0]["content"] and "- Q: question 0? A: Ok." in last[0]["content"]
    questions = contents(last, "user")
    assert not any(q.endswith("question 0?") for q in questions)  # left out, in the recap
    assert questions[0].startswith(HEADER) and "/sales.csv: table" in questions[0]
    assert sum(q.startswith(HEADER) for q in questions) == 1
    assert estimate_tokens(last) <= 2500 * 0.85
    # The recap has the question alone; the description is in the kept question.
    assert HEADER not in last[0]["content"]


def test_the_cut_puts_the_description_back_and_counts_it() -> None:
    block = f"{HEADER}/data):\n- /data/a.csv: table\n  columns: 'x' (int64)\n{READER_LINE}"
    messages: list[dict[str, Any]] = [{"role": "system", "content": "rules"}]
    for n in range(6):
        asked = f"question {n}"
        call = {"id": f"c{n}", "type": "function",
                "function": {"name": "run_python", "arguments": "{}"}}  # fmt: skip
        messages += [
            {"role": "user", "content": f"{block}\n\n{asked}" if n == 0 else asked},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "x" * 2000},
            {"role": "assistant", "content": f"answer {n}"},
        ]  # fmt: skip
    fitted = fit_messages(messages, limit=1200, target=900)
    assert estimate_tokens(fitted) <= 900
    questions = [m["content"] for m in fitted if m["role"] == "user"]
    # The first question kept (here the current one) now starts with the description.
    assert questions[0] == f"{block}\n\nquestion {questions[0][-1]}" != messages[1]["content"]
    assert questions[-1].endswith("question 5")
    assert sum(q.startswith(HEADER) for q in questions) == 1
    assert "- Q: question 0 A: answer 0" in fitted[0]["content"]
