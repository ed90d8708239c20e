"""What changed in a record folder since its index last looked, found without reading every file.

The index keeps each file's stat (``files``) and each folder's mtime (``dirs``):
- every sync compares the mtime of each folder of the store with the recorded one; a folder
  changes when a file in it is created, deleted or replaced by rename (how eidetic, ``sed -i``,
  vim and most tools save), and only changed folders are listed and stat-checked again.
  eidetic writes into 256 hash folders, so that is ~400 files at 100k;
- a file edited in place changes only its own mtime. Each sync also stat-checks a slice of
  ``EIDETIC_VERIFY_FILES`` files, round robin by path: a store that small is checked
  completely on every recall, a larger one within (files / that many) recalls, at a bounded
  cost per recall. ``eidetic index --refresh`` checks everything at once;
- the store folder's identity (device and inode) is recorded too: a folder deleted and made
  again, or a backup moved into its place, is compared file by file, since its folders' times
  may match the recorded ones (``cp -a`` keeps them); a new folder may get the inode the old
  one freed, so a write also marks the folders it wrote into racy: a copy put back with the
  times recorded before the write is still listed again;
- timestamps have coarse granularity (a clock tick, up to 10 ms on Linux; whole seconds on
  some file systems), so a file or folder recorded within ``RACY_NS`` of its mtime could still
  change without its stat changing: it is "racy" (as in git) and checked again, by content,
  on the next sync. A file watcher marks what it saw change as racy too (``eidetic watch``).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field

from .folder import FileStat, RecordFolder

RACY_NS = 50_000_000  # 5x the coarsest Linux clock tick
RACY_NS_COARSE = 2_100_000_000  # file systems that keep whole seconds (FAT, old HFS+)

Listings = dict[str, tuple[int, dict[str, FileStat]]]  # folder -> (its mtime, its record files)


def is_racy(mtime_ns: int, now_ns: int) -> bool:
    """Whether a stat taken at ``now_ns`` could miss a later change at the same mtime."""
    window = RACY_NS_COARSE if mtime_ns % 1_000_000_000 == 0 else RACY_NS
    return now_ns - mtime_ns < window


def folder_of(rel: str) -> str:
    """The folder of a store-relative path ('' for the store's own)."""
    return rel.rpartition("/")[0]


@dataclass
class Changes:
    """What a sync has to do to bring the index up to the folder."""

    now_ns: int  # when the folder was looked at: racy is measured against it
    gone: list[str]  # folders that no longer exist
    read: list[tuple[str, FileStat]] = field(default_factory=list)  # files to (re)read, as listed
    drop: list[str] = field(default_factory=list)  # files that no longer exist
    dirs: list[tuple[str, int, int, int]] = field(default_factory=list)  # (folder, mtime ns, racy, files) to record
    changed: int = 0  # files new or with a different stat (racy ones are only re-checked)
    folder: str | None = None  # the store folder's identity to record, when it is new

    @property
    def stale(self) -> bool:
        """Whether the index differs from the files (not only has racy entries to re-check)."""
        return bool(self.changed or self.drop or self.gone)


def find_changes(conn: sqlite3.Connection, folder: RecordFolder, full: bool, verify_files: int) -> Changes | None:
    """What differs between the folder and the index: folders to relist, files to (re)read or
    drop; None when nothing does. ``full`` lists and stats everything; otherwise the next
    ``verify_files`` files are stat-checked (``verification_slice``)."""
    known_dirs = {p: (m, r, n) for p, m, r, n in conn.execute("SELECT path, mtime_ns, racy, nfiles FROM dirs")}
    now_ns = time.time_ns()
    identity = folder.identity()
    row = conn.execute("SELECT value FROM meta WHERE key='folder'").fetchone()
    replaced = identity != (row[0] if row else None)  # another folder at this path: compare every file
    everything = full or replaced or not known_dirs
    if everything:
        listings: Listings = {rel_dir: (mtime, files) for rel_dir, mtime, files in folder.walk()}
        seen_dirs = set(listings)
    else:
        listings, seen_dirs = _list_changed(folder, known_dirs)
    # A folder not reached is gone, also when a symlink now stands above it: what is below is
    # never read through it.
    changes = Changes(now_ns, [d for d in known_dirs if d not in seen_dirs and not folder.real_dir(d)])
    changes.folder = identity if replaced else None
    _compare(conn, listings, known_dirs, changes)
    for rel_dir in changes.gone:
        changes.drop.extend(p for (p,) in conn.execute("SELECT path FROM files WHERE dir=?", (rel_dir,)))
    settled = set(listings).union(changes.gone)  # folders whose files are decided already
    if not everything:  # files edited in place change no folder: check a slice
        _check_slice(conn, folder, settled, changes, verify_files)
    _recheck_racy(conn, folder, settled, changes)
    if not (changes.read or changes.drop or changes.dirs or changes.gone or changes.folder):
        return None
    return changes


def _list_changed(folder: RecordFolder, known_dirs: dict[str, tuple[int, int, int]]) -> tuple[Listings, set[str]]:
    """List the folders whose mtime changed (or that are racy), walking down through unchanged
    ones by their recorded subfolders; returns the listings and every folder that exists."""
    children: dict[str, list[str]] = {}
    for rel_dir in known_dirs:
        if rel_dir:
            children.setdefault(folder_of(rel_dir), []).append(rel_dir)
    listings: Listings = {}
    seen_dirs: set[str] = set()
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        mtime = folder.dir_mtime(rel_dir)
        if mtime is None:
            continue
        seen_dirs.add(rel_dir)
        known = known_dirs.get(rel_dir)
        if known is not None and known[0] == mtime and not known[1]:
            pending.extend(children.get(rel_dir, ()))
            continue
        subdirs, files = folder.list_dir(rel_dir)
        listings[rel_dir] = (mtime, files)
        pending.extend(subdirs)
    return listings, seen_dirs


def _compare(
    conn: sqlite3.Connection, listings: Listings, known_dirs: dict[str, tuple[int, int, int]], changes: Changes
) -> None:
    """The listed folders' files against the recorded ones: new, changed or racy files are read
    again, vanished ones dropped; folders whose state changed are recorded again."""
    for rel_dir, (mtime, files) in listings.items():
        known = known_dirs.get(rel_dir)
        racy = int(is_racy(mtime, changes.now_ns))
        if known is None or known[:3] != (mtime, racy, len(files)):
            changes.dirs.append((rel_dir, mtime, racy, len(files)))
        indexed = {
            p: (m, s, i, r)
            for p, m, s, i, r in conn.execute(
                "SELECT path, mtime_ns, size, ino, racy FROM files WHERE dir=?", (rel_dir,)
            )
        }
        for rel, st in files.items():
            old = indexed.pop(rel, None)
            if old is None or old[:3] != (st.mtime_ns, st.size, st.ino):
                changes.read.append((rel, st))
                changes.changed += 1
            elif old[3]:  # racy: unchanged stat, read again all the same
                changes.read.append((rel, st))
        changes.drop.extend(indexed)


def _check_slice(
    conn: sqlite3.Connection, folder: RecordFolder, settled: set[str], changes: Changes, verify_files: int
) -> None:
    """Stat this sync's verification slice (files in folders just listed or gone are decided)."""
    for rel, mtime_ns, size, ino in verification_slice(conn, verify_files):
        if folder_of(rel) in settled:
            continue
        st = folder.stat_file(rel)
        if st is None:
            changes.drop.append(rel)
        elif (st.mtime_ns, st.size, st.ino) != (mtime_ns, size, ino):
            changes.read.append((rel, st))
            changes.changed += 1


def _recheck_racy(conn: sqlite3.Connection, folder: RecordFolder, settled: set[str], changes: Changes) -> None:
    """Racy files are read again whatever their stat says (unless their folder was listed or
    is gone)."""
    for (rel,) in conn.execute("SELECT path FROM files INDEXED BY files_racy WHERE racy = 1"):
        if folder_of(rel) not in settled:
            st = folder.stat_file(rel)
            if st is None:
                changes.drop.append(rel)
            else:
                changes.read.append((rel, st))


def verification_slice(conn: sqlite3.Connection, count: int) -> list[tuple[str, int, int, int]]:
    """The next ``count`` indexed files (``EIDETIC_VERIFY_FILES``), round robin by path, to stat
    on this sync (with their recorded mtime, size and inode): a store that small is fully
    checked every time, a larger one within files / count syncs, whatever its folder layout."""
    if count <= 0:  # 0: rely on folder mtimes (and a watcher) alone
        return []
    row = conn.execute("SELECT value FROM meta WHERE key=?", ("verify_cursor",)).fetchone()
    cursor = (row[0] if row else None) or ""
    query = "SELECT path, mtime_ns, size, ino FROM files WHERE path {} ? ORDER BY path LIMIT ?"
    rows = conn.execute(query.format(">"), (cursor, count)).fetchall()
    if len(rows) < count:  # wrap around
        rows += conn.execute(query.format("<="), (cursor, count - len(rows))).fetchall()
    if rows:
        try:  # best effort: never wait behind a writer just to move the cursor
            conn.execute("PRAGMA busy_timeout=0")
            conn.execute("INSERT OR REPLACE INTO meta VALUES('verify_cursor', ?)", (rows[-1][0],))
        except sqlite3.OperationalError:
            pass
        finally:
            conn.execute("PRAGMA busy_timeout=30000")
    return rows
