"""What the ``files`` and ``sqlite`` backends share: a record database (``index.database``)
answers every lookup and, with :class:`~eidetic.index.searches.RecordSearches`, every search;
vectors live in memory-mapped per-partition indexes, and usage lives in the per-user usage
state keyed by the store. They differ in where records are kept and how the database follows
them (``stores.files.folder_index``, ``index.store_database``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..docsql.listing import Join, listing
from ..index.database import RecordDatabase
from ..index.searches import RecordSearches
from ..listing import Order
from ..ranking.access import Access
from ..ranking.bm25 import FieldCounts, KeywordStats
from ..ranking.filters import Filters
from ..ranking.windows import Member, Place
from ..records import Scope
from ..usage import UsageState
from .types import Admitted, FieldsRow, IndexedRecord, Listed, RankingFacts


class IndexedStore:
    """The shared half of :class:`~eidetic.stores.base.RecordStore` for SQLite-indexed stores."""

    backend = ""
    parallel_nearest = False  # both search in this process: nothing to gain, and SQLite is per thread

    def __init__(self, index: RecordDatabase, key: str, location: str, usage: UsageState) -> None:
        self.index = index
        self.search = RecordSearches(index)
        self.key = key
        self.location = location
        self._usage = usage

    def close(self) -> None:
        self.index.close()

    # -- lookups ---------------------------------------------------------------------------

    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]:
        return self.index.docs.by_ids(ids)

    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]:
        return self.index.docs.by_docs(docs)

    def ranking_facts(self, docs: Sequence[int]) -> dict[int, RankingFacts]:
        return self.index.docs.ranking_facts(docs)

    def texts(self, docs: Sequence[int]) -> dict[int, str]:
        return self.index.docs.texts(docs)

    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        return self.index.docs.ids_by_hash(hashes)

    def by_normalised(self, keys: Iterable[str], access: Access) -> dict[str, list[tuple[int, str, Scope]]]:
        return self.index.docs.by_normalised(keys, access)

    def all_records(self) -> list[IndexedRecord]:
        return self.index.docs.all_records()

    def count(self, access: Access | None = None) -> int:
        return self.index.docs.count(access)

    def admitted(self, access: Access) -> list[Admitted]:
        return self.index.docs.admitted(access)

    # -- search ----------------------------------------------------------------------------

    def keyword(
        self,
        terms: list[str],
        access: Access,
        filters: Filters,
        limit: int,
        offset: int = 0,
        stats: KeywordStats | None = None,
    ) -> list[tuple[int, float]]:
        return self.search.keyword(terms, access, filters, limit, offset, stats)

    def keyword_stats(self, terms: list[str], access: Access) -> KeywordStats:
        return self.search.keyword_stats(terms, access)

    def term_counts(self, terms: list[str], access: Access) -> tuple[int, dict[str, int]]:
        return self.search.term_counts(terms, access)

    def keyword_counts(self, docs: Sequence[int], terms: list[str], access: Access) -> dict[int, FieldCounts]:
        return self.index.text.counts_of(self.search.reach(access), list(docs), terms)

    def thread_places(self, docs: Sequence[int]) -> dict[int, Member]:
        return self.index.threads.places(docs)

    def thread_around(self, places: Sequence[Place], access: Access, span: int) -> list[Member]:
        return self.index.threads.around(places, access, span)

    def admit(self, docs: Sequence[int], access: Access, filters: Filters) -> set[int]:
        return self.search.admitted(list(docs), self.search.admission(access, filters))

    def first_page(self, top_k: int) -> int:
        return max(10 * top_k, 100)  # tantivy: a large first read saves later ones

    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        return self.search.exact(query, case_sensitive, access, filters, limit, offset)

    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        return self.search.fields_candidates(terms, access, filters)

    def listing(
        self,
        access: Access,
        filters: Filters,
        order: Order,
        limit: int | None,
        offset: int = 0,
        refers_to: str | None = None,
    ) -> tuple[list[Listed], int]:
        usage = self._usage_join() if order.sort == "recalled" else None
        admission = self.search.admission(access, filters)
        return listing(self.index, admission, order, limit, offset, usage, refers_to)

    def _usage_join(self) -> Join | None:
        """The per-user usage state attached to the record database, to sort by recall counts
        (None when nothing was ever recalled: a read never creates it)."""
        if not self._usage.path.is_file():
            return None
        conn = self.index.conn
        if "usage_state" not in {row[1] for row in conn.execute("PRAGMA database_list")}:
            conn.execute("ATTACH DATABASE ? AS usage_state", (str(self._usage.path),))
        return "LEFT JOIN usage_state.usage u ON u.store = ? AND u.id = d.id", [self.key]

    def reach(self, ids: Sequence[str], depth: int) -> dict[str, IndexedRecord] | None:
        return None  # lookups are local: recall's level-by-level walk costs nothing more

    # -- vectors ---------------------------------------------------------------------------

    def sync_vectors(
        self, model: str, access: Access | None, vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]
    ) -> None:
        keys = self.index.partition_keys() if access is None else self.search.reach(access)
        self.index.vectors.sync(model, keys, vectors_for)

    def nearest(self, model: str, query: Any, access: Access, filters: Filters, pool: int) -> dict[int, float]:
        """Each partition's index offers candidates best first, in growing pages; SQL admits
        them, until ``pool`` are admitted."""
        found: dict[int, float] = {}
        admission = self.search.admission(access, filters)
        for index in self.index.vectors.get(model, self.search.reach(access)):
            admitted: dict[int, float] = {}
            for page in index.ranked(query, pool):
                allowed = self.search.admitted([doc for doc, _ in page], admission)
                admitted.update((doc, score) for doc, score in page if doc in allowed)
                if len(admitted) >= pool:
                    break
            found.update(admitted)
        return dict(sorted(found.items(), key=lambda item: -item[1])[:pool])

    def similar(self, model: str, queries: Any, access: Access, threshold: float, pool: int) -> list[dict[int, float]]:
        """Each partition in reach compares every row with the batch at once (``VectorIndex.above``:
        exact matrix products), and SQL admits the docs that reach the line; a few queries
        against a partition big enough for a graph walk it once each (``nearest``)."""
        from ..ranking.neighbours import WALK_ROWS

        indexes = self.index.vectors.get(model, self.search.reach(access))
        if any(index.graphed and len(queries) * WALK_ROWS < index.rows for index in indexes):
            walked = (self.nearest(model, query, access, Filters(), pool) for query in queries)
            return [{doc: score for doc, score in near.items() if score >= threshold} for near in walked]
        found: list[dict[int, float]] = [{} for _ in range(len(queries))]
        admission = self.search.admission(access, Filters())
        for index in indexes:
            rows, docs, scores = index.above(queries, threshold)
            allowed = self.search.admitted(sorted(set(docs.tolist())), admission) if len(docs) else set()
            for row, doc, score in zip(rows.tolist(), docs.tolist(), scores.tolist()):
                if doc in allowed:
                    found[row][doc] = score
        return [dict(sorted(hits.items(), key=lambda item: -item[1])[:pool]) for hits in found]

    def cosines(self, model: str, query: Any, access: Access, docs: Sequence[int]) -> dict[int, float]:
        found: dict[int, float] = {}
        for index in self.index.vectors.get(model, self.search.reach(access)):
            found.update(index.cosines(query, [doc for doc in docs if doc not in found]))
        return found

    def vectors_of(self, model: str, access: Access, docs: Sequence[int]) -> Any:
        """Each doc's row, looked up in the sorted doc numbers of the partitions in reach."""
        import numpy as np

        wanted = np.asarray(docs, dtype=np.int64)
        indexes = [index for index in self.index.vectors.get(model, self.search.reach(access)) if index.rows]
        out = np.zeros((len(wanted), indexes[0].state()["dim"] if indexes else 0), dtype=np.float32)
        for index in indexes:
            known = index.docs()
            at = np.minimum(np.searchsorted(known, wanted), len(known) - 1)
            hit = (known[at] == wanted) & ~out.any(axis=1)
            if hit.any() and index.state()["dim"] == out.shape[1]:
                out[hit] = index.matrix()[at[hit]]
        return out

    # -- usage -----------------------------------------------------------------------------

    def usage(self, ids: Iterable[str]) -> dict[str, tuple[float, str | None]]:
        return self._usage.get(self.key, ids)

    def max_recall_count(self) -> float:
        return self._usage.max_count(self.key)

    def bump_usage(self, amounts: dict[str, float], when: str) -> None:
        self._usage.bump({(self.key, rid): amount for rid, amount in amounts.items()}, when)

    def set_usage(self, rid: str, recall_count: float, last_recall: str | None) -> None:
        self._usage.set(self.key, rid, recall_count, last_recall)

    def forget_usage(self, rid: str) -> None:
        self._usage.forget(self.key, rid)

    # -- maintenance -----------------------------------------------------------------------

    def status(self, verify: bool = True) -> dict[str, Any]:
        return dict(self.index.status(verify=verify), backend=self.backend)
