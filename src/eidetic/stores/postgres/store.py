"""``PostgresStore``: the :class:`~eidetic.stores.base.RecordStore` of the postgres backend.

Each entry point runs under the session's guard (``connection.guarded``), checks that the schema
exists (reads never create it), and either asks its own short question of ``eidetic_docs`` or
``eidetic_usage`` or hands the work to the part that does it: ``writes``, ``keyword``,
``vectors``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...listing import Order
from ...ranking.access import Access
from ...ranking.filters import Filters
from ...records import Record, Scope
from ..base import FieldsRow, IndexedRecord
from ..listing_sql import Listed
from . import listing
from .connection import Session, guarded
from .keyword import KeywordSearch
from .postings import KeywordIndex
from .schema import Schema
from .scope import Partitions, pg, where
from .vectors import Vectors
from .writes import Writer

EXACT_PAGE = 200  # rows per page when metadata facets are checked in Python

_DOC_COLUMNS = (
    "d.doc, d.id, d.scope, d.visibility, d.lifecycle, d.type, d.name, d.description, d.text, "
    "d.created, d.updated, d.added_by, d.supersedes, d.links, d.metadata"
)


def _record(row: Sequence[Any]) -> IndexedRecord:
    """An ``eidetic_docs`` row read as ``_DOC_COLUMNS``."""
    (
        doc,
        rid,
        scope,
        visibility,
        lifecycle,
        rtype,
        name,
        description,
        text,
        created,
        updated,
        added_by,
        supersedes,
        links,
        metadata,
    ) = row
    record = Record(
        id=rid,
        text=text,
        type=rtype,
        name=name,
        description=description,
        metadata=metadata,
        scope=Scope(scope, visibility),
        created=created,
        updated=updated,
        added_by=added_by,
        supersedes=supersedes,
        links=list(links),
        lifecycle=lifecycle,
    )
    return IndexedRecord(doc, None, record)


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
    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> None:
        """Upsert in one transaction (``Writer.write``); the last copy of an id wins."""
        records = list({record.id: record for _, record in items}.values())
        if not records:
            return
        self._schema.ensure(create=True)
        self._writer.write(records)

    @guarded
    def delete(self, item: IndexedRecord) -> None:
        """Hard delete (``forget --purge``): the row, its postings, its usage, and its vectors
        unless another record has the same text."""
        if self._schema.ensure(create=False):
            self._writer.delete(item.record.id)

    # -- lookups -----------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read, or none when the schema does not exist yet (reads never create it)."""
        if not self._schema.ensure(create=False):
            return []
        return self._session.conn.execute(sql, params).fetchall()

    @guarded
    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]:
        rows = self._rows(f"SELECT {_DOC_COLUMNS} FROM eidetic_docs d WHERE d.id = ANY(%s)", (list(set(ids)),))
        return {item.record.id: item for item in map(_record, rows)}

    @guarded
    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]:
        rows = self._rows(f"SELECT {_DOC_COLUMNS} FROM eidetic_docs d WHERE d.doc = ANY(%s)", (list(docs),))
        return {item.doc: item for item in map(_record, rows)}

    @guarded
    def ranking_facts(self, docs: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        rows = self._rows("SELECT doc, id, created FROM eidetic_docs WHERE doc = ANY(%s)", (list(docs),))
        return {doc: (rid, created) for doc, rid, created in rows}

    @guarded
    def texts(self, docs: Sequence[int]) -> dict[int, str]:
        return dict(self._rows("SELECT doc, text FROM eidetic_docs WHERE doc = ANY(%s)", (list(docs),)))

    @guarded
    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        result: dict[str, list[tuple[str, Scope]]] = {}
        for h, rid, scope, visibility in self._rows(
            "SELECT hash, id, scope, visibility FROM eidetic_docs WHERE hash = ANY(%s)", (list(set(hashes)),)
        ):
            result.setdefault(h, []).append((rid, Scope(scope, visibility)))
        return result

    @guarded
    def all_records(self) -> list[IndexedRecord]:
        return [
            _record(row) for row in self._rows(f'SELECT {_DOC_COLUMNS} FROM eidetic_docs d ORDER BY d.id COLLATE "C"')
        ]

    @guarded
    def count(self, access: Access | None = None) -> int:
        if access is None:
            rows = self._rows("SELECT count(*) FROM eidetic_docs")
        else:
            condition, params = access.sql("d")
            rows = self._rows(f"SELECT count(*) FROM eidetic_docs d WHERE {pg(condition)}", params)
        return rows[0][0] if rows else 0

    # -- search ------------------------------------------------------------------------------

    @guarded
    def admitted_docs(self, docs: list[int], access: Access, filters: Filters) -> set[int]:
        condition, params = where(access, filters)
        rows = self._rows(
            f"SELECT d.doc, d.metadata FROM eidetic_docs d WHERE d.doc = ANY(%s) AND {condition}", [list(docs), *params]
        )
        return {doc for doc, metadata in rows if filters.matches_meta(metadata)}

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
        return listing.listing(self._session.conn, access, filters, order, limit, offset, refers_to)

    def first_page(self, top_k: int) -> int:
        """Small: the exact BM25 below scores more candidates the deeper a page reaches."""
        return max(5 * top_k, 50)

    @guarded
    def keyword(
        self, terms: list[str], access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, BM25) best first, exactly as exhaustive BM25 ranks them (ties aside): the
        threshold algorithm over impact-ordered postings (``keyword.py``)."""
        if not terms or limit < 1 or not self._schema.ensure(create=False):
            return []
        return self._keyword.search(terms, access, filters, limit, offset)

    @guarded
    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) of texts containing ``query``, shortest first
        (then by id). The server has no substring index to rely on (pg_trgm is optional), so
        this walks texts by length and stops at the first ``limit`` matches."""
        if not query or not self._schema.ensure(create=False):
            return []
        conn = self._session.conn
        condition, params = where(access, filters)
        check, needle = (
            ("strpos(d.text, %s) > 0", query)
            if case_sensitive
            else (f"strpos({self._session.lower}, %s) > 0", query.lower())
        )
        sql = (
            f"SELECT d.doc, d.len, d.metadata FROM eidetic_docs d WHERE {condition} AND {check} "
            f'ORDER BY d.len, d.id COLLATE "C" LIMIT %s OFFSET %s'
        )
        want = offset + limit
        if not filters.meta:
            rows = conn.execute(sql, [*params, needle, limit, offset]).fetchall()
            found = [(doc, length) for doc, length, _ in rows]
        else:
            found, start = [], 0
            while len(found) < want:
                page = conn.execute(sql, [*params, needle, EXACT_PAGE, start]).fetchall()
                found += [(doc, length) for doc, length, metadata in page if filters.matches_meta(metadata)]
                if len(page) < EXACT_PAGE:
                    break
                start += EXACT_PAGE
            found = found[offset:want]
        qlen = len(query)
        return [(doc, min(1.0, qlen / length) if length else 0.0) for doc, length in found]

    @guarded
    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        """Records with any term as a lower-cased substring of name (hyphens and underscores
        read as spaces), description or text; every admitted record when ``terms`` is empty."""
        if not self._schema.ensure(create=False):
            return []
        condition, params = where(access, filters)
        name = "lower(coalesce(d.name, ''))"
        checks = []
        for term in terms:
            spaced = term.replace("-", " ").replace("_", " ")
            checks.append(
                f"strpos(replace(replace({name}, '-', ' '), '_', ' '), %s) > 0 OR strpos({name}, %s) > 0"
                f" OR strpos(lower(coalesce(d.description, '')), %s) > 0 "
                f"OR strpos({self._session.lower}, %s) > 0"
            )
            params += [spaced, term, term, term]
        match = f" AND ({' OR '.join(checks)})" if checks else ""
        rows = self._session.conn.execute(
            # last touched: the record's last write (no file, no mtime), as in the sqlite backend
            f"SELECT d.doc, d.id, d.name, d.description, d.text, d.type, coalesce(d.updated, d.created), d.metadata "
            f"FROM eidetic_docs d WHERE {condition}{match}",
            params,
        ).fetchall()
        return [(*row[:7], None, None) for row in rows if filters.matches_meta(row[7])]

    # -- vectors -----------------------------------------------------------------------------

    @guarded
    def sync_vectors(
        self, model: str, access: Access | None, vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]
    ) -> None:
        """Store the vectors of ``model`` that the records in reach lack (``Vectors.sync``)."""
        if self._schema.ensure(create=False):
            self._vectors.sync(model, access, vectors_for)

    @guarded
    def nearest(self, model: str, query: Any, access: Access, filters: Filters, pool: int) -> dict[int, float]:
        """The ``pool`` admitted docs nearest to ``query`` by cosine (``Vectors.nearest``)."""
        if not self._schema.ensure(create=False):
            return {}
        return self._vectors.nearest(model, query, access, filters, pool)

    @guarded
    def cosines(self, model: str, query: Any, access: Access, docs: Sequence[int]) -> dict[int, float]:
        """Exact cosines of these docs' vectors, for docs in the caller's reach."""
        if not docs or not self._schema.ensure(create=False):
            return {}
        return self._vectors.cosines(model, query, access, docs)

    # -- usage -------------------------------------------------------------------------------

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
        if self._schema.ensure(create=False):
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
        if self._schema.ensure(create=False):
            self._writer.reindex()
        return {"store": self.location, "index": self.location, "records": self.count(), "unparseable": 0}
