"""The words two texts differ in, for a reader deciding whether they are one memory. Pure.

``consolidate`` shows each member of a cluster against its survivor: two near-duplicates can
differ anywhere (a ticket number at the end, a date in the middle), so a text cut after some
characters can hide exactly what tells them apart. Tokens are words (joined ones such as
``OPS-12``, ``2026-12-03``, ``v2.3.1`` or ``bob@example.com`` stay whole) and single punctuation
marks, compared in order by ``difflib``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

_TOKEN = re.compile(r"\w+(?:[-.:/@+']\w+)*|[^\w\s]")
Spans = list[tuple[int, int]]  # where each token of a text is
Opcode = tuple[str, int, int, int, int]  # difflib's: tag, old tokens i1:i2, new tokens j1:j2
CONTEXT = 3  # unchanged tokens kept on each side of a change; longer runs between are "…"


def _tokens(text: str) -> tuple[list[str], Spans]:
    matches = list(_TOKEN.finditer(text))
    return [m.group() for m in matches], [m.span() for m in matches]


def _span(text: str, spans: Spans, start: int, end: int) -> str:
    """The text of tokens ``start:end``, its spacing kept but collapsed to single spaces."""
    return " ".join(text[spans[start][0] : spans[end - 1][1]].split()) if end > start else ""


def _changes(old: str, new: str) -> tuple[Sequence[Opcode], tuple[Spans, Spans]]:
    a, a_spans = _tokens(old)
    b, b_spans = _tokens(new)
    return SequenceMatcher(None, a, b, autojunk=False).get_opcodes(), (a_spans, b_spans)


def differing(old: str, new: str) -> list[list[str]]:
    """Each change from ``old`` to ``new`` as ``[old words, new words]`` (one may be "")."""
    opcodes, (a_spans, b_spans) = _changes(old, new)
    return [
        [_span(old, a_spans, i1, i2), _span(new, b_spans, j1, j2)] for tag, i1, i2, j1, j2 in opcodes if tag != "equal"
    ]


def marked(old: str, new: str, context: int = CONTEXT) -> str:
    """``new`` with its changes from ``old`` marked as a word diff, ``[-old-]{+new+}``, and long
    unchanged stretches cut to ``context`` tokens around each change ("…" where cut)."""
    opcodes, (a_spans, b_spans) = _changes(old, new)
    if all(tag == "equal" for tag, *_ in opcodes):
        return _span(new, b_spans, 0, len(b_spans))

    def spaced(spans: Spans, k: int) -> bool:  # whitespace before token k (or at the end)
        return not 0 < k < len(spans) or spans[k][0] > spans[k - 1][1]

    out = ""
    for number, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            head_end = j1 if number == 0 else min(j2, j1 + context)  # after the change before
            tail_start = j2 if number == len(opcodes) - 1 else max(j1, j2 - context)  # before the next
            if tail_start <= head_end:
                part = _span(new, b_spans, j1, j2)
            else:
                cut = [_span(new, b_spans, j1, head_end), "…", _span(new, b_spans, tail_start, j2)]
                part = " ".join(piece for piece in cut if piece)
        else:
            removed, added = _span(old, a_spans, i1, i2), _span(new, b_spans, j1, j2)
            part = (f"[-{removed}-]" if removed else "") + (f"{{+{added}+}}" if added else "")
        out += (" " if out and (spaced(b_spans, j1) if j2 > j1 else spaced(a_spans, i1)) else "") + part
    return out
