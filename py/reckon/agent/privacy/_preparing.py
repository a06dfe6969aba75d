"""Before the model's turn: schema privacy applied to what it will see, and the system
prompt (rebuilt for each question) at the head of the history."""

from __future__ import annotations

from reckon._exceptions import ProtocolError
from reckon.agent._types import Executor, JSONDict
from reckon.agent.models._context import LEFT_OUT
from reckon.agent.privacy._outgoing import PrivateEnvironment
from reckon.agent.privacy._privacy import Privacy, Redactor, read_values, schema_environment
from reckon.agent.privacy._scan import read_fresh_values

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
        self._filter: tuple[tuple[int, int, tuple[str, ...]], Redactor] | None = None

    def add(
        self, allow: frozenset[str], strings: list[str], numbers: list[float]
    ) -> tuple[list[str], list[float]]:
        if allow != self.allow:
            self.allow, self.strings, self.numbers = allow, set(), set()
            self._filter = None
        self.strings.update(strings)
        self.numbers.update(numbers)
        return sorted(self.strings), sorted(self.numbers)

    def redactor(self, keep: list[str]) -> Redactor:
        """The filter for these values and names: the same one while neither changed
        (values are only ever added, so their counts say whether they did), so what it
        filtered for one ask is not filtered again for the next."""
        key = (len(self.strings), len(self.numbers), tuple(sorted(set(keep))))
        if self._filter is None or self._filter[0] != key:
            self._filter = (key, Redactor(self.strings, self.numbers, keep=keep))
        return self._filter[1]


async def apply_privacy(
    privacy: Privacy, executor: Executor, environment: JSONDict, *, hidden: HiddenValues
) -> tuple[JSONDict, Redactor | None]:
    """In schema mode: scan the uploads for the values to hide (in the browser in a
    fresh worker, ``scan``; elsewhere in a hidden cell of the session) and describe
    them from that scan, without previews.

    Returns the environment the model may see, which also carries the filter every
    string sent passes (``PrivateEnvironment``), and that filter for cell outputs."""
    if not privacy.hides:
        return environment, None
    scan = getattr(executor, "scan", None)
    if scan is not None:  # in the browser: a fresh worker no cell can reach
        found = await read_fresh_values(scan, privacy.allow_columns)
    else:
        run = getattr(executor, "run_hidden", None) or executor.run
        found = await read_values(run, environment, privacy.allow_columns)
    if found.problems:
        raise ProtocolError(_unreadable(found.problems))
    hidden.add(privacy.allow_columns, found.strings, found.numbers)
    # The file list and the names that may be sent come from the scan's own look at the
    # uploads: not from the session's inspect (a cell can patch it), nor from files a
    # cell wrote under /data (the fresh worker has only the uploads).
    seen = schema_environment({**environment, "files": found.files})
    redactor = hidden.redactor(sorted({*found.names, *privacy.allow_columns}))
    return PrivateEnvironment(seen, redactor=redactor), redactor


def _unreadable(problems: list[str]) -> str:
    more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
    shown = "; ".join(problems[:5]) + more
    return (
        f"some parts of your files could not be read, so their values cannot be hidden "
        f"({shown}). Fix or remove those files (a workbook saved again, an archive's "
        "tables uploaded one by one), or use privacy 'full'"
    )


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
