"""A run of failed cells: when to go on, when to start again fresh, when to give up.

A small model patching its own failed cell tends to patch the patch: the third try
carries the first two's mistakes (six of nine misses on a hidden set were errors the
error itself named, unfixed in three tries). So after two failures in a row the
failed attempts leave the history and the model is told, in one message, what went
wrong each time (with the kernel's hints), and writes the code again from the last
good state. And an answer gives up only when the failures stop being different:
three in a row of which the newest repeats an earlier error, or twice the limit.
"""

from __future__ import annotations

from reckon.agent._steps import Progress
from reckon.agent._types import JSONDict

__all__ = ["FRESH_START", "gives_up", "start_fresh"]

FRESH_START = "Your code failed {count} times in a row:"
_AGAIN = (
    "Start again from the question: write new code, from the variables as they were "
    "before these attempts, that avoids these errors."
)
_AFTER = 2  # failures in a row before the fresh start


def start_fresh(progress: Progress, messages: list[JSONDict]) -> bool:
    """After the second failure in a row (once a run of failures): the failed
    attempts cut from ``messages`` and one message listing their errors put in their
    place. Whether it was done."""
    if progress.failures != _AFTER or progress.restarted or progress.streak_start is None:
        return False
    errors = progress.streak_errors
    listed = "\n".join(f"{n}. {error}" for n, error in enumerate(errors, start=1))
    del messages[progress.streak_start :]
    messages.append(
        {"role": "user", "content": f"{FRESH_START.format(count=len(errors))}\n{listed}\n{_AGAIN}"}
    )
    progress.restarted = True
    return True


def gives_up(progress: Progress, max_failures: int) -> bool:
    """Whether the run of failures ends the answer."""
    if progress.failures < max_failures:
        return False
    errors = progress.streak_errors
    return progress.failures >= 2 * max_failures or errors[-1] in errors[:-1]
