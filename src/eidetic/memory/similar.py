"""Near-duplicates of the records a remember writes, found in each record's own scope.

A new record's near-duplicates are the active records of exactly its scope (same name, same
visibility: never another scope, so nothing outside what the writer may read is named) and
the records written before it in the same batch whose text is the same once normalised, or
whose vectors are as close as ``SIMILAR_COSINE`` with the same particulars (numbers, ids, dates,
names: both rules in ``ranking/similar.py``).

The stored ones are looked up for the whole batch at once, at its first question (under the
write's locks), with the scope admitted inside each store: one lookup of the batch's normalised
keys (stored with every record), and when the batch was embedded one comparison of its vectors
with the store's (``RecordStore.similar``: matrix products, or one statement of graph walks).
So a bulk load of thousands is checked as fully as a single record, without a search per
record (what it costs: docs/benchmarks.md, "Near-duplicates"). Within the batch, the pairs close in meaning are found
as ``consolidate`` finds them (``ranking.neighbours``); each record is compared with the earlier
ones written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import option_error
from ..ranking.access import Access
from ..ranking.similar import SIMILAR_COSINE, near_in_meaning
from ..records import Record, Scope
from ..stores.base import RecordStore

ON_SIMILAR = ("write", "skip", "supersede")
SHOWN = 3  # near-duplicates named per record, best first
POOL = 8  # stored candidates by meaning kept per record and store

Found = tuple[str, float, str]  # (id, score, rule: "text" or "meaning")


def checked(on_similar: Any) -> str:
    """``on_similar`` if it is one of :data:`ON_SIMILAR`; else an error naming the choices."""
    if on_similar not in ON_SIMILAR:
        raise option_error(
            "on_similar",
            f"must be one of {', '.join(ON_SIMILAR)} (got {on_similar!r})",
            "write (the default) writes a near-duplicate and reports it; skip leaves it out; "
            "supersede writes it in place of the record it is closest to",
            example="skip",
        )
    return str(on_similar)


class NearDuplicates:
    """Finds each new record's near-duplicates, as the batch is decided in order.

    ``batch``: the remember's records in order. ``vectors`` (text hash -> vector of ``model``)
    were computed before the locks were taken; empty: the text rule alone. ``written`` is told
    each record the batch writes, so a later record of the batch is compared with it too."""

    def __init__(
        self, stores: list[RecordStore], batch: list[Record], model: str = "", vectors: dict[str, Any] | None = None
    ) -> None:
        self.stores = stores
        self.model = model
        self.vectors = vectors or {}
        first: dict[str, Record] = {}
        for record in batch:
            first.setdefault(record.id, record)  # a later copy of an id is an update: never judged
        self._batch = list(first.values())
        self._place = {record.id: place for place, record in enumerate(self._batch)}
        self._stored: dict[str, list[Found]] | None = None  # id -> stored near-duplicates, at the first question
        self._earlier: dict[int, list[tuple[int, float]]] | None = None  # place -> earlier places close in meaning
        self._texts: dict[tuple[Scope, str], str] = {}  # (scope, normalised key) -> the first id written with it
        self._written: set[int] = set()  # places of the batch written so far

    def of(self, record: Record) -> list[dict[str, Any]]:
        """``record``'s near-duplicates, best first, at most :data:`SHOWN`: ``{"id", "score",
        "rule"}``; the score is the cosine (1.0 for identical text whose cosine is unknown)."""
        if self._stored is None:
            self._stored = self._look_up()
        best: dict[str, Found] = {}
        for found in (*self._in_batch(record), *self._stored.get(record.id, [])):
            if found[0] != record.id and found[0] not in best:  # the batch's copy is the newer one
                best[found[0]] = found
        ranked = sorted(best.values(), key=lambda found: (-found[1], found[0]))[:SHOWN]
        return [{"id": rid, "score": round(score, 3), "rule": rule} for rid, score, rule in ranked]

    def written(self, record: Record) -> None:
        self._texts.setdefault((record.scope, record.norm), record.id)
        self._written.add(self._place[record.id])

    def _in_batch(self, record: Record) -> Iterator[Found]:
        """The earlier records of the batch written: the first with the same normalised text,
        and those close in meaning (with their cosines, found first)."""
        if self._earlier is None:  # without vectors there are none (and NumPy stays unimported)
            self._earlier = self._pairs() if self.vectors else {}
        same = self._texts.get((record.scope, record.norm))
        for other, cosine in self._earlier.get(self._place[record.id], []):
            if other in self._written:
                rid = self._batch[other].id
                yield from _judged(rid, rid == same, cosine, record.text, self._batch[other].text)
        if same is not None:
            yield from _judged(same, True, None)  # without vectors (or found above, and kept)

    def _pairs(self) -> dict[int, list[tuple[int, float]]]:
        """Per place of the batch, the earlier places of its scope whose vectors are as close as
        the line (``ranking.neighbours``: matrix products, not a comparison per pair)."""
        import numpy as np

        from ..ranking.neighbours import similar_pairs

        earlier: dict[int, list[tuple[int, float]]] = {}
        for places in self._by_scope(vectors_only=True).values():
            matrix = np.stack([self.vectors[self._batch[place].hash] for place in places])
            for (first, later), cosine in similar_pairs(matrix, SIMILAR_COSINE).items():
                earlier.setdefault(places[later], []).append((places[first], cosine))
        return earlier

    def _by_scope(self, vectors_only: bool = False) -> dict[Scope, list[int]]:
        groups: dict[Scope, list[int]] = {}
        for place, record in enumerate(self._batch):
            if not vectors_only or record.hash in self.vectors:
                groups.setdefault(record.scope, []).append(place)
        return groups

    def _look_up(self) -> dict[str, list[Found]]:
        """Every batch record's stored near-duplicates: per store and scope, one lookup of the
        normalised keys and one comparison of the vectors, with the scope admitted in the store
        (its name; the visibility is checked here)."""
        found: dict[str, list[Found]] = {}
        for store in self.stores:
            for scope, places in self._by_scope().items():
                records = [self._batch[place] for place in places]
                for record, near in zip(records, self._in_store(store, scope, records)):
                    found.setdefault(record.id, []).extend(near)
        return found

    def _in_store(self, store: RecordStore, scope: Scope, records: list[Record]) -> Iterator[list[Found]]:
        """Each record's near-duplicates in one store, in order."""
        access = Access(scope, scope_only=True)
        same_text = store.by_normalised((record.norm for record in records), access)
        close = self._close(store, access, records)
        named = store.by_docs(sorted({doc for near in close for doc in near}))
        for record, near in zip(records, close):
            texts = {doc: rid for doc, rid, other in same_text.get(record.norm, []) if other == scope}
            found = [hit for doc, rid in texts.items() for hit in _judged(rid, True, near.get(doc))]
            for doc, cosine in near.items():
                item = named.get(doc)
                if doc not in texts and item is not None and item.record.scope == scope:
                    found += _judged(item.record.id, False, cosine, record.text, item.record.text)
            yield found

    def _close(self, store: RecordStore, access: Access, records: list[Record]) -> list[dict[int, float]]:
        """Per record, the docs of ``store`` close in meaning (none without a vector)."""
        import numpy as np

        embedded = [place for place, record in enumerate(records) if record.hash in self.vectors]
        close: list[dict[int, float]] = [{} for _ in records]
        if embedded:
            queries = np.stack([self.vectors[records[place].hash] for place in embedded]).astype(np.float32)
            for place, near in zip(embedded, store.similar(self.model, queries, access, SIMILAR_COSINE, POOL)):
                close[place] = near
        return close


def _judged(rid: str, same_text: bool, cosine: float | None, text: str = "", other: str = "") -> Iterator[Found]:
    """``rid`` as a near-duplicate, by its rule, if it is one (``text``/``other``: the two texts
    compared by meaning)."""
    if same_text:
        yield rid, 1.0 if cosine is None else cosine, "text"
    elif cosine is not None and near_in_meaning(cosine, text, other):
        yield rid, cosine, "meaning"
