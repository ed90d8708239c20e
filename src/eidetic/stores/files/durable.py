"""Crash-safe writing through folder descriptors: what :meth:`RecordFolder.write_many
<eidetic.stores.files.folder.RecordFolder.write_many>` is built from.

Folders are opened one level at a time without following symlinks (:class:`Folders`), files
are written into a staging folder and made durable (:func:`stage`), then renamed into place
all or nothing (:func:`install`).
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Self

from ...errors import env_error

BULK_SYNC_MIN = 64  # batches this large are made durable with one syncfs instead of fsync per file
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_RENAME_NOREPLACE = 1  # linux/fs.h


class Outside(OSError):
    """A folder on a write path is a symlink or not a folder: writing there could leave the store."""


class Folders:
    """Open folder descriptors of one batch, each opened relative to its parent without
    following symlinks (``O_NOFOLLOW``), so a symlink planted anywhere on a write path is
    refused instead of written through, and a folder renamed meanwhile cannot redirect a write."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[str, int] = {}
        self._others: list[int] = []
        self.root_fd = -1

    def __enter__(self) -> Self:
        try:
            self.root_fd = os.open(self.root, os.O_RDONLY | _DIRECTORY)  # the root may be a link by choice
        except OSError as exc:
            raise env_error(
                f"cannot open the store folder {self.root}: {exc.strerror}", "check the path and its permissions"
            ) from None
        self._fds[""] = self.root_fd
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in [*self._fds.values(), *self._others]:
            os.close(fd)
        self._fds.clear()
        self._others.clear()

    def open(self, rel_dir: str, create: bool = True) -> int:
        """The descriptor of a folder of the store, made (one level at a time) when missing."""
        known = self._fds.get(rel_dir)
        if known is not None:
            return known
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
                    raise Outside(exc.errno, "it is a symlink or not a folder", rel_dir) from None
                raise
        self._fds[rel_dir] = fd
        return fd

    def outside(self, path: Path) -> int:
        """The descriptor of ``path``, a folder beside the store for its lock and staging (an
        agent's memory folder must show neither: ``stores.files.layout``), made private to the user
        when missing and opened without following a symlink. It must be on the store's file
        system: staged files are renamed into place."""
        try:
            parent_fd = os.open(path.parent, os.O_RDONLY | _DIRECTORY)
            try:
                try:
                    os.mkdir(path.name, 0o700, dir_fd=parent_fd)
                except FileExistsError:
                    pass
                fd = os.open(path.name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=parent_fd)
            finally:
                os.close(parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise env_error(
                    f"refusing to write through {path}: it is a symlink or not a folder",
                    "eidetic keeps its lock and staging there: remove it; nothing of this batch was written",
                ) from None
            raise env_error(
                f"cannot use {path} for eidetic's staging: {exc.strerror}",
                "check the permissions of the folder holding the memory folder; nothing of this batch was written",
            ) from None
        self.adopt(fd)
        if os.fstat(fd).st_dev != os.fstat(self.root_fd).st_dev:
            raise env_error(
                f"{path} is on another file system than {self.root}: staged files cannot be renamed into place",
                "keep the memory folder and the folder holding it on one file system "
                "(mount the parent, not the memory folder); nothing of this batch was written",
            )
        return fd

    def staging(self, scratch_fd: int, name: str) -> int:
        """Make and open this batch's staging folder ``name`` in the folder ``scratch_fd``."""
        os.mkdir(name, 0o700, dir_fd=scratch_fd)
        return self.adopt(os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=scratch_fd))

    def adopt(self, fd: int) -> int:
        """Close ``fd`` (a folder outside the store's tree) with the batch's other descriptors."""
        self._others.append(fd)
        return fd

    def parent_of(self, rel: str, create: bool = True) -> tuple[int, str]:
        """(descriptor of the file's folder, file name) for a store-relative file path."""
        folder, _, name = rel.rpartition("/")
        return self.open(folder, create), name


def install(
    staging_fd: int, places: list[tuple[str, int, str]], remove: tuple[int, str] | None = None
) -> OSError | None:
    """Rename staged file ``<position>`` over each place, then unlink ``remove`` (a folder
    descriptor and file name) if given; on a failure, put back what the renames before it
    replaced (kept as hard links, else copies) and remove what they created. Returns the
    failure (None on success); raises if the undo itself fails, naming the files that stay
    written."""
    done: list[tuple[str, int, str, bool]] = []
    for number, (rel, fd, name) in enumerate(places):
        try:
            kept = _keep_old(fd, name, staging_fd, f"{number}.old")
            if kept:
                os.replace(str(number), name, src_dir_fd=staging_fd, dst_dir_fd=fd)
            else:
                _place_new(staging_fd, str(number), fd, name)
        except FileExistsError:
            appeared = FileExistsError(errno.EEXIST, "a file appeared there meanwhile and was left alone", rel)
            return _undo(staging_fd, done, appeared)
        except OSError as exc:
            return _undo(staging_fd, done, exc)
        done.append((rel, fd, name, kept))
    failure = _unlink(remove)  # last, so that nothing after it needs the removed file back
    return None if failure is None else _undo(staging_fd, done, failure)


def _undo(staging_fd: int, done: list[tuple[str, int, str, bool]], failure: OSError) -> OSError:
    """Put back what the renames ``done`` replaced and remove what they created; returns
    ``failure``, or raises naming the files that stay written when the undo fails too."""
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
        raise OSError(
            failure.errno,
            f"{failure.strerror}; could not undo, these files hold the new version: {', '.join(sorted(stuck))}",
            failure.filename,
        )
    return failure


def _place_new(staging_fd: int, temp: str, fd: int, name: str) -> None:
    """Put a new file in place without replacing one made since the name was found free (a
    coding agent or a person writes without eidetic's lock): a rename that refuses a taken name
    (Linux ``renameat2`` with ``RENAME_NOREPLACE``), else a hard link, which fails on a taken name
    where a plain rename would replace it, else a rename where the file system has neither."""
    if _rename_noreplace(staging_fd, temp, fd, name):
        return
    try:
        os.link(temp, name, src_dir_fd=staging_fd, dst_dir_fd=fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        os.replace(temp, name, src_dir_fd=staging_fd, dst_dir_fd=fd)


def _rename_noreplace(staging_fd: int, temp: str, fd: int, name: str) -> bool:
    """Rename ``temp`` to ``name`` unless ``name`` is taken (then ``FileExistsError``), in one
    call: the new file's link and the staged name's unlink in one, a syscall less per new
    record of a bulk remember. False when the platform or the file system cannot."""
    libc = _libc()
    if libc is None or not hasattr(libc, "renameat2"):
        return False
    if libc.renameat2(staging_fd, os.fsencode(temp), fd, os.fsencode(name), _RENAME_NOREPLACE) == 0:
        return True
    code = _ctypes_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):  # not here: link instead
        return False
    raise OSError(code, os.strerror(code), name)


def _unlink(remove: tuple[int, str] | None) -> OSError | None:
    """Unlink one file through its folder's descriptor; a file already gone is no failure."""
    if remove is None:
        return None
    try:
        os.unlink(remove[1], dir_fd=remove[0])
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc
    return None


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
    write_file((staging_fd, backup, data), sync=True)
    return True


def remove_staging(root_fd: int, staging: str) -> None:
    try:
        shutil.rmtree(staging, dir_fd=root_fd)
    except OSError:
        pass  # the next writer removes what is left (remove_abandoned_staging)


def stage(staging_fd: int, contents: list[str], root: Path) -> None:
    """Each content into the staging folder as file ``<position>``, durable on return (one
    ``syncfs`` of ``root``'s file system for a large batch, else fsyncs in parallel threads)."""
    payloads = [(staging_fd, str(number), content.encode("utf-8")) for number, content in enumerate(contents)]
    if len(payloads) >= BULK_SYNC_MIN and _libc() is not None:
        for payload in payloads:
            write_file(payload, sync=False)
        if not _syncfs(str(root)):  # every temp file is durable before the first rename
            raise OSError(_ctypes_errno(), "syncfs failed")
    elif len(payloads) == 1:
        write_file(payloads[0], sync=True)
    elif payloads:
        with ThreadPoolExecutor(max_workers=min(16, len(payloads))) as pool:
            list(pool.map(write_file, payloads))


def write_file(item: tuple[int, str, bytes], sync: bool = True) -> None:
    folder_fd, temp, data = item
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=folder_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _ctypes_errno() -> int:
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


def fsync_fd(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
