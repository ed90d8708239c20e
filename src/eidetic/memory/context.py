"""Keyword scores with conversation context taken over every store of a recall
(``ranking.windows``): the union's best candidates by their own words, the thread members
around them read from every store, and each candidate scored with its window's words.

Where a record lives never changes what it scores: the candidates are the union's exact best
(``RecordStore.keyword`` under the union's statistics), and each window is read over every
store and every partition in reach."""

from __future__ import annotations

from collections.abc import Sequence

from ..ranking.access import Access
from ..ranking.bm25 import KeywordStats, Scorer
from ..ranking.filters import Filters
from ..ranking.windows import SPAN, Located, Place, context_of, summed, threaded, threads, windowed
from ..stores.base import RecordStore

Scores = dict[tuple[str, int], float]  # (store key, doc) -> score


def with_context(
    stores: Sequence[RecordStore],
    candidates: Scores,
    terms: list[str],
    stats: KeywordStats,
    access: Access,
    filters: Filters,
) -> Scores:
    """``candidates`` (scored by their own words under ``stats``), and the records whose
    conversation window holds one of them, scored with their windows' words. Unchanged where
    the union holds no thread member."""
    if not threaded(stats) or not candidates:
        return candidates
    position = {store.key: i for i, store in enumerate(stores)}
    docs: dict[int, list[int]] = {}
    for key, doc in candidates:
        docs.setdefault(position[key], []).append(doc)
    places = {(i, doc): member for i, found in docs.items() for doc, member in stores[i].thread_places(found).items()}
    if not places:
        return _rescored(stores, position, candidates, {}, terms, stats, access)
    asked: list[Place] = sorted({member[:3] for member in places.values()})
    found = [(i, stores[i].thread_around(asked, access, SPAN)) for i in range(len(stores))]
    found += [(i, [member]) for (i, _), member in places.items()]
    windows: dict[Located, list[Located]] = {}
    for sequence in threads(found).values():
        at = [j for j, (_, _, located) in enumerate(sequence) if located in places]
        windows.update(context_of(sequence, at))
    quoting: dict[int, list[int]] = {}
    for i, doc in windows:
        if (stores[i].key, doc) not in candidates:
            quoting.setdefault(i, []).append(doc)
    scored = dict(candidates)
    for i, found_docs in quoting.items():
        for doc in stores[i].admit(found_docs, access, filters):
            scored[(stores[i].key, doc)] = 0.0
    return _rescored(stores, position, scored, windows, terms, stats, access)


def keyword_scores(
    stores: Sequence[RecordStore],
    records: Sequence[tuple[str, int]],
    terms: list[str],
    stats: KeywordStats,
    access: Access,
    filters: Filters,
) -> Scores:
    """BM25 of ``records`` ((store key, doc)) as keyword recall scores them under ``stats``:
    their own words, with their conversation context where they have one. What a young store's
    floor judges an approximate hit's words by (``memory.floor``)."""
    position = {store.key: i for i, store in enumerate(stores)}
    own = _rescored(stores, position, dict.fromkeys(records, 0.0), {}, terms, stats, access)
    return {key: score for key, score in with_context(stores, own, terms, stats, access, filters).items() if key in own}


def _rescored(
    stores: Sequence[RecordStore],
    position: dict[str, int],
    scored: Scores,
    windows: dict[Located, list[Located]],
    terms: list[str],
    stats: KeywordStats,
    access: Access,
) -> Scores:
    """Each candidate's BM25 with its window's words in its context, under the union's
    statistics with the context field's as ``ranking.windows.windowed`` sums them.
    ``position``: each store's place in ``stores``, by key."""
    wanted: dict[int, set[int]] = {}
    for key, doc in scored:
        wanted.setdefault(position[key], set()).add(doc)
    for i, doc in (member for window in windows.values() for member in window):
        wanted.setdefault(i, set()).add(doc)
    counts = {
        (i, doc): found
        for i, docs in wanted.items()
        for doc, found in stores[i].keyword_counts(sorted(docs), terms, access).items()
    }
    scorer = Scorer(windowed(stats), terms)
    out: Scores = {}
    for key, doc in scored:
        located = (position[key], doc)
        if located not in counts:
            continue
        own = counts[located]
        window = [counts[member] for member in windows.get(located, ()) if member in counts]
        fields, lengths = summed(own, window) if window else own
        out[(key, doc)] = scorer.score(fields, lengths)
    return out
