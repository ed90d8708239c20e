"""Browsing: a listing of records (``eidetic list``) and one record with its connections
(``eidetic show``). Neither counts as a recall: they show what is stored, not what a reader
needed (``ranking.reinforce``).

Each store lists its page in SQL (``RecordStore.listing``); several stores (the files backend's
home and repository folders) are merged by their sort keys, an id in an earlier store hiding
later copies among the copies the caller may see, as everywhere (``stores``).
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from itertools import islice
from typing import Any

from ..listing import ListQuery, Order
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..records import Record
from ..results import ListedRecord, ListResult, RecordView
from ..stores.base import Listed, RecordStore
from ..timeutil import format_ts
from .curation import Curation
from .stores import StoreSet, hidden, records_of

Page = list[tuple[RecordStore, Listed]]


def merged(
    stores: list[RecordStore],
    access: Access,
    filters: Filters,
    order: Order,
    limit: int | None,
    offset: int = 0,
    refers_to: str | None = None,
) -> tuple[Page, int]:
    """One page over every store in ``order``, and how many records match in all. A later
    store lists every match (its copies hidden by earlier stores are taken off the count)."""
    if len(stores) == 1:
        rows, total = stores[0].listing(access, filters, order, limit, offset, refers_to)
        return [(stores[0], row) for row in rows], total
    want = None if limit is None else offset + limit
    runs: list[Page] = []
    total = 0
    for position, store in enumerate(stores):
        rows, count = store.listing(access, filters, order, want if position == 0 else None, 0, refers_to)
        if position:
            shadowed = hidden(stores[:position], [rid for _, rid, _ in rows], access)
            rows = [row for row in rows if row[1] not in shadowed]
            count = len(rows)
        total += count
        runs.append([(store, row) for row in rows])
    page = heapq.merge(*runs, key=lambda entry: entry[1][2], reverse=order.descending)
    return list(islice(page, offset, want)), total


class Browse:
    """Listings and record views over a :class:`StoreSet`."""

    def __init__(self, stores: StoreSet, curation: Curation) -> None:
        self.stores = stores
        self.curation = curation

    def listing(self, query: ListQuery) -> ListResult:
        access, filters = query.access(), query.filter_set()
        stores = self.stores.synced()
        page, total = merged(stores, access, filters, query.order(), query.limit, query.offset)
        result = ListResult(self._entries(stores, page, access), total)
        if access.as_of is not None:
            result.as_of = format_ts(access.as_of)
        if not total:
            result.hidden = self._hidden(stores, access, filters)
        return result

    def _hidden(self, stores: list[RecordStore], access: Access, filters: Filters) -> dict[str, int]:
        """How many archived and shadowed records would match (of those the caller may see)."""
        counts = {}
        for state, wider in (
            ("archived", replace(access, include_archived=True)),
            ("shadowed", replace(access, include_shadowed=True)),
        ):
            if state not in access.lifecycles():
                _, count = merged(stores, wider, filters, Order(), 0)
                if count:
                    counts[state] = count
        return counts

    def _entries(self, stores: list[RecordStore], page: Page, access: Access | None = None) -> list[ListedRecord]:
        """The page's records with their usage and files, as ``access`` sees them (as they stood
        then, under ``as_of``); a record rewritten since it was listed (a new doc) is left out."""
        records = records_of(stores, [(store, doc) for store, (doc, _, _) in page])
        usage: dict[str, dict[str, tuple[float, str | None]]] = {}
        for store in {store.key: store for store, _ in page}.values():
            usage[store.key] = store.usage(rid for owner, (_, rid, _) in page if owner is store)
        entries = []
        for store, (doc, rid, _) in page:
            if (store.key, doc) in records:
                record, path = records[store.key, doc]
                count, last = usage[store.key].get(rid, (0.0, None))
                shown = access.view(record) if access is not None else record
                entries.append(ListedRecord(shown, count, last, store.key, path))
        return entries

    def show(self, rid: str, access: Access) -> RecordView:
        """One record the caller may see (any lifecycle; a missing and an out-of-reach id give
        the same error), its usage, where it lives and its connections both ways."""
        store, item = self.curation.visible(rid, access)
        everything = replace(access, include_shadowed=True, include_archived=True)
        count, last = store.usage([rid]).get(rid, (0.0, None))
        entry = ListedRecord(item.record, count, last, store.key, store.file_of(item))
        stores = self.stores.synced()
        page, _ = merged(stores, everything, Filters(), Order("name", False), None, refers_to=rid)
        referrers = [entry.record for entry in self._entries(stores, page)]
        record = item.record
        targets = self.stores.locate([*record.links, *filter(None, [record.supersedes])], False, everything)
        out = {tid: found.record for tid, (_, found) in targets.items()}
        return RecordView(
            entry,
            store.backend,
            store.location,
            links_out=[_ref(link, out.get(link)) for link in record.links],
            links_in=[_ref(r.id, r) for r in referrers if rid in r.links],
            supersedes=_ref(record.supersedes, out.get(record.supersedes)) if record.supersedes else None,
            superseded_by=[_ref(r.id, r) for r in referrers if r.supersedes == rid],
        )


def _ref(rid: str, record: Record | None) -> dict[str, Any]:
    """A connection as ``show`` gives it: found or not (a record out of reach is not found)."""
    if record is None:
        return {"id": rid, "found": False}
    return {"id": rid, "found": True, "type": record.type, "name": record.name, "lifecycle": record.lifecycle}
