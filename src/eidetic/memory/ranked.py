"""The top k over every store after the freshness blend: each store offers its candidates best
raw score first, only as far as the blend needs (``ranking.topk``), store precedence applied,
and the full records attached to the winners only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..ranking import freshness, when
from ..ranking.access import Access
from ..ranking.topk import top_k_blended
from ..records import Record
from ..results import Hit
from ..stores.base import RecordStore
from ..timewords import TimeWindow
from .stores import hidden, records_of

Candidates = Callable[[RecordStore], Any]  # a list of (doc, raw), or a fetch(limit, offset) pager


@dataclass(frozen=True)
class Timing:
    """The time a query names (``ranking.when``): records of that time score higher, or
    (``strict``) are the only ones kept."""

    window: TimeWindow
    strict: bool = False


def rank(
    stores: list[RecordStore],
    source: Candidates,
    access: Access,
    top_k: int,
    min_score: float | None,
    now: datetime,
    timing: Timing | None = None,
) -> list[tuple[Hit, float, int]]:
    """The top k (hit, raw score, doc) over ``stores``. An id found in an earlier store (in a
    copy ``access`` may see) hides later copies."""
    ranked: list[tuple[RecordStore, int, Hit, float]] = []  # store, doc, hit (no record yet), raw
    for position, store in enumerate(stores):
        found = source(store)
        if callable(found):
            fetch, page = found, store.first_page(top_k)
        else:
            fetch, page = (lambda limit, offset, rows=found: rows[offset : offset + limit]), max(3 * top_k, 30)
        blend = _blender(store, stores[:position], access, now, timing)
        usage_bound = store.max_recall_count() if access.as_of is None else 0.0  # as of a moment: age alone
        factor = freshness.max_blend_factor(usage_bound) * (1.0 + when.TIME_BOOST if timing else 1.0)
        for (doc, hit), raw, _ in top_k_blended(
            fetch, blend, top_k, min_score, page=page, max_factor=factor, tiebreak=_hit_id
        ):
            ranked.append((store, doc, hit, raw))
    ranked.sort(key=lambda entry: (-entry[2].score, -entry[3], entry[2].record.id))
    return _with_records(stores, ranked, top_k)


def _hit_id(item: tuple[int, Hit]) -> str:
    """Equal scores go by id: the same order on every backend and in every layout of stores."""
    return item[1].record.id


def _blender(
    store: RecordStore, earlier: list[RecordStore], access: Access, now: datetime, timing: Timing | None
) -> Callable[[list[tuple[int, float]]], list[tuple[tuple[int, Hit], float, float]]]:
    """Raw (doc, score) rows of ``store`` -> ((doc, hit), raw, blended score), hidden ids left
    out, and with ``timing``, those outside its window scaled down relative to those in it
    (or, strict, left out)."""

    def blend(rows: list[tuple[int, float]]) -> list[tuple[tuple[int, Hit], float, float]]:
        facts = store.ranking_facts([doc for doc, _ in rows])
        ids = [fact.id for fact in facts.values()]
        shadowed = hidden(earlier, ids, access)
        usage = store.usage(ids)
        out = []
        for doc, raw in rows:
            if doc not in facts or facts[doc].id in shadowed:
                continue
            fact = facts[doc]
            hit = make_hit(fact.id, fact.created, raw, usage.get(fact.id), now, store.key, judged=access.as_of is None)
            if timing is not None:
                hit.time_factor = when.factor(timing.window, fact)
                if timing.strict and hit.time_factor == 1.0:
                    continue
                hit.score *= hit.time_factor
            out.append(((doc, hit), raw, hit.score))
        return out

    return blend


def _with_records(
    stores: list[RecordStore], ranked: list[tuple[RecordStore, int, Hit, float]], top_k: int
) -> list[tuple[Hit, float, int]]:
    """The first ``top_k`` whose records still exist, records attached: a record rewritten by
    another writer since it was ranked (it has a new doc) drops out and the next one moves up."""
    out: list[tuple[Hit, float, int]] = []
    while ranked and len(out) < top_k:
        batch, ranked = ranked[: top_k - len(out)], ranked[top_k - len(out) :]
        records = records_of(stores, [(store, doc) for store, doc, _, _ in batch])
        for store, doc, hit, raw in batch:
            if (store.key, doc) in records:
                hit.record, hit.path = records[store.key, doc]
                out.append((hit, raw, doc))
    return out


def make_hit(
    rid: str,
    created: str | None,
    raw: float,
    usage: tuple[float, str | None] | None,
    now: datetime,
    store: str,
    judged: bool = True,
) -> Hit:
    """A hit with its blended score; the full record is attached once it makes the top k.
    ``judged``: whether its usage moves its freshness (not as of a past moment: usage has no
    dates, so the signal is then the record's age alone)."""
    count, last = usage if usage else (0.0, None)
    seen = (count, last) if judged else (0.0, None)
    sig = freshness.signal(created, *seen, now)
    score = raw if freshness.is_neutral(created, *seen) else freshness.blend(raw, sig)
    return Hit(
        record=Record(id=rid, text=""), score=score, signal=sig, recall_count=count, last_recall=last, store=store
    )
