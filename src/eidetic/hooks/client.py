"""The hook command an agent runs (``eidetic hook claude prompt``): standard library only, so it
starts in milliseconds; the work happens in the warm daemon.

It reads the agent's JSON from stdin (bounded in size and time: an agent may leave stdin open),
asks this environment's daemon over its unix socket and prints the answer. When no daemon
answers it starts one in the background (detached; it loads the model and exits after idle
minutes) and answers this once itself, in this process, with keyword recall. Whatever happens it
exits 0 within ``EIDETIC_HOOK_TIMEOUT`` seconds (default 2): a failure or a timeout prints
nothing, so the prompt goes on, and is logged in the daemon's log (``eidetic hooks status``).
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time
from typing import Any, BinaryIO, TextIO

from . import runtime

MAX_INPUT_BYTES = 8 * 1024 * 1024
MAX_PROMPT_CHARS = 16_000  # what the daemon is sent of a prompt (it recalls on fewer)
MAX_ANSWER_BYTES = 4 * 1024 * 1024
STDIN_SECONDS = 1.0
RESTART_SECONDS = 30  # a daemon is started at most this often
AGENTS = ("claude",)
EVENTS = ("session-start", "prompt", "session-end")


def run(agent: str, event: str, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer one hook event; always 0."""
    started = time.monotonic()
    deadline = started + runtime.timeout()
    where = None
    try:
        where = runtime.paths()
        payload = _payload(stdin or sys.stdin.buffer, min(deadline, started + STDIN_SECONDS))
        if payload is None:
            runtime.log(where, f"{event}: no JSON object on stdin; nothing done")
            return 0
        if isinstance(payload.get("prompt"), str):
            payload["prompt"] = payload["prompt"][:MAX_PROMPT_CHARS]
        request = {"agent": agent, "event": event, "payload": payload, "cwd": os.getcwd(), "mode": "hybrid"}
        answer, how = _answer(request, where, deadline)
        if answer is None:
            runtime.log(where, f"{event}: no answer within {deadline - started:.1f}s ({how}); nothing added")
            return 0
        text = answer.get("stdout") if isinstance(answer.get("stdout"), str) else ""
        if text:
            (stdout or sys.stdout).write(text + "\n")
            (stdout or sys.stdout).flush()
        logged = [line for line in answer.get("log", []) if isinstance(line, str)]
        runtime.log(where, *(f"{line} [{how}, {1000 * (time.monotonic() - started):.0f} ms]" for line in logged))
    except BaseException as exc:  # noqa: BLE001 - a hook never fails the agent's prompt
        runtime.log(where, f"{event}: failed: {exc!r}")
    return 0


def _payload(stream: BinaryIO, until: float) -> dict[str, Any] | None:
    """The JSON object on stdin: read until it parses, EOF, ``MAX_INPUT_BYTES`` or ``until``."""
    data = b""
    try:
        fd = stream.fileno()
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
        if data.rstrip().endswith(b"}") and _parsed(data) is not None:
            break
    return _parsed(data) if len(data) <= MAX_INPUT_BYTES else None


def _parsed(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _answer(request: dict[str, Any], where: runtime.Paths | None, deadline: float) -> tuple[Any, str]:
    """The daemon's answer, else this process's own (keyword recall); and which it was."""
    if where is not None and runtime.daemon_allowed():
        answer = ask(where, request, deadline)
        if answer is not None:
            return answer, "daemon"
        start_daemon(where, request["cwd"])
    return _in_process({**request, "mode": "keyword"}, deadline, where), "in-process"


def ask(where: runtime.Paths, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
    """Send one request to the daemon; its answer, or None (no daemon, or no answer in time)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(max(0.05, deadline - time.monotonic()))
            conn.connect(str(where.socket))
            conn.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            while size <= MAX_ANSWER_BYTES:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        answer = json.loads(b"".join(chunks).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def start_daemon(where: runtime.Paths, cwd: str) -> None:
    """Start this environment's daemon in the background, unless one holds its lock (starting)."""
    import fcntl
    import subprocess

    stamp = where.lock.with_suffix(".started")
    try:
        if time.time() - stamp.stat().st_mtime < RESTART_SECONDS:
            return  # started a moment ago: still loading, or failing (its log says why)
    except OSError:
        pass
    try:
        with open(where.lock, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no daemon is running or starting
            fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError:
        return
    stamp.touch()
    log = os.open(where.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
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
