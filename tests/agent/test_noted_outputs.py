"""An answer that rests on an output the kernel noted as wrong without an error goes
back to the model once, with the note (#31: `df[df['停車資訊'] != 'nan']` kept all 382
rows where 95 have parking, and the 1.5B model answered 382 beside the note). The loop
on the fake upstream, a real server on loopback, and the real kernel."""

from __future__ import annotations

from typing import Any

from reckon.agent.checks._label_max import LABEL_MAX_MESSAGE
from reckon.agent.checks._recheck import is_question, last_question
from support import FakeUpstream

from .helpers import KernelExecutor, ask_openai, call_reply, model_steps, put_file, text_reply

PARKING = "name,parking\nTemple,north lot\nMuseum,\nFort,street\nGarden,\nPark,\n"
QUESTION = (
    "How many attractions have parking information (the parking column is not empty)? "
    "Answer as @with_parking[value]."
)


def cell(path: str, mask: str) -> str:
    return f"import pandas as pd\ndf = pd.read_csv({path!r})\nprint(len(df[{mask}]))"


def said(upstream: FakeUpstream, call: int) -> Any:
    return upstream.payloads[call]["messages"][-1]["content"]


def test_an_answer_from_a_noted_output_goes_back_with_the_note(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    path = put_file(executor, "places.csv", PARKING)
    replies = [
        call_reply(cell(path, "df['parking'] != 'nan'")),  # every row: 5
        text_reply("@with_parking[5]"),
        call_reply(cell(path, "df['parking'].notna()")),
        text_reply("@with_parking[2]"),
    ]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "@with_parking[2]"
    kinds = [s["kind"] for s in model_steps(outcome)]
    assert kinds == ["code", "recheck", "code", "answer"]
    message = model_steps(outcome, "recheck")[0]["message"]
    assert message.startswith("Reckon noted on the output of your last code: no cell of")
    assert "notna()" in message and "[Reckon:" not in message
    assert said(upstream, 2) == message


def test_an_answer_from_an_output_without_a_note_stands(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    path = put_file(executor, "places.csv", PARKING)
    replies = [call_reply(cell(path, "df['parking'].notna()")), text_reply("@with_parking[2]")]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["answer"] == "@with_parking[2]"
    assert [s["kind"] for s in model_steps(outcome)] == ["code", "answer"]


def test_the_note_goes_back_once(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    path = put_file(executor, "places.csv", PARKING)
    noted = cell(path, "df['parking'] != 'nan'")
    replies = [
        call_reply(noted),
        text_reply("@with_parking[5]"),
        call_reply(noted),
        text_reply("There are 5, @with_parking[5]"),
    ]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["answer"] == "There are 5, @with_parking[5]"
    assert [s["kind"] for s in model_steps(outcome)] == ["code", "recheck", "code", "answer"]


def test_a_cell_that_writes_a_note_of_its_own_is_not_noted(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """Only the kernel's notes (the result's ``notes``) send an answer back: text a cell
    writes to its stderr in their look is the cell's output."""
    path = put_file(executor, "places.csv", PARKING)
    code = cell(path, "df['parking'].notna()") + (
        "\nimport sys\nprint('[Reckon: no cell holds this.]', file=sys.stderr)"
    )
    replies = [call_reply(code), text_reply("@with_parking[2]")]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["answer"] == "@with_parking[2]"
    assert [s["kind"] for s in model_steps(outcome)] == ["code", "answer"]


def test_after_the_note_the_question_is_still_the_persons(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    """The note's message is Reckon's, not a question: after it, the checks still read
    the person's question (seen: the asked form never put in, the later checks reading
    the note as the question). Here the second cell's lone output is the answer, in
    the form the person asked for, with no model call (``_printed``)."""
    path = put_file(executor, "places.csv", PARKING)
    replies = [
        call_reply(cell(path, "df['parking'] != 'nan'")),
        text_reply("@with_parking[5]"),
        call_reply(cell(path, "df['parking'].notna()")),
    ]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["answer"] == "@with_parking[2]" and len(upstream.payloads) == 3
    assert [s["kind"] for s in model_steps(outcome)] == ["code", "recheck", "code", "answer"]


def test_reckons_messages_that_send_an_answer_back_are_not_questions() -> None:
    label = LABEL_MAX_MESSAGE.format(
        noun="year", extreme="highest", measure="Jan", column="Year", call="df['Year'].max()",
        example="df.loc[df['Jan'].idxmax(), 'Year']",
    )  # fmt: skip
    for message in (label, "Reckon noted on the output of your last code: x. So ..."):
        assert not is_question({"role": "user", "content": message})
    assert (
        last_question([{"role": "user", "content": QUESTION}, {"role": "user", "content": label}])
        == QUESTION
    )
