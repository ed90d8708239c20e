"""Near-duplicates of the records a remember writes, found in each record's own scope.

A new record's near-duplicates are the active records of exactly its scope (same name, same
visibility: never another scope, so nothing outside what the writer may read is named) and
the records written before it in the same batch whose text is the same once normalised, or
whose vectors are as close as ``SIMILAR_COSINE`` (both rules: ``ranking/similar.py``). Stored
candidates come from each store's own searches, with the scope admitted inside the store: the
nearest vectors when the batch was embedded (a text identical once normalised is among them:
its cosine was 0.95 or more in every case tried), else the records sharing the most words (a
text identical once normalised has all of them), and then only the text rule runs. The word
search costs a few milliseconds a record (docs/benchmarks.md, "Near-duplicates"), so a batch of
more than ``CHECKED_BATCH`` records (a bulk load) is only compared within itself, by identical
text, and says so; ``eidetic consolidate`` finds the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import option_error
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..ranking.similar import is_similar, normalised
from ..records import Record, Scope
from ..stores.base import RecordStore

ON_SIMILAR = ("write", "skip", "supersede")
# Records of one remember that are each compared with the stored records (a search per store
# each, ~10 ms): what a person or an agent remembers at once. A bigger batch is a bulk load,
# compared only within itself by identical text, so it keeps its speed (docs/benchmarks.md).
CHECKED_BATCH = 100
SHOWN = 3  # near-duplicates named per record, best first
POOL = 8  # candidates read per store by meaning
WORDED = 3  # by words: a text identical once normalised shares every word and its length, so ranks first
TERMS = 16  # words of a long text searched for: an identical text holds every one of them
NO_FILTERS = Filters()

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

    ``vectors`` (text hash -> vector of ``model``) were computed before the locks were taken;
    empty: the text rule alone. ``written`` is told each record the batch writes, so a later
    record of the batch is compared with it too."""

    def __init__(self, stores: list[RecordStore], model: str = "", vectors: dict[str, Any] | None = None) -> None:
        self.stores = stores
        self.model = model
        self.vectors = vectors or {}
        self._texts: dict[tuple[Scope, str], str] = {}  # (scope, normalised text) -> the first id with it
        self._batch: dict[Scope, list[tuple[str, Any]]] = {}  # scope -> (id, vector) of those with vectors
        self._normalised: dict[str, str] = {}  # text hash -> normalised text, made once per text

    def _norm(self, record: Record) -> str:
        found = self._normalised.get(record.hash)
        if found is None:
            found = self._normalised[record.hash] = normalised(record.text)
        return found

    def of(self, record: Record) -> list[dict[str, Any]]:
        """``record``'s near-duplicates, best first, at most :data:`SHOWN`: ``{"id", "score",
        "rule"}``; the score is the cosine (1.0 for identical text when there are no vectors)."""
        best: dict[str, Found] = {}
        for found in (*self._in_batch(record), *self._stored(record)):
            if found[0] != record.id and found[0] not in best:  # the batch's copy is the newer one
                best[found[0]] = found
        ranked = sorted(best.values(), key=lambda found: (-found[1], found[0]))[:SHOWN]
        return [{"id": rid, "score": round(score, 3), "rule": rule} for rid, score, rule in ranked]

    def written(self, record: Record) -> None:
        self._texts.setdefault((record.scope, self._norm(record)), record.id)
        vector = self.vectors.get(record.hash)
        if vector is not None:
            self._batch.setdefault(record.scope, []).append((record.id, vector))

    def _in_batch(self, record: Record) -> Iterator[Found]:
        """The earlier records of the batch: the one with the same normalised text (a lookup),
        and by meaning those with vectors (a batch has vectors only when it is small)."""
        vector = self.vectors.get(record.hash)
        same = self._texts.get((record.scope, self._norm(record)))
        for rid, other in self._batch.get(record.scope, []) if vector is not None else []:
            yield from _judged(rid, rid == same, float(vector @ other))
        if same is not None:
            yield from _judged(same, True, None)  # without vectors (or found above, and kept)

    def _stored(self, record: Record) -> Iterator[Found]:
        from ..index.analyzer import query_terms

        if not self.stores:  # a bulk load: the batch alone
            return
        access = Access(record.scope, scope_only=True)  # its name; the visibility is checked below
        vector = self.vectors.get(record.hash)
        terms = query_terms(record.text)[:TERMS] if vector is None else []
        mine = self._norm(record)
        for store in self.stores:
            cosines = store.nearest(self.model, vector, access, NO_FILTERS, POOL) if vector is not None else {}
            worded = [doc for doc, _ in store.keyword(terms, access, NO_FILTERS, WORDED)] if terms else []
            for doc, item in store.by_docs([*cosines, *worded]).items():
                other = item.record
                if other.scope == record.scope and other.lifecycle == "active":
                    same = _near_length(other.text, record.text) and normalised(other.text) == mine
                    yield from _judged(other.id, same, cosines.get(doc))


def _near_length(text: str, other: str) -> bool:
    """Whether two texts' lengths allow them to be the same once normalised, short of one being
    mostly punctuation and spaces: normalising a long candidate costs more than the search."""
    return len(text) <= 2 * len(other) + 16 and len(other) <= 2 * len(text) + 16


def _judged(rid: str, same_text: bool, cosine: float | None) -> Iterator[Found]:
    if same_text:
        yield rid, 1.0 if cosine is None else cosine, "text"
    elif cosine is not None and is_similar(cosine):
        yield rid, cosine, "meaning"
