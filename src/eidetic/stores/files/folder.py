"""A record folder: one markdown file per record, read and written safely under crashes and
concurrency (the folder I/O of the ``files`` backend, ``stores.files.store``).

A batch of writes is staged in a hidden folder, made durable, then renamed over the record
files (``durable``), so a reader (or a crash) only ever sees the old or the new complete
version of each. A batch takes the store lock (``.eidetic.lock``) so that checks such as
duplicate detection and the writes they guard are one step for concurrent writers. The lock
and the staging folders live in the store's root, or in a ``scratch`` folder beside it when
nothing of eidetic's may show in the store (an agent's memory folder: ``stores.files.layout``).
Hidden files and folders, ``MEMORY.md`` and non-markdown files are never records; symlinks are
not followed, so no path outside the store is read or written.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat as statmod
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from ...errors import EideticError, env_error
from .durable import Folders, Outside, fsync_fd, install, remove_staging, stage

LOCK_NAME = ".eidetic.lock"
STAGING_PREFIX = ".staging-"
INDEX_FILE = "memory.md"  # compared case-insensitively: MEMORY.md is an index, never a record
LOCK_TIMEOUT_SECONDS = 60.0


class FileStat(NamedTuple):
    """What change detection compares: a file is unchanged while all of these are equal.
    (A named tuple, not a dataclass: change detection builds one per file per check.)"""

    mtime_ns: int
    size: int
    ino: int


class RecordFolder:
    """A folder of record files. Paths given to and returned by it are relative, '/'-separated."""

    def __init__(self, root: Path, scratch: Path | None = None) -> None:
        """``scratch``: where the lock and staging folders go when not in ``root`` (a folder
        beside it, on its file system); None keeps them, hidden, in ``root``."""
        self.root = root
        self._root = str(root)
        self.scratch = scratch

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
        """A folder's mtime; None when it is not a folder. The store folder itself may be a
        symlink (where the user keeps the store), a folder below it may not."""
        try:
            st = os.stat(f"{self._root}/{rel_dir}", follow_symlinks=False) if rel_dir else os.stat(self._root)
        except OSError:
            return None
        return st.st_mtime_ns if statmod.S_ISDIR(st.st_mode) else None

    def real_dir(self, rel_dir: str) -> bool:
        """Whether a folder of the store is one with no symlink on the way to it from the store
        folder (``dir_mtime`` follows the folders above the last part of the path)."""
        path = self._root
        for part in rel_dir.split("/") if rel_dir else ():
            path = f"{path}/{part}"
            try:
                if not statmod.S_ISDIR(os.lstat(path).st_mode):
                    return False
            except OSError:
                return False
        return True

    def identity(self) -> str | None:
        """The store folder's device and inode: another folder put in its place (deleted and
        made again, a backup moved in) has another, whatever its files' and folders' times."""
        try:
            st = os.stat(self._root)
        except OSError:
            return None
        return f"{st.st_dev}:{st.st_ino}"

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
                    if name.endswith(".md") and entry.is_file(follow_symlinks=False):
                        if name.lower() == INDEX_FILE:
                            continue
                        st = entry.stat(follow_symlinks=False)
                        files[prefix + name] = FileStat(st.st_mtime_ns, st.st_size, st.st_ino)
                    elif entry.is_dir(follow_symlinks=False):  # "x.md" may be a folder too
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

    def names(self) -> list[str]:
        """Every name in the store's root folder, hidden ones too; none when it does not exist."""
        try:
            return os.listdir(self._root)
        except (FileNotFoundError, NotADirectoryError):
            return []

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
        """The store-wide writer lock; creates the store folder and the scratch folder (writes
        may, reads never do)."""
        import filelock

        _make_folder(self.root, "the store folder")
        if self.scratch is None:
            return filelock.FileLock(str(self.root / LOCK_NAME), timeout=LOCK_TIMEOUT_SECONDS)
        _make_folder(self.scratch, "eidetic's folder beside the store", private=True)
        if self.scratch.is_symlink():  # the lock would be made wherever it points
            raise env_error(
                f"refusing to lock through {self.scratch}: it is a symlink", "remove it: eidetic makes a real folder"
            )
        return filelock.FileLock(str(self.scratch / LOCK_NAME), timeout=LOCK_TIMEOUT_SECONDS)

    def write_many(self, items: list[tuple[str, str]], remove: str | None = None) -> dict[str, FileStat]:
        """Write (relative path, content) pairs as one batch, in order, then delete the file
        ``remove`` if given; returns each written file's new stat.

        Every file is first written into one hidden staging folder of this batch and made
        durable (one ``syncfs``, or fsyncs in parallel threads) before the first rename into
        place, so a crash leaves each record either old or new, never half-written, and what a
        killed writer leaves behind is one folder that the next writer removes. A rename (or
        the deletion) that fails (a folder where the file should go, a permission) undoes the
        renames before it: the batch is all or nothing. Folders are opened one level at a time
        without following symlinks, so a write never lands outside the store. The caller holds
        the lock.
        """
        if not items and remove is None:
            return {}
        for rel in [rel for rel, _ in items] + ([remove] if remove is not None else []):
            self.path_of(rel)  # refuses a path outside the store before anything is made
        with Folders(self.root) as folders:
            scratch_fd = folders.root_fd if self.scratch is None else folders.outside(self.scratch)
            staging = f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
            try:
                staging_fd = folders.staging(scratch_fd, staging)
                places = [(rel, *folders.parent_of(rel)) for rel, _ in items]
                removal = self._removal(folders, remove)
            except OSError as exc:
                remove_staging(scratch_fd, staging)
                raise self._write_error(exc) from None
            try:
                stage(staging_fd, [content for _, content in items], self.root)
                failed = install(staging_fd, places, removal)
                if failed is not None:
                    raise failed
                touched = {fd for _, fd, _ in places} | {folders.root_fd}
                for fd in touched | ({removal[0]} if removal is not None else set()):
                    fsync_fd(fd)
                return {rel: _stat_at(fd, name) for rel, fd, name in places}
            except OSError as exc:
                raise self._write_error(exc) from None
            finally:
                remove_staging(scratch_fd, staging)

    def _removal(self, folders: Folders, rel: str | None) -> tuple[int, str] | None:
        """(folder descriptor, name) of the file a batch deletes; None when there is none."""
        if rel is None:
            return None
        try:
            return folders.parent_of(rel, create=False)
        except FileNotFoundError:
            return None

    def _write_error(self, exc: OSError) -> EideticError:
        if isinstance(exc, Outside):
            return env_error(
                f"refusing to write through {os.path.join(self._root, exc.filename)}: {exc.strerror}",
                "eidetic writes only inside the store: replace it with a real folder; "
                "nothing of this batch was written",
            )
        if isinstance(exc, FileExistsError):
            return env_error(
                f"cannot write {os.path.join(self._root, exc.filename)}: {exc.strerror}",
                "run the command again (the record then gets another name); nothing of this batch was written",
            )
        return env_error(
            f"cannot write to the store {self.root}: {exc.strerror or exc}"
            + (f" ({exc.filename})" if isinstance(exc.filename, str) else ""),
            "check free disk space and permissions; nothing of this batch was written",
        )

    def delete(self, rel: str, also: list[tuple[str, str]] | None = None) -> None:
        """Remove one record file for good (``forget --purge``), with the files ``also`` (say,
        the folder's MEMORY.md without its line) written first in the same batch: all or
        nothing. The caller holds the lock."""
        self.write_many(also or [], remove=rel)

    def remove_abandoned_staging(self) -> int:
        """Remove staging folders of writers that died (their process is gone): what a crash
        mid-batch leaves. The caller holds the lock, so no live eidetic writer owns them."""
        removed = 0
        where = str(self.scratch or self.root)
        try:
            entries = [e.name for e in os.scandir(where) if e.name.startswith(STAGING_PREFIX)]
        except OSError:
            return 0
        for name in entries:
            pid = name[len(STAGING_PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
                continue
            shutil.rmtree(os.path.join(where, name), ignore_errors=True)
            removed += 1
        return removed


def _make_folder(folder: Path, what: str, private: bool = False) -> None:
    try:
        folder.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    except OSError as exc:
        raise env_error(
            f"cannot create {what} {folder}: {exc.strerror}",
            "check the path and its permissions, or choose another with --memory-dir",
        ) from None


def _stat_at(fd: int, name: str) -> FileStat:
    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    return FileStat(st.st_mtime_ns, st.st_size, st.st_ino)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True
