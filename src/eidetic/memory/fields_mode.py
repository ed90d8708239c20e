"""The ``fields`` mode over the stores: the transparent ranking of markdown memory folders
(``ranking.fields``), whose score is the whole score (its recency factor takes the place of the
freshness blend; the freshness signal is still reported). ``audit`` reads the same rows."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ..ranking import fields, freshness
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..results import Hit
from ..stores.base import RecordStore
from .stores import hidden, records_of

Usage = tuple[float, "str | None"]


def field_rows(
    stores: list[RecordStore], terms: list[str], access: Access, flt: Filters
) -> Iterator[tuple[RecordStore, tuple[Any, ...], Usage]]:
    """(store, ``fields_candidates`` row, (recall_count, last_recall)) of every record the
    caller may see that contains a term (all of them without terms), store precedence applied."""
    for position, store in enumerate(stores):
        rows = store.fields_candidates(terms, access, flt)
        shadowed = hidden(stores[:position], [row[1] for row in rows], access)
        usage = store.usage(row[1] for row in rows)
        for row in rows:
            if row[1] not in shadowed:
                yield store, row, usage.get(row[1], (0.0, None))


def fields_hits(
    stores: list[RecordStore],
    terms: list[str],
    access: Access,
    flt: Filters,
    top_k: int,
    min_score: float,
    stale_months: float,
    now: datetime,
    explain: bool,
) -> list[Hit]:
    """The top k by the fields score. Keyword points for every candidate first; exact scores
    (which need dates) only while a candidate's upper bound can still reach the top k."""
    candidates: list[tuple[float, str, RecordStore, tuple[Any, ...], Usage]] = []
    for store, row, count_last in field_rows(stores, terms, access, flt):
        _, rid, name, description, text, rtype = row[:6]
        keyword, matched = fields.keyword_points(terms, name, description, text) if terms else (0.0, {1: 1})
        if matched:
            bound = fields.upper_bound(terms, keyword, rtype, count_last[0])
            if bound >= min_score:
                candidates.append((bound, rid, store, row, count_last))
    candidates.sort(key=lambda entry: (-entry[0], entry[1]))
    scored: list[tuple[float, str, RecordStore, int, fields.Breakdown, Usage, str | None]] = []
    best: list[float] = []  # min-heap of the top k exact scores so far
    for bound, rid, store, row, (count, last) in candidates:
        if len(best) >= top_k and bound < best[0]:
            break
        doc, _, name, description, text, rtype, updated, mtime_ns, path = row
        breakdown = fields.score(
            terms,
            name,
            description,
            text,
            rtype,
            count,
            fields.last_touched(mtime_ns, updated, text),
            now,
            stale_months,
        )
        if breakdown is not None and breakdown.score >= min_score:
            scored.append((breakdown.score, rid, store, doc, breakdown, (count, last), path))
            heapq.heappush(best, breakdown.score)
            if len(best) > top_k:
                heapq.heappop(best)
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return _hits(stores, scored[:top_k], now, explain)


def _hits(
    stores: list[RecordStore],
    scored: list[tuple[float, str, RecordStore, int, Any, Usage, str | None]],
    now: datetime,
    explain: bool,
) -> list[Hit]:
    records = records_of(stores, [(store, doc) for _, _, store, doc, *_ in scored])
    hits = []
    for value, _, store, doc, breakdown, (count, last), path in scored:
        found = records.get((store.key, doc))
        if found is None:  # rewritten by another writer since it was scored
            continue
        record = found[0]
        hit = Hit(
            record=record,
            score=value,
            signal=freshness.signal(record.created, count, last, now),
            recall_count=count,
            last_recall=last,
            store=store.key,
            path=path,
        )
        if explain:
            hit.explain = {"engine": "fields", **breakdown.to_dict()}
        hits.append(hit)
    return hits
