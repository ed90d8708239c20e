"""Conversation context over everything a caller may read (pure: no I/O).

A chat turn rarely repeats the words of the question it answers ("Yes, last Tuesday!"); the
turns around it usually do. So a thread member's ``context`` field is its own words together
with its window's: the ``BEFORE`` members before it and the ``AFTER`` after it in its thread
(``ranking.threads`` defines threads and their order). On LoCoMo this lifted keyword recall@10
more than any other change (docs/benchmarks.md).

The window is taken over the union of what the caller may read, at query time: every store of
the recall and every partition in reach (the public records and the caller's private ones), so
a public turn whose neighbours are the caller's private turns, or sit in another store, is found
through them as it would be in one store. Each keyword entry holds its record's own words only,
and the context field's statistics are sums of own-text statistics (``windowed``), so no score
depends on where a record lives.

Recall's candidates are the union's best by their own words; each candidate's neighbours within
``SPAN`` places are read from every store, which gives its window and the records whose window
holds it (``quoting``): those are candidates too, found through its words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from .bm25 import FIELD_NAMES, KeywordStats
from .threads import AFTER, BEFORE

Place = tuple[str, str, str]  # a thread member's place: (thread, order key, id)
Member = tuple[str, str, str, int]  # (thread, order key, id, doc)
Located = tuple[int, int]  # (the store's position in precedence order, doc)

# A candidate's window, and the windows of the records whose window holds it, lie within this
# many places of it on either side.
SPAN = BEFORE + AFTER
# The context field's statistics, from sums over stores. A member's context holds its own words
# and its window's: about ``1 + BEFORE + AFTER`` times its length. A term a member holds is in the
# contexts of up to as many records, fewer where holders sit side by side: ``CONTEXT_SPREAD``
# times its own document frequency scored best on LoCoMo's tuning conversations, within 0.002
# of the exact document frequencies in context windows (benchmarks/context_models.py).
CONTEXT_LENGTH = 1 + BEFORE + AFTER
CONTEXT_SPREAD = 2
_TEXT, _CONTEXT = FIELD_NAMES.index("text"), FIELD_NAMES.index("context")


def threaded(stats: KeywordStats) -> bool:
    """Whether any record these statistics count is a thread member."""
    return bool(stats.lengths[_TEXT])


def windowed(stats: KeywordStats) -> KeywordStats:
    """BM25 statistics with the context field's as if each thread member's context held its
    window: every sum stays a sum over stores. ``text`` counts thread members' own words (each
    member's words are in both fields), ``context`` everyone's."""
    if not threaded(stats):
        return stats  # no thread member: the context field is each record's own words
    lengths = list(stats.lengths)
    lengths[_CONTEXT] += (CONTEXT_LENGTH - 1) * lengths[_TEXT]
    holding = {}
    for term, counts in stats.holding.items():
        spread = list(counts)
        spread[_CONTEXT] = min(stats.records, counts[_CONTEXT] + (CONTEXT_SPREAD - 1) * counts[_TEXT])
        holding[term] = tuple(spread)
    return replace(stats, lengths=tuple(lengths), holding=holding)


def threads(found: Iterable[tuple[int, Iterable[Member]]]) -> dict[str, list[tuple[str, str, Located]]]:
    """Each thread's members as found in the stores (given as (precedence, members)), in order
    of (order key, id); an id found in several stores is the first store's (as recall serves it)."""
    served: dict[str, tuple[int, Member]] = {}
    for position, offered in found:
        for member in offered:
            rid = member[2]
            if rid not in served or position < served[rid][0]:
                served[rid] = (position, member)
    by_thread: dict[str, list[tuple[str, str, Located]]] = {}
    for position, (thread, order, rid, doc) in served.values():
        by_thread.setdefault(thread, []).append((order, rid, (position, doc)))
    for sequence in by_thread.values():
        sequence.sort(key=lambda member: (member[0], member[1]))
    return by_thread


def context_of(sequence: Sequence[tuple[str, str, Located]], places: Iterable[int]) -> dict[Located, list[Located]]:
    """For the members at ``places`` (indexes into ``sequence``, a thread as ``threads`` gives
    it, complete within ``SPAN`` of each place): each one and each record whose window holds it
    (``AFTER`` before it and ``BEFORE`` after it), with that record's window."""
    out: dict[Located, list[Located]] = {}
    for place in places:
        for at in range(max(place - AFTER, 0), min(place + BEFORE, len(sequence) - 1) + 1):
            if sequence[at][2] not in out:
                out[sequence[at][2]] = [
                    sequence[j][2]
                    for j in (*range(at - 1, at - BEFORE - 1, -1), *range(at + 1, at + AFTER + 1))
                    if 0 <= j < len(sequence)
                ]
    return out


def summed(
    own: tuple[Sequence[Mapping[str, int]], Sequence[int]],
    window: Iterable[tuple[Sequence[Mapping[str, int]], Sequence[int]]],
) -> tuple[list[dict[str, int]], list[int]]:
    """A record's field counts and lengths (``own``) with its window's words added to ``context``."""
    counts, lengths = [dict(found) for found in own[0]], list(own[1])
    for their_counts, their_lengths in window:
        for term, n in their_counts[_CONTEXT].items():
            counts[_CONTEXT][term] = counts[_CONTEXT].get(term, 0) + n
        lengths[_CONTEXT] += their_lengths[_CONTEXT]
    return counts, lengths
