"""The evaluation harness behind ``reckon eval`` (CPython only).

It asks a question set through the real product path (``reckon.client.Session``:
relay, agent, browser sandbox), checks each answer (``_answers``), re-runs each
exported notebook (``reckon.reproduce``) and writes the report (``_report``).
``reckon.client`` never imports it.
"""

from __future__ import annotations

from reckon.eval._eval import RunRecord, evaluate, summarize
from reckon.eval._questions import Question, load_questions
from reckon.eval._report import build_report, write_report
from reckon.reproduce import reproduce_in_sandbox, reproduce_notebook

__all__ = [
    "Question",
    "RunRecord",
    "build_report",
    "evaluate",
    "load_questions",
    "reproduce_in_sandbox",
    "reproduce_notebook",
    "summarize",
    "write_report",
]
