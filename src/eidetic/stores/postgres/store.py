"""``PostgresStore``: the :class:`~eidetic.stores.base.RecordStore` of the postgres backend.

Each entry point runs under the session's guard (``connection.guarded``), checks that the schema
exists (reads never create it), and either asks its own short question of ``eidetic_docs`` or
``eidetic_usage`` or hands the work to the part that does it: ``writes``, ``keyword``,
``vectors``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...docsql.listing import Join, listing
from ...docsql.lookups import Lookups
from ...docsql.threads import Threads
from ...listing import Order
from ...ranking.access import Access
from ...ranking.bm25 import FieldCounts, KeywordStats
from ...ranking.filters import Filters
from ...ranking.windows import Member, Place
from ...records import Record, Scope
from ..types import Admitted, FieldsRow, IndexedRecord, Listed, RankingFacts
from .connection import Session, guarded
from .exact import PostgresSearches
from .keyword import KeywordSearch
from .postings import KeywordIndex
from .schema import Schema
from .scope import Partitions
from .vectors import Vectors

if TYPE_CHECKING:
    from ...progress import Progress
    from ...settings import Settings
    from ...usage import UsageState
from .writes import Writer


class PostgresStore:
    """A :class:`~eidetic.stores.base.RecordStore` kept in a PostgreSQL database."""

    backend = "postgres"
    parallel_nearest = True  # nearest() has a session of its own (``Session.reader``)

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._session = Session(dsn)
        self.target = self._session.target
        self.key = str(self.target)
        self.location = self.key
        self._schema = Schema(self._session)
        partitions = Partitions(self._session)
        self._writer = Writer(self._session, partitions, KeywordIndex(self._session))
        self._keyword = KeywordSearch(self._session, partitions)
        self._vectors = Vectors(self._session, partitions)
        self._docs = Lookups(self._session)
        self._searches = PostgresSearches(self._session)
        self._threads = Threads(self._session)

    @property
    def conn(self) -> Any:
        """The main server session (opened on first use, again after a loss)."""
        return self._session.conn

    @guarded
    def exists(self) -> bool:
        return self._schema.version() is not None

    def sync(self, full: bool = False) -> None:
        """Nothing to catch up with: every change goes through the server."""

    def broken(self) -> list[tuple[str, str]]:
        return []  # rows are written whole by transactions

    def close(self) -> None:
        self._session.drop()

    def file_of(self, item: IndexedRecord) -> str | None:
        return None

    # -- writes ------------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """A session advisory lock: one writer of this store at a time across processes and
        machines; nested use by the same store is a no-op, and a lost connection releases it."""
        with self._session.writer_lock(first=lambda: self._schema.ensure(create=True)):
            yield

    def current(self, item: IndexedRecord) -> Record:
        found = self.by_ids([item.record.id]).get(item.record.id)
        return found.record if found is not None else item.record

    @guarded
    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> dict[str, str | None]:
        """Upsert in one transaction (``Writer.write``); the last copy of an id wins."""
        records = list({record.id: record for _, record in items}.values())
        if not records:
            return {}
        self._schema.ensure(create=True)
        self._writer.write(records)
        return dict.fromkeys((record.id for record in records), None)

    @guarded
    def delete(self, item: IndexedRecord) -> None:
        """Hard delete (``forget --purge``): the row, its postings, its usage, and its vectors
        unless another record has the same text."""
        if self._ready():
            self._writer.delete(item.record.id)

    # -- lookups (``docsql.lookups``; none when the schema does not exist: reads never create it) --

    def _ready(self) -> bool:
        """Whether the schema exists (upgraded if older); reads never create it."""
        return self._schema.ensure(create=False)

    @guarded
    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]:
        return self._docs.by_ids(ids) if self._ready() else {}

    @guarded
    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]:
        return self._docs.by_docs(docs) if self._ready() else {}

    @guarded
    def ranking_facts(self, docs: Sequence[int]) -> dict[int, RankingFacts]:
        return self._docs.ranking_facts(docs) if self._ready() else {}

    @guarded
    def texts(self, docs: Sequence[int]) -> dict[int, str]:
        return self._docs.texts(docs) if self._ready() else {}

    @guarded
    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        return self._docs.ids_by_hash(hashes) if self._ready() else {}

    @guarded
    def by_normalised(self, keys: Iterable[str], access: Access) -> dict[str, list[tuple[int, str, Scope]]]:
        return self._docs.by_normalised(keys, access) if self._ready() else {}

    @guarded
    def all_records(self) -> list[IndexedRecord]:
        return self._docs.all_records() if self._ready() else []

    @guarded
    def count(self, access: Access | None = None) -> int:
        return self._docs.count(access) if self._ready() else 0

    @guarded
    def admitted(self, access: Access) -> list[Admitted]:
        return self._docs.admitted(access) if self._ready() else []

    # -- search ------------------------------------------------------------------------------

    @guarded
    def listing(
        self,
        access: Access,
        filters: Filters,
        order: Order,
        limit: int | None,
        offset: int = 0,
        refers_to: str | None = None,
    ) -> tuple[list[Listed], int]:
        if not self._schema.ensure(create=False):
            return [], 0
        usage: Join = ("LEFT JOIN eidetic_usage u ON u.id = d.id", [])
        return listing(self._session, self._searches.admission(access, filters), order, limit, offset, usage, refers_to)

    def first_page(self, top_k: int) -> int:
        """Small: the exact BM25 below scores more candidates the deeper a page reaches."""
        return max(5 * top_k, 50)

    @guarded
    def keyword(
        self,
        terms: list[str],
        access: Access,
        filters: Filters,
        limit: int,
        offset: int = 0,
        stats: KeywordStats | None = None,
    ) -> list[tuple[int, float]]:
        """(doc, BM25 under ``stats``) best first, exactly as exhaustive BM25 ranks them (ties
        aside): the threshold algorithm over impact-ordered postings (``keyword.py``)."""
        if not terms or limit < 1 or not self._ready():
            return []
        return self._keyword.search(terms, access, filters, limit, offset, stats)

    @guarded
    def keyword_stats(self, terms: list[str], access: Access) -> KeywordStats:
        """From the partitions' and terms' statistics the keyword search reads (no scan)."""
        return self._keyword.stats(terms, access) if self._ready() else KeywordStats()

    @guarded
    def term_counts(self, terms: list[str], access: Access) -> tuple[int, dict[str, int]]:
        """From the partitions' and terms' statistics the keyword search reads (no scan)."""
        return self._keyword.term_counts(terms, access) if self._ready() else (0, dict.fromkeys(terms, 0))

    @guarded
    def keyword_counts(self, docs: Sequence[int], terms: list[str], access: Access) -> dict[int, FieldCounts]:
        return self._keyword.counts_of(list(docs), terms, access) if self._ready() and docs else {}

    @guarded
    def thread_places(self, docs: Sequence[int]) -> dict[int, Member]:
        if not self._ready():
            return {}
        return self._threads.places(docs)

    @guarded
    def thread_around(self, places: Sequence[Place], access: Access, span: int) -> list[Member]:
        if not self._ready():
            return []
        return self._threads.around(places, access, span)

    @guarded
    def admit(self, docs: Sequence[int], access: Access, filters: Filters) -> set[int]:
        if not self._ready() or not docs:
            return set()
        return self._searches.admitted(list(docs), self._searches.admission(access, filters))

    @guarded
    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) of texts containing ``query``, shortest first
        (then by id): a walk of the texts by length when matches are common, else the trigram
        filter eidetic keeps in core PostgreSQL (``exact``, ``trigrams``; no pg_trgm needed)."""
        if not self._ready():
            return []
        return self._searches.exact(query, case_sensitive, access, filters, limit, offset)

    @guarded
    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        """Records with any term as a lower-cased substring of name (hyphens and underscores
        read as spaces), description or text; every admitted record when ``terms`` is empty.
        Last touched: the record's last write (no file, no mtime), as in the sqlite backend."""
        return self._searches.fields_candidates(terms, access, filters) if self._ready() else []

    def reach(self, ids: Sequence[str], depth: int) -> dict[str, IndexedRecord] | None:
        return None  # recall resolves each level with one by_ids query

    # -- vectors -----------------------------------------------------------------------------

    @guarded
    def sync_vectors(
        self, model: str, access: Access | None, vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]
    ) -> None:
        """Store the vectors of ``model`` that the records in reach lack (``Vectors.sync``)."""
        if self._ready():
            self._vectors.sync(model, access, vectors_for)

    @guarded
    def nearest(self, model: str, query: Any, access: Access, filters: Filters, pool: int) -> dict[int, float]:
        """The ``pool`` admitted docs nearest to ``query`` by cosine (``Vectors.nearest``)."""
        if not self._ready():
            return {}
        return self._vectors.nearest(model, query, access, filters, pool)

    @guarded
    def similar(self, model: str, queries: Any, access: Access, threshold: float, pool: int) -> list[dict[int, float]]:
        """Near-duplicates by meaning of a whole batch (``Vectors.similar``)."""
        if not self._ready():
            return [{} for _ in range(len(queries))]
        return self._vectors.similar(model, queries, access, threshold, pool, self._docs.count(access))

    @guarded
    def cosines(self, model: str, query: Any, access: Access, docs: Sequence[int]) -> dict[int, float]:
        """Exact cosines of these docs' vectors, for docs in the caller's reach."""
        if not docs or not self._ready():
            return {}
        return self._vectors.cosines(model, query, access, docs)

    @guarded
    def vectors_of(self, model: str, access: Access, docs: Sequence[int]) -> Any:
        """These docs' vectors, zeros where none (``Vectors.of_docs``)."""
        if not self._ready():
            import numpy as np

            return np.zeros((len(docs), 0), dtype=np.float32)
        return self._vectors.of_docs(model, access, docs)

    # -- usage -------------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read of ``eidetic_usage`` or the vectors, none without a schema."""
        if not self._ready():
            return []
        return self._session.conn.execute(sql, params).fetchall()

    @guarded
    def usage(self, ids: Iterable[str]) -> dict[str, tuple[float, str | None]]:
        rows = self._rows(
            "SELECT id, recall_count, last_recall FROM eidetic_usage WHERE id = ANY(%s)", (list(set(ids)),)
        )
        return {rid: (count, last) for rid, count, last in rows}

    @guarded
    def max_recall_count(self) -> float:
        rows = self._rows("SELECT coalesce(max(recall_count), 0) FROM eidetic_usage")
        return float(rows[0][0]) if rows else 0.0

    @guarded
    def bump_usage(self, amounts: dict[str, float], when: str) -> None:
        """One upsert adding to the stored counts: concurrent recalls lose no increment. Ids go
        in sorted order so two bumps of overlapping ids cannot deadlock."""
        if not amounts:
            return
        self._schema.ensure(create=True)
        ids = sorted(amounts)
        self._session.conn.execute(
            """INSERT INTO eidetic_usage(id, recall_count, last_recall)
               SELECT id, n, %s FROM unnest(%s::text[], %s::float8[]) AS t(id, n)
               ON CONFLICT (id) DO UPDATE SET recall_count = eidetic_usage.recall_count + excluded.recall_count,
                   last_recall = greatest(coalesce(eidetic_usage.last_recall, '') COLLATE "C",
                                          excluded.last_recall COLLATE "C")""",
            (when, ids, [float(amounts[i]) for i in ids]),
        )

    @guarded
    def set_usage(self, rid: str, recall_count: float, last_recall: str | None) -> None:
        self._schema.ensure(create=True)
        self._session.conn.execute(
            "INSERT INTO eidetic_usage VALUES(%s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
            "recall_count = excluded.recall_count, last_recall = excluded.last_recall",
            (rid, float(recall_count), last_recall),
        )

    @guarded
    def forget_usage(self, rid: str) -> None:
        if self._ready():
            self._session.conn.execute("DELETE FROM eidetic_usage WHERE id = %s", (rid,))

    # -- maintenance -------------------------------------------------------------------------

    @guarded
    def status(self, verify: bool = True) -> dict[str, Any]:
        vectors = []
        for model, part_key, rows, graph in self._rows(
            """SELECT m.model, p.key, count(d.doc), m.graph FROM eidetic_vector_models m
                   CROSS JOIN eidetic_partitions p
                   JOIN eidetic_docs d ON d.part = p.part
                   JOIN eidetic_embeddings e ON e.model = m.model AND e.hash = d.hash
                   GROUP BY m.model, p.key, m.graph ORDER BY m.model, p.key"""
        ):
            vectors.append({"model": model, "partition": part_key, "rows": rows, "graph_rows": rows if graph else 0})
        return {
            "store": self.location,
            "backend": self.backend,
            "index": self.location,
            "records": self.count(),
            "current": True,
            "unparseable": [],
            "conflicts": [],
            "vectors": vectors,
        }

    @guarded
    def rebuild(self) -> dict[str, Any]:
        """Recompute every keyword entry and statistic from the rows (``Writer.reindex``);
        records, vectors and usage are left as they are."""
        if self._ready():
            self._writer.reindex()
        return {"store": self.location, "index": self.location, "records": self.count(), "unparseable": 0}


def open_store(dsn: str | Path, usage: UsageState, settings: Settings, progress: Progress) -> PostgresStore:
    """The postgres store at ``dsn``; usage and settings live in the server, not here
    (``stores.backends`` opens every backend so)."""
    return PostgresStore(str(dsn))
