"""A record folder: one markdown file per record, read and written safely under crashes and
concurrency (the folder I/O of the ``files`` backend, ``stores.markdown``).

A batch of writes is staged in a hidden folder, made durable, then renamed over the record
files, so a reader (or a crash) only ever sees the old or the new complete version of each. A batch takes the store lock (``.eidetic.lock``) so that checks such as duplicate
detection and the writes they guard are one step for concurrent writers. Hidden files and
folders, ``MEMORY.md`` and non-markdown files are never records; symlinks are not followed,
so no path outside the store is read or written.
"""

from __future__ import annotations

import errno
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

from ..errors import EideticError, env_error

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


class RecordFolder:
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

    def taken(self, rel: str) -> bool:
        """Whether anything at all (a file, a folder, a symlink) is at this path."""
        return os.path.lexists(self.path_of(rel))

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
        """Write (relative path, content) pairs as one batch; returns each file's new stat.

        Every file is first written into one hidden staging folder of this batch and made
        durable (one ``syncfs``, or fsyncs in parallel threads) before the first rename into
        place, so a crash leaves each record either old or new, never half-written, and what a
        killed writer leaves behind is one folder that the next writer removes. A rename that
        fails (a folder where the file should go, a permission) undoes the renames before it:
        the batch is all or nothing. Folders are opened one level at a time without following
        symlinks, so a write never lands outside the store. The caller holds the lock.
        """
        if not items:
            return {}
        with _Folders(self.root) as folders:
            staging = f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
            try:
                os.mkdir(staging, dir_fd=folders.root_fd)
                staging_fd = folders.open(staging, create=False)
                places = [(rel, *folders.parent_of(rel)) for rel, _ in items if self.path_of(rel)]
            except OSError as exc:
                _remove_staging(folders.root_fd, staging)
                raise self._write_error(exc) from None
            try:
                self._stage(staging_fd, [content for _, content in items])
                failed = _install(staging_fd, places)
                if failed is not None:
                    raise failed
                for fd in {fd for _, fd, _ in places} | {folders.root_fd}:
                    _fsync_fd(fd)
                return {rel: _stat_at(fd, name) for rel, fd, name in places}
            except OSError as exc:
                raise self._write_error(exc) from None
            finally:
                _remove_staging(folders.root_fd, staging)

    def _stage(self, staging_fd: int, contents: list[str]) -> None:
        """Each content into the staging folder as file ``<position>``, durable on return."""
        payloads = [(staging_fd, str(number), content.encode("utf-8")) for number, content in enumerate(contents)]
        if len(payloads) >= BULK_SYNC_MIN and _libc() is not None:
            for payload in payloads:
                _write(payload, sync=False)
            if not _syncfs(str(self.root)):  # every temp file is durable before the first rename
                raise OSError(ctypes_errno(), "syncfs failed")
        elif len(payloads) == 1:
            _write(payloads[0], sync=True)
        else:
            with ThreadPoolExecutor(max_workers=min(16, len(payloads))) as pool:
                list(pool.map(_write, payloads))

    def _write_error(self, exc: OSError) -> EideticError:
        if isinstance(exc, _Outside):
            return env_error(f"refusing to write through {self.root}/{exc.filename}: {exc.strerror}",
                             "eidetic writes only inside the store: replace it with a real folder; "
                             "nothing of this batch was written")
        return env_error(f"cannot write to the store {self.root}: {exc.strerror or exc}"
                         + (f" ({exc.filename})" if isinstance(exc.filename, str) else ""),
                         "check free disk space and permissions; nothing of this batch was written")

    def delete(self, rel: str) -> None:
        """Remove one record file for good (``forget --purge``); the caller holds the lock."""
        self.path_of(rel)  # refuses a path outside the store
        with _Folders(self.root) as folders:
            try:
                fd, name = folders.parent_of(rel, create=False)
            except FileNotFoundError:
                return
            except OSError as exc:
                raise self._write_error(exc) from None
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                return
            _fsync_fd(fd)

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


class _Outside(OSError):
    """A folder on a write path is a symlink or not a folder: writing there could leave the store."""


class _Folders:
    """Open folder descriptors of one batch, each opened relative to its parent without
    following symlinks (``O_NOFOLLOW``), so a symlink planted anywhere on a write path is
    refused instead of written through, and a folder renamed meanwhile cannot redirect a write."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[str, int] = {}
        self.root_fd = -1

    def __enter__(self) -> "_Folders":
        try:
            self.root_fd = os.open(self.root, os.O_RDONLY | _DIRECTORY)  # the root may be a link by choice
        except OSError as exc:
            raise env_error(f"cannot open the store folder {self.root}: {exc.strerror}",
                            "check the path and its permissions") from None
        self._fds[""] = self.root_fd
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def open(self, rel_dir: str, create: bool = True) -> int:
        """The descriptor of a folder of the store, made (one level at a time) when missing."""
        fd = self._fds.get(rel_dir)
        if fd is not None:
            return fd
        parent, _, name = rel_dir.rpartition("/")
        parent_fd = self.open(parent, create)
        for attempt in (1, 2):
            try:
                fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=parent_fd)
                break
            except FileNotFoundError:
                if not create or attempt == 2:
                    raise
                try:
                    os.mkdir(name, dir_fd=parent_fd)
                except FileExistsError:
                    pass  # made meanwhile by another writer: open it
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _Outside(exc.errno, "it is a symlink or not a folder", rel_dir) from None
                raise
        self._fds[rel_dir] = fd
        return fd

    def parent_of(self, rel: str, create: bool = True) -> tuple[int, str]:
        """(descriptor of the file's folder, file name) for a store-relative file path."""
        folder, _, name = rel.rpartition("/")
        return self.open(folder, create), name


_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _install(staging_fd: int, places: list[tuple[str, int, str]]) -> OSError | None:
    """Rename staged file ``<position>`` over each place; on a failure, put back what the
    renames before it replaced (kept as hard links, else copies) and remove what they created.
    Returns the failure (None on success); raises if the undo itself fails, naming the files
    that stay written."""
    done: list[tuple[str, int, str, bool]] = []
    for number, (rel, fd, name) in enumerate(places):
        try:
            kept = _keep_old(fd, name, staging_fd, f"{number}.old")
            os.replace(str(number), name, src_dir_fd=staging_fd, dst_dir_fd=fd)
        except OSError as exc:
            failure = exc
            break
        done.append((rel, fd, name, kept))
    else:
        return None
    stuck = []
    for number, (rel, fd, name, kept) in reversed(list(enumerate(done))):
        try:
            if kept:
                os.replace(f"{number}.old", name, src_dir_fd=staging_fd, dst_dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except OSError:
            stuck.append(rel)
    if stuck:
        raise OSError(failure.errno, f"{failure.strerror}; could not undo, these files hold the "
                                     f"new version: {', '.join(sorted(stuck))}", failure.filename)
    return failure


def _keep_old(fd: int, name: str, staging_fd: int, backup: str) -> bool:
    """Keep the file about to be replaced in the staging folder (a hard link: no copy), so a
    failed batch can put it back. False when there is none."""
    try:
        os.link(name, backup, src_dir_fd=fd, dst_dir_fd=staging_fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
    # No hard links here (or the name is not a plain file: reading it then fails as it should).
    source = os.open(name, os.O_RDONLY | _NOFOLLOW, dir_fd=fd)
    try:
        data = b"".join(iter(lambda: os.read(source, 1 << 20), b""))
    finally:
        os.close(source)
    _write((staging_fd, backup, data), sync=True)
    return True


def _stat_at(fd: int, name: str) -> FileStat:
    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    return FileStat(st.st_mtime_ns, st.st_size, st.st_ino)


def _remove_staging(root_fd: int, staging: str) -> None:
    try:
        shutil.rmtree(staging, dir_fd=root_fd)
    except OSError:
        pass  # the next writer removes what is left (remove_abandoned_staging)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def _write(item: tuple[int, str, bytes], sync: bool = True) -> None:
    folder_fd, temp, data = item
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=folder_fd)
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


def _fsync_fd(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
