"""The postgres backend's record writes: rows in, rows out, and their keyword entries. Every
record write inserts a whole new row (an edit, a lifecycle change or an import too), with its
text's trigrams (``trigrams``) in the same COPY, so exact search's filter is never behind the
text. A keyword entry holds its record's own words only (``postings.analyse``): conversation
context is added at query time (``ranking.windows``), so a write touches no other record's entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...index.stored import RECORD_COLUMNS, stored
from ...ranking.access import partition_of
from ...ranking.threads import thread_of
from ...records import Record
from . import trigrams
from .postings import Analysed, KeywordIndex, analyse
from .schema import VACUUM_AFTER, WRITE_LOCK

if TYPE_CHECKING:
    from .connection import Session
    from .scope import Partitions

_COPY_DOCS = (
    f"COPY eidetic_docs(doc, id, part, {RECORD_COLUMNS}, tl_name, tl_description, tl_text, tl_context, indexed, "
    "trigrams) FROM STDIN"
)


class Writer:
    """Writes, deletes and re-indexes records, each in one transaction under ``WRITE_LOCK``.
    The schema exists by the time any of these runs."""

    def __init__(self, session: Session, partitions: Partitions, index: KeywordIndex) -> None:
        self._session = session
        self._partitions = partitions
        self._index = index

    def write(self, records: list[Record]) -> None:
        """Upsert in one transaction: a replaced record's row and postings go, the new copy
        gets a new doc number."""
        conn = self._session.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            old = [
                doc
                for (doc,) in conn.execute(
                    "SELECT doc FROM eidetic_docs WHERE id = ANY(%s)", ([r.id for r in records],)
                )
            ]
            self._remove(old)
            self._insert(records)
        if len(records) >= VACUUM_AFTER:
            # After a bulk load, not at autovacuum's next visit: the keyword query reads postings
            # from the index alone only on pages the visibility map marks all-visible, and plans
            # by fresh statistics (measured at 100k right after a load: p50 334 ms, 95 ms after
            # this). Outside the transaction, as VACUUM must be; a member role that does not own
            # the tables gets a warning from the server, not an error.
            conn.execute("VACUUM (ANALYZE) eidetic_docs, eidetic_postings, eidetic_terms, eidetic_partitions")

    def delete(self, rid: str) -> None:
        """Hard delete: the row, its postings, its usage, and its vectors unless another record
        has the same text."""
        conn = self._session.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            rows = conn.execute("SELECT doc, hash FROM eidetic_docs WHERE id = %s", (rid,)).fetchall()
            self._remove([doc for doc, _ in rows])
            conn.execute("DELETE FROM eidetic_usage WHERE id = %s", (rid,))
            conn.execute(
                "DELETE FROM eidetic_embeddings e WHERE e.hash = ANY(%s) AND NOT EXISTS "
                "(SELECT 1 FROM eidetic_docs d WHERE d.hash = e.hash)",
                ([h for _, h in rows],),
            )

    def reindex(self) -> None:
        """Recompute every keyword entry and statistic from the rows (impacts then use the
        store's current averages), and the trigrams of rows that lack them (written by an
        eidetic older than schema 5); records, vectors and usage are left as they are."""
        conn = self._session.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            trigrams.backfill(conn)
            reindex_keywords(conn)

    def _remove(self, docs: list[int]) -> None:
        """Drop docs and their keyword entries."""
        if docs:
            self._index.unindex(docs)
            self._session.conn.execute("DELETE FROM eidetic_docs WHERE doc = ANY(%s)", (docs,))

    def _insert(self, records: list[Record]) -> None:
        """Insert rows, each with its keyword entry."""
        conn = self._session.conn
        docs = [
            doc
            for (doc,) in conn.execute("SELECT nextval('eidetic_doc_seq') FROM generate_series(1, %s)", (len(records),))
        ]
        parts = self._partitions.ids({partition_of(r.scope.visibility, r.scope.name) for r in records}, create=True)
        entries: list[Analysed] = []
        rows = []
        for doc, r in zip(docs, records):
            part = parts[partition_of(r.scope.visibility, r.scope.name)]
            entry = analyse(doc, part, r.name, r.description, r.text, thread_of(r.metadata) is not None)
            entries.append(entry)
            rows.append((doc, r.id, part, *stored(r), *entry.lengths, True, trigrams.column(r.text)))  # ``_COPY_DOCS``
        with conn.cursor() as cur, cur.copy(_COPY_DOCS) as copy:
            for row in rows:
                copy.write_row(row)
        self._index.index(entries, lengths_stored=True)


@dataclass(frozen=True)
class _Connected:
    conn: Any


def reindex_keywords(conn: Any) -> None:
    """Every keyword entry and statistic again from the rows, inside the caller's transaction:
    ``Writer.reindex``, and the upgrade to schema 8 (entries of a record's own words only)."""
    conn.execute("TRUNCATE eidetic_postings, eidetic_terms")
    conn.execute(
        "UPDATE eidetic_partitions SET docs = 0, len_name = 0, len_description = 0, "
        "len_text = 0, len_context = 0, ref_name = 0, ref_description = 0, ref_text = 0, "
        "ref_context = 0"
    )
    conn.execute(
        "UPDATE eidetic_docs SET indexed = false, tl_name = 0, tl_description = 0, "
        "tl_text = 0, tl_context = 0 WHERE indexed"
    )
    entries = [
        analyse(doc, part, name, description, text, tkey is not None)
        for doc, part, name, description, text, tkey in conn.execute(
            "SELECT doc, part, name, description, text, thread_key FROM eidetic_docs"
        )
    ]
    KeywordIndex(_Connected(conn)).index(entries, lengths_stored=False)
