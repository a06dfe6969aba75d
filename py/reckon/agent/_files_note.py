"""The description of the user's files, sent at the start of a question's user message.

A local server caches the prompt by its longest common start, and a chat template
puts the tool schema right after the system message: with the files described in the
system message, a question about another file (an upload, a deletion) changed its
start, and the server read the schema and the whole history again. The system message
now says only what every question shares, and the files' description (the block) goes
before the question it first applies to: the first of a conversation and the first
after the files changed. The history says which block is current (the last one in
it), so nothing else keeps that state, and whatever reads the person's question
(``split_files_block``) gets it without the block.
"""

from __future__ import annotations

from collections.abc import Callable

from reckon.agent._types import JSONDict

__all__ = [
    "FILES_HEADER",
    "READER_LINE",
    "asked",
    "files_header",
    "keep_files_block",
    "last_files_block",
    "split_files_block",
]

FILES_HEADER = "The user's files (in "
# "pre-loaded read_table" was read as pandas' tab reader: say whose it is.
READER_LINE = (
    "read_table(path) is Reckon's reader (not pandas'), already defined: it reads "
    "messy tables (encodings, delimiters, header rows, sheets) into a DataFrame."
)
_END = f"\n{READER_LINE}\n\n"


def files_header(data_dir: str) -> str:
    """The block's first line."""
    return f"{FILES_HEADER}{data_dir}):"


def split_files_block(text: str) -> tuple[str, str]:
    """``(block, question)`` of a user message's text: the files' description it starts
    with (ending with ``READER_LINE``), or ``""``, and the rest."""
    if not text.startswith(FILES_HEADER):
        return "", text
    end = text.find(_END)
    if end < 0:
        return "", text
    cut = end + len(_END) - 2
    return text[:cut], text[cut + 2 :]


def _block_of(message: JSONDict) -> str:
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return ""
    return split_files_block(content)[0]


def last_files_block(messages: list[JSONDict]) -> str:
    """The files' description the model read last in ``messages`` (``""``: none)."""
    return next((b for b in map(_block_of, reversed(messages)) if b), "")


def asked(messages: list[JSONDict], block: str, question: str) -> str:
    """The user message for ``question``: after ``block`` when the history does not
    carry it already as its last description (a new conversation, files changed)."""
    if not block or block == last_files_block(messages):
        return question
    return f"{block}\n\n{question}"


def keep_files_block(
    before: list[JSONDict], after: list[JSONDict], is_question: Callable[[JSONDict], bool]
) -> list[JSONDict]:
    """``after`` (``before`` cut to fit the window) with the last files' description of
    ``before`` put back before the first question left, when the cut left it out."""
    block = last_files_block(before)
    if not block or last_files_block(after) == block:
        return after
    for index, message in enumerate(after):
        if is_question(message):
            content = split_files_block(str(message.get("content")))[1]
            fitted = list(after)
            fitted[index] = {**message, "content": f"{block}\n\n{content}"}
            return fitted
    return after
