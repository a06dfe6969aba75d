"""An answer the model wrote, before it is given: its form put right, its numbers traced
to the steps that printed them, and whether it goes back to the model once more."""

from __future__ import annotations

import time
from dataclasses import dataclass

from reckon.agent._steps import Correction, Progress, StepLog, outcome
from reckon.agent._types import JSONDict
from reckon.agent.checks._date_parts import part_correction, part_recheck
from reckon.agent.checks._date_strings import string_correction
from reckon.agent.checks._decided import undecided_label
from reckon.agent.checks._empty import column_as_value, empty_result, stood_by
from reckon.agent.checks._form import repair_form, variable_form
from reckon.agent.checks._grounding import ground_answer, step_outputs, step_sources
from reckon.agent.checks._label_max import label_max_correction, label_max_recheck
from reckon.agent.checks._label_missing import missing_label_correction
from reckon.agent.checks._left_out import left_out_name
from reckon.agent.checks._method import answer_method
from reckon.agent.checks._names import unprinted_name
from reckon.agent.checks._periods import columns, period_recheck
from reckon.agent.checks._recheck import (
    EMPTY_REPLY,
    is_question,
    last_question,
    recheck_message,
    typed_not_ran,
)
from reckon.agent.checks._row_number import row_number_recheck
from reckon.agent.checks._unpicked import unpicked_correction, unpicked_recheck
from reckon.agent.checks._unused import unused_numbers

__all__ = ["Finishing"]

# An answer goes back to the model at most this often (a guess, a failed cell, a lost
# format).
_RECHECKS = 3


@dataclass
class Finishing:
    """The answer's context: the history, earlier asks' steps and this answer's."""

    messages: list[JSONDict]
    earlier: list[JSONDict]  # the steps of the transcript's asks
    log: StepLog
    environment: JSONDict

    def finish(
        self, written: str, progress: Progress, *, rechecks: bool, started: float
    ) -> JSONDict | None:
        """The model answered (``written``): the outcome, or None when the answer goes
        back to the model (``rechecks``: it may)."""
        log = self.log
        # An answer a cell printed (``_printed``): no model wrote it, and no call was timed.
        printed, progress.printed = bool(written) and written == progress.printed, ""
        origin: JSONDict = {"origin": "output"} if printed else {}
        started = time.monotonic() if printed else started
        if not written and rechecks and "empty" not in progress.rechecks:
            # Seen after a recheck: an empty reply. Once, it is asked for again.
            progress.rechecks.add("empty")
            self.messages.append({"role": "user", "content": EMPTY_REPLY})
            log.add({"kind": "recheck", "text": "", "message": EMPTY_REPLY}, started)
            return None
        if not written:
            message = "The model returned an empty reply."
            log.add({"kind": "error", "text": message}, started)
            return outcome("error", progress.last_text, log.steps, message)
        text, grounding = self.repaired(written)
        if (kept := stood_by(self._question(), text, log.steps)) is not None:
            text, grounding = kept, self._ground(kept)
        repair = {"written": written} if text != written else {}
        self.messages.append({"role": "assistant", "content": text})
        found = self.recheck(text, grounding, progress) if rechecks else None
        if found is not None:
            kind, again = found
            if progress.draft:
                # Set aside: the next call asks for a program in place of the question,
                # with this answer out of sight (a model shown it argues for it), and
                # with it a program that left numbers out (a model shown it copies it).
                self.messages.pop()
                if kind == "unused":  # the program is asked for again: its cells go too
                    at = max(i for i, m in enumerate(self.messages) if is_question(m))
                    del self.messages[at + 1 :]
            else:
                self.messages.append({"role": "user", "content": again})
            step: JSONDict = {"kind": "recheck", "text": text, "message": again, **origin}
            log.add({**step, "grounding": grounding, **repair}, started)
            return None
        unrun = typed_not_ran(text, grounding)
        if unrun:
            # Shown as the model's last words, never as an answer that was computed.
            message = f"The model's last reply was {unrun}, not an answer: nothing in it ran."
            log.add({"kind": "error", "text": text, "message": message}, started)
            return outcome("error", text, log.steps, message)
        method = answer_method(text, grounding, log.steps)
        shown = {"method": method} if method else {}
        step = {"kind": "answer", "text": text, "grounding": grounding, **repair, **shown, **origin}
        log.add(step, started)
        result = outcome("ok", text, log.steps)
        result["grounding"] = grounding
        if method:
            result["method"] = method
        return result

    def repaired(self, answer: str) -> tuple[str, JSONDict]:
        """The answer (its form put right, ``repair_form``) and its grounding."""
        grounding = self._ground(answer)
        fixed = repair_form(self._question(), answer, grounding, last_value=self._last_value())
        fixed = fixed or variable_form(self._question(), answer, self._printed())
        if fixed is None:
            return answer, grounding
        return fixed, self._ground(fixed)

    def recheck(
        self, answer: str, grounding: JSONDict, progress: Progress
    ) -> tuple[str, str] | None:
        """The kind of recheck and what to send the answer back with (``_recheck``), at
        most once per kind."""
        if len(progress.rechecks) >= _RECHECKS or self._said_again(answer, grounding, progress):
            return None
        computed = progress.ran_code or any(_by_model(s) for s in self.earlier)
        codes = self._codes()
        period, correction = self._period_check()
        found = recheck_message(
            grounding,
            progress.has_files,
            computed,
            question=self._question(),
            answer=answer,
            asked=self._asked(progress.rechecks),
            last_output=self._last_output(),
            last_error=progress.last_error if progress.failures else "",
            period=period,
            row_number=self._row_check(answer, codes),
            column_value=column_as_value(codes, set(self._names())),
            name=unprinted_name(self._question(), answer, self._outputs()),
            decision=undecided_label(self._question(), answer, self._printed()),
            left_out=left_out_name(self._question(), answer),
            unused="" if progress.has_files else unused_numbers(self._question(), codes),
            note=self._last_note(),
            ran_now=progress.ran_code,
        )
        if found is None:
            return None
        again = found[0] == "format" and "format" in progress.rechecks
        progress.rechecks.add("format-again" if again else found[0])
        if found[0] in ("draft", "no-code", "unused"):
            progress.draft = found[1]
        fix = self._row_correction(found[0], answer, codes)
        if fix is not None:  # a label read from the wrong row: Reckon reads it from the right one
            progress.correction = fix
            return found[0], fix.message
        if found[0] == "period" and correction is not None:
            # The loop runs the cell put right and adds its output to the message.
            progress.correction = correction
            return found[0], correction.message
        return found

    def _asked(self, rechecks: set[str]) -> frozenset[str]:
        """The rechecks sent, less the form's once when code ran after the last recheck:
        seen, a form given, then a label decided again in code and given in prose."""
        steps = [s for s in self.log.steps if s.get("kind") in ("recheck", "code")]
        ran_since = (
            bool(steps) and _by_model(steps[-1]) and any(s.get("kind") == "recheck" for s in steps)
        )
        if ran_since and "format-again" not in rechecks:
            return frozenset(rechecks - {"format"})
        return frozenset(rechecks)

    def _row_correction(self, kind: str, answer: str, codes: list[str]) -> Correction | None:
        """The cell that reads the asked label from the right row, for Reckon to run:
        the largest label taken for the largest value's (``_label_max``), or a label
        read as NaN from a total row (``_label_missing``)."""
        if kind == "row":
            return label_max_correction(self._question(), codes, self._names())
        if kind in ("nothing", "missing"):
            value = empty_result(answer) or ""
            return missing_label_correction(self._question(), value, self.environment)
        return None

    def _period_check(self) -> tuple[str, Correction | None]:
        """What a period question answered per date (``_periods``), or a month, weekday
        or year picked by the wrong number (``_date_parts``), is sent back with; and for
        the latter the cell put right, which Reckon runs where it can."""
        question, codes = self._question(), self._codes()
        per_date = period_recheck(question, codes, self.environment)
        if per_date:
            return per_date, None
        mismatch = part_recheck(question, codes)
        if mismatch:
            return mismatch, part_correction(question, codes)
        compared = string_correction(codes, self.environment)
        if compared is not None:
            return compared.message, compared
        return (
            unpicked_recheck(question, codes, self.environment),
            unpicked_correction(question, codes, self.environment),
        )

    def _said_again(self, answer: str, grounding: JSONDict, progress: Progress) -> bool:
        """Whether the model, sent back, answered word for word as before with no cell
        run since (seen: three rechecks in a row answered with the same paragraph): a
        further message would cost a call and change nothing. Not before code ran: an
        answer that computed nothing is never let stand for that; nor while it has
        numbers no output holds and has not yet been told so (seen: a guess said again
        after a failed cell's message stood, its "not computed" message never sent)."""
        steps = [s for s in self.log.steps if s.get("kind") != "thinking"]
        last = steps[-1] if steps else {}
        if grounding.get("ungrounded") and "ungrounded" not in progress.rechecks:
            return False
        return progress.ran_code and last.get("kind") == "recheck" and last.get("text") == answer

    def _row_check(self, answer: str, codes: list[str]) -> str:
        """A wrong row read for the asked label: a row's number given for a name
        (``_row_number``), or the largest label taken for the largest value's
        (``_label_max``)."""
        question, names = self._question(), self._names()
        return row_number_recheck(question, answer, codes) or label_max_recheck(
            question, codes, names
        )

    def _names(self) -> list[str]:
        """The uploads' column names."""
        return [n for n, _ in columns(self.environment)]

    def _codes(self) -> list[str]:
        """The code of this answer's cells that ran, in order."""
        return [code for code, _ in self._printed()]

    def _question(self) -> str:
        """The person's last question (not a cell's output or one of our rechecks)."""
        return last_question(self.messages)

    def _ground(self, answer: str) -> JSONDict:
        earlier = [{**s, "index": None} for s in self.earlier]
        given = [m["content"] for m in self.messages if is_question(m)]
        # A file's path as the person gave it: its name (and folders) under the data
        # directory, not the directory itself (a test's /tmp/pytest-25/ "gave" a 25).
        root = str(self.environment.get("data_dir") or "/data").rstrip("/") + "/"
        for entry in self.environment.get("files") or []:
            if isinstance(entry, dict):
                given.append(str(entry.get("path") or "").removeprefix(root))
                given += [str(c.get("name") if isinstance(c, dict) else c)
                          for c in entry.get("columns") or []]  # fmt: skip
        return ground_answer(answer, step_sources([*earlier, *self.log.steps]), given=given)

    def _outputs(self) -> list[tuple[str, str]]:
        """``(code, output)`` of every cell the model ran in this conversation."""
        return [(code, text) for _, code, text in step_outputs([*self.earlier, *self.log.steps])]

    def _printed(self) -> list[tuple[str, str]]:
        """Each cell of this answer that ran: its code and what it printed."""
        return [
            (str(s.get("code") or ""), str(s["result"].get("stdout") or ""))
            for s in self.log.steps
            if _by_model(s) and isinstance(s.get("result"), dict)
            and s["result"].get("status") == "ok"
        ]  # fmt: skip

    def _last_value(self) -> str:
        """What the last cell of this answer printed, when it ran without error."""
        for step in reversed(self.log.steps):
            result = step.get("result")
            if _by_model(step) and isinstance(result, dict):
                if result.get("status") != "ok":
                    return ""
                value = result.get("result")
                shown = value.get("text") if isinstance(value, dict) else None
                return str(result.get("stdout") or shown or "")
        return ""

    def _last_note(self) -> str:
        """The kernel's notes on the last cell of this answer, when it ran."""
        for step in reversed(self.log.steps):
            result = step.get("result")
            if _by_model(step) and isinstance(result, dict):
                notes = result.get("notes") if result.get("status") == "ok" else None
                return " ".join(str(n) for n in notes) if isinstance(notes, list) else ""
        return ""

    def _last_output(self) -> str:
        """What the last cell that ran printed (its stdout, or its value)."""
        for step in reversed([*self.earlier, *self.log.steps]):
            result = step.get("result")
            if _by_model(step) and isinstance(result, dict):
                value = result.get("result")
                shown = value.get("text") if isinstance(value, dict) else None
                return str(result.get("stdout") or shown or "")
        return ""


def _by_model(step: JSONDict) -> bool:
    """A cell the model wrote (not a table Reckon loaded for it)."""
    return step.get("kind") == "code" and step.get("origin") != "reckon"
