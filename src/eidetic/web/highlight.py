"""The words a query matched, marked in a record's text: ``<mark>`` around each, everything else
escaped. Pure (no store, no request).

Which words count as matched follows the mode's own matching, so a mark never claims more than
the ranking used: keyword and hybrid mark the words whose analyzed stem is a query term (the
keyword index's own analyzer: "deploys" matches "deploy", a stop word never); exact marks every
occurrence of the query, ignoring case unless ``case_sensitive``; fields marks each query word
as a substring, as its ranking counts it; approximate matches by meaning and marks nothing.

Safety: the text is escaped piece by piece and only the ``<mark>`` tags are markup, so no record
text can inject HTML (``markupsafe`` does the escaping).
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

Span = tuple[int, int]
WORD = re.compile(r"[^\W_]+")  # runs of letters and digits: how the index's tokenizer splits text
ELLIPSIS = "…"
REACH = 40  # how far an excerpt's edge moves to a word boundary


def spans(text: str, query: str, mode: str, case_sensitive: bool = False) -> list[Span]:
    """(start, end) of each matched piece of ``text``, in order, not overlapping."""
    if not text or not query.strip():
        return []
    if mode == "exact":
        return _substrings(text, [query], case_sensitive)
    if mode == "fields":
        from ..ranking.fields import terms_of

        return _substrings(text, terms_of(query), False)
    if mode in ("keyword", "hybrid"):
        return _stems(text, query)
    return []


def _substrings(text: str, needles: list[str], case_sensitive: bool) -> list[Span]:
    needles = [n for n in needles if n]
    if not needles:
        return []
    longest_first = sorted(set(needles), key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, longest_first)), 0 if case_sensitive else re.IGNORECASE)
    return [match.span() for match in pattern.finditer(text)]


def _stems(text: str, query: str) -> list[Span]:
    from ..index.analyzer import analyze, query_terms

    wanted = set(query_terms(query))
    if not wanted:
        return []
    verdict: dict[str, bool] = {}  # each distinct word is analyzed once
    found = []
    for match in WORD.finditer(text):
        word = match.group()
        if word not in verdict:
            verdict[word] = any(term in wanted for term in analyze(word))
        if verdict[word]:
            found.append(match.span())
    return found


def marked(text: str, found: list[Span]) -> Markup:
    """``text`` escaped, each span wrapped in ``<mark>``."""
    pieces, at = [], 0
    for start, end in found:
        pieces.append(escape(text[at:start]))
        pieces.append(Markup("<mark>{}</mark>").format(text[start:end]))
        at = end
    pieces.append(escape(text[at:]))
    return Markup("").join(pieces)


def highlight(text: str, query: str, mode: str, case_sensitive: bool = False, width: int | None = None) -> Markup:
    """``text`` with the query's matches marked; with ``width``, only about that many characters
    around the first match (an excerpt for a list of hits), cut at word boundaries."""
    found = spans(text, query, mode, case_sensitive)
    if width is None or len(text) <= width:
        return marked(text, found)
    start = max(0, (found[0][0] if found else 0) - width // 4)
    start = _word_start(text, start)
    end = _word_end(text, min(len(text), start + width))
    inside = [(s - start, e - start) for s, e in found if s >= start and e <= end]
    body = marked(text[start:end], inside)
    return Markup("").join([ELLIPSIS if start else "", body, ELLIPSIS if end < len(text) else ""])


def _word_start(text: str, at: int) -> int:
    """``at`` moved back to the start of its word (a word longer than ``REACH`` is cut)."""
    for back in range(REACH):
        if at - back <= 0 or text[at - back - 1].isspace():
            return at - back
    return at


def _word_end(text: str, at: int) -> int:
    for ahead in range(REACH):
        if at + ahead >= len(text) or text[at + ahead].isspace():
            return at + ahead
    return at
