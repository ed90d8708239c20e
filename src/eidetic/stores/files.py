"""The files store: one markdown file per record in a folder, safe under crashes and concurrency.

Writes go to a uniquely named hidden temp file in the target folder, are fsynced, then renamed
over the record file, so a reader (or a crash) only ever sees the old or the new complete
version. A batch takes the store lock (``.eidetic.lock``) so that checks such as duplicate
detection and the writes they guard are one step for concurrent writers. Hidden files and
folders, ``MEMORY.md`` and non-markdown files are never records; symlinks are not followed,
so no path outside the store is read or written.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat as statmod
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from ..errors import env_error

LOCK_NAME = ".eidetic.lock"
STAGING_PREFIX = ".staging-"
INDEX_FILE = "memory.md"  # compared case-insensitively: MEMORY.md is an index, never a record
BULK_SYNC_MIN = 64  # batches this large are made durable with one syncfs instead of fsync per file
LOCK_TIMEOUT_SECONDS = 60.0


class FileStat(NamedTuple):
    """What change detection compares: a file is unchanged while all of these are equal.
    (A named tuple, not a dataclass: change detection builds one per file per check.)"""

    mtime_ns: int
    size: int
    ino: int


class FilesStore:
    """A folder of record files. Paths given to and returned by it are relative, '/'-separated."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root = str(root)

    # -- reading -------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.root.is_dir()

    def path_of(self, rel: str) -> str:
        """The absolute path of a store-relative one; never outside the store."""
        parts = rel.split("/")
        if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
            raise env_error(f"refusing a path outside the store: {rel!r}")
        return f"{self._root}/{rel}"

    def read_text(self, rel: str) -> tuple[str, FileStat]:
        """The file's text and the stat taken from the same open file (no race between them)."""
        fd = os.open(self.path_of(rel), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            st = os.fstat(fd)
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        return data.decode("utf-8"), FileStat(st.st_mtime_ns, st.st_size, st.st_ino)

    def dir_mtime(self, rel_dir: str) -> int | None:
        try:
            st = os.stat(f"{self._root}/{rel_dir}" if rel_dir else self._root, follow_symlinks=False)
        except OSError:
            return None
        return st.st_mtime_ns if statmod.S_ISDIR(st.st_mode) else None

    def list_dir(self, rel_dir: str) -> tuple[list[str], dict[str, FileStat]]:
        """Subfolders and record files (with their stat) of one folder.

        This loop runs for every file a recall checks, so it is written for speed.
        """
        base = f"{self._root}/{rel_dir}" if rel_dir else self._root
        prefix = f"{rel_dir}/" if rel_dir else ""
        subdirs: list[str] = []
        files: dict[str, FileStat] = {}
        try:
            entries = os.scandir(base)
        except (FileNotFoundError, NotADirectoryError):
            return subdirs, files
        with entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    if name.endswith(".md"):
                        if not entry.is_file(follow_symlinks=False) or name.lower() == INDEX_FILE:
                            continue
                        st = entry.stat(follow_symlinks=False)
                        files[prefix + name] = FileStat(st.st_mtime_ns, st.st_size, st.st_ino)
                    elif entry.is_dir(follow_symlinks=False):
                        subdirs.append(prefix + name)
                except OSError:
                    continue  # vanished while listing: the next scan sees the final state
        return subdirs, files

    def walk(self) -> Iterator[tuple[str, int, dict[str, FileStat]]]:
        """Every folder of the store: (relative folder, its mtime, its record files)."""
        pending = [""]
        while pending:
            rel_dir = pending.pop()
            mtime = self.dir_mtime(rel_dir)
            if mtime is None:
                continue
            subdirs, files = self.list_dir(rel_dir)
            pending.extend(subdirs)
            yield rel_dir, mtime, files

    def stat_file(self, rel: str) -> FileStat | None:
        try:
            st = os.stat(self.path_of(rel), follow_symlinks=False)
        except OSError:
            return None
        if not statmod.S_ISREG(st.st_mode):
            return None
        return FileStat(st.st_mtime_ns, st.st_size, st.st_ino)

    # -- writing -------------------------------------------------------------------------

    def lock(self):  # -> filelock.FileLock (a context manager)
        """The store-wide writer lock; creates the store folder (writes may, reads never do)."""
        import filelock

        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise env_error(f"cannot create the store folder {self.root}: {exc.strerror}",
                            "check the path and its permissions, or choose another with --memory-dir") from None
        return filelock.FileLock(str(self.root / LOCK_NAME), timeout=LOCK_TIMEOUT_SECONDS)

    def write_many(self, items: list[tuple[str, str]]) -> dict[str, FileStat]:
        """Atomically write (relative path, content) pairs; returns each file's new stat.

        Every file is first written into one hidden staging folder of this batch and made
        durable (one ``syncfs``, or fsyncs in parallel threads) before the first rename into
        place, so a crash leaves each record either old or new, never half-written, and what a
        killed writer leaves behind is one folder that the next writer removes. The caller holds
        the lock.
        """
        if not items:
            return {}
        root = str(self.root)
        staging = os.path.join(root, f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(6)}")
        staged: list[tuple[str, str, str]] = []  # rel, temp, final
        folders: set[str] = set()
        try:
            os.makedirs(staging)
            for number, (rel, _) in enumerate(items):
                final = self.path_of(rel)
                folder = os.path.dirname(final)
                if folder not in folders:
                    os.makedirs(folder, exist_ok=True)
                    folders.add(folder)
                staged.append((rel, os.path.join(staging, str(number)), final))
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise env_error(f"cannot write to the store {self.root}: {exc.strerror or exc}",
                            "check free disk space and permissions") from None
        try:
            payloads = [(temp, content.encode("utf-8")) for (_, temp, _), (_, content) in zip(staged, items)]
            if len(payloads) >= BULK_SYNC_MIN and _libc() is not None:
                for payload in payloads:
                    _write(payload, sync=False)
                if not _syncfs(root):  # every temp file is durable before the first rename
                    raise OSError(ctypes_errno(), "syncfs failed")
            elif len(payloads) == 1:
                _write(payloads[0], sync=True)
            else:
                with ThreadPoolExecutor(max_workers=min(16, len(payloads))) as pool:
                    list(pool.map(_write, payloads))
            for _, temp, final in staged:
                os.replace(temp, final)
            for folder in folders or {root}:
                _fsync_dir(folder)
            os.rmdir(staging)
            stats: dict[str, FileStat] = {}
            for rel, _, final in staged:
                st = os.stat(final, follow_symlinks=False)
                stats[rel] = FileStat(st.st_mtime_ns, st.st_size, st.st_ino)
            return stats
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise env_error(f"cannot write to the store {self.root}: {exc.strerror or exc}",
                            "check free disk space and permissions") from None

    def delete(self, rel: str) -> None:
        """Remove one record file for good (``forget --purge``); the caller holds the lock."""
        try:
            os.unlink(self.path_of(rel))
        except FileNotFoundError:
            return
        _fsync_dir(os.path.dirname(self.path_of(rel)))

    def remove_abandoned_staging(self) -> int:
        """Remove staging folders of writers that died (their process is gone): what a crash
        mid-batch leaves. The caller holds the lock, so no live eidetic writer owns them."""
        removed = 0
        try:
            entries = [e.name for e in os.scandir(self._root) if e.name.startswith(STAGING_PREFIX)]
        except OSError:
            return 0
        for name in entries:
            pid = name[len(STAGING_PREFIX):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
                continue
            shutil.rmtree(os.path.join(self._root, name), ignore_errors=True)
            removed += 1
        return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def _write(item: tuple[str, bytes], sync: bool = True) -> None:
    temp, data = item
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def ctypes_errno() -> int:
    import ctypes

    return ctypes.get_errno()


def _syncfs(path: str) -> bool:
    """Flush every dirty file of the file system holding ``path`` (Linux ``syncfs``): one call
    makes a large batch durable, where an fsync per file costs ~0.3 ms each. False when the
    platform has no syncfs; callers then fsync file by file."""
    libc = _libc()
    if libc is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return libc.syncfs(fd) == 0
    finally:
        os.close(fd)


@lru_cache(maxsize=1)
def _libc():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc if hasattr(libc, "syncfs") else None
    except OSError:
        return None


def _fsync_dir(folder: str | Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(fd)
