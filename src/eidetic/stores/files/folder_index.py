"""The derived index of a record folder (the ``files`` backend), in the user cache folder.

It is a record database (``index.database``) plus folder sync: the ``files`` and ``dirs``
tables say what of the folder it reflects, :meth:`FolderIndex.sync` reconciles it with the
files (``folder_changes`` finds what changed), and when several files claim one id it elects
the one served. It is never the source of truth: an old, damaged or deleted index is simply
rebuilt from the files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import frontmatter
from ...index.derived import DerivedDatabase
from ...progress import no_steps
from ...records import DEFAULT_SCOPE, Record, Scope, record_path
from ...settings import DEFAULT_ANN_THRESHOLD, DEFAULT_VERIFY_FILES
from ...sqlite_db import chunks as _chunks
from .folder import FileStat, RecordFolder
from .folder_changes import Changes, find_changes, folder_of, is_racy

READ_STEP = 100  # files read between two progress steps
LONG_READ = 1000  # from this many files to read, a sync shows progress: ~2 s at the ~570 files/s measured here


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    broken: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


class FolderIndex(DerivedDatabase):
    """The index of the record files in ``folder``, in one SQLite file (``path``) with its
    keyword and vector indexes beside it."""

    # The file's mtime (joined from ``files``) counts as a write too: ``ranking.fields``.
    LAST_TOUCHED = "d.updated"
    rebuilt_from = "it is rebuilt from the record files"

    def __init__(
        self,
        folder: RecordFolder,
        path: Path,
        default_scope: Scope = DEFAULT_SCOPE,
        *,
        verify_files: int = DEFAULT_VERIFY_FILES,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
    ) -> None:
        """``verify_files``: files stat-checked per sync (``stores.files.folder_changes``);
        ``ann_threshold``: as ``RecordDatabase``."""
        super().__init__(path, path, ann_threshold)
        self.folder = folder
        self.default_scope = default_scope  # of files that name none
        self.verify_files = verify_files
        self.source = str(folder.root)

    # -- sync with the files -------------------------------------------------------------

    def sync(self, full: bool = False, verify: int | None = None) -> SyncReport:
        """Bring the index up to date with the folder's files; cheap when nothing changed.

        ``full`` stats every file (``eidetic index --refresh``, rebuilds, status); otherwise
        the folder check plus one verification slice of ``verify`` files (default
        ``verify_files``) run (``folder_changes``)."""
        count = self.verify_files if verify is None else verify
        report = SyncReport()
        self._check_keyword()
        if not self.folder.exists():
            if self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone():
                self._write(lambda: self._forget_all(report))
            return report
        generation = self.meta("generation")
        changes = find_changes(self.conn, self.folder, full, count)
        if changes is None:
            return report

        def apply() -> None:
            # Another process may have synced between our look and our write lock: look again.
            current = (
                changes if self.meta("generation") == generation else find_changes(self.conn, self.folder, full, count)
            )
            if current is not None:
                self._apply(current, report)

        self._write(apply)
        return report

    def _apply(self, changes: Changes, report: SyncReport) -> None:
        """Drop the files gone, index the changed ones, record the folders' new state, and
        elect the served copy of every id touched."""
        conn = self.conn
        touched_ids: set[str] = set()
        for rel in changes.drop:
            touched_ids.update(self._drop_file(rel))
            report.removed += 1
        total = len(changes.read)
        step = (
            self.progress.start(f"reading {total} record files of {self.folder.root}", "file", total)
            if total >= LONG_READ
            else no_steps
        )
        for done, (rel, listed) in enumerate(changes.read, start=1):
            touched_ids.update(self._read_file(rel, listed, changes.now_ns, report))
            if done % READ_STEP == 0 or done == total:
                step(done)
        for rel_dir in changes.gone:
            conn.execute("DELETE FROM dirs WHERE path=?", (rel_dir,))
        conn.executemany("INSERT OR REPLACE INTO dirs VALUES(?,?,?,?)", changes.dirs)
        if changes.folder is not None:
            conn.execute("INSERT OR REPLACE INTO meta VALUES('folder', ?)", (changes.folder,))
        self._elect_winners(touched_ids)

    def _read_file(self, rel: str, listed: FileStat, now_ns: int, report: SyncReport) -> set[str]:
        """Index one new or changed file (an unreadable one is kept with its error); returns
        the ids whose served copy may change."""
        conn = self.conn
        old = conn.execute("SELECT doc FROM files WHERE path=?", (rel,)).fetchone()
        try:
            content, st = self.folder.read_text(rel)
            record: Record | None = frontmatter.parse(content, rel[:-3], self.default_scope)
            error = None
        except FileNotFoundError:
            report.removed += 1
            return self._drop_file(rel)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            record, st, error = None, self.folder.stat_file(rel) or listed, _reason(exc)
        racy = int(is_racy(st.mtime_ns, now_ns))
        touched: set[str] = set()
        if old is not None:
            previous = self.docs.by_docs([old[0]]).get(old[0]) if old[0] is not None else None
            if record is not None and previous is not None and previous.record == record:
                conn.execute(
                    "UPDATE files SET mtime_ns=?, size=?, ino=?, racy=? WHERE path=?",
                    (st.mtime_ns, st.size, st.ino, racy, rel),
                )
                return touched
            touched = self._drop_file(rel)
            report.updated += 1
        else:
            report.added += 1
        doc = self._insert_doc(rel, record) if record is not None else None
        if record is not None:
            touched.add(record.id)
        else:
            report.broken.append((rel, error or "unreadable"))
        conn.execute(
            "INSERT OR REPLACE INTO files VALUES(?,?,?,?,?,?,?,?)",
            (rel, folder_of(rel), st.mtime_ns, st.size, st.ino, racy, doc, error),
        )
        return touched

    def _forget_all(self, report: SyncReport) -> None:
        report.removed = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        for table in ("files", "dirs", "docs", "partitions"):
            self.conn.execute(f"DELETE FROM {table}")
        self.text.drop()

    def _drop_file(self, rel: str) -> set[str]:
        conn = self.conn
        row = conn.execute("SELECT doc FROM files WHERE path=?", (rel,)).fetchone()
        conn.execute("DELETE FROM files WHERE path=?", (rel,))
        if row is None or row[0] is None:
            return set()
        return self._drop_doc(row[0])

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
            contested += [
                rid
                for (rid,) in conn.execute(
                    f"SELECT id FROM docs WHERE id IN ({marks}) GROUP BY id HAVING count(*) > 1", chunk
                )
            ]
            conn.execute(f"UPDATE docs SET winner=1 WHERE winner=0 AND id IN ({marks})", chunk)
        for rid in contested:
            rows = conn.execute("SELECT doc, path, visibility FROM docs WHERE id=?", (rid,)).fetchall()
            canonical = record_path(rid)
            best = min(rows, key=lambda r: (r[2] != "public", r[1] != canonical, r[1]))
            conn.execute("UPDATE docs SET winner=(doc=?) WHERE id=?", (best[0], rid))

    # -- hints from a file watcher --------------------------------------------------------

    def mark_dirty(self, rel_paths: Iterable[str]) -> None:
        """Mark files (and their folders) to be checked by content on the next sync: what a
        file watcher reports, so an edit in place is seen without waiting for the slice."""
        files, folders = set(), set()
        for rel in rel_paths:
            files.add(rel)
            folders.add(folder_of(rel))
            folders.add(rel)  # the path may itself be a folder
        conn = self.conn
        with self.index_lock():
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

    def apply_writes(self, items: list[tuple[str, Record]], write_files: Callable[[], dict[str, FileStat]]) -> None:
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
                [
                    (
                        rel,
                        folder_of(rel),
                        stats[rel].mtime_ns,
                        stats[rel].size,
                        stats[rel].ino,
                        int(is_racy(stats[rel].mtime_ns, now_ns)),
                        doc,
                    )
                    for doc, (rel, _) in zip(docs, items)
                ],
            )
            # The folders written into, as racy (relisted on the next sync): a sync then looks
            # for what was written even if the folder vanishes or a copy with the times it
            # had before the write is put in its place first (``folder_changes``).
            self.conn.executemany(
                "INSERT INTO dirs VALUES(?,0,1,0) ON CONFLICT(path) DO UPDATE SET racy=1",
                [(d,) for d in _with_parents(rel for rel, _ in items)],
            )

        self._write(action)

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

    # -- maintenance ---------------------------------------------------------------------

    def broken(self) -> list[tuple[str, str]]:
        """(path, error) of the files that could not be read as records."""
        return list(
            self.conn.execute(
                "SELECT path, error FROM files INDEXED BY files_error WHERE error IS NOT NULL ORDER BY path"
            )
        )

    def rebuild(self) -> SyncReport:
        """Drop everything derived and index the files again."""
        self.close()
        with self.index_lock():
            self._drop_files()
        return self.sync(full=True)

    def status(self, verify: bool = True) -> dict[str, Any]:
        """Counts, problems and whether the index matches the files (``verify``: stat every
        file to tell; a caller that has just run a full sync already knows)."""
        if self.folder.exists():
            changes = find_changes(self.conn, self.folder, True, self.verify_files) if verify else None
            stale = changes is not None and changes.stale
        else:
            stale = self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
        return self._status(str(self.folder.root), not stale, self.broken())


def _with_parents(paths: Iterable[str]) -> set[str]:
    """The folders of these store-relative file paths, and each of their parent folders (the
    store's own, '', included)."""
    folders: set[str] = set()
    for rel in paths:
        rel_dir = folder_of(rel)
        while rel_dir not in folders:
            folders.add(rel_dir)
            if not rel_dir:
                break
            rel_dir = folder_of(rel_dir)
    return folders


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return str(exc) or type(exc).__name__
