"""A question that is only a time ("last week?", "yesterday"): with the time words taken out
nothing is left to search, so the answer is the records *recorded* in that window, freshest
first, as any recall ranks records of equal relevance: every candidate's raw score is 1 and
freshness (age and use, ``ranking.freshness``) orders them. Scope, lifecycle, filters and
``--as-of`` apply as usual; the newest records of the window are the candidates, as many as a
hybrid recall would weigh, so a year's window costs no more than a day's."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from ..listing import Order
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..results import Hit
from ..stores.base import RecordStore
from ..timewords import TimeWindow
from .ranked import rank

FORMULA = "raw 1 per record recorded in the window (nothing else to search), blended by freshness"


def window_hits(
    stores: list[RecordStore],
    access: Access,
    filters: Filters,
    window: TimeWindow,
    top_k: int,
    min_score: float | None,
    now: datetime,
    explain: bool,
) -> list[Hit]:
    """The top ``top_k`` records created inside ``window`` (and inside ``filters``' dates)."""
    last = window.end - timedelta(microseconds=1)
    since, until = window.start.timestamp(), last.timestamp()
    inside = replace(
        filters,
        since=since if filters.since is None else max(since, filters.since),
        until=until if filters.until is None else min(until, filters.until),
    )
    pool = max(10 * top_k, 100)

    def newest(store: RecordStore) -> list[tuple[int, float]]:
        rows, _ = store.listing(access, inside, Order("created"), pool)
        return [(doc, 1.0) for doc, _, _ in rows]

    hits = [hit for hit, _, _ in rank(stores, newest, access, top_k, min_score, now)]
    for hit in hits if explain else []:
        hit.explain = {"engine": "window", "window": window.phrase, "signal": hit.signal, "formula": FORMULA}
    return hits
