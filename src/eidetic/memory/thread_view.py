"""A record in its conversation: the thread members just before and after it that the caller
may read, for the viewer's record page. It reads what recall's conversation context reads
(``RecordStore.thread_around``, over every store and only the partitions in reach, live members
only: ``ranking.threads``), so a neighbour another scope may not see never appears. Not a recall."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ranking.access import Access
from ..ranking.threads import THREAD_KEYS, order_key, thread_of
from ..ranking.windows import threads
from ..records import Record
from ..stores.base import RecordStore
from ..timeutil import to_epoch
from .stores import records_of


@dataclass(frozen=True)
class ThreadView:
    """Where a record sits in its thread: the thread's name, the metadata key that names it,
    and the readable live members just before and after it, in thread order."""

    name: str
    key: str
    before: list[Record] = field(default_factory=list)
    after: list[Record] = field(default_factory=list)


def thread_view(stores: list[RecordStore], record: Record, access: Access, span: int) -> ThreadView | None:
    """``record``'s neighbours in its thread (``stores``: synced, in precedence order), or None
    when its metadata names no thread. The record may be archived or shadowed: its place is
    computed from its own fields, as the index computes a member's."""
    name = thread_of(record.metadata)
    if name is None:
        return None
    key = next(k for k in THREAD_KEYS if k in record.metadata and str(record.metadata[k]) == name)
    place = (order_key(to_epoch(record.created), record.id), record.id)
    found = [(i, store.thread_around([(name, *place)], access, span)) for i, store in enumerate(stores)]
    members = [member for member in threads(found).get(name, []) if member[1] != record.id]
    before = [located for order, rid, located in members if (order, rid) < place][-span:]
    after = [located for order, rid, located in members if (order, rid) > place][:span]
    shown = records_of(stores, [(stores[i], doc) for i, doc in before + after])
    by_place = {(i, doc): shown.get((stores[i].key, doc)) for i, doc in before + after}

    def kept(places: list[tuple[int, int]]) -> list[Record]:
        return [entry[0] for entry in (by_place[p] for p in places) if entry is not None]

    return ThreadView(name, key, kept(before), kept(after))
