"""The hook command an agent runs (``eidetic-hook claude prompt``, or ``eidetic hook claude
prompt``): built-in modules only, so it starts in milliseconds; the work happens in the warm
daemon. Not even ``json``, ``socket`` or ``typing`` is imported on the way to an answer: each
would cost every prompt a few milliseconds (docs/benchmarks.md, "Hooks").

It reads the agent's JSON from stdin (bounded in size and time: an agent may leave stdin open),
hands it to this environment's daemon over its unix socket as it came (``wire``) and prints the
answer. When no daemon answers it starts one in the background (detached; it loads the model and
exits after idle minutes) and answers this once itself, in this process, with keyword recall.
Whatever happens it exits 0 within ``EIDETIC_HOOK_TIMEOUT`` seconds (default 2): a failure or a
timeout prints nothing, so the prompt goes on, and is logged in the daemon's log (``eidetic hooks
status``).
"""

from __future__ import annotations

import os
import select
import sys
import time

from . import runtime, wire

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TextIO

MAX_INPUT_BYTES = 8 * 1024 * 1024
MAX_ANSWER_BYTES = 4 * 1024 * 1024
STDIN_SECONDS = 1.0
RESTART_SECONDS = 30  # a daemon is started at most this often
AGENTS = ("claude",)
EVENTS = ("session-start", "prompt", "session-end")
USAGE = "usage: eidetic-hook claude session-start|prompt|session-end  (the JSON payload on stdin; docs/hooks.md)\n"


def main(argv: list[str] | None = None) -> int:
    """The ``eidetic-hook`` command. A wrong command line is exit 1 with its usage, never 2:
    Claude Code reads exit 2 as "block this prompt"."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in AGENTS or args[1] not in EVENTS:
        sys.stderr.write(USAGE)
        return 1
    return run(args[0], args[1])


def run(agent: str, event: str, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer one hook event; always 0."""
    started = time.monotonic()
    deadline = started + runtime.timeout()
    where = None
    try:
        where = runtime.paths()
        payload = _payload(stdin or sys.stdin.buffer, min(deadline, started + STDIN_SECONDS))
        if payload is None or not payload.strip():
            runtime.log(where, f"{event}: no JSON object on stdin; nothing done")
            return 0
        answer, how = _answer(agent, event, payload, where, deadline)
        if answer is None:
            runtime.log(where, f"{event}: no answer within {deadline - started:.1f}s ({how}); nothing added")
            return 0
        text, logged = answer
        if text:
            (stdout or sys.stdout).write(text + "\n")
            (stdout or sys.stdout).flush()
        runtime.log(where, *(f"{line} [{how}, {1000 * (time.monotonic() - started):.0f} ms]" for line in logged))
    except BaseException as exc:  # noqa: BLE001 - a hook never fails the agent's prompt
        runtime.log(where, f"{event}: failed: {exc!r}")
    return 0


def _payload(stream: BinaryIO, until: float) -> bytes | None:
    """The bytes on stdin: read until EOF, a whole JSON object that nothing follows at once (an
    agent may leave stdin open), ``until``, or more than ``MAX_INPUT_BYTES`` (None)."""
    data = b""
    try:
        fd: int | None = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    while len(data) <= MAX_INPUT_BYTES:
        if fd is not None:
            ready, _, _ = select.select([fd], [], [], max(0.0, until - time.monotonic()))
            if not ready:
                break
            chunk = os.read(fd, 65536)
        else:
            chunk = stream.read(65536)
        if not chunk:
            break
        data += chunk
        if data.rstrip().endswith(b"}") and not _waiting(fd) and _parsed(data) is not None:
            break
    return data if len(data) <= MAX_INPUT_BYTES else None


def _waiting(fd: int | None) -> bool:
    """Whether more input (or its end) can be read at once: then no need to parse to know."""
    return fd is not None and bool(select.select([fd], [], [], 0)[0])


def _parsed(data: bytes) -> dict[str, Any] | None:
    """The JSON object in ``data``, or None (``json`` loaded only here, off the usual path)."""
    import json

    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _answer(
    agent: str, event: str, payload: bytes, where: runtime.Paths | None, deadline: float
) -> tuple[tuple[str, list[str]] | None, str]:
    """The daemon's answer, else this process's own (keyword recall); and which it was."""
    cwd = os.getcwd()
    if where is not None and runtime.daemon_allowed():
        found = exchange(where, wire.hook_request(agent, event, "hybrid", cwd, payload), deadline)
        if found is not None and b"\0" in found:
            return wire.parse_answer(found), "daemon"
        start_daemon(where, cwd)
    request = {"agent": agent, "event": event, "payload": _parsed(payload), "cwd": cwd, "mode": "keyword"}
    answered = _in_process(request, deadline, where)
    return (None if answered is None else (str(answered.get("stdout") or ""), answered.get("log", []))), "in-process"


def exchange(where: runtime.Paths, request: bytes, deadline: float) -> bytes | None:
    """Send one request to the daemon; its answer, or None (no daemon, or no answer in time)."""
    import _socket  # ``socket`` itself loads enum and selectors: not worth it for one connection

    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(max(0.05, deadline - time.monotonic()))
            conn.connect(where.socket)
            conn.sendall(request)
            conn.shutdown(_socket.SHUT_WR)
            chunks, size = [], 0
            while size <= MAX_ANSWER_BYTES:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            conn.close()
    except OSError:
        return None
    return b"".join(chunks) if size <= MAX_ANSWER_BYTES else None


def ask(where: runtime.Paths, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
    """A control request (``{"control": "status"}``, ``"stop"``) and the daemon's JSON answer."""
    import json

    found = exchange(where, json.dumps(request).encode("utf-8"), deadline)
    try:
        answer = json.loads(found.decode("utf-8")) if found else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def start_daemon(where: runtime.Paths, cwd: str) -> None:
    """Start this environment's daemon in the background, unless one holds its lock (starting)."""
    import fcntl
    import subprocess

    try:
        if time.time() - os.stat(where.started).st_mtime < RESTART_SECONDS:
            return  # started a moment ago: still loading, or failing (its log says why)
    except OSError:
        pass
    try:
        lock = runtime.private_file(where.lock)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no daemon is running or starting
            fcntl.flock(lock, fcntl.LOCK_UN)
        finally:
            os.close(lock)
        os.close(runtime.private_file(where.started))
        os.utime(where.started)
        log = runtime.private_file(where.log)
    except OSError:
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "eidetic", "hooks", "daemon", "--warm", cwd],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)


def _in_process(request: dict[str, Any], deadline: float, where: runtime.Paths | None) -> dict[str, Any] | None:
    """Answer in this process, on a thread given until ``deadline``."""
    import threading

    answer: list[dict[str, Any]] = []

    def work() -> None:
        from .respond import Engine, handle

        engine = Engine(keep=1)
        try:
            answer.append(handle(engine, request))
        finally:
            engine.close()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        runtime.log(where, f"{request['event']}: no answer in time (in-process); nothing added")
        sys.stdout.flush()
        os._exit(0)  # threads still at work (an embedding pool) must not hold the prompt up
    return answer[0] if answer else None
