"""The warm path: a per-user daemon that keeps memories and the embedding model loaded and
answers hook requests on a unix socket (``runtime``), one at a time.

Started by the first hook command that finds none (``eidetic hooks daemon``, detached), it holds
an exclusive lock for its lifetime (so only one runs per environment), loads the model and the
store of the folder it was started for before it listens (a hook meanwhile answers itself), binds
its socket with mode 0600 in its 0700 folder, answers only its own user (checked on each
connection where the system tells) and exits after ``hook-idle-minutes`` without a request, on
SIGTERM, or when asked (``eidetic hooks stop``), removing its socket. Requests and answers are
``wire``'s. It follows its stores' files by file events, and after each answer, with the client
gone, stat-checks the files backend's next slice of files (``Engine.check_files``): work a recall
would otherwise do while a prompt waits.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import time
from pathlib import Path
from typing import Any

from . import runtime, wire
from .respond import Engine, handle

MAX_REQUEST_BYTES = 9 * 1024 * 1024  # the client's 8 MiB payload and the header
REQUEST_SECONDS = 5.0  # to read one request


def serve(warm: Path | None = None) -> int:
    """Run the daemon until it is idle, stopped or signalled; 0, or 2 without a safe folder."""
    import fcntl

    from ..settings import Settings

    where = runtime.paths()
    if where is None:
        return 2
    try:
        lock = runtime.private_file(where.lock)
    except OSError:
        return 2
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return 0  # another daemon runs (or starts) for this environment
    signal.signal(signal.SIGTERM, _stop)
    engine = Engine(watch=True)
    try:
        settings = Settings.load(cwd=warm)
        _warm_up(engine, settings, warm or Path.home())
        with _listening(where) as server:
            runtime.log(where, f"daemon {os.getpid()} listening on {where.socket}")
            _loop(server, engine, where, settings.hook_idle_minutes * 60)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        engine.close()
        runtime.log(where, f"daemon {os.getpid()} stopped")
        os.close(lock)
    return 0


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _warm_up(engine: Engine, settings: Any, cwd: Path) -> None:
    """Open the store of ``cwd`` and run one hybrid recall: the model, the indexes and the vectors
    are loaded before the first hook asks."""
    from ..query import RecallQuery

    try:
        memory = engine.memory(settings, cwd)
        memory.recall(RecallQuery("warm up", mode="hybrid", top_k=1, depth=0, record=False))
    except Exception as exc:  # noqa: BLE001 - a store that cannot open now is reported per request
        runtime.log(runtime.paths(), f"daemon warm-up: {exc}")


class _listening:
    """The daemon's socket, bound mode 0600 (a stale one from a dead daemon replaced), removed at exit."""

    def __init__(self, where: runtime.Paths) -> None:
        self.where = where
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def __enter__(self) -> socket.socket:
        try:
            os.unlink(self.where.socket)  # we hold the lock: any socket here is stale
        except FileNotFoundError:
            pass
        mask = os.umask(0o177)
        try:
            self.server.bind(self.where.socket)
        finally:
            os.umask(mask)
        os.chmod(self.where.socket, 0o600)
        self.inode = os.stat(self.where.socket).st_ino
        self.server.listen(16)
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.close()
        try:
            if os.stat(self.where.socket).st_ino == self.inode:
                os.unlink(self.where.socket)
        except OSError:
            pass


def _loop(server: socket.socket, engine: Engine, where: runtime.Paths, idle: float) -> None:
    started, served = time.time(), 0
    server.settimeout(idle)
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            return
        with conn:
            request = _read(conn) if _same_user(conn) else None
            if request is None:
                continue
            control = request.get("control")
            if control == "stop":
                _send(conn, json.dumps({"stopped": os.getpid()}).encode("utf-8"))
                return
            if control == "status":
                status = {"pid": os.getpid(), "since": started, "served": served, "idle": idle}
                _send(conn, json.dumps(status).encode("utf-8"))
                continue
            _send(conn, wire.answer(handle(engine, request)))  # the client logs it, with its timing
            served += 1
        runtime.log(where, *engine.check_files())  # the client has its answer: it does not wait


def _same_user(conn: socket.socket) -> bool:
    """Whether the peer runs as this user (Linux tells; elsewhere the socket's mode decides)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()


def _read(conn: socket.socket) -> dict[str, Any] | None:
    conn.settimeout(REQUEST_SECONDS)
    data = b""
    try:
        while len(data) <= MAX_REQUEST_BYTES:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    return wire.request(data) if len(data) <= MAX_REQUEST_BYTES else None


def _send(conn: socket.socket, answer: bytes) -> None:
    try:
        conn.sendall(answer)
    except OSError:
        pass
