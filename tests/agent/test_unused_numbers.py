"""A word problem's program that leaves out a number the question gives goes back once
(#31: four of the six wrong answers of the math set). The loop on the fake upstream,
a real server on loopback, and the real kernel; the check itself on the math set's
shapes."""

from __future__ import annotations

from typing import Any

import pytest

from reckon.agent import Agent
from reckon.agent.checks._recheck import last_question
from reckon.agent.checks._unused import unused_numbers
from support import FakeUpstream, ScriptedModel

from .helpers import (
    KernelExecutor,
    answer,
    ask_openai,
    call_reply,
    model_steps,
    put_file,
    run,
    text_reply,
)

EGGS = (
    "A farm's 45 hens lay 5 eggs each per week. The farm sells eggs in boxes of 6 for $3 "
    "a box. How many dollars does it make in 4 weeks, selling only full boxes?"
)
SAVINGS = (
    "Leo earns $12 an hour and works 3 hours every Saturday and 2 hours every Sunday. He "
    "saves two thirds of what he earns. How much does he save in 6 weeks, in dollars?"
)
LEFT_OUT = "boxes = 45 * 5 // 6\nprint(boxes * 3)"  # one week, not four: 111
PUT_RIGHT = "boxes = 45 * 5 * 4 // 6\nprint(boxes * 3)"  # 450


def last_said(upstream: FakeUpstream, call: int) -> Any:
    return upstream.payloads[call]["messages"][-1]["content"]


def test_a_number_the_program_left_out_asks_for_the_program_again(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    replies = [call_reply(LEFT_OUT), text_reply("It makes $111."),
               call_reply(PUT_RIGHT), text_reply("It makes $450.")]  # fmt: skip
    outcome = ask_openai(upstream, executor, EGGS, replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "It makes $450."
    # In place of the question: the program asked for again, with what it left out,
    # and the first program, its output and its answer out of sight.
    said = last_said(upstream, 2)
    assert said.startswith("Write a short Python program") and EGGS in said
    assert "did not use 4 ('in 4 weeks') from the question" in said
    sent = str(upstream.payloads[2]["messages"])
    assert "111" not in sent and "45 * 5 // 6" not in sent
    # The answer after the new program sees that program only.
    later = str(upstream.payloads[3]["messages"])
    assert "450" in later and "111" not in later
    kinds = [s["kind"] for s in model_steps(outcome)]
    assert kinds == ["code", "recheck", "code", "answer"]
    assert outcome["grounding"]["ungrounded"] == []


def test_a_number_the_answer_does_not_need_costs_one_more_program(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    question = "Tom is 12 and has 3 bags of 7 marbles. How many marbles does he have?"
    said = text_reply("He has 21 marbles.")
    replies = [call_reply("print(3 * 7)"), said, call_reply("n = 3 * 7\nprint(n)"), said]
    outcome = ask_openai(upstream, executor, question, replies)
    assert "did not use 12 ('is 12 and has')" in last_said(upstream, 2)
    assert outcome["status"] == "ok" and outcome["answer"] == "He has 21 marbles."
    assert len(upstream.payloads) == 4  # asked once: the second program's answer stands


def test_a_note_of_ours_is_not_taken_for_the_question(executor: KernelExecutor) -> None:
    # Seen while building this: the note after a repeated cell ("(2 times now)") was
    # read as the person's question, and its 2 as a number the program left out.
    fenced = "```python\nprint(6 * 7)\n```"
    model = ScriptedModel([answer(fenced), answer(fenced), answer("It is 42.")])
    outcome = run(Agent(model, executor).ask("6*7?", environment=executor.environment()))
    assert outcome["status"] == "ok" and outcome["answer"] == "It is 42."
    assert last_question(model.requests[2].messages) == "6*7?"


def test_with_files_the_questions_numbers_are_not_asked_for(
    upstream: FakeUpstream, executor: KernelExecutor
) -> None:
    # With a table, a question's numbers name rows and columns: 2021 here is a year
    # the code filters on as text, and 5 is not used at all.
    put_file(executor, "sales.csv", "year,units\n2021,5\n2021,7\n2022,4\n")
    question = "In sales.csv, how many units were sold in 2021 (rows with at least 5)?"
    replies = [call_reply("print(df[df['year'].astype(str) == '2021']['units'].sum())"),
               text_reply("12 units.")]  # fmt: skip
    outcome = ask_openai(upstream, executor, question, replies)
    assert outcome["status"] == "ok" and outcome["answer"] == "12 units."
    assert not any("does not use" in str(p["messages"]) for p in upstream.payloads)


@pytest.mark.parametrize(
    ("question", "code", "left_out"),
    [
        (EGGS, LEFT_OUT, "4 ('in 4 weeks')"),
        (EGGS, PUT_RIGHT, ""),
        # Counts in words, and a count named again ("the other three") is not a new one.
        (
            "Four roommates split a rent of $2,390. One pays $150 more than each of the "
            "other three. What does the big room cost?",
            "print((2390 - 150) / 3 + 150)",
            "Four ('Four roommates split')",
        ),
        (
            "Four roommates split a rent of $2,390. One pays $150 more than each of the "
            "other three. What does the big room cost?",
            "print((2390 - 150) / 4 + 150)",
            "",
        ),
        # A percent as a fraction; a fraction in words is not a count.
        (
            "A library has 1,250 books and lends out 18% of them. How many are left?",
            "print(1250 - 1250 * 0.18)",
            "",
        ),
        ("It sells three quarters of 168 muffins. How many are left?", "print(168 / 4)", ""),
        # Minutes as the part of an hour, an evening hour on the 24-hour clock.
        (
            "A train runs at 72 km/h for 2 hours and 15 minutes. How far does it go?",
            "print(72 * 2.25)",
            "",
        ),
        (
            "A clock set at 6:00 in the morning gains 3 minutes an hour. How fast is it at "
            "8:00 in the evening?",
            "print((20 - 6) * 3)",
            "",
        ),
        (
            "A clock set at 6:00 in the morning gains 3 minutes an hour. How fast is it at "
            "8:00 in the evening?",
            "print(12 * 3)",
            "6:00 ('at 6:00 in the') and 8:00 ('at 8:00 in the')",
        ),
        # A product written out uses both numbers; a year is not a quantity.
        (
            "Tom pays with two $100 notes in 2020 for a $24 shirt. What change does he get?",
            "print(200 - 24)",
            "",
        ),
        # A number written as text is used; one in a comment or a sentence is not.
        ("How many units were sold in 2021 in 3 shops?", "print(df['2021'].sum() * 3)", ""),
        (
            "Ann has 3 bags of 4 apples. How many apples?",
            "# 3 bags\nprint(f'3 bags: {4}')",
            "3 ('has 3 bags of')",
        ),
        # One number is a label more often than a quantity (seen: "please do ask 12",
        # its cells printing 'step 12.' + str(k)).
        ("please do ask 12", "print('step 12.' + str(9))", ""),
        # A fraction in words is used written as a fraction, a product or a decimal; a
        # division by its parts alone takes one part (seen: two thirds saved as `/ 3`).
        (SAVINGS, "week = 12 * (3 + 2)\nprint(week / 3 * 6)", "two thirds ('saves two thirds of"),
        (SAVINGS, "week = 12 * (3 + 2)\nprint(week * 2 / 3 * 6)", ""),
        (SAVINGS, "week = 12 * (3 + 2)\nprint(week / 3 * 2 * 6)", ""),
        (SAVINGS, "week = 12 * (3 + 2)\nshare = 0.67\nprint(week * share * 6)", ""),
        # One part before "of" is a fraction; "a third worker" and an hour's quarter are not.
        ("A third of 30 pupils walk. How many walk?", "print(30 / 3)", ""),
        ("A third of 30 pupils walk. How many walk?", "print(30 * 0.5)", "A third ('A third of"),
        (
            "A third worker joins 3 others for 2 days. How many worker-days?",
            "print((3 + 1) * 2)",
            "",
        ),
        ("It takes a quarter of an hour for 5 laps. How long for 2 laps?", "print(15 / 5 * 2)", ""),
        # Code that does not parse: no message rather than a wrong one.
        (EGGS, "print(45 *", ""),
    ],
)
def test_which_numbers_a_program_left_out(question: str, code: str, left_out: str) -> None:
    said = unused_numbers(question, [code])
    if not left_out:
        assert said == ""
    else:
        assert said.startswith(f"A program written for it before did not use {left_out}")
