"""Run ``python -m eidetic`` on a real pseudo-terminal, as a person at a terminal would see it:
with only its stderr on the terminal (100 columns) and its stdout in a file, as a pipe to another
program (:func:`run_in_terminal`), or with all of it on the terminal (:func:`run_on_terminal`)."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from conftest import Run


def _terminal(columns: int) -> tuple[int, int]:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    return master, slave


def read_shown(master: int, ending: str | None, timeout: float) -> bytes:
    """What the terminal shows until ``ending`` appears (None: until the process closes it), or
    ``timeout``."""
    shown = b""
    deadline = time.monotonic() + timeout
    while (ending is None or ending.encode() not in shown) and time.monotonic() < deadline:
        if not select.select([master], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    return shown


def _shown(master: int, proc: subprocess.Popen, timeout: float) -> str:
    """Everything the terminal shows until the process closes it (or ``timeout``); the process
    is killed if it is still running then."""
    deadline = time.monotonic() + timeout
    shown = read_shown(master, None, timeout)
    os.close(master)
    if proc.poll() is None and time.monotonic() >= deadline:
        proc.kill()
    return shown.decode("utf-8", "replace")


def run_in_terminal(*args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 120) -> Run:
    """The process's exit code, stdout, and what its terminal showed (``err``, raw bytes decoded)."""
    master, slave = _terminal(100)
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "eidetic", *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=slave,
            env=env,
            cwd=cwd,
        )
        os.close(slave)
        shown = _shown(master, proc, timeout)
        code = proc.wait(timeout=timeout)
        out.seek(0)
        return Run(code, out.read(), shown)


def run_on_terminal(*args: str, env: dict[str, str], columns: int = 100, typed: str = "", timeout: float = 120) -> Run:
    """The process's exit code and everything its terminal showed (``out``: stdout and stderr,
    newlines as the terminal sends them, ``\\n``); ``typed`` is what the person types."""
    master, slave = _terminal(columns)
    proc = subprocess.Popen([sys.executable, "-m", "eidetic", *args], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    os.write(master, typed.encode())
    shown = _shown(master, proc, timeout)
    return Run(proc.wait(timeout=timeout), shown.replace("\r\n", "\n"), "")
