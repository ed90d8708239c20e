"""Where the hook daemon of this user and environment listens and logs. Built-in modules only
(no ``pathlib``, ``hashlib`` or ``socket``: each costs a hook process milliseconds on every
prompt), since the hook client imports this each time.

One daemon serves one user in one environment: its socket's name carries a hash of what decides
its answers (``HOME``, ``CLAUDE_CONFIG_DIR``: where transcripts are read, the ``EIDETIC_*``,
``XDG_*_HOME`` and ``HF_*`` variables, the Python environment and interpreter, eidetic's own
folder and the version of the socket's protocol), so a shell with another store or another
eidetic gets its own daemon and never another's. The folder is ``$XDG_RUNTIME_DIR/eidetic``, else
``$TMPDIR/eidetic-<uid>`` (``/tmp`` without ``TMPDIR``); it must be a real folder (not a symlink)
owned by the user with no access for anyone else, or no daemon is used at all.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping

FINGERPRINTED = ("HOME", "CLAUDE_CONFIG_DIR", "PYTHONPATH", "COLLEAGUE_API_KEY", "CULTURE_VLLM_API_KEY")
FINGERPRINTED_PREFIXES = ("EIDETIC_", "HF_")
XDG_HOMES = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")
CLIENT_ONLY = ("EIDETIC_HOOK_TIMEOUT", "EIDETIC_HOOK_DAEMON")  # read by the client, not by the daemon
PROTOCOL = "2"  # the socket's request format (daemon.py): a daemon of another version is not asked
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to ~104-108 bytes
MAX_LOG_BYTES = 256 * 1024
DEFAULT_TIMEOUT = 2.0  # as settings.DEFAULT_HOOK_TIMEOUT (not imported: it would load eidetic)


class Paths:
    """The daemon's folder, socket, lock, start stamp and log, as strings (a plain class:
    dataclasses and pathlib cost the client time)."""

    def __init__(self, folder: str, name: str) -> None:
        self.folder = folder
        self.socket = os.path.join(folder, f"{name}.sock")
        self.lock = os.path.join(folder, f"{name}.lock")
        self.started = os.path.join(folder, f"{name}.started")
        self.log = os.path.join(folder, f"{name}.log")


def _sha256_hex(data: bytes) -> str:
    """SHA-256 from CPython's built-in module when there is one (``hashlib`` loads OpenSSL)."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # CPython 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef]  # CPython 3.11
        except ImportError:
            from hashlib import sha256  # type: ignore[no-redef]
    return sha256(data).hexdigest()


def fingerprint(environ: Mapping[str, str]) -> str:
    """A short hash of everything in the environment that decides a daemon's answers."""
    names = sorted(
        name
        for name in environ
        if name in FINGERPRINTED or name in XDG_HOMES or name.startswith(FINGERPRINTED_PREFIXES)
    )
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    # The environment and the interpreter, not the name it was started by: a console script's
    # ``python3`` and ``python -m``'s ``python`` of one virtual environment share a daemon.
    parts = [sys.prefix, os.path.realpath(sys.executable), here, f"protocol {PROTOCOL}"]
    parts += [f"{name}={environ[name]}" for name in names if name not in CLIENT_ONLY]
    return _sha256_hex("\0".join(parts).encode("utf-8", "surrogatepass"))[:16]


def timeout() -> float:
    """``EIDETIC_HOOK_TIMEOUT``, seconds (0.1 to 60). The hook client reads its two variables
    itself: ``eidetic.settings`` would cost it the time it has (``Settings`` checks them too)."""
    try:
        value = float(os.environ.get("EIDETIC_HOOK_TIMEOUT", "") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT
    return min(max(value, 0.1), 60.0)


def daemon_allowed() -> bool:
    """``EIDETIC_HOOK_DAEMON`` is not 0 (or false, no, off)."""
    return os.environ.get("EIDETIC_HOOK_DAEMON", "1").strip().lower() not in ("0", "false", "no", "off")


def paths(environ: Mapping[str, str] | None = None) -> Paths | None:
    """This environment's daemon files, or None when no safe folder (or no unix socket) exists."""
    import _socket

    env = os.environ if environ is None else environ
    if not hasattr(_socket, "AF_UNIX") or not hasattr(os, "getuid"):
        return None
    runtime = env.get("XDG_RUNTIME_DIR", "")
    folder = os.path.join(runtime, "eidetic") if runtime and os.path.isabs(runtime) else None
    if folder is None or not _safe(folder):
        folder = os.path.join(env.get("TMPDIR") or "/tmp", f"eidetic-{os.getuid()}")
        if not _safe(folder):
            return None
    found = Paths(folder, f"hook-{fingerprint(env)}")
    return found if len(found.socket.encode()) <= MAX_SOCKET_PATH else None


def _safe(folder: str) -> bool:
    """The folder exists (made if need be, mode 0700), is no symlink, is ours and is closed to others."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def private_file(path: str) -> int:
    """``path`` opened for appending (made if need be) as a file only its owner reads: mode
    0600 whatever the umask, a file left wider by an older eidetic narrowed, never through a
    symlink. The daemon's lock, start stamp and log, like its socket, are nobody else's."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def log(where: Paths | None, *lines: str) -> None:
    """Append lines to the daemon's log (kept under ``MAX_LOG_BYTES``: the older half is dropped)."""
    if where is None or not lines:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    text = "".join(f"{stamp} [{os.getpid()}] {' '.join(line.split())[:500]}\n" for line in lines)
    try:
        if os.stat(where.log).st_size > MAX_LOG_BYTES:
            os.replace(where.log, where.log + ".1")
    except OSError:
        pass
    try:
        fd = private_file(where.log)
        try:
            os.write(fd, text.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass
