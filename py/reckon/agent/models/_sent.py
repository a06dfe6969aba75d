"""What reached the model: each request body as sent, with the file-derived parts marked.

A part is ``{"message": i, "start": s, "end": e, "source": "file", "kind": k}``: the
characters ``[s, e)`` of ``body["messages"][i]["content"]`` came from the user's
files. Kinds: ``schema`` (a table's columns, dtypes and row count in the system
prompt), ``preview`` (the first line of a text file) and ``observation`` (the
output of a cell once any cell has read the files: variables persist, so later
outputs may show file values too).
"""

from __future__ import annotations

import json
import re

from reckon.agent._observe import OBSERVATION_HEADER
from reckon.agent._types import ChatRequest, JSONDict
from reckon.agent.models._code import extract_code_blocks

__all__ = ["SentLog", "file_parts", "offline_body", "sent_record"]

_UNSET = object()
_FILE_WORDS = ("read_table", "run_sql", "read_csv", "read_excel", "read_parquet", "open(")


def offline_body(request: ChatRequest) -> JSONDict:
    """The body an OpenAI-compatible upstream would get, for models that send nothing."""
    return {"model": request.model, "messages": request.messages, "tools": request.tools}


def sent_record(body: JSONDict, environment: JSONDict, *, offline: bool) -> JSONDict:
    """One request as it left (a deep copy, so later history edits do not change it)."""
    copy: JSONDict = json.loads(json.dumps(body, ensure_ascii=False))
    return {"body": copy, "parts": file_parts(copy, environment), "offline": offline}


class SentLog:
    """Records requests as they leave, copying and scanning only what is new in each.

    A conversation's requests grow by a few messages per step, so copying and
    scanning every body whole costs O(history) per step and O(n^2) per session.
    The log keeps its own copy of the messages it has seen; a request that starts
    with them (the usual case; or with a new system prompt before them, at a new
    question) copies and scans only the messages after. The records it returns share
    those copies, so the bodies are still each request exactly as sent. The agent
    never edits a sent message in place (it appends, truncates or replaces), which is
    what lets a message be recognised by identity before it is compared.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._sent: list[object] = []  # the messages of the last request, as given
        self._copies: list[JSONDict] = []  # their copies, shared by the records
        self._lengths: list[int] = []  # each copy's JSON length (for the token estimate)
        self._touched: list[bool] = []  # after message i, had code read the files?
        self._parts: list[list[JSONDict]] = []  # the parts of each message
        self._fields: JSONDict = {}  # the last request's other fields, as given
        self._field_copies: JSONDict = {}
        self._key: tuple[str, tuple[str, ...]] | None = None
        #: Characters copied (serialized) so far: the work ``record`` did, for tests.
        self.copied = 0

    def record(self, body: JSONDict, environment: JSONDict, *, offline: bool) -> JSONDict:
        """One request as it left: ``{"body", "parts", "offline"}`` (PROTOCOL section 4)."""
        messages = body.get("messages")
        scan = _Scan(environment)
        if not isinstance(messages, list):
            self.clear()
            record = sent_record(body, environment, offline=offline)
            self.copied += len(json.dumps(body, ensure_ascii=False))
            return record
        if scan.key != self._key:
            self.clear()
            self._key = scan.key
        self._keep(messages, scan)
        for index in range(len(self._copies), len(messages)):
            text = json.dumps(messages[index], ensure_ascii=False)
            self.copied += len(text)
            copy = json.loads(text)
            touched = self._touched[index - 1] if index else False
            parts, touched = scan.message(index, copy, touched)
            self._copies.append(copy)
            self._lengths.append(len(text))
            self._touched.append(touched)
            self._parts.append(parts)
        self._sent = list(messages)
        fields: JSONDict = {}
        for name, value in body.items():
            if name == "messages":
                continue
            before = self._fields.get(name, _UNSET)
            if before is value or before == value:  # the tools: the same every time
                fields[name] = self._field_copies[name]
            else:
                text = json.dumps(value, ensure_ascii=False)
                self.copied += len(text)
                fields[name] = json.loads(text)
        self._fields = {k: v for k, v in body.items() if k != "messages"}
        self._field_copies = fields
        copy = {k: list(self._copies) if k == "messages" else fields[k] for k in body}
        parts = [part for found in self._parts for part in found]
        return {"body": copy, "parts": parts, "offline": offline}

    def prompt_chars(self, body: JSONDict) -> int | None:
        """``len(json.dumps({"messages", "tools"}))`` of the last recorded body, without
        serializing it again (the token estimate when the upstream reports no usage)."""
        if not isinstance(body.get("messages"), list):
            return None
        count = len(self._lengths)
        chars = len('{"messages": []}') + sum(self._lengths) + 2 * max(count - 1, 0)
        if "tools" in body:
            tools = self._field_copies.get("tools", body["tools"])
            chars += len(', "tools": ') + len(json.dumps(tools, ensure_ascii=False))
        return chars

    def _keep(self, messages: list[object], scan: _Scan) -> None:
        """Drop what ``messages`` no longer starts with (a new system prompt: only it)."""
        count = min(len(messages), len(self._sent))
        if messages[:count] == self._sent[:count]:  # identity first: cheap when unchanged
            keep = count
        else:
            keep = 0
            while keep < count and (
                messages[keep] is self._sent[keep] or messages[keep] == self._copies[keep]
            ):
                keep += 1
            head = count > 0 and _role(messages[0]) == _role(self._sent[0]) == "system"
            if keep == 0 and head and messages[1:count] == self._sent[1:count]:
                # Only the system prompt was rebuilt differently (say, another privacy
                # mode): it says nothing about the files having been read, so the rest
                # of the history, its copies and its marks stand.
                text = json.dumps(messages[0], ensure_ascii=False)
                self.copied += len(text)
                self._copies[0] = json.loads(text)
                self._lengths[0] = len(text)
                self._parts[0], _ = scan.message(0, self._copies[0], False)
                keep = count
        del self._copies[keep:], self._lengths[keep:], self._touched[keep:], self._parts[keep:]


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _names(environment: JSONDict) -> list[str]:
    names = [str(environment.get("data_dir") or "/data")]
    for entry in environment.get("files") or []:
        if not isinstance(entry, dict):
            continue
        path = str(entry.get("path") or "")
        names += [path, path.rsplit("/", 1)[-1], str(entry.get("sql_table") or "")]
    return [n for n in names if n]


def _code_of(message: JSONDict) -> str:
    codes = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        codes.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    content = message.get("content")
    if isinstance(content, str):
        blocks = extract_code_blocks(content)
        if blocks is not None:
            codes.append(blocks.code)
    return "\n".join(codes)


def file_parts(body: JSONDict, environment: JSONDict) -> list[JSONDict]:
    """The file-derived spans of ``body``'s messages (see the module docstring)."""
    scan = _Scan(environment)
    parts: list[JSONDict] = []
    touched = False
    for index, message in enumerate(body.get("messages") or []):
        found, touched = scan.message(index, message, touched)
        parts += found
    return parts


class _Scan:
    """One message at a time, so a growing history is scanned once, not once per request."""

    def __init__(self, environment: JSONDict) -> None:
        self.data_dir = str(environment.get("data_dir") or "/data")
        self.words = _names(environment) + list(_FILE_WORDS)
        self.key = (self.data_dir, tuple(self.words))

    def message(self, index: int, message: object, touched: bool) -> tuple[list[JSONDict], bool]:
        """The parts of message ``index`` and whether the files have been read after it
        (once code read them, every later output may show file values)."""
        if not isinstance(message, dict):
            return [], touched
        content = message.get("content")
        role = message.get("role")
        if role == "system" and isinstance(content, str):
            return _prompt_parts(index, content, self.data_dir), touched
        if role == "assistant":
            code = _code_of(message)
            return [], touched or any(n in code for n in self.words)
        if isinstance(content, str) and touched:
            start = None
            if role == "tool":
                start = 0
            elif role == "user" and content.startswith(OBSERVATION_HEADER):
                start = len(OBSERVATION_HEADER) + 1
            if start is not None and start < len(content):
                return [_part(index, start, len(content), "observation")], touched
        return [], touched


def _part(index: int, start: int, end: int, kind: str) -> JSONDict:
    return {"message": index, "start": start, "end": end, "source": "file", "kind": kind}


def _prompt_parts(index: int, prompt: str, data_dir: str) -> list[JSONDict]:
    header = re.search(rf"^The user's files \(in {re.escape(data_dir)}\):\n", prompt, re.MULTILINE)
    if header is None:
        return []
    parts: list[JSONDict] = []
    position = header.end()
    for line in prompt[position:].split("\n"):
        if not line.startswith(("- ", "  ")):
            break
        end = position + len(line)
        kind = "preview" if "; starts with: " in line else "schema"
        last = parts[-1] if parts else None
        if last is not None and last["kind"] == kind and last["end"] + 1 == position:
            last["end"] = end
        else:
            parts.append(_part(index, position, end, kind))
        position = end + 1
    return parts
