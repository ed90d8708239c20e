"""Reading a file that must be a regular file: a transcript to capture, a settings file to edit.

A path can name a FIFO (reading it waits for a writer that never comes), a device (``/dev/zero``
never ends), a folder, or a symlink to any file of the user's. So the path is checked
(``lstat``/``stat``) before it is opened, to leave devices unopened, and opened with
``O_NONBLOCK`` (a FIFO swapped in after the check does not block the open), ``O_NOCTTY`` and, when
symlinks are refused, ``O_NOFOLLOW``; what was opened is checked again on the descriptor
(``fstat``), so a file swapped between the check and the open is caught. A file that must lie in
given folders is checked by its real path, whose inode must be the descriptor's.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe), not a regular file"),
    (stat.S_ISCHR, "a character device, not a regular file"),
    (stat.S_ISBLK, "a block device, not a regular file"),
    (stat.S_ISSOCK, "a socket, not a regular file"),
    (stat.S_ISDIR, "a folder, not a regular file"),
)


class Refused(Exception):
    """Why a file is not read: a short phrase that fits "X is ..." and a log line."""


class Missing(Refused):
    """No file at the path (or a symlink leading to none)."""


def read_regular(path: Path, limit: int, *, follow: bool = True, within: Sequence[Path] | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``; a larger file is refused).

    ``follow``: a symlink is read as the file it names (a path a person typed); else a path that
    is itself a symlink is refused (folders on the way may still be links). ``within``: the file's
    real path must lie in one of these folders (compared by their real paths)."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        raise Missing("no such file") from None
    except OSError as exc:
        raise Refused(_unreadable(exc)) from None
    _check(info, limit)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise Missing("no such file") from None
    except OSError as exc:
        raise Refused("a symbolic link" if exc.errno == errno.ELOOP and not follow else _unreadable(exc)) from None
    try:
        opened = os.fstat(fd)
        _check(opened, limit)
        if within is not None:
            _inside(path, opened, within)
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(1 << 20, limit - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _check(info: os.stat_result, limit: int) -> None:
    for test, what in _KINDS:
        if test(info.st_mode):
            raise Refused(what)
    if not stat.S_ISREG(info.st_mode):
        raise Refused("not a regular file")
    if info.st_size > limit:
        raise Refused(f"larger than {limit >> 20} MiB" if limit >= 1 << 20 else f"larger than {limit} bytes")


def _inside(path: Path, opened: os.stat_result, folders: Sequence[Path]) -> None:
    """The opened file is the one at ``path``'s real path, and that lies below one of ``folders``."""
    real = os.path.realpath(path)
    roots = [os.path.realpath(folder) for folder in folders]
    if not any(real != root and os.path.commonpath([real, root]) == root for root in roots):
        raise Refused("outside " + (" and ".join(f"{folder}{os.sep}" for folder in folders) or "the allowed folders"))
    try:
        now = os.stat(real)
    except OSError:
        now = None
    if now is None or (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
        raise Refused("replaced while it was opened")


def _unreadable(exc: OSError) -> str:
    return f"unreadable ({exc.strerror or exc})"
