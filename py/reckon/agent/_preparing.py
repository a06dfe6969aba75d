"""Before the model's turn: schema privacy applied to what it will see, and the system
prompt (rebuilt for each question) at the head of the history."""

from __future__ import annotations

from reckon.agent._context import LEFT_OUT
from reckon.agent._privacy import Privacy, Redactor, read_values, schema_environment, tables
from reckon.agent._scan import read_fresh_values
from reckon.agent._types import Executor, JSONDict

__all__ = ["HiddenValues", "apply_privacy", "load_lines", "place_prompt"]


class HiddenValues:
    """The values schema privacy hides, kept by the agent (out of the sandbox's reach)
    for the session: each scan adds to them and none removes any, so a cell that
    tampers with a later scan cannot unhide what an earlier one found. Allowing other
    columns starts over (the person's choice)."""

    def __init__(self) -> None:
        self.allow: frozenset[str] | None = None
        self.strings: set[str] = set()
        self.numbers: set[float] = set()

    def add(
        self, allow: frozenset[str], strings: list[str], numbers: list[float]
    ) -> tuple[list[str], list[float]]:
        if allow != self.allow:
            self.allow, self.strings, self.numbers = allow, set(), set()
        self.strings.update(strings)
        self.numbers.update(numbers)
        return sorted(self.strings), sorted(self.numbers)


async def apply_privacy(
    privacy: Privacy, executor: Executor, environment: JSONDict, *, hidden: HiddenValues
) -> tuple[JSONDict, Redactor | None]:
    """In schema mode: read the values to hide and drop previews. In the browser the
    scan runs in a fresh worker (``scan``); elsewhere in a hidden cell of the session.

    Returns the environment the model may see and the redactor for cell outputs."""
    if not privacy.hides:
        return environment, None
    scan = getattr(executor, "scan", None)
    if scan is not None:  # in the browser: a fresh worker no cell can reach
        found = await read_fresh_values(scan, privacy.allow_columns)
    else:
        run = getattr(executor, "run_hidden", None) or executor.run
        found = await read_values(run, environment, privacy.allow_columns)
    strings, numbers = hidden.add(privacy.allow_columns, *found)
    names = [name for table in tables(environment) for name in table.names]
    # Column and table names are schema, which this mode sends: a value equal to one stays.
    return schema_environment(environment), Redactor(strings, numbers, keep=names)


def load_lines(files: list[JSONDict], names: dict[str, str]) -> list[str]:
    """How each table is read, under the name it was loaded as (for the NameError hint)."""
    return [
        f"{names.get(str(f.get('path')), 'df')} = {f['read_with']}"
        for f in files
        if f.get("read_with")
    ]


def place_prompt(messages: list[JSONDict], prompt: str) -> None:
    """Put ``prompt`` first in the history. The environment changes between questions
    (uploads), so the prompt is rebuilt; a note that the history was cut stays with it."""
    system = {"role": "system", "content": prompt}
    if messages and messages[0].get("role") == "system":
        old = str(messages[0].get("content"))
        if LEFT_OUT in old:
            # The note and the recap of what was left out stay with the new prompt.
            system["content"] = f"{prompt}\n\n{old[old.index(LEFT_OUT) :]}"
        messages[0] = system
    else:
        messages.insert(0, system)
