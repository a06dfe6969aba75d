"""Schema privacy's filter: every protected value in text becomes ``[hidden]``, also in
the forms one line of code turns a value into.

A text is read as written and in the views ``_normalise`` makes of it (compatibility
forms, accents and invisible characters folded, escapes decoded, numbers written as
numbers, rot13), and inside the runs ``_decode`` finds (base64/32/85, hex, character
codes, lists of characters; nested up to ``_DEPTH``). In each, a value is found:

- as written (short values) or in any letter case, and reversed (values of four
  characters or more: shorter ones would hide common words), and a value of two to
  four words with its words in the other order; a name of two to four capitalised words
  also shortened to initials and a surname (``C. Ashdown``, ``Ashdown, C.``);
- with its separators collapsed (``_lexicon.Squeezed``: ``CorneliusAshdown``,
  ``A l i c e``, ``7-3-4-1-2``, ``73-412``);
- as a number (``_numbers``): by value (``73400`` is ``73,400.0``), rounded (down to
  the whole number either side), scaled by a power of ten (``73.4`` for ``73400``) when
  it has three significant digits or more, and written backwards when it has four
  digits or more; in number words (``seventy-three thousand four hundred and twelve``,
  ``_normalise``); also with a suffix of up to three letters (``73.4k``, ``73412USD``).

What is found is hidden in the original text (the views map back to it). Integers
from -9 to 9 are never hidden: they are counts, indexes and shapes. A kept name (a
column, file or table name schema mode sends) is never cut into. Anything else a cell
computes from a value (an arithmetic mix, a cipher) passes: SECURITY.md says what
schema mode does and does not promise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reckon.agent._types import JSONDict
from reckon.agent.privacy._decode import encoded_runs
from reckon.agent.privacy._lexicon import Lexicon, Squeezed
from reckon.agent.privacy._normalise import View, folded, hex_bytes, numeric, rot13
from reckon.agent.privacy._numbers import ProtectedNumbers, is_number

__all__ = ["HIDDEN", "Redactor", "is_number"]

HIDDEN = "[hidden]"
_FOLDED = 4  # values this long or longer are also found in any case and reversed
_DEPTH = 2  # encodings inside encodings that are read


class Redactor:
    """Replaces every protected value in text with ``[hidden]`` and counts them."""

    def __init__(
        self, strings: Iterable[str], numbers: Iterable[float], *, keep: Iterable[str] = ()
    ) -> None:
        self._source = (set(strings), set(numbers), [k for k in keep if k])
        self._build(*self._source)

    def extend(self, strings: Iterable[str], numbers: Iterable[float]) -> None:
        """Hide these values too, from now on (what a host tool returned mid-ask)."""
        known, figures, keep = self._source
        more, extra = set(strings) - known, set(numbers) - figures
        if not more and not extra:
            return
        known |= more
        figures |= extra
        self._build(known, figures, keep)

    def _build(self, strings: set[str], numbers: set[float], keep: list[str]) -> None:
        kept = {k for k in keep if k}
        kept |= {folded(k).text for k in kept}
        words: set[str] = set()
        for value in strings:
            for form in {value, value.strip(), folded(value).text.strip()}:
                if form.strip() and form not in kept and not is_number(form):
                    words.add(form)
        # A value that a kept name (a column, a file, a table) differs from only in case
        # is found as written: "Sales" must not hide the table `sales`.
        names = {k.casefold() for k in kept}
        long = {w for w in words if len(w) >= _FOLDED and w.casefold() not in names}
        # A name shortened to initials and a surname ("C. Ashdown"); without a dot only
        # as written or in capitals ("A Smith" is also English in another case).
        initials = {i for w in long for i in _initialled(w)} - kept
        # A name of two to four words is found in the other order too ("Ashdown
        # Cornelius", "Ashdown, Cornelius" once squeezed).
        long |= {" ".join(w.split()[::-1]) for w in long if 2 <= len(w.split()) <= 4}
        self._dotless = {i for i in initials if "." not in i}
        self._dotless |= {i.upper() for i in self._dotless}
        self._exact = Lexicon(words - long)
        folded_forms = long | {w[::-1] for w in long}
        self._folded = Lexicon(folded_forms | initials, fold=True)
        # Dotless forms are looked up with the folded ones (one pass over the text), then
        # kept only as written.
        self._case_kept = {i.lower() for i in self._dotless} - {f.lower() for f in folded_forms}
        self._squeezed = Squeezed(folded_forms)
        self._kept = Lexicon([*kept, HIDDEN])
        self._numbers = ProtectedNumbers(numbers, strings)
        self.memo: dict[str, str] = {}  # texts already filtered, by ``hidden``

    def hidden(self, text: str) -> str:
        """``text`` with every protected value hidden (``redact`` without the count),
        remembered: a conversation sends the same messages again and again."""
        if text not in self.memo:
            self.memo[text] = self.redact(text)[0]
        return self.memo[text]

    def redact(self, text: str) -> tuple[str, int]:
        if not text:
            return text, 0
        spans = _merged(self._spans(text, 0))
        if spans:
            kept = self._kept.find(text)
            spans = [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in kept)]
        if not spans:
            return text, 0
        out, done = [], 0
        for start, end in spans:
            out += [text[done:start], HIDDEN]
            done = end
        out.append(text[done:])
        return "".join(out), len(spans)

    def hides(self, text: str) -> bool:
        """Whether ``text`` shows a protected value in any of the forms."""
        return self.redact(text)[1] > 0

    def _spans(self, text: str, depth: int) -> list[tuple[int, int]]:
        """The spans of ``text`` that show a protected value (``depth``: how deep in
        encodings this text was found)."""
        base = folded(text)
        normal = hex_bytes(base)
        spans: list[tuple[int, int]] = []
        for view in _distinct(View.of(text), normal):
            spans += _mapped(view, self._exact.find(view.text))
            spans += _mapped(view, self._folded_spans(view.text))
            spans += _mapped(view, self._squeezed.find(view.text))
            spans += _mapped(view, self._numbers.spans(view.text))
        turned = rot13(normal)
        spans += _mapped(turned, self._folded_spans(turned.text))
        spans += _mapped(turned, self._squeezed.find(turned.text))
        spans += _mapped(normal, self._numbers.spaced.find(normal.text))
        numbers = numeric(base)
        if numbers.text != normal.text:
            spans += _mapped(numbers, self._numbers.spans(numbers.text))
            spans += _mapped(numbers, self._numbers.spaced.find(numbers.text))
        if depth < _DEPTH:
            for start, end, decoded in encoded_runs(normal.text):
                if any(self._spans(d, depth + 1) for d in decoded):
                    spans.append(normal.source(start, end))
        return spans

    def _folded_spans(self, text: str) -> list[tuple[int, int]]:
        found = self._folded.find(text)
        if not self._case_kept:
            return found
        return [
            (a, b)
            for a, b in found
            if text[a:b].lower() not in self._case_kept or text[a:b] in self._dotless
        ]

    def filter_result(self, result: JSONDict) -> tuple[JSONDict, int]:
        """A copy of a run result with every protected value hidden (the model's view)."""
        total = 0

        def clean(value: Any) -> Any:
            nonlocal total
            if not isinstance(value, str):
                return value
            text, count = self.redact(value)
            total += count
            return text

        filtered = {k: clean(v) for k, v in result.items() if k in {"stdout", "stderr"}}
        filtered.update({k: v for k, v in result.items() if k not in filtered})
        value = result.get("result")
        if isinstance(value, dict):
            filtered["result"] = {"type": value.get("type"), "text": clean(value.get("text"))}
        error = result.get("error")
        if isinstance(error, dict):
            filtered["error"] = {k: clean(v) for k, v in error.items()}
        if result.get("assigned") is not None:
            filtered["assigned"] = [
                {"name": a.get("name"), "type": a.get("type"), "text": clean(a.get("text"))}
                for a in result.get("assigned") or []
                if isinstance(a, dict)
            ]
        filtered["figures"] = [
            {"description": clean(f.get("description"))}
            for f in result.get("figures") or []
            if isinstance(f, dict)
        ]
        files = [f for f in result.get("files") or [] if isinstance(f, dict)]
        filtered["files"] = [{**f, "path": clean(f.get("path"))} for f in files]
        return filtered, total


def _initialled(value: str) -> list[str]:
    """A name of two to four capitalised words as it is often shortened: ``C. Ashdown``,
    ``C Ashdown``, ``C.Ashdown``, ``Ashdown, C.``, ``Ashdown C``, ``Cornelius A.`` (for
    ``Mary Anne Smith`` also ``M. A. Smith`` and ``M.A. Smith``)."""
    words = value.split()
    if not 2 <= len(words) <= 4 or not all(map(_name_word, words)):
        return []
    *first, last = words
    dotted = " ".join(f"{w[0]}." for w in first)
    forms = [f"{dotted} {last}", f"{dotted.replace(' ', '')} {last}", f"{first[0][0]}. {last}"]
    forms += [f"{dotted.replace(' ', '')}{last}", f"{' '.join(w[0] for w in first)} {last}"]
    forms += [f"{last}, {dotted}", f"{last} {dotted}", f"{last}, {dotted[:-1]}"]
    forms += [f"{last} {dotted[:-1]}", f"{' '.join(first)} {last[0]}."]
    return forms


def _name_word(word: str) -> bool:
    """A capitalised word of letters, also with an apostrophe or hyphen (``O'Brien``)."""
    return (
        len(word) >= 2
        and word[0].isupper()
        and word.replace("'", "").replace("-", "").replace("’", "").isalpha()
    )


def _distinct(*views: View) -> list[View]:
    seen: set[str] = set()
    out = []
    for view in views:
        if view.text not in seen:
            seen.add(view.text)
            out.append(view)
    return out


def _mapped(view: View, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [view.source(a, b) for a, b in spans if a < b]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
