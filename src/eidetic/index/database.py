"""The record database: one SQLite file's ``docs`` table, with the keyword indexes (tantivy,
``text_index``) and the vector indexes (``vectors``) derived from it kept consistent.

SQLite holds every record's fields (for filters, scope and lifecycle, and output); tantivy holds
the keyword and substring indexes. Writes run one at a time per cache folder, under the index
lock, in one SQLite transaction inside which the keyword entries of the changed docs are
rewritten (an entry holds its record's own words only: recall adds conversation context at
query time). Doc numbers are never reused, so a stale keyword entry can never point at another
record.

Two kinds build on :class:`RecordDatabase` and differ in how they open, commit and catch up:
``index.store_database`` (the database *is* the store: the sqlite backend) and
``stores.files.folder_index`` (the derived index of a folder of record files: the files backend).
Lookups and thread neighbours are the SQL both SQL backends share (``docsql``); the searches
are in ``searches``.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from ..docsql.dialect import SQLITE, Dialect
from ..docsql.lookups import Lookups
from ..docsql.threads import Threads
from ..errors import env_error
from ..progress import Progress, no_steps
from ..ranking.access import partition_of
from ..ranking.threads import thread_of
from ..records import Record
from ..settings import DEFAULT_ANN_THRESHOLD
from ..sqlite_db import chunks as _chunks
from . import schema
from .stored import RECORD_COLUMNS, stored
from .text_index import TextIndexes
from .vectors import VectorIndexes

INDEX_SLICE = 2000  # records given to the keyword index per step
BULK_ROWS = 10_000  # a batch this large, into a table holding fewer rows, has its indexes built after
LONG_INDEX = 10_000  # from this many records indexing shows progress: ~2 s at the ~5,000/s measured here


class RecordDatabase(ABC):
    """The records of one SQLite file (``path``) and what is derived from them, under
    ``derived`` (a base name in the cache folder: ``.tantivy``, ``.vectors``, ``.lock``)."""

    # What the ``fields`` ranking takes as a record's last write: SQL over ``docs d`` (the
    # file's mtime, where there is a file, is joined separately). Each kind sets it.
    LAST_TOUCHED: str
    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, path: Path, derived: Path, ann_threshold: int = DEFAULT_ANN_THRESHOLD) -> None:
        """``ann_threshold``: rows from which a vector partition gets an HNSW graph (0: never)."""
        self.path = path
        self.derived = derived
        self.ann_threshold = ann_threshold
        self._conn: sqlite3.Connection | None = None
        self.docs = Lookups(self)
        self.threads = Threads(self)
        self.text = TextIndexes(derived.with_suffix(".tantivy"))
        self.vectors = VectorIndexes(self)
        self.progress = Progress()  # long rebuilds report here (the store passes its caller's)

    # -- connection ----------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            for folder in {self.path.parent, self.derived.parent}:
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise env_error(
                        f"cannot create the folder {folder}: {exc.strerror}",
                        "set EIDETIC_CACHE_DIR (or the database path) to a writable place",
                    ) from None
            self._conn = self._open()
        return self._conn

    @abstractmethod
    def _open(self) -> sqlite3.Connection:
        """Open the database at this schema version: each kind decides what an absent, older
        or damaged file means."""

    def _connect(self) -> sqlite3.Connection:
        return schema.connect(self.path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def index_lock(self):  # -> filelock.FileLock
        """Serialises the writers of this cache folder's derived indexes (SQLite's own lock is
        released at COMMIT, before tantivy commits)."""
        import filelock

        return filelock.FileLock(str(self.derived.with_suffix(".lock")), timeout=300)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction (the caller holds the index lock); on failure the keyword
        index's uncommitted changes go with it."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            self.text.rollback()
            raise

    # -- keyword entries -----------------------------------------------------------------

    def _add_text(self, docs: list[int], fresh: bool) -> None:
        """Index docs' name, description and text, a slice at a time, with progress when there
        are many (a rebuild, a first sync)."""
        total = len(docs)
        step = self.progress.start(f"indexing {total} records", "record", total) if total >= LONG_INDEX else no_steps
        for start in range(0, total, INDEX_SLICE):
            self._add_slice(docs[start : start + INDEX_SLICE], fresh)
            step(min(start + INDEX_SLICE, total))

    def _add_slice(self, docs: list[int], fresh: bool) -> None:
        by_partition: dict[str, list[tuple[int, str | None, str | None, str, bool]]] = {}
        for chunk in _chunks(docs, 500):
            marks = ",".join("?" * len(chunk))
            for doc, visibility, scope, name, description, text, tkey in self.conn.execute(
                f"SELECT doc, visibility, scope, name, description, text, thread_key FROM docs WHERE doc IN ({marks})",
                chunk,
            ):
                key = partition_of(visibility, scope)
                by_partition.setdefault(key, []).append((doc, name, description, text, tkey is not None))
                if not fresh:
                    self.text.delete(key, doc)
        for key, entries in by_partition.items():
            self.text.add(key, entries)

    def _reindex_text(self) -> None:
        """Index every record again, from an empty keyword index (the caller commits it)."""
        self.text.drop()
        self._add_text([doc for (doc,) in self.conn.execute("SELECT doc FROM docs")], fresh=True)
        self.text.create(self.partitions())

    def partitions(self) -> dict[str, tuple[str, list[str]]]:
        """partition key -> SQL condition and parameters, for every partition ever used."""
        return {
            key: ("visibility = 'public'", [])
            if visibility == "public"
            else ("visibility = 'private' AND scope = ?", [scope])
            for key, visibility, scope in self.conn.execute("SELECT key, visibility, scope FROM partitions")
        }

    def partition_keys(self) -> list[str]:
        return sorted(self.partitions())

    # -- writing docs (inside a write transaction) ---------------------------------------

    def _insert_doc(self, rel: str, record: Record) -> int:
        return self._insert_docs([(rel, record)])[0]

    def _insert_docs(self, items: list[tuple[str, Record]]) -> list[int]:
        """Insert records into docs and the full-text index, in bulk; returns their doc ids
        (assigned here, inside the caller's write transaction, so executemany can be used)."""
        conn = self.conn
        first = max(int(self.meta("next_doc") or 1), (conn.execute("SELECT max(doc) FROM docs").fetchone()[0] or 0) + 1)
        docs = list(range(first, first + len(items)))
        conn.execute("INSERT OR REPLACE INTO meta VALUES('next_doc', ?)", (str(first + len(items)),))
        keys = {partition_of(r.scope.visibility, r.scope.name) for _, r in items}
        conn.executemany(
            "INSERT OR IGNORE INTO partitions VALUES(?,?,?)",
            [(key, "public", None) if key == "public" else (key, "private", key[len("private:") :]) for key in keys],
        )
        # Each keyword entry holds its record's own words: it is written now, on a thread of
        # its own while SQLite takes the rows (bulk ingest).
        entries: dict[str, list[tuple[int, str | None, str | None, str, bool]]] = {}
        for doc, (_, r) in zip(docs, items):
            entries.setdefault(partition_of(r.scope.visibility, r.scope.name), []).append(
                (doc, r.name, r.description, r.text, thread_of(r.metadata) is not None)
            )

        def add_entries() -> None:
            for key, rows in entries.items():
                self.text.add(key, rows)

        with ThreadPoolExecutor(max_workers=1) as pool:
            added = pool.submit(add_entries)
            self._insert_rows(docs, items)
            added.result()
        return docs

    def _insert_rows(self, docs: list[int], items: list[tuple[str, Record]]) -> None:
        """The batch's rows. A batch larger than the table (a bulk remember into a new store)
        goes in without the secondary indexes, which are then built from the sorted rows:
        inserting each row's random keys (ids, hashes, names) into ten large B-trees cost
        15-20 us a record at 100k (docs/benchmarks.md). Dropped and built inside the caller's
        write transaction, so a kill midway rolls both back with the rows: no reader or crash
        ever sees the table without them."""
        conn = self.conn
        bulk = len(items) >= BULK_ROWS and conn.execute("SELECT count(*) FROM docs").fetchone()[0] < len(items)
        for name in schema.DOCS_INDEXES if bulk else ():
            conn.execute(f"DROP INDEX {name}")
        conn.executemany(
            f"INSERT INTO docs(doc, id, path, {RECORD_COLUMNS}, winner) VALUES({self.dialect.marks(27)}, 1)",
            [(doc, r.id, rel, *stored(r)) for doc, (rel, r) in zip(docs, items)],
        )
        for statement in schema.DOCS_INDEXES.values() if bulk else ():
            conn.execute(statement)

    def _drop_doc(self, doc: int) -> set[str]:
        """Remove a doc and its keyword entry. Returns its id (empty when there was no such doc)."""
        conn = self.conn
        found = conn.execute("SELECT id, visibility, scope FROM docs WHERE doc=?", (doc,)).fetchone()
        if found is None:
            return set()
        rid, visibility, scope = found
        key = partition_of(visibility, scope)
        self.text.delete(key, doc)
        self._log_drop(doc, key)
        conn.execute("DELETE FROM docs WHERE doc=?", (doc,))
        return {rid}

    def _log_drop(self, doc: int, partition: str) -> None:  # noqa: B027 (an optional hook)
        """Called just before a doc's row goes. A database that other cache folders follow logs
        the drop for them; one that nobody else follows has nothing to do."""

    # -- maintenance ---------------------------------------------------------------------

    def conflicts(self) -> list[tuple[str, str, str, str]]:
        """(id, path, scope, visibility) of files whose id is also claimed by another file
        (and that are not the one served)."""
        return list(self.conn.execute("SELECT id, path, scope, visibility FROM docs WHERE winner=0 ORDER BY id, path"))

    @abstractmethod
    def status(self, verify: bool = True) -> dict[str, Any]:
        """What ``eidetic index`` shows of this store (see :meth:`_status`)."""

    def _status(self, store: str, current: bool, unparseable: list[tuple[str, str]]) -> dict[str, Any]:
        return {
            "store": store,
            "index": str(self.path),
            "records": self.docs.count(),
            "current": current,
            "vectors": self.vectors.status(),
            "unparseable": [{"path": p, "error": e} for p, e in unparseable],
            "conflicts": [{"id": i, "path": p, "scope": s, "visibility": v} for i, p, s, v in self.conflicts()],
        }
