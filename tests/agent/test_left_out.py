"""An answer that is what the question says to leave out goes back once (#31: runs 12
to 15 answered "Leaving out the Total row, which sub-group…" with ``@subgroup[Total]``).
The loop on the fake upstream, a real server on loopback, and the real kernel; the
check itself on the wordings a person uses."""

from __future__ import annotations

from typing import Any

import pytest

from reckon.agent.checks._left_out import left_out_name
from support import FakeUpstream

from .helpers import KernelExecutor, ask_openai, call_reply, model_steps, put_file, text_reply

EMISSIONS = "Sub_Group,2000,2007\nTimber,50,20\nChemicals,80,70\nTotal,130,90\n"
QUESTION = (
    "emissions.csv lists emissions by sub-group. Leaving out the Total row, which "
    "sub-group's emissions fell the most from 2000 to 2007? Answer as @subgroup[name]."
)
ALL_ROWS = "fall = df['2000'] - df['2007']\nprint(df.loc[fall.idxmax(), 'Sub_Group'])"
THE_REST = (
    "rest = df[df['Sub_Group'] != 'Total']\nfall = rest['2000'] - rest['2007']\n"
    "print(rest.loc[fall.idxmax(), 'Sub_Group'])"
)


def test_an_answer_that_is_the_row_left_out_goes_back(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    put_file(executor, "emissions.csv", EMISSIONS)
    # Each cell's lone output is its answer, taken with no model call (``_printed``).
    replies = [call_reply(ALL_ROWS), call_reply(THE_REST)]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "@subgroup[Timber]"
    said: Any = upstream.payloads[1]["messages"][-1]["content"]
    assert said.startswith("The question says to leave out 'Total', but your answer is 'Total'")
    kinds = [s["kind"] for s in model_steps(outcome)]
    assert kinds == ["code", "recheck", "code", "answer"]
    outputs = [s["result"]["stdout"].strip() for s in model_steps(outcome, "code")]
    assert outputs == ["Total", "Timber"]


def test_the_same_answer_again_stands(upstream: FakeUpstream, executor: KernelExecutor) -> None:
    put_file(executor, "emissions.csv", EMISSIONS)
    total = text_reply("@subgroup[Total]")
    replies = [call_reply(ALL_ROWS), total]
    outcome = ask_openai(upstream, executor, QUESTION, replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "@subgroup[Total]"
    assert len(upstream.payloads) == 2  # the cell, then the recheck asked once


@pytest.mark.parametrize(
    ("question", "answer", "left_out"),
    [
        pytest.param(QUESTION, "So: @subgroup[ total ]", "total", id="case-and-spaces"),
        pytest.param(
            "Excluding 'All regions', which region sold most? Answer as @region[name].",
            "@region[All regions]",
            "All regions",
            id="quoted",
        ),
        pytest.param(
            "Which country other than Germany exports the most? Answer as @country[name].",
            "@country[Germany]",
            "Germany",
            id="leading-the-clause",
        ),
        pytest.param(
            "Which city, except Paris and Rome, is the largest? Answer as @city[name].",
            "@city[Rome]",
            "Rome",
            id="one-of-a-list",
        ),
        pytest.param(
            "Not counting the Total line, which item costs most? Answer as @item[name].",
            "@item[Total]",
            "Total",
            id="a-line",
        ),
    ],
)
def test_what_the_question_leaves_out(question: str, answer: str, left_out: str) -> None:
    message = left_out_name(question, answer)
    assert message.startswith(f"The question says to leave out {left_out!r}")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        pytest.param(QUESTION, "@subgroup[Timber]", id="another-name"),
        pytest.param(
            "Which city, except Paris and Rome, is the largest? Answer as @city[name].",
            "@city[Roma]",
            id="a-name-close-to-one",
        ),
        pytest.param(
            "Which country exports most, without rows with missing values? @country[name]",
            "@country[Germany]",
            id="left-out-is-not-a-name",
        ),
        pytest.param(
            "Which sub-group fell the most? @subgroup[name]", "@subgroup[Total]", id="none"
        ),
        pytest.param(
            "Leaving out the Total row, which sub-group fell the most?",
            "Total fell the most.",
            id="no-form-asked",
        ),
    ],
)
def test_what_the_question_does_not_leave_out(question: str, answer: str) -> None:
    assert left_out_name(question, answer) == ""
