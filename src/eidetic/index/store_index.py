"""The derived search index of one files store, kept outside the store (user cache folder).

SQLite holds every record's fields (for filters, scope and lifecycle, and output) and what
change detection needs; tantivy (``text_index``) holds the keyword and substring indexes. It is
never the source of truth: :meth:`StoreIndex.sync` reconciles it with the files, and deleting
it loses nothing.

Change detection without reading every file:
- every sync compares the mtime of each folder of the store with the recorded one; a folder
  changes when a file in it is created, deleted or replaced by rename (how eidetic, ``sed -i``,
  vim and most tools save), and only changed folders are listed and stat-checked again.
  eidetic writes into 256 hash folders, so that is ~400 files at 100k;
- a file edited in place changes only its own mtime. Each sync also stat-checks a slice of
  ``VERIFY_FILES`` files, round robin by path: a store that small is checked
  completely on every recall, a larger one within (files / VERIFY_FILES) recalls, at a bounded
  cost per recall. ``eidetic index --refresh`` checks everything at once;
- timestamps have coarse granularity (a clock tick, up to 10 ms on Linux; whole seconds on
  some file systems), so a file or folder recorded within ``RACY_NS`` of its mtime could still
  change without its stat changing: it is "racy" (as in git) and checked again, by content,
  on the next sync.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import frontmatter
from ..errors import env_error
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..sqlite_db import chunks as _chunks
from ..records import DEFAULT_SCOPE, Record, Scope, record_path
from ..stores.folder import FileStat, RecordFolder
from ..timeutil import to_epoch
from .rows import DOC_COLUMNS as _DOC_COLUMNS, IndexedRecord, row_to_indexed as _row_to_indexed
from .context import _LIVE, Neighbourhood, order_key, thread_key, thread_of
from .text_index import MIN_CHUNKED_QUERY, TextIndexes, partition_of, partitions_in_reach
from .vector_index import VectorIndex

SCHEMA_VERSION = "11"
RACY_NS = 50_000_000  # 5x the coarsest Linux clock tick
RACY_NS_COARSE = 2_100_000_000  # file systems that keep whole seconds (FAT, old HFS+)


def _is_racy(mtime_ns: int, now_ns: int) -> bool:
    window = RACY_NS_COARSE if mtime_ns % 1_000_000_000 == 0 else RACY_NS
    return now_ns - mtime_ns < window
VECTOR_SLICE = 50_000  # rows appended to a vector index at a time
VERIFY_FILES = int(os.environ.get("EIDETIC_VERIFY_FILES", "500") or 500)  # per sync, round robin
DROPPED_KEEP = 100_000  # drops logged for derived indexes still catching up; one further behind rebuilds

# The sqlite backend logs each dropped doc (with what its keyword entry and its thread
# neighbours' need), in the transaction that drops it: every cache folder's keyword index
# catches up from this log, whichever process made the change. A files store does not use it.
_DROPPED = """CREATE TABLE IF NOT EXISTS dropped(seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL,
    partition TEXT NOT NULL, thread_key TEXT, thread_order TEXT)"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, racy INTEGER NOT NULL,
    nfiles INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, dir TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    ino INTEGER NOT NULL, racy INTEGER NOT NULL, doc INTEGER, error TEXT);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE INDEX IF NOT EXISTS files_error ON files(path) WHERE error IS NOT NULL;
CREATE INDEX IF NOT EXISTS files_racy ON files(path) WHERE racy = 1;
CREATE TABLE IF NOT EXISTS docs(
    doc INTEGER PRIMARY KEY, id TEXT NOT NULL, path TEXT NOT NULL,
    scope TEXT NOT NULL, visibility TEXT NOT NULL, lifecycle TEXT NOT NULL, type TEXT NOT NULL,
    name TEXT, description TEXT, text TEXT NOT NULL, hash TEXT NOT NULL, len INTEGER NOT NULL,
    created TEXT, created_ts REAL, updated TEXT, added_by TEXT, supersedes TEXT,
    links TEXT NOT NULL, metadata TEXT NOT NULL, source TEXT, winner INTEGER NOT NULL,
    thread_key TEXT, thread_order TEXT);
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
CREATE INDEX IF NOT EXISTS docs_thread ON docs(thread_key, thread_order, doc) WHERE thread_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS partitions(key TEXT PRIMARY KEY, visibility TEXT NOT NULL, scope TEXT);
CREATE INDEX IF NOT EXISTS docs_hash ON docs(hash);
CREATE INDEX IF NOT EXISTS docs_len ON docs(len);
""" + _DROPPED + ";"

@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    broken: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


class StoreIndex:
    """Search structures for one :class:`RecordFolder`, in one SQLite file; or, with no files
    store (``store`` None), the SQLite file that *is* the store (the ``sqlite`` backend).

    In that second role the database is never dropped or recreated: a missing one is created
    by the first write, an older schema is upgraded in place, and a damaged one is an error
    that leaves the file alone. Its keyword and vector indexes stay derived, under
    ``derived`` (a path in the cache folder), and are rebuilt from it whenever they are lost.
    Processes with other cache folders may share the database: the derived side records which
    database (its ``instance``) and which point of its history it reflects, and follows every
    writer's changes from there (:meth:`_follow_database`).
    """

    def __init__(self, store: RecordFolder | None, path: Path, default_scope: Scope = DEFAULT_SCOPE,
                 derived: Path | None = None) -> None:
        self.store = store
        self.path = path
        self.derived = derived or path  # base name of the derived files: .tantivy, .vectors, .lock
        self.default_scope = default_scope
        self._conn: sqlite3.Connection | None = None
        self._meta_filter: Filters | None = None
        self.text = TextIndexes(self.derived.with_suffix(".tantivy"))
        self._retext: set[int] = set()  # docs whose keyword entry must be (re)written
        self._fresh: set[int] = set()  # of those, docs new in this transaction (none to delete)
        self._moved: set[int] = set()  # docs added or re-elected: their neighbours' contexts change
        self._vector_indexes: dict[tuple[str, str], VectorIndex] = {}

    # -- connection ----------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        for folder in {self.path.parent, self.derived.parent}:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise env_error(f"cannot create the folder {folder}: {exc.strerror}",
                                "set EIDETIC_CACHE_DIR (or the database path) to a writable place") from None
        if self.store is None:
            return self._open_record_database()
        conn = self._current()
        if conn is not None:
            return conn
        # Create, upgrade or replace a corrupt index under the index lock: several processes
        # may start at once on a new store, and only one may lay the index out.
        with self._lock():
            conn = self._current()
            if conn is not None:
                return conn
            self._drop_files()  # derived data: an old or corrupt index is simply rebuilt
            try:
                conn = self._connect()
                conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA
                                   + f"INSERT INTO meta VALUES('schema', '{SCHEMA_VERSION}');"
                                   + f"INSERT INTO meta VALUES('instance', '{uuid.uuid4().hex}');COMMIT;")
                conn.execute("INSERT OR REPLACE INTO meta VALUES('store', ?)", (str(self.store.root),))
                return conn
            except sqlite3.DatabaseError as exc:
                raise env_error(f"the index {self.path} is unusable: {exc}",
                                "delete it; it is rebuilt from the record files") from None

    def _open_record_database(self) -> sqlite3.Connection:
        """Open (creating, or upgrading in place) the database that is the store of record."""
        try:
            if self.path.exists():
                # Read-only first: opening for writing switches a file to WAL, which would
                # change a file that turns out not to be ours.
                probe = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
                try:
                    foreign = (self._schema_version(probe) is None
                               and probe.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0)
                finally:
                    probe.close()
                if foreign:
                    raise env_error(f"{self.path} is not an eidetic database",
                                    "name another file with --db or EIDETIC_SQLITE_PATH")
            conn = self._connect()
            if self._schema_version(conn) != SCHEMA_VERSION:
                _lay_out(conn, self.path)
            return conn
        except sqlite3.DatabaseError as exc:
            raise env_error(f"the database {self.path} is unreadable: {exc}",
                            "restore it from a backup (eidetic never deletes or rewrites it)") from None

    def _current(self) -> sqlite3.Connection | None:
        """A connection to the index if it exists with this schema version, else None."""
        try:
            conn = self._connect()
            if self._schema_version(conn) == SCHEMA_VERSION:
                return conn
            conn.close()
        except sqlite3.DatabaseError:
            pass
        return None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA cache_size=-65536")
        conn.create_function("eidetic_meta", 1, self._meta_match, deterministic=True)
        return conn

    @staticmethod
    def _schema_version(conn: sqlite3.Connection) -> str | None:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def _drop_files(self) -> None:
        """Drop the index of a files store: its database and everything derived with it."""
        self.text.drop()
        self._drop_vectors()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _meta_match(self, metadata: str) -> bool:
        filters = self._meta_filter
        return filters is None or filters.matches_meta(json.loads(metadata))

    def _get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    # -- sync with the files -------------------------------------------------------------

    def sync(self, full: bool = False) -> SyncReport:
        """Bring the index up to date with the store's files; cheap when nothing changed.

        ``full`` stats every file (``eidetic index --refresh``, rebuilds, status); otherwise
        the folder check plus one verification slice run (see the module docstring). For the
        database that is the store, bring the derived keyword index up to it instead."""
        report = SyncReport()
        if self.store is None:
            self._follow_database()
            return report
        self._check_keyword()
        if not self.store.exists():
            if self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone():
                self._write(lambda: self._forget_all(report))
            return report
        generation = self._get_meta("generation")
        plan = self._plan(full)
        if plan is None:
            return report

        def apply() -> None:
            # Another process may have synced between our look and our write lock: plan again.
            current = plan if self._get_meta("generation") == generation else self._plan(full)
            self._apply(current, report)

        self._write(apply)
        return report

    def _plan(self, full: bool) -> dict[str, Any] | None:
        """What differs between files and index: folders to relist, files to (re)read or drop."""
        known_dirs = {p: (m, r, n) for p, m, r, n in self.conn.execute(
            "SELECT path, mtime_ns, racy, nfiles FROM dirs")}
        now_ns = time.time_ns()
        listings: dict[str, tuple[int, dict[str, FileStat]]] = {}
        seen_dirs: set[str] = set()
        if full or not known_dirs:
            for rel_dir, mtime, files in self.store.walk():
                listings[rel_dir] = (mtime, files)
                seen_dirs.add(rel_dir)
        else:
            children: dict[str, list[str]] = {}
            for rel_dir in known_dirs:
                if rel_dir:
                    children.setdefault(_parent(rel_dir), []).append(rel_dir)
            pending = [""]
            while pending:
                rel_dir = pending.pop()
                mtime = self.store.dir_mtime(rel_dir)
                if mtime is None:
                    continue
                seen_dirs.add(rel_dir)
                known = known_dirs.get(rel_dir)
                if known is not None and known[0] == mtime and not known[1]:
                    pending.extend(children.get(rel_dir, ()))
                    continue
                subdirs, files = self.store.list_dir(rel_dir)
                listings[rel_dir] = (mtime, files)
                pending.extend(subdirs)
        gone_dirs = [d for d in known_dirs if d not in seen_dirs and self.store.dir_mtime(d) is None]
        to_read: list[tuple[str, FileStat]] = []
        changed = 0  # files new or with a different stat (racy ones are only re-checked)
        to_drop: list[str] = []
        dir_updates: list[tuple[str, int, int, int]] = []
        for rel_dir, (mtime, files) in listings.items():
            known = known_dirs.get(rel_dir)
            racy = int(_is_racy(mtime, now_ns))
            if known is None or known[:3] != (mtime, racy, len(files)):
                dir_updates.append((rel_dir, mtime, racy, len(files)))
            indexed = {p: (m, s, i, r) for p, m, s, i, r in self.conn.execute(
                "SELECT path, mtime_ns, size, ino, racy FROM files WHERE dir=?", (rel_dir,))}
            for rel, st in files.items():
                old = indexed.pop(rel, None)
                differs = old is None or old[:3] != (st.mtime_ns, st.size, st.ino)
                if differs or old[3]:
                    to_read.append((rel, st))
                    changed += differs
            to_drop.extend(indexed)
        for rel_dir in gone_dirs:
            to_drop.extend(p for (p,) in self.conn.execute("SELECT path FROM files WHERE dir=?", (rel_dir,)))
        if not (full or not known_dirs):  # files edited in place change no folder: check a slice
            for rel, mtime_ns, size, ino in self._verification_slice():
                if _parent(rel) in listings:
                    continue
                st = self.store.stat_file(rel)
                if st is None:
                    to_drop.append(rel)
                elif (st.mtime_ns, st.size, st.ino) != (mtime_ns, size, ino):
                    to_read.append((rel, st))
                    changed += 1
        for (rel,) in self.conn.execute("SELECT path FROM files INDEXED BY files_racy WHERE racy = 1"):
            if _parent(rel) not in listings:
                st = self.store.stat_file(rel)
                if st is None:
                    to_drop.append(rel)
                else:
                    to_read.append((rel, st))
        if not (to_read or to_drop or dir_updates or gone_dirs):
            return None
        return {"read": to_read, "drop": to_drop, "dirs": dir_updates, "gone": gone_dirs,
                "now_ns": now_ns, "changed": changed}

    def _verification_slice(self) -> list[tuple[str, int, int, int]]:
        """The next ``VERIFY_FILES`` indexed files, round robin by path, to stat on this sync
        (with their recorded mtime, size and inode): a store that small is fully checked every
        time, a larger one within files / VERIFY_FILES syncs, whatever its folder layout."""
        if VERIFY_FILES <= 0:  # 0: rely on folder mtimes (and a watcher) alone
            return []
        cursor = self._get_meta("verify_cursor") or ""
        query = "SELECT path, mtime_ns, size, ino FROM files WHERE path {} ? ORDER BY path LIMIT ?"
        rows = self.conn.execute(query.format(">"), (cursor, VERIFY_FILES)).fetchall()
        if len(rows) < VERIFY_FILES:  # wrap around
            rows += self.conn.execute(query.format("<="), (cursor, VERIFY_FILES - len(rows))).fetchall()
        if rows:
            try:  # best effort: never wait behind a writer just to move the cursor
                self.conn.execute("PRAGMA busy_timeout=0")
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES('verify_cursor', ?)", (rows[-1][0],))
            except sqlite3.OperationalError:
                pass
            finally:
                self.conn.execute("PRAGMA busy_timeout=30000")
        return rows

    def _lock(self):  # -> filelock.FileLock
        import filelock

        return filelock.FileLock(str(self.derived.with_suffix(".lock")), timeout=300)

    def _write(self, action) -> None:
        """Run ``action`` in one write transaction, then commit the keyword index to match.

        The index lock serializes the writers of this cache folder (SQLite's own lock is
        released at COMMIT, before tantivy commits). SQLite commits first. For a files store
        it commits with ``keyword_pending`` set: a crash before tantivy's commit leaves it set,
        and the next user rebuilds the keyword index from SQLite (:meth:`_check_keyword`). For
        the database that is the store, the transaction first takes in what other cache
        folders' processes wrote, then stamps a new ``change``; the keyword index's state
        records that point only after tantivy commits, so a crash in between makes the next
        user catch up over it again (:meth:`_follow_database`). Doc numbers are never reused,
        so a stale keyword entry can never point at another record.
        """
        conn = self.conn
        with self._lock():
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self.store is None:
                    self._catch_up()
                action()
                self._flush_text()
                if self.store is None:
                    conn.execute("INSERT OR REPLACE INTO meta VALUES('change', ?)", (uuid.uuid4().hex,))
                    point = self._point()
                else:
                    conn.execute("INSERT INTO meta VALUES('generation', '1') ON CONFLICT(key) "
                                 "DO UPDATE SET value = CAST(value AS INTEGER) + 1")
                    if self.text.dirty:
                        conn.execute("INSERT OR REPLACE INTO meta VALUES('keyword_pending', '1')")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                self.text.rollback()
                raise
            finally:
                self._retext.clear()
                self._fresh.clear()
                self._moved.clear()
            if self.store is None:
                self.text.commit()
                self.text.write_state(point)
            elif self.text.dirty:
                self.text.commit()
                conn.execute("DELETE FROM meta WHERE key='keyword_pending'")

    @property
    def neighbourhood(self) -> Neighbourhood:
        return Neighbourhood(self.conn)

    def _flush_text(self) -> None:
        """(Re)write the keyword entries of changed docs and of the neighbours whose context
        quotes them (``context``), inside the write transaction."""
        if not self._retext:
            return
        around = self.neighbourhood.of(self._moved & self._retext)
        todo = set(self._retext)
        for neighbours in around.values():
            todo.update(neighbours)
        around.update(self.neighbourhood.of(todo - set(around)))
        self._add_text(sorted(todo), around, fresh=False)

    def _add_text(self, docs: list[int], around: dict[int, list[int]], fresh: bool) -> None:
        """Index docs' name, description, text and context (their text, then their neighbours')."""
        rows: dict[int, tuple[str, str | None, str | None, str]] = {}
        for chunk in _chunks(docs, 500):
            marks = ",".join("?" * len(chunk))
            for doc, visibility, scope, name, description, text in self.conn.execute(
                    f"SELECT doc, visibility, scope, name, description, text FROM docs WHERE doc IN ({marks})", chunk):
                rows[doc] = (partition_of(visibility, scope), name, description, text)
        texts = {doc: row[3] for doc, row in rows.items()}
        texts.update(self.texts([d for doc in rows for d in around.get(doc, ()) if d not in texts]))
        by_partition: dict[str, list[tuple[int, str | None, str | None, str, str]]] = {}
        for doc, (key, name, description, text) in rows.items():
            context = "\n".join([text, *(texts[d] for d in around.get(doc, ()) if d in texts)])
            by_partition.setdefault(key, []).append((doc, name, description, text, context))
            if not fresh and doc not in self._fresh:
                self.text.delete(key, doc)
        for key, entries in by_partition.items():
            self.text.add(key, entries)

    def _partitions(self) -> dict[str, tuple[str, list[str]]]:
        """partition key -> SQL condition and parameters, for every partition ever used."""
        return {key: ("visibility = 'public'", []) if visibility == "public"
                else ("visibility = 'private' AND scope = ?", [scope])
                for key, visibility, scope in self.conn.execute("SELECT key, visibility, scope FROM partitions")}

    def _check_keyword(self) -> None:
        """Rebuild the text indexes of a files store from SQLite when a crash left them behind,
        or one is missing."""
        def needed() -> bool:
            return (self._get_meta("keyword_pending") is not None
                    or any(not self.text.exists(key) for key in self._partitions()))

        if not needed():
            return
        with self._lock():
            if not needed():
                return  # another process was mid-write and has finished
            self._reindex_text()
            self.text.commit()
            self.conn.execute("DELETE FROM meta WHERE key='keyword_pending'")

    def _reindex_text(self) -> None:
        """Index every record again, from an empty keyword index (the caller commits it)."""
        self.text.drop()
        docs = [doc for (doc,) in self.conn.execute("SELECT doc FROM docs")]
        self._add_text(docs, self.neighbourhood.of(docs), fresh=True)
        self.text.create(self._partitions())

    # -- following the database that is the store ----------------------------------------

    def _follow_database(self, rebuild: bool = False) -> None:
        """Bring the derived keyword index up to the database that is the store, whoever wrote
        it: this process, or another one with another cache folder (whose writes only the
        database shows). One meta query when nothing changed; ``rebuild``: from scratch."""
        conn = self.conn
        if not rebuild and self._follows() and all(self.text.exists(key) for key in self._partitions()):
            return
        with self._lock():
            conn.execute("BEGIN")  # one snapshot: what is indexed is what the point names
            try:
                point = self._catch_up(rebuild)
            except BaseException:
                self.text.rollback()
                raise
            finally:
                conn.execute("COMMIT")
            self.text.commit()
            self.text.write_state(point)

    def _follows(self) -> bool:
        """Whether the keyword index reflects the database as it is. Every write transaction
        stamps a new random ``change`` (and so did the database's creation or upgrade), so the
        same change is the same file at the same point of its history."""
        state = self.text.state()
        return state is not None and state.get("change") == self._get_meta("change")

    def _point(self) -> dict[str, Any]:
        """Where the database is in its history: its file (``instance``), its last change, the
        next doc number, its highest doc (and id), its last logged drop (and doc). The keyword
        index records the point it reflects, and catches up from there."""
        conn = self.conn
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'change', 'next_doc')"))
        last = conn.execute("SELECT doc, id FROM docs ORDER BY doc DESC LIMIT 1").fetchone()
        drop = conn.execute("SELECT seq, doc FROM dropped ORDER BY seq DESC LIMIT 1").fetchone()
        return {"instance": meta.get("instance"), "change": meta.get("change"),
                "next_doc": max(int(meta.get("next_doc") or 1), last[0] + 1 if last else 1),
                "last": list(last) if last else None,
                "seq": drop[0] if drop else 0, "seq_doc": drop[1] if drop else None}

    def _catch_up(self, rebuild: bool = False) -> dict[str, Any]:
        """Bring the keyword index (uncommitted) to the database's point, inside the caller's
        transaction and under the index lock, and return that point. Incremental when the
        database's history runs through the point the index reflects; otherwise (another file,
        a restored backup, an unknown state) everything derived from the old history goes and
        the keyword index is rebuilt."""
        point = self._point()
        state = self.text.state()
        if rebuild or state is None or state.keys() != point.keys():
            self._reindex_text()
            if rebuild:
                self._drop_vectors()
        elif not self._continues(state, point):
            self._reindex_text()
            self._drop_vectors()  # their doc numbers name records of another history
        elif state["change"] != point["change"]:
            self._apply_since(state)
        if any(not self.text.exists(key) for key in self._partitions()):
            self._reindex_text()  # one was deleted by hand
        return point

    def _continues(self, state: dict[str, Any], point: dict[str, Any]) -> bool:
        """Whether the database's history runs through ``state``'s point: the same file, no
        counter gone back, the drop log unbroken since, and the record that was last then
        still there or dropped since (a backup restored and written to again fails this)."""
        if state["instance"] != point["instance"]:
            return False
        if state["change"] == point["change"]:
            return True
        if point["next_doc"] < state["next_doc"] or point["seq"] < state["seq"]:
            return False
        conn = self.conn
        first = conn.execute("SELECT min(seq) FROM dropped").fetchone()[0]
        if first is not None and first > state["seq"] + 1:
            return False  # drops it has not seen were pruned from the log
        if state["seq"]:
            row = conn.execute("SELECT doc FROM dropped WHERE seq = ?", (state["seq"],)).fetchone()
            if row is not None and row[0] != state["seq_doc"]:
                return False
        if state["last"]:
            doc, rid = state["last"]
            row = conn.execute("SELECT id FROM docs WHERE doc = ?", (doc,)).fetchone()
            if row is None:
                return conn.execute("SELECT 1 FROM dropped WHERE seq > ? AND doc = ?",
                                    (state["seq"], doc)).fetchone() is not None
            return row[0] == rid
        return True

    def _apply_since(self, state: dict[str, Any]) -> None:
        """Index what changed since ``state``'s point: docs dropped since (from the drop log)
        leave, docs numbered from its ``next_doc`` on arrive, and the thread neighbours of
        both are indexed again (their context quotes them). Every entry is deleted before it
        is added, so doing this twice (a crash before the state was recorded) is harmless."""
        conn = self.conn
        drops = conn.execute("SELECT doc, partition, thread_key, thread_order FROM dropped WHERE seq > ? "
                             "ORDER BY seq", (state["seq"],)).fetchall()
        new = [doc for (doc,) in conn.execute("SELECT doc FROM docs WHERE doc >= ?", (state["next_doc"],))]
        for doc, key, _, _ in drops:
            self.text.delete(key, doc)
        around = self.neighbourhood.of(new)
        todo = set(new).union(*around.values())
        for doc, _, tkey, order in drops:
            if tkey is not None:
                todo.update(self._flanking(tkey, order, doc))
        around.update(self.neighbourhood.of(todo - set(around)))
        self._add_text(sorted(todo), around, fresh=False)

    def _flanking(self, tkey: str, order: str, doc: int) -> list[int]:
        """The active thread members either side of a (dropped) member's place: its neighbours."""
        found = []
        for op, direction in (("<", "DESC"), (">", "ASC")):
            row = self.conn.execute(
                f"SELECT doc FROM docs WHERE thread_key=? AND {_LIVE} AND (thread_order, doc) {op} (?, ?) "
                f"ORDER BY thread_order {direction}, doc {direction} LIMIT 1", (tkey, order, doc)).fetchone()
            if row:
                found.append(row[0])
        return found

    def _drop_vectors(self) -> None:
        import shutil

        shutil.rmtree(self.derived.with_suffix(".vectors"), ignore_errors=True)
        self._vector_indexes.clear()

    def _apply(self, plan: dict[str, Any] | None, report: SyncReport) -> None:
        if plan is None:
            return
        conn = self.conn
        touched_ids: set[str] = set()
        for rel in plan["drop"]:
            touched_ids.update(self._drop_file(rel))
            report.removed += 1
        now_ns = plan["now_ns"]
        for rel, listed in plan["read"]:
            old = conn.execute("SELECT doc FROM files WHERE path=?", (rel,)).fetchone()
            try:
                content, st = self.store.read_text(rel)
                record = frontmatter.parse(content, rel[:-3], self.default_scope)
                error = None
            except FileNotFoundError:
                touched_ids.update(self._drop_file(rel))
                report.removed += 1
                continue
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                record, st, error = None, self.store.stat_file(rel) or listed, _reason(exc)
            racy = int(_is_racy(st.mtime_ns, now_ns))
            if old is not None:
                previous = self._doc_row(old[0]) if old[0] is not None else None
                if record is not None and previous is not None and previous.record == record:
                    conn.execute("UPDATE files SET mtime_ns=?, size=?, ino=?, racy=? WHERE path=?",
                                 (st.mtime_ns, st.size, st.ino, racy, rel))
                    continue
                touched_ids.update(self._drop_file(rel))
                report.updated += 1
            else:
                report.added += 1
            doc = self._insert_doc(rel, record) if record is not None else None
            if record is not None:
                touched_ids.add(record.id)
            else:
                report.broken.append((rel, error or "unreadable"))
            conn.execute("INSERT OR REPLACE INTO files VALUES(?,?,?,?,?,?,?,?)",
                         (rel, _parent(rel), st.mtime_ns, st.size, st.ino, racy, doc, error))
        for rel_dir in plan["gone"]:
            conn.execute("DELETE FROM dirs WHERE path=?", (rel_dir,))
        conn.executemany("INSERT OR REPLACE INTO dirs VALUES(?,?,?,?)", plan["dirs"])
        self._elect_winners(touched_ids)

    def _forget_all(self, report: SyncReport) -> None:
        report.removed = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        for table in ("files", "dirs", "docs", "partitions"):
            self.conn.execute(f"DELETE FROM {table}")
        self.text.drop()

    def _doc_row(self, doc: int) -> IndexedRecord | None:
        row = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM docs WHERE doc=?", (doc,)).fetchone()
        return _row_to_indexed(row) if row else None

    def _insert_doc(self, rel: str, record: Record) -> int:
        return self._insert_docs([(rel, record)])[0]

    def _insert_docs(self, items: list[tuple[str, Record]]) -> list[int]:
        """Insert records into docs and the full-text index, in bulk; returns their doc ids
        (assigned here, inside the caller's write transaction, so executemany can be used)."""
        conn = self.conn
        first = max(int(self._get_meta("next_doc") or 1),
                    (conn.execute("SELECT max(doc) FROM docs").fetchone()[0] or 0) + 1)
        docs = list(range(first, first + len(items)))
        conn.execute("INSERT OR REPLACE INTO meta VALUES('next_doc', ?)", (str(first + len(items)),))
        keys = {partition_of(r.scope.visibility, r.scope.name) for _, r in items}
        conn.executemany("INSERT OR IGNORE INTO partitions VALUES(?,?,?)",
                         [(key, "public", None) if key == "public" else (key, "private", key[len("private:"):])
                          for key in keys])
        # A record outside any thread is its own whole context: its keyword entry is written
        # now, on a thread of its own while SQLite takes the rows (bulk ingest). Thread members
        # wait for _flush_text, which needs their neighbours' rows.
        lone: dict[str, list[tuple[int, str | None, str | None, str, str]]] = {}
        threaded = []
        for doc, (_, r) in zip(docs, items):
            if thread_of(r.metadata) is None:
                lone.setdefault(partition_of(r.scope.visibility, r.scope.name), []).append(
                    (doc, r.name, r.description, r.text, r.text))
            else:
                threaded.append(doc)

        def add_lone() -> None:
            for key, rows in lone.items():
                self.text.add(key, rows)

        with ThreadPoolExecutor(max_workers=1) as pool:
            added = pool.submit(add_lone)
            self._insert_rows(docs, items)
            added.result()
        self._retext.update(threaded)
        self._fresh.update(threaded)
        self._moved.update(threaded)
        return docs

    def _insert_rows(self, docs: list[int], items: list[tuple[str, Record]]) -> None:
        self.conn.executemany(
            "INSERT INTO docs(doc, id, path, scope, visibility, lifecycle, type, name, description, text,"
            " hash, len, created, created_ts, updated, added_by, supersedes, links, metadata, source, winner,"
            " thread_key, thread_order) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?)",
            [(doc, r.id, rel, r.scope.name, r.scope.visibility, r.lifecycle, r.type, r.name, r.description,
              r.text, r.hash, len(r.text), r.created, ts, r.updated, r.added_by,
              r.supersedes, json.dumps(r.links, ensure_ascii=False),
              json.dumps(r.metadata, ensure_ascii=False), _source(r.metadata),
              key, order_key(ts, r.id) if key else None)
             for doc, (rel, r) in zip(docs, items)
             for ts in (to_epoch(r.created),)
             for key in (thread_key(r.scope.visibility, r.scope.name, thread_of(r.metadata)),)])


    def _drop_file(self, rel: str) -> set[str]:
        conn = self.conn
        row = conn.execute("SELECT doc FROM files WHERE path=?", (rel,)).fetchone()
        conn.execute("DELETE FROM files WHERE path=?", (rel,))
        if row is None or row[0] is None:
            return set()
        return self._drop_doc(row[0])

    def _drop_doc(self, doc: int) -> set[str]:
        conn = self.conn
        found = conn.execute("SELECT id, visibility, scope FROM docs WHERE doc=?", (doc,)).fetchone()
        if found is None:
            return set()
        rid, visibility, scope = found
        for neighbours in self.neighbourhood.of([doc]).values():
            self._retext.update(neighbours)  # their context quoted this record
        self._retext.discard(doc)
        key = partition_of(visibility, scope)
        if doc not in self._fresh:
            self.text.delete(key, doc)
        if self.store is None:  # for the keyword indexes of other cache folders
            conn.execute("INSERT INTO dropped(doc, partition, thread_key, thread_order) "
                         "SELECT doc, ?, thread_key, thread_order FROM docs WHERE doc=?", (key, doc))
        conn.execute("DELETE FROM docs WHERE doc=?", (doc,))
        return {rid}

    def _elect_winners(self, ids: Iterable[str]) -> None:
        """When several files claim one id, exactly one is served: a public copy before a
        private one (so another scope's private file never hides a public record), then the one
        at the id's own file name, then the first path in sort order. The others stay listed as
        conflicts."""
        conn = self.conn
        wanted = list(set(ids))
        contested: list[str] = []
        for chunk in _chunks(wanted, 500):
            marks = ",".join("?" * len(chunk))
            contested += [rid for (rid,) in conn.execute(
                f"SELECT id FROM docs WHERE id IN ({marks}) GROUP BY id HAVING count(*) > 1", chunk)]
            conn.execute(f"UPDATE docs SET winner=1 WHERE winner=0 AND id IN ({marks})", chunk)
        for rid in contested:
            rows = conn.execute("SELECT doc, path, visibility FROM docs WHERE id=?", (rid,)).fetchall()
            canonical = record_path(rid)
            best = min(rows, key=lambda r: (r[2] != "public", r[1] != canonical, r[1]))
            conn.execute("UPDATE docs SET winner=(doc=?) WHERE id=?", (best[0], rid))
            self._retext.update(doc for doc, _, _ in rows)
            self._moved.update(doc for doc, _, _ in rows)

    # -- hints from a file watcher --------------------------------------------------------

    def mark_dirty(self, rel_paths: Iterable[str]) -> None:
        """Mark files (and their folders) to be checked by content on the next sync: what a
        file watcher reports, so an edit in place is seen without waiting for the slice."""
        files, folders = set(), set()
        for rel in rel_paths:
            files.add(rel)
            folders.add(_parent(rel))
            folders.add(rel)  # the path may itself be a folder
        conn = self.conn
        with self._lock():
            conn.execute("BEGIN IMMEDIATE")
            try:
                for chunk in _chunks(sorted(files), 500):
                    conn.execute(f"UPDATE files SET racy=1 WHERE path IN ({','.join('?' * len(chunk))})", chunk)
                for chunk in _chunks(sorted(folders), 500):
                    conn.execute(f"UPDATE dirs SET racy=1 WHERE path IN ({','.join('?' * len(chunk))})", chunk)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # -- writes made by remember ---------------------------------------------------------

    def apply_writes(self, items: list[tuple[str, Record]],
                     write_files: Callable[[], dict[str, FileStat]]) -> None:
        """Write record files and index them, overlapping the two.

        ``write_files`` runs in a thread while the index rows are inserted inside an open
        transaction (SQLite and file I/O both release the GIL); the transaction commits only
        after the files are durable, so the index never claims a record that is not on disk.
        """
        def action() -> None:
            with ThreadPoolExecutor(max_workers=1) as pool:
                pending = pool.submit(write_files)
                try:
                    docs = self._index_written(items)
                finally:
                    stats = pending.result()  # re-raises a write failure: the transaction rolls back
            now_ns = time.time_ns()  # a hand edit right after our write may keep our mtime
            self.conn.executemany(
                "INSERT OR REPLACE INTO files VALUES(?,?,?,?,?,?,?,NULL)",
                [(rel, _parent(rel), stats[rel].mtime_ns, stats[rel].size, stats[rel].ino,
                  int(_is_racy(stats[rel].mtime_ns, now_ns)), doc)
                 for doc, (rel, _) in zip(docs, items)])
        self._write(action)

    def put(self, items: Sequence[tuple[int | None, Record]]) -> None:
        """Insert or replace records in the database that is the store, in one transaction:
        a replaced record's old doc goes and the new copy gets a new doc number."""
        def action() -> None:
            olds = [doc for doc, _ in items if doc is not None]
            for doc in olds:
                self._drop_doc(doc)
            if olds:
                self._prune_dropped()
            self._insert_docs([("", record) for _, record in items])
        self._write(action)

    def drop_doc(self, doc: int) -> None:
        """Remove one record for good (``forget --purge`` in the database that is the store)."""
        def action() -> None:
            self._drop_doc(doc)
            self._prune_dropped()
        self._write(action)

    def _prune_dropped(self) -> None:
        """Keep the drop log to its last ``DROPPED_KEEP`` entries (a keyword index further
        behind is rebuilt instead of caught up)."""
        self.conn.execute("DELETE FROM dropped WHERE seq <= (SELECT max(seq) FROM dropped) - ?", (DROPPED_KEEP,))

    def _index_written(self, items: list[tuple[str, Record]]) -> list[int]:
        conn = self.conn
        known: set[str] = set()
        for chunk in _chunks([rel for rel, _ in items], 500):
            marks = ",".join("?" * len(chunk))
            known.update(p for (p,) in conn.execute(f"SELECT path FROM files WHERE path IN ({marks})", chunk))
        touched: set[str] = set()
        for rel in known:
            touched.update(self._drop_file(rel))
        docs = self._insert_docs(items)
        touched.update(record.id for _, record in items)
        self._elect_winners(touched)
        return docs

    # -- lookups -------------------------------------------------------------------------

    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]:
        result: dict[str, IndexedRecord] = {}
        for chunk in _chunks(list(dict.fromkeys(ids)), 500):
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                    f"SELECT {_DOC_COLUMNS} FROM docs WHERE winner=1 AND id IN ({marks})", chunk):
                item = _row_to_indexed(row)
                result[item.record.id] = item
        return result

    # -- vectors -------------------------------------------------------------------------

    def vector_indexes(self, model: str, keys: list[str]) -> list[VectorIndex]:
        """The vector indexes of these partitions, for one model."""
        import hashlib

        found = []
        for key in keys:
            index = self._vector_indexes.get((model, key))
            if index is None:
                folder = (self._vectors_root() / hashlib.sha256(model.encode()).hexdigest()[:16]
                          / hashlib.sha256(key.encode()).hexdigest()[:16])
                index = self._vector_indexes[(model, key)] = VectorIndex(folder, model, key)
            found.append(index)
        return found

    def _vectors_root(self) -> Path:
        """Doc numbers belong to this instance of the index (a recreated index starts again
        from 1), so its vector indexes live in a folder of their own."""
        return self.derived.with_suffix(".vectors") / (self._get_meta("instance") or "none")

    def vector_status(self) -> list[dict[str, Any]]:
        """Each vector index of this index instance: model, partition, rows, rows under the graph."""
        found = []
        for state_file in sorted(self._vectors_root().glob("*/*/state.json")):
            try:
                state = json.loads(state_file.read_text())
            except (OSError, ValueError):
                continue
            found.append({"model": state.get("model"), "partition": state.get("partition"),
                          "rows": state.get("rows", 0), "graph_rows": state.get("ann_rows", 0)})
        return found

    def partition_keys(self) -> list[str]:
        return sorted(self._partitions())

    def sync_vectors(self, model: str, keys: list[str],
                     vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]) -> None:
        """Bring these partitions' vector indexes up to date with the records indexed since.

        ``vectors_for`` maps (doc, text hash) pairs to vectors by hash (from the cache,
        computing missing ones); it runs before the write lock is taken, so a long embedding
        never holds up writers, and again under it for anything that arrived meanwhile (cached
        by then). Rows are appended in slices (bounded memory on a big first sync). A graph that
        is due is built outside the lock by one process at a time (others search exactly
        meanwhile) and installed under it."""
        import filelock
        import numpy as np

        partitions = self._partitions()
        for key, index in zip(keys, self.vector_indexes(model, keys)):
            if key not in partitions:
                continue
            condition, params = partitions[key]

            def new_rows(upto: int, index: VectorIndex = index, condition: str = condition,
                         params: list[str] = params) -> list[tuple[int, str]]:
                return list(self.conn.execute(
                    f"SELECT doc, hash FROM docs WHERE doc > ? AND doc <= ? AND {condition} ORDER BY doc",
                    [index.last_doc, upto, *params]))

            upto = self.conn.execute("SELECT coalesce(max(doc), 0) FROM docs").fetchone()[0]
            if upto > index.last_doc:
                vectors_for(new_rows(upto))  # outside the lock: the slow part, if anything is missing
                with self._lock():
                    rows = new_rows(upto)
                    for start in range(0, len(rows), VECTOR_SLICE):
                        piece = rows[start:start + VECTOR_SLICE]
                        found = vectors_for(piece)
                        index.append([doc for doc, _ in piece], np.stack([found[h] for _, h in piece]), piece[-1][0])
                    index.append([], None, upto)  # nothing else of this partition up to here
                    live = self.conn.execute(f"SELECT count(*) FROM docs WHERE {condition}", params).fetchone()[0]
                    if index.rows > 1000 and index.rows > 1.25 * live:  # replaced or deleted records
                        index.compact({doc for (doc,) in self.conn.execute(
                            f"SELECT doc FROM docs WHERE {condition}", params)})
            if index.wants_graph():
                try:
                    with filelock.FileLock(str(index.folder) + ".build.lock", timeout=0):
                        built = index.build_graph()
                        if built is not None:
                            with self._lock():
                                index.install_graph(built)
                except filelock.Timeout:
                    pass  # another process is building it; exact search until it is installed

    def admitted_docs(self, docs: list[int], access: Access, filters: Filters) -> set[int]:
        """Which of these docs the caller may see (scope, lifecycle, filters, served copy)."""
        where, params = self._where(access, filters)
        return self._admitted(docs, where, params)

    def texts(self, docs: Sequence[int]) -> dict[int, str]:
        result: dict[int, str] = {}
        for chunk in _chunks(list(docs), 500):
            marks = ",".join("?" * len(chunk))
            result.update(self.conn.execute(f"SELECT doc, text FROM docs WHERE doc IN ({marks})", chunk))
        return result

    def ranking_facts(self, docs: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        """(id, created) per doc: all the blend needs, without loading texts and metadata."""
        result: dict[int, tuple[str, str | None]] = {}
        for chunk in _chunks(list(docs), 500):
            marks = ",".join("?" * len(chunk))
            for doc, rid, created in self.conn.execute(
                    f"SELECT doc, id, created FROM docs WHERE doc IN ({marks})", chunk):
                result[doc] = (rid, created)
        return result

    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]:
        result: dict[int, IndexedRecord] = {}
        for chunk in _chunks(list(docs), 500):
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM docs WHERE doc IN ({marks})", chunk):
                item = _row_to_indexed(row)
                result[item.doc] = item
        return result

    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        """For each text hash, the (id, scope) of the records that have that exact text."""
        result: dict[str, list[tuple[str, Scope]]] = {}
        for chunk in _chunks(list(set(hashes)), 500):
            marks = ",".join("?" * len(chunk))
            for h, rid, scope, vis in self.conn.execute(
                    f"SELECT hash, id, scope, visibility FROM docs WHERE winner=1 AND hash IN ({marks})", chunk):
                result.setdefault(h, []).append((rid, Scope(scope, vis)))
        return result

    def all_records(self) -> list[IndexedRecord]:
        """Every served record of this store, by id."""
        return [_row_to_indexed(row) for row in self.conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM docs WHERE winner=1 ORDER BY id")]

    def count(self, access: Access | None = None) -> int:
        """Served records (that ``access`` may see, in the lifecycles it admits)."""
        if access is None:
            return self.conn.execute("SELECT count(*) FROM docs WHERE winner=1").fetchone()[0]
        where, params = access.sql("d")
        return self.conn.execute(f"SELECT count(*) FROM docs d WHERE d.winner=1 AND {where}", params).fetchone()[0]

    def broken(self) -> list[tuple[str, str]]:
        return list(self.conn.execute("SELECT path, error FROM files INDEXED BY files_error "
                                      "WHERE error IS NOT NULL ORDER BY path"))

    def conflicts(self) -> list[tuple[str, str, str, str]]:
        """(id, path, scope, visibility) of files whose id is also claimed by another file
        (and that are not the one served)."""
        return list(self.conn.execute(
            "SELECT id, path, scope, visibility FROM docs WHERE winner=0 ORDER BY id, path"))

    # -- search --------------------------------------------------------------------------

    def _where(self, access: Access, filters: Filters) -> tuple[str, list[object]]:
        self._meta_filter = filters
        scope_sql, scope_params = access.sql("d")
        filter_sql, filter_params = filters.sql("d")
        return f"d.winner=1 AND {scope_sql} AND {filter_sql}", scope_params + filter_params

    def keyword(self, terms: list[str], access: Access, filters: Filters, limit: int,
                offset: int = 0) -> list[tuple[int, float]]:
        """(doc, BM25 score) of records sharing a term, best first, after scope, lifecycle and
        filters. The keyword index ranks; SQLite admits. The window of ranked candidates grows
        until enough are admitted or none are left."""
        if not terms:
            return []
        where, params = self._where(access, filters)
        want = offset + limit
        window = max(want + want // 4, 50)  # most candidates pass admission: grow only if not
        while True:
            ranked = self.text.search(self.reach(access), terms, window)
            admitted = self._admitted([doc for doc, _ in ranked], where, params)
            rows = [(doc, score) for doc, score in ranked if doc in admitted]
            if len(rows) >= want or len(ranked) < window:
                return rows[offset:want]
            window *= 4

    @staticmethod
    def reach(access: Access) -> list[str]:
        """The text indexes a caller may search: the public one, and its own private one."""
        return partitions_in_reach(access.scope)

    def _admitted(self, docs: list[int], where: str, params: list[object]) -> set[int]:
        admitted: set[int] = set()
        for chunk in _chunks(docs, 500):
            marks = ",".join("?" * len(chunk))
            admitted.update(d for (d,) in self.conn.execute(
                f"SELECT d.doc FROM docs d WHERE d.doc IN ({marks}) AND {where}", [*chunk, *params]))
        return admitted

    def fields_candidates(self, terms: list[str], access: Access,
                          filters: Filters) -> list[tuple[int, str, str | None, str | None, str, str, str | None, int, str]]:
        """(doc, id, name, description, text, type, updated, file mtime ns, path) of the records the
        caller may see that contain any term in name, description or text (all of them when
        there are no terms: a browse). The ``fields`` ranking scores them (``ranking.fields``)."""
        where, params = self._where(access, filters)
        checks = []
        for term in terms:
            spaced = term.replace("-", " ").replace("_", " ")
            checks.append("instr(replace(replace(lower(coalesce(d.name, '')), '-', ' '), '_', ' '), ?)"
                          " OR instr(lower(coalesce(d.name, '')), ?)"
                          " OR instr(lower(coalesce(d.description, '')), ?) OR instr(lower(d.text), ?)")
            params += [spaced, term, term, term]
        match = f" AND ({' OR '.join(checks)})" if checks else ""
        # A record without a file was last touched when it was last written: updated, else created.
        touched = "d.updated" if self.store is not None else "coalesce(d.updated, d.created)"
        return list(self.conn.execute(
            f"SELECT d.doc, d.id, d.name, d.description, d.text, d.type, {touched}, f.mtime_ns, d.path "
            f"FROM docs d LEFT JOIN files f ON f.path = d.path WHERE {where}{match}", params))

    def exact(self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int,
              offset: int = 0) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) for texts containing ``query``, shortest first.

        ASCII queries of 5+ characters take candidates from the chunk index, shortest first, and
        SQLite confirms them (and applies scope, lifecycle and filters) in growing windows.
        Shorter or non-ASCII queries walk the texts shortest-first in SQLite and stop as soon as
        enough match (short substrings match often)."""
        if not query:
            return []
        where, params = self._where(access, filters)
        if query.isascii():
            check, needle = ("instr(d.text, ?)", query) if case_sensitive else ("instr(lower(d.text), ?)", query.lower())
        else:
            self.conn.create_function("eidetic_contains", 2, _contains if case_sensitive
                                      else _contains_casefold, deterministic=True)
            check, needle = "eidetic_contains(d.text, ?)", query
        qlen = len(query)
        want = offset + limit
        if query.isascii() and qlen >= MIN_CHUNKED_QUERY:
            window = max(2 * want, 50)
            while True:
                ranked = self.text.shortest_containing(self.reach(access), query, window)
                confirmed = self._admitted([doc for doc, _ in ranked], f"{where} AND {check}", [*params, needle])
                rows = [(doc, length) for doc, length in ranked if doc in confirmed]
                if len(rows) >= want or len(ranked) < window:
                    break
                window *= 4
            rows = rows[offset:want]
        else:
            sql = (f"SELECT d.doc, d.len FROM docs d INDEXED BY docs_len WHERE {where} AND {check} "
                   f"ORDER BY d.len, d.id LIMIT ? OFFSET ?")
            rows = list(self.conn.execute(sql, [*params, needle, limit, offset]))
        return [(doc, min(1.0, qlen / length) if length else 0.0) for doc, length in rows]

    # -- maintenance ---------------------------------------------------------------------

    def rebuild(self) -> SyncReport:
        """Drop everything derived and index the records again (from the files, or from the
        database that is the store)."""
        if self.store is None:
            self._follow_database(rebuild=True)
            return SyncReport()
        self.close()
        with self._lock():
            self._drop_files()
        return self.sync(full=True)

    def status(self, verify: bool = True) -> dict[str, Any]:
        """Counts, problems and whether the index matches the files (``verify``: stat every
        file to tell; a caller that has just run a full sync already knows)."""
        stale = False
        if self.store is not None and self.store.exists():
            plan = self._plan(True) if verify else None
            stale = plan is not None and bool(plan["changed"] or plan["drop"] or plan["gone"])
        elif self.store is not None:
            stale = self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
        return {
            "store": str(self.store.root if self.store is not None else self.path),
            "index": str(self.path),
            "records": self.count(),
            "current": not stale,
            "vectors": self.vector_status(),
            "unparseable": [{"path": p, "error": e} for p, e in self.broken()],
            "conflicts": [{"id": i, "path": p, "scope": s, "visibility": v} for i, p, s, v in self.conflicts()],
        }


# Upgrades of a database that is the store, from each old schema version to the next. A change
# to _SCHEMA must add its step here: such a database is never dropped and rebuilt.
MIGRATIONS: dict[str, tuple[str, str]] = {  # from version -> (to version, SQL script)
    # 11: the drop log and a change stamp; each cache folder's keyword index keeps its own
    # state instead of the shared flag
    "10": ("11", _DROPPED + ";DELETE FROM meta WHERE key='keyword_pending'"
                 ";INSERT OR REPLACE INTO meta VALUES('change', lower(hex(randomblob(16))))"),
}


def _lay_out(conn: sqlite3.Connection, path: Path) -> None:
    """Create or upgrade the database that is the store, in one write transaction that reads
    the schema version again: concurrent first users (with any cache folders) do it once."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = StoreIndex._schema_version(conn)
        if version is None:
            _run(conn, _SCHEMA)
            conn.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            conn.execute("INSERT INTO meta VALUES('instance', ?)", (uuid.uuid4().hex,))
            conn.execute("INSERT INTO meta VALUES('change', ?)", (uuid.uuid4().hex,))
        while version is not None and version != SCHEMA_VERSION:
            if version not in MIGRATIONS:
                raise env_error(f"the database {path} has schema version {version}, which this eidetic "
                                f"(schema {SCHEMA_VERSION}) cannot read", "upgrade eidetic; the file was left as it was")
            version, script = MIGRATIONS[version]
            _run(conn, script)
            conn.execute("UPDATE meta SET value=? WHERE key='schema'", (version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        conn.close()
        raise


def _run(conn: sqlite3.Connection, script: str) -> None:
    """Run a script's statements inside the caller's transaction (``executescript`` would
    commit it first)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


def _source(metadata: dict[str, Any]) -> str | None:
    value = metadata.get("source")
    return value if isinstance(value, str) else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return str(exc) or type(exc).__name__


def _contains(text: str, needle: str) -> bool:
    return needle in text


def _contains_casefold(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()
